/**
 * iperf3: a blocking client run (`--json`) and the appliance's own iperf3 server on port 5201.
 *
 * The server is one long-lived child (`iperf3 -s --forceflush`); it is ready when it prints
 * "Server listening", and a start fails when it exits first (port taken). State: `inactive`,
 * `active`, or `failed` when it ended without being asked to.
 */
import type { Target } from '../../platform/net/targets.js';
import { ToolMissingError, type ToolProcess } from '../../platform/process/spawn.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { toIso } from '../../platform/time/time.js';
import type { IperfResult } from './tools.schema.js';
import { errorText, failureText, type ToolRunner } from './tools.runtime.js';

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

export type IperfServerState = 'inactive' | 'active' | 'failed';

const READY_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 3_000;

export class IperfServer {
  private child: ToolProcess | null = null;
  private state: IperfServerState = 'inactive';
  private pending: Promise<void> | null = null;

  constructor(private readonly runner: ToolRunner) {}

  get port(): number {
    return this.runner.options.iperfServerPort;
  }

  status(): { active: boolean; state: IperfServerState; port: number } {
    return { active: this.state === 'active', state: this.state, port: this.port };
  }

  /** Starts the server; a no-op when it already runs. */
  async start(): Promise<void> {
    if (this.pending) await this.pending.catch(() => undefined);
    if (this.state === 'active') return;
    this.pending = this.launch();
    try {
      await this.pending;
    } finally {
      this.pending = null;
    }
  }

  private async launch(): Promise<void> {
    const bind = this.runner.options.iperfServerBind;
    const args = ['-s', '-p', String(this.port), '--forceflush', ...(bind ? ['-B', bind] : [])];
    let child: ToolProcess;
    let ready: () => void = () => {};
    const listening = new Promise<void>((resolve) => (ready = resolve));
    try {
      child = this.runner.start(SYSTEM_TOOLS.iperf3, {
        args,
        // The server runs until stopped; the helper still needs a bound.
        timeoutMs: 2_147_000_000,
        maxOutputBytes: 64 * 1024,
        onStdoutLine: (line) => {
          if (/Server listening on/.test(line)) ready();
        },
      });
    } catch (err) {
      this.state = 'failed';
      throw new ToolFailure(
        err instanceof ToolMissingError
          ? err.message
          : `iperf3 server could not start: ${errorText(err)}`,
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      listening.then(() => 'ready' as const),
      child.done.then(
        (result) => result,
        (err: unknown) => ({ error: err }),
      ),
      new Promise<'slow'>(
        (resolve) => (timer = setTimeout(() => resolve('slow'), READY_TIMEOUT_MS)),
      ),
    ]);
    clearTimeout(timer);
    if (outcome === 'ready') {
      this.child = child;
      this.state = 'active';
      void child.done
        .catch(() => undefined)
        .then(() => {
          if (this.child === child) {
            this.child = null;
            this.state = 'failed';
          }
        });
      return;
    }
    child.stop();
    this.state = 'failed';
    if (outcome === 'slow') throw new ToolFailure('iperf3 server did not start listening in time');
    if ('error' in outcome) throw new ToolFailure(errorText(outcome.error));
    throw new ToolFailure(
      `iperf3 server could not start: ${failureText(SYSTEM_TOOLS.iperf3, outcome, READY_TIMEOUT_MS).replace(/^iperf3: /, '')}`,
    );
  }

  /** Stops the server; a no-op when it is not running. */
  async stop(): Promise<void> {
    if (this.pending) await this.pending.catch(() => undefined);
    const child = this.child;
    this.child = null;
    this.state = 'inactive';
    if (!child) return;
    child.stop();
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      child.done.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>(
        (resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS)),
      ),
    ]);
    clearTimeout(timer);
    if (!exited) {
      this.state = 'failed';
      throw new ToolFailure(`iperf3 server did not stop within ${STOP_TIMEOUT_MS / 1000} seconds`);
    }
  }
}
