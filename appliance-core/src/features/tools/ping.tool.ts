/**
 * Ping (iputils ping): the 10-probe event stream and the 4-probe JSON answer.
 * Output is read with LC_ALL=C: `64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.045 ms`,
 * then `10 packets transmitted, 10 received, 0% packet loss, time 9013ms` and the rtt line.
 */
import type { EventStream } from '../../platform/http/sse.js';
import type { Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import type { PingResult, PingSummary } from './tools.schema.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export const STREAM_PROBES = 10;
export const JSON_PROBES = 4;
/** The JSON answer comes within about ten seconds whatever the target does. */
export const JSON_BUDGET_MS = 10_000;
/** Seconds ping waits for each reply. */
const REPLY_WAIT_SECONDS = 2;

export interface PingReply {
  icmp_seq: number;
  latency: number;
}

export function parsePingReply(line: string): PingReply | null {
  const match = /^\d+ bytes from .*?icmp_seq=(\d+).*? time[=<]\s*([\d.]+)\s*ms/.exec(line);
  if (!match) return null;
  return { icmp_seq: Number(match[1]), latency: Number(match[2]) };
}

export function parsePingSummary(line: string): PingSummary | null {
  const match =
    /^(\d+) packets transmitted, (\d+) (?:packets )?received,.*?([\d.]+)% packet loss/.exec(line);
  if (!match) return null;
  return {
    total_transmitted: Number(match[1]),
    total_received: Number(match[2]),
    packet_loss: Number(match[3]),
  };
}

/** The address ping resolved the target to, from `PING host (address) ...`. */
export function parsePingHeader(line: string): string | null {
  const match = /^PING \S+? ?\(([0-9A-Fa-f.:]+)\)/.exec(line);
  return match ? (match[1] as string) : null;
}

/** The average from `rtt min/avg/max/mdev = 0.021/0.151/0.541/0.224 ms`. */
export function parsePingAverage(line: string): number | null {
  const match = /^(?:rtt|round-trip) min\/avg\/max(?:\/(?:mdev|stddev))? = [\d.]+\/([\d.]+)\//.exec(
    line,
  );
  return match ? Number(match[1]) : null;
}

export function pingArgs(target: Target, count: number, intervalSeconds: number): string[] {
  return [
    '-n',
    '-c',
    String(count),
    '-i',
    String(intervalSeconds),
    '-W',
    String(REPLY_WAIT_SECONDS),
    '--',
    target.value,
  ];
}

/**
 * Streams one frame per reply as it arrives, then the summary; throws a ToolFailure when ping
 * could not run or ended without a summary (the stream's owner reports it and ends the stream).
 */
export async function streamPing(
  runner: ToolRunner,
  target: Target,
  stream: EventStream,
): Promise<void> {
  const interval = runner.options.pingIntervalSeconds;
  const timeoutMs = (STREAM_PROBES * interval + REPLY_WAIT_SECONDS) * 1000 + 15_000;
  let summary: PingSummary | null = null;
  const result = await runner.run(SYSTEM_TOOLS.ping, {
    args: pingArgs(target, STREAM_PROBES, interval),
    timeoutMs,
    signal: stream.signal,
    onStdoutLine: (line) => {
      const reply = parsePingReply(line);
      if (reply) stream.send({ icmp_seq: reply.icmp_seq, latency: reply.latency, summary: null });
      summary = parsePingSummary(line) ?? summary;
    },
  });
  if (stream.signal.aborted) return;
  if (!summary) throw new ToolFailure(failureText(SYSTEM_TOOLS.ping, result, timeoutMs));
  stream.send({ summary });
}

/** Four probes; throws a ToolFailure when ping could not run or reported nothing. */
export async function pingOnce(
  runner: ToolRunner,
  target: Target,
  signal?: AbortSignal,
): Promise<PingResult> {
  const result = await runner.run(SYSTEM_TOOLS.ping, {
    args: pingArgs(target, JSON_PROBES, 1),
    timeoutMs: JSON_BUDGET_MS,
    ...(signal ? { signal } : {}),
  });
  let address: string | null = null;
  let summary: PingSummary | null = null;
  let average: number | null = null;
  const latencies: number[] = [];
  for (const line of result.stdout.split('\n')) {
    address ??= parsePingHeader(line);
    summary = parsePingSummary(line) ?? summary;
    average = parsePingAverage(line) ?? average;
    const reply = parsePingReply(line);
    if (reply) latencies.push(reply.latency);
  }
  if (!summary && latencies.length === 0)
    throw new ToolFailure(failureText(SYSTEM_TOOLS.ping, result, JSON_BUDGET_MS));
  if (average === null && latencies.length > 0)
    average = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  const received = summary ? summary.total_received : latencies.length;
  const hostname =
    target.kind === 'hostname'
      ? target.value
      : ((await runner.reverse(target.value)) ?? target.value);
  return {
    address: address ?? (target.kind === 'hostname' ? null : target.value),
    latency: received > 0 && average !== null ? Math.round(average) : null,
    status: received > 0,
    hostname,
  };
}
