/**
 * The last lines a child process printed, bounded in count and in line length, so a crash can be
 * reported with the tail of its log without keeping (or inheriting) all of it. Output arrives in
 * chunks that split lines anywhere; each stream's unfinished line waits for its end.
 */
const MAX_LINE_CHARS = 2_000;

export class OutputRing {
  private readonly lines: string[] = [];
  private readonly partial = new Map<object, string>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be >= 1');
  }

  append(stream: object, chunk: Buffer | string): void {
    const text = (this.partial.get(stream) ?? '') + chunk.toString();
    const parts = text.split(/\r?\n/);
    const unfinished = parts.pop() ?? '';
    for (const line of parts) this.push(line);
    if (unfinished.length > MAX_LINE_CHARS) {
      this.push(unfinished);
      this.partial.delete(stream);
    } else {
      this.partial.set(stream, unfinished);
    }
  }

  /** A line of our own between children (which child printed what). */
  mark(line: string): void {
    this.flushPartials();
    this.push(line);
  }

  /** Up to `count` last lines, unfinished ones included. */
  tail(count = this.capacity): string[] {
    const pending = [...this.partial.values()].filter((line) => line !== '');
    return [...this.lines, ...pending].slice(-count);
  }

  private flushPartials(): void {
    for (const line of this.partial.values()) if (line !== '') this.push(line);
    this.partial.clear();
  }

  private push(line: string): void {
    this.lines.push(line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }
}
