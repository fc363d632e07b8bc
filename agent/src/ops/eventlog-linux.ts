/**
 * `eventlog.read` on Linux: the systemd journal through `journalctl -o json` (an argument array,
 * no shell), oldest first, at most `max` rows. `file` reads a journal file instead of the
 * system's journal (`journalctl --file`, used by the tests with a fixture).
 *
 * Priorities map onto the event-log scale exactly as the protocol says: emerg (0), alert (1) and
 * crit (2) to critical 1; err (3) to error 2; warning (4) to warning 3; notice (5) and info (6) to
 * info 0; debug (7) to verbose 5. An entry without a priority is info.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { type EventQuery, type EventRow } from './eventlog.js';
import { OpError } from './paths.js';

const PRIORITY_TO_SEVERITY = [1, 1, 1, 2, 3, 0, 0, 5] as const;

export function severityOfPriority(priority: unknown): number {
  const n = typeof priority === 'string' && /^[0-7]$/.test(priority) ? Number(priority) : 6;
  return PRIORITY_TO_SEVERITY[n] ?? 0;
}

/** journalctl prints non-UTF-8 or binary fields as arrays of byte values. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((b) => typeof b === 'number'))
    return Buffer.from(value).toString('utf8');
  return undefined;
}

/** One `journalctl -o json` line as an event row; null when it has no realtime timestamp. */
export function journalRow(entry: Record<string, unknown>): EventRow | null {
  const realtime = text(entry.__REALTIME_TIMESTAMP);
  if (!realtime || !/^\d+$/.test(realtime)) return null;
  const micros = Number(realtime);
  const identifier = text(entry.SYSLOG_IDENTIFIER);
  return {
    record_id: micros,
    timestamp: Math.floor(micros / 1000),
    event_id: 0,
    log: text(entry._SYSTEMD_UNIT) ?? identifier ?? 'journal',
    source: identifier ?? '',
    severity: severityOfPriority(text(entry.PRIORITY)),
    data: text(entry.MESSAGE) ?? '',
  };
}

export async function readJournal(
  query: Pick<EventQuery, 'since' | 'until' | 'max'>,
  options: { file?: string; timeoutMs?: number } = {},
): Promise<EventRow[]> {
  const args = [
    '--output=json',
    '--no-pager',
    '--quiet',
    `--since=@${Math.floor(query.since / 1000)}`,
    `--until=@${Math.ceil(query.until / 1000) + 1}`,
  ];
  if (options.file) args.push(`--file=${options.file}`);
  const child = spawn('journalctl', args, { shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
  const rows: EventRow[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new OpError('journalctl is not installed') : error),
    );
    child.once('close', (code) => resolve(code));
  });
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof entry !== 'object' || entry === null) continue;
      const row = journalRow(entry as Record<string, unknown>);
      if (!row || row.timestamp < query.since || row.timestamp > query.until) continue;
      rows.push(row);
      if (rows.length >= query.max) {
        child.kill('SIGTERM');
        break;
      }
    }
    const code = await exited;
    if (code !== 0 && code !== null && rows.length === 0 && !child.killed)
      throw new OpError(`journalctl failed: ${stderr.trim().slice(0, 500)}`);
  } finally {
    clearTimeout(timer);
    lines.close();
  }
  return rows;
}
