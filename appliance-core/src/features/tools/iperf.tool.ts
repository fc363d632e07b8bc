/**
 * The iperf3 client: one blocking run (`--json`) against a host, decoded into the spec's result.
 * The appliance's own iperf3 server is an engine (iperf.engine.ts).
 */
import type { Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { toIso } from '../../platform/time/time.js';
import type { IperfResult } from './tools.schema.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export interface IperfRequest {
  target: Target;
  port: number;
  duration: number;
  protocol: 'tcp' | 'udp';
  direction: 'download' | 'upload';
}

/** The run or its output failed (HTTP 502). */
export class IperfRunError extends ToolFailure {
  constructor(message: string) {
    super(message, { status: 502 });
  }
}

const CONNECT_TIMEOUT_MS = 5_000;

export function iperfClientArgs(request: IperfRequest): string[] {
  return [
    '-c',
    request.target.value,
    '-p',
    String(request.port),
    '-t',
    String(request.duration),
    '--json',
    '--connect-timeout',
    String(CONNECT_TIMEOUT_MS),
    ...(request.protocol === 'udp' ? ['-u'] : []),
    // download: the far end sends (reverse mode); upload: the appliance sends.
    ...(request.direction === 'download' ? ['-R'] : []),
  ];
}

interface IperfSum {
  seconds?: number;
  bytes?: number;
  bits_per_second?: number;
  retransmits?: number;
  jitter_ms?: number;
  lost_packets?: number;
  lost_percent?: number;
}

/** Decodes iperf3's JSON report; throws IperfRunError for an error report or unreadable output. */
export function decodeIperf(stdout: string, request: IperfRequest, timestamp: string): IperfResult {
  let report: {
    error?: string;
    end?: { sum_sent?: IperfSum; sum_received?: IperfSum; sum?: IperfSum };
  };
  try {
    report = JSON.parse(stdout) as typeof report;
  } catch {
    throw new IperfRunError('iperf3 output could not be read');
  }
  if (typeof report.error === 'string') throw new IperfRunError(`iperf3: ${report.error}`);
  const end = report.end ?? {};
  const udp = request.protocol === 'udp';
  // The receiving side's view is `sum_received`; iperf3 before 3.10 has only `sum` for UDP.
  const received = end.sum_received ?? (udp ? end.sum : undefined);
  const sent = end.sum_sent ?? end.sum;
  if (
    !received ||
    typeof received.bits_per_second !== 'number' ||
    typeof received.bytes !== 'number'
  ) {
    throw new IperfRunError('iperf3 report has no result');
  }
  const int = (n: number | undefined) => (typeof n === 'number' ? Math.round(n) : null);
  return {
    host: request.target.value,
    port: request.port,
    protocol: request.protocol,
    direction: request.direction,
    duration: Math.round((received.seconds ?? request.duration) * 1000) / 1000,
    bytes: Math.round(received.bytes),
    bits_per_second: Math.round(received.bits_per_second),
    sent_bytes: Math.round(sent?.bytes ?? 0),
    sent_bits_per_second: Math.round(sent?.bits_per_second ?? 0),
    retransmits: udp ? null : int(sent?.retransmits),
    jitter_ms: udp ? (received.jitter_ms ?? null) : null,
    lost_packets: udp ? int(received.lost_packets) : null,
    lost_percent: udp ? (received.lost_percent ?? null) : null,
    timestamp,
  };
}

export async function runIperfClient(
  runner: ToolRunner,
  request: IperfRequest,
  now: () => number,
  signal?: AbortSignal,
): Promise<IperfResult> {
  const timeoutMs = (request.duration + 20) * 1000;
  const result = await runner.run(SYSTEM_TOOLS.iperf3, {
    args: iperfClientArgs(request),
    timeoutMs,
    ...(signal ? { signal } : {}),
  });
  if (result.timedOut) throw new IperfRunError(failureText(SYSTEM_TOOLS.iperf3, result, timeoutMs));
  if (result.stdout.trim() === '')
    throw new IperfRunError(failureText(SYSTEM_TOOLS.iperf3, result, timeoutMs));
  return decodeIperf(result.stdout, request, toIso(now()));
}
