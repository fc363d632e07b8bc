/**
 * One multi-pattern automaton (Aho-Corasick) over every `contains` text of every enabled alert:
 * a message is read once, whatever the number of patterns, and answers which patterns occur in
 * it. 200 alerts checked with `includes` one by one would cost about a core at the logs'
 * sustained intake rate (issue 17); the automaton's cost is the message length plus the matches.
 *
 * Matching is a case-insensitive substring test (both sides lower-cased), never a regular
 * expression: user text is data.
 */
export class PatternMatcher {
  /** goto[state] : char code -> next state. */
  private readonly next: Map<number, number>[] = [new Map<number, number>()];
  private readonly fail: number[] = [0];
  /** Pattern indexes ending at each state (own and through failure links). */
  private readonly out: number[][] = [[]];
  readonly size: number;

  constructor(patterns: readonly string[]) {
    this.size = patterns.length;
    patterns.forEach((pattern, index) => {
      let state = 0;
      for (const ch of pattern.toLowerCase()) {
        const code = ch.codePointAt(0) as number;
        let to = this.next[state]!.get(code);
        if (to === undefined) {
          to = this.next.length;
          this.next.push(new Map<number, number>());
          this.fail.push(0);
          this.out.push([]);
          this.next[state]!.set(code, to);
        }
        state = to;
      }
      this.out[state]!.push(index);
    });
    // Breadth-first failure links.
    const queue: number[] = [];
    for (const to of this.next[0]!.values()) queue.push(to);
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      for (const [code, to] of this.next[state]!) {
        queue.push(to);
        let f = this.fail[state]!;
        while (f !== 0 && !this.next[f]!.has(code)) f = this.fail[f]!;
        const target = this.next[f]!.get(code);
        this.fail[to] = target !== undefined && target !== to ? target : 0;
        this.out[to]!.push(...this.out[this.fail[to]]!);
      }
    }
  }

  /** The indexes of the patterns occurring in `text` (each once). */
  matches(text: string): Set<number> {
    const found = new Set<number>();
    if (this.size === 0) return found;
    let state = 0;
    for (const ch of text.toLowerCase()) {
      const code = ch.codePointAt(0) as number;
      while (state !== 0 && !this.next[state]!.has(code)) state = this.fail[state]!;
      state = this.next[state]!.get(code) ?? 0;
      for (const index of this.out[state]!) found.add(index);
    }
    return found;
  }
}
