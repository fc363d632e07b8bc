/**
 * MTR (mtr-tiny) as an event stream. `mtr --raw` prints one line per event as it happens:
 * `x <pos> <seq>` a probe sent, `h <pos> <address>` a hop's host, `p <pos> <usec> <seq>` a reply
 * (`d` lines carry names, never asked for with -n). Positions count from 0; hops from 1.
 */
import type { EventStream } from '../../platform/http/sse.js';
import type { Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import type { MtrFrame } from './tools.schema.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export const MTR_CYCLES = 10;

export function parseMtrLine(line: string): MtrFrame | null {
  const parts = line.trim().split(/\s+/);
  const pos = Number(parts[1]);
  if (parts.length < 3 || !Number.isInteger(pos) || pos < 0) return null;
  const hop = pos + 1;
  switch (parts[0]) {
    case 'x':
      return { type: 'sent', hop };
    case 'h':
      return { type: 'host', hop, host: parts[2] as string };
    case 'p': {
      const usec = Number(parts[2]);
      return Number.isFinite(usec)
        ? { type: 'reply', hop, latency: Math.round(usec) / 1000 }
        : null;
    }
    default:
      return null;
  }
}

export function mtrArgs(target: Target, intervalSeconds: number, graceSeconds: number): string[] {
  return [
    '-n',
    '--raw',
    '-c',
    String(MTR_CYCLES),
    '-i',
    String(intervalSeconds),
    '-G',
    String(graceSeconds),
    '--',
    target.value,
  ];
}

/** The frame that always ends an MTR stream, after success and failure alike. */
export const MTR_STREAM_END = { event: 'stream-complete', data: {} } as const;

/**
 * Streams sent/host/reply frames as they happen; throws a ToolFailure when mtr could not run,
 * failed or produced nothing (the stream's owner reports it, sends MTR_STREAM_END and ends the
 * stream).
 */
export async function streamMtr(
  runner: ToolRunner,
  target: Target,
  stream: EventStream,
): Promise<void> {
  const { mtrIntervalSeconds: interval, mtrGraceSeconds: grace } = runner.options;
  const timeoutMs = (MTR_CYCLES * interval + grace) * 1000 + 20_000;
  // mtr repeats a hop's host line; one host frame per hop and address is enough.
  const hostsSeen = new Set<string>();
  let frames = 0;
  const result = await runner.run(SYSTEM_TOOLS.mtr, {
    args: mtrArgs(target, interval, grace),
    timeoutMs,
    signal: stream.signal,
    onStdoutLine: (line) => {
      const frame = parseMtrLine(line);
      if (!frame) return;
      if (frame.type === 'host') {
        const key = `${frame.hop} ${frame.host}`;
        if (hostsSeen.has(key)) return;
        hostsSeen.add(key);
      }
      frames++;
      stream.send(frame);
    },
  });
  if (stream.signal.aborted) return;
  if (result.code !== 0 || result.timedOut || frames === 0)
    throw new ToolFailure(failureText(SYSTEM_TOOLS.mtr, result, timeoutMs));
}
