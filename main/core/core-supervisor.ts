/**
 * Runs the embedded appliance-core in a child process and keeps it running.
 *
 * The child is started through an injected `fork` (Electron's utilityProcess.fork in the app, a
 * Node child in tests and the bench) and is ready when it posts
 * `{type: 'ready', url, certSha256, ports}` (appliance-core/src/server.ts does so on its parent
 * port once it listens). When it exits, it is restarted after an exponential backoff; when it
 * keeps failing, the supervisor gives up and reports why, rather than restarting a broken core
 * forever; `restart()` (a button in the window) starts it again. Its stdout and stderr are piped
 * into a bounded ring of lines instead of being inherited, so a crash is reported with the tail
 * of its log. Time comes from an injected clock so all of this is testable in plain Node.
 */
import { OutputRing } from './output-ring.js';

/** The part of a child process the supervisor uses (Electron's UtilityProcess satisfies it). */
export interface CoreProcess {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  kill(): boolean;
  readonly pid?: number | undefined;
  /** Present with stdio 'pipe'. */
  readonly stdout?: NodeJS.ReadableStream | null;
  readonly stderr?: NodeJS.ReadableStream | null;
}

export interface CoreForkOptions {
  env?: Record<string, string | undefined>;
  stdio?: 'inherit' | 'pipe' | 'ignore';
  serviceName?: string;
}

export type ForkCore = (
  modulePath: string,
  args: string[],
  options: CoreForkOptions,
) => CoreProcess;

export type CancelTimer = () => void;

export interface SupervisorClock {
  now(): number;
  schedule(callback: () => void, delayMs: number): CancelTimer;
}

export const systemClock: SupervisorClock = {
  now: () => Date.now(),
  schedule(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    return () => clearTimeout(timer);
  },
};

export interface CoreSupervisorOptions {
  modulePath: string;
  args?: string[];
  /** Read at every (re)start, so a restart picks up changed settings (the collectors). */
  forkOptions?: CoreForkOptions | (() => CoreForkOptions);
  fork: ForkCore;
  clock?: SupervisorClock;
  /** First restart delay; each further failure in the window doubles it up to maxRestartDelayMs. */
  initialRestartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** Give up when this many failures happen within failureWindowMs. */
  maxFailures?: number;
  failureWindowMs?: number;
  /** A child that has not posted ready by then is stopped and counted as a failure. */
  readyTimeoutMs?: number;
  /** How long stop() waits for the child to exit after asking it to. */
  stopTimeoutMs?: number;
  onEvent?: (event: CoreSupervisorEvent) => void;
  /** Lines of child output kept for crash reports. */
  outputLines?: number;
}

/** What the ready message tells: where it listens, its certificate, its collectors' ports. */
export interface CoreReady {
  url: string;
  /** SHA-256 of the served certificate, `AB:CD:…` (null for a core without TLS). */
  certSha256: string | null;
  ports: Record<string, { udp?: number; tcp?: number }>;
}

export type CoreSupervisorEvent =
  | ({ type: 'ready' } & CoreReady)
  | { type: 'exit'; code: number; logTail: string[] }
  | { type: 'restarting'; delayMs: number; reason: string; failures: number }
  | { type: 'failed'; error: CoreSupervisorError };

export type CoreSupervisorState =
  'idle' | 'starting' | 'ready' | 'waiting-to-restart' | 'stopping' | 'stopped' | 'failed';

export class CoreSupervisorError extends Error {
  override name = 'CoreSupervisorError';

  constructor(
    message: string,
    /** The last lines the core printed before this failure. */
    readonly logTail: string[] = [],
  ) {
    super(message);
  }
}

export interface CoreReadyMessage extends CoreReady {
  type: 'ready';
}

const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

export function isCoreReadyMessage(message: unknown): message is CoreReadyMessage {
  if (typeof message !== 'object' || message === null) return false;
  const { type, url, certSha256, ports } = message as Record<string, unknown>;
  if (type !== 'ready' || typeof url !== 'string') return false;
  if (certSha256 !== null && !(typeof certSha256 === 'string' && FINGERPRINT.test(certSha256))) {
    return false;
  }
  if (!isPortReport(ports)) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}

function isPortReport(value: unknown): value is CoreReady['ports'] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((entry) => {
    if (typeof entry !== 'object' || entry === null) return false;
    const { udp, tcp } = entry as { udp?: unknown; tcp?: unknown };
    return (
      (udp === undefined || Number.isInteger(udp)) && (tcp === undefined || Number.isInteger(tcp))
    );
  });
}

interface Waiter {
  resolve(ready: CoreReady): void;
  reject(error: CoreSupervisorError): void;
}

const DEFAULTS = {
  initialRestartDelayMs: 1_000,
  maxRestartDelayMs: 30_000,
  maxFailures: 7,
  failureWindowMs: 10 * 60_000,
  readyTimeoutMs: 60_000,
  stopTimeoutMs: 6_000,
};

export class CoreSupervisor {
  private readonly settings: typeof DEFAULTS;
  private readonly clock: SupervisorClock;
  private currentState: CoreSupervisorState = 'idle';
  private child: CoreProcess | undefined;
  private ready: CoreReady | undefined;
  /** Output of the current and previous children (a crash report needs what came before). */
  readonly output: OutputRing;
  private failureTimes: number[] = [];
  private failure: CoreSupervisorError | undefined;
  private cancelReadyTimer: CancelTimer | undefined;
  private cancelRestartTimer: CancelTimer | undefined;
  private cancelStopTimer: CancelTimer | undefined;
  private waiters: Waiter[] = [];
  private stopCallbacks: Array<() => void> = [];

  constructor(private readonly options: CoreSupervisorOptions) {
    this.clock = options.clock ?? systemClock;
    this.settings = {
      initialRestartDelayMs: options.initialRestartDelayMs ?? DEFAULTS.initialRestartDelayMs,
      maxRestartDelayMs: options.maxRestartDelayMs ?? DEFAULTS.maxRestartDelayMs,
      maxFailures: options.maxFailures ?? DEFAULTS.maxFailures,
      failureWindowMs: options.failureWindowMs ?? DEFAULTS.failureWindowMs,
      readyTimeoutMs: options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs,
      stopTimeoutMs: options.stopTimeoutMs ?? DEFAULTS.stopTimeoutMs,
    };
    this.output = new OutputRing(options.outputLines ?? 200);
  }

  get state(): CoreSupervisorState {
    return this.currentState;
  }

  /** The running child's process id (diagnostics, tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The failure that made the supervisor give up (state 'failed'). */
  get lastFailure(): CoreSupervisorError | undefined {
    return this.currentState === 'failed' ? this.failure : undefined;
  }

  /** Starts the core; resolves once it is ready, rejects if the supervisor gives up first. */
  start(): Promise<CoreReady> {
    if (this.currentState !== 'idle') {
      throw new Error('core supervisor already started');
    }
    this.spawn();
    return this.whenReady();
  }

  /**
   * Starts the core again from any state: after it was given up or stopped (the window's restart
   * button), or while it runs (new settings). The failure count starts over.
   */
  async restart(): Promise<CoreReady> {
    if (this.currentState !== 'idle' && this.currentState !== 'failed') await this.stop();
    this.failureTimes = [];
    this.failure = undefined;
    this.spawn();
    return this.whenReady();
  }

  /** The running core; waits while it (re)starts; rejects once given up or stopped. */
  whenReady(): Promise<CoreReady> {
    switch (this.currentState) {
      case 'ready':
        return Promise.resolve(this.ready as CoreReady);
      case 'starting':
      case 'waiting-to-restart':
        return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      case 'failed':
        return Promise.reject(this.failure ?? new CoreSupervisorError('the appliance core failed'));
      case 'idle':
        return Promise.reject(new CoreSupervisorError('the appliance core has not been started'));
      case 'stopping':
      case 'stopped':
        return Promise.reject(new CoreSupervisorError('the appliance core has been stopped'));
    }
  }

  /** Stops the core and any pending restart; resolves when the child exited (or stopTimeoutMs). */
  stop(): Promise<void> {
    if (this.currentState === 'stopping') {
      return new Promise((resolve) => this.stopCallbacks.push(resolve));
    }
    this.cancelTimers();
    this.rejectWaiters(new CoreSupervisorError('the appliance core has been stopped'));
    const child = this.child;
    if (!child) {
      this.currentState = 'stopped';
      return Promise.resolve();
    }
    this.currentState = 'stopping';
    return new Promise((resolve) => {
      this.stopCallbacks.push(resolve);
      // The core exits within 5 s of SIGTERM; do not let a hung child hold up quitting.
      this.cancelStopTimer = this.clock.schedule(
        () => this.finishStop(),
        this.settings.stopTimeoutMs,
      );
      child.kill();
    });
  }

  private spawn(): void {
    this.currentState = 'starting';
    this.ready = undefined;
    let child: CoreProcess;
    try {
      const forkOptions = this.options.forkOptions;
      child = this.options.fork(
        this.options.modulePath,
        this.options.args ?? [],
        (typeof forkOptions === 'function' ? forkOptions() : forkOptions) ?? {},
      );
    } catch (error) {
      this.recordFailure(`could not be started: ${errorMessage(error)}`);
      return;
    }
    this.child = child;
    this.output.mark('--- appliance core started ---');
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer | string) => this.output.append(stream, chunk));
    }
    child.on('message', (message) => this.onMessage(child, message));
    child.on('exit', (code) => this.onExit(child, code));
    this.cancelReadyTimer = this.clock.schedule(
      () => this.onReadyTimeout(child),
      this.settings.readyTimeoutMs,
    );
  }

  private onMessage(child: CoreProcess, message: unknown): void {
    if (child !== this.child || this.currentState !== 'starting') return;
    if (!isCoreReadyMessage(message)) return;
    this.cancelReadyTimer?.();
    this.cancelReadyTimer = undefined;
    this.currentState = 'ready';
    const ready: CoreReady = {
      url: message.url,
      certSha256: message.certSha256,
      ports: message.ports,
    };
    this.ready = ready;
    this.emit({ type: 'ready', ...ready });
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.resolve(ready);
  }

  private onExit(child: CoreProcess, code: number): void {
    if (child !== this.child) return;
    this.child = undefined;
    this.cancelReadyTimer?.();
    this.cancelReadyTimer = undefined;
    if (this.currentState === 'stopping') {
      this.finishStop();
      return;
    }
    const wasReady = this.currentState === 'ready';
    this.ready = undefined;
    this.emit({ type: 'exit', code, logTail: this.output.tail() });
    this.recordFailure(
      wasReady ? `exited with code ${code}` : `exited with code ${code} before it was ready`,
    );
  }

  private onReadyTimeout(child: CoreProcess): void {
    if (child !== this.child || this.currentState !== 'starting') return;
    this.cancelReadyTimer = undefined;
    // Detach first: its exit (whenever it comes) must not count as a second failure.
    this.child = undefined;
    child.kill();
    this.recordFailure(`was not ready within ${formatSeconds(this.settings.readyTimeoutMs)}`);
  }

  private recordFailure(reason: string): void {
    const now = this.clock.now();
    this.failureTimes = this.failureTimes.filter(
      (time) => now - time < this.settings.failureWindowMs,
    );
    this.failureTimes.push(now);
    const failures = this.failureTimes.length;

    if (failures >= this.settings.maxFailures) {
      this.currentState = 'failed';
      this.failure = new CoreSupervisorError(
        `the appliance core failed ${failures} times within ` +
          `${formatSeconds(this.settings.failureWindowMs)} and was not restarted again; last: it ${reason}`,
        this.output.tail(),
      );
      this.emit({ type: 'failed', error: this.failure });
      this.rejectWaiters(this.failure);
      return;
    }

    const delayMs = Math.min(
      this.settings.initialRestartDelayMs * 2 ** (failures - 1),
      this.settings.maxRestartDelayMs,
    );
    this.currentState = 'waiting-to-restart';
    this.emit({ type: 'restarting', delayMs, reason: `it ${reason}`, failures });
    this.cancelRestartTimer = this.clock.schedule(() => {
      this.cancelRestartTimer = undefined;
      this.spawn();
    }, delayMs);
  }

  private finishStop(): void {
    this.cancelStopTimer?.();
    this.cancelStopTimer = undefined;
    this.currentState = 'stopped';
    this.child = undefined;
    const callbacks = this.stopCallbacks;
    this.stopCallbacks = [];
    for (const callback of callbacks) callback();
  }

  private cancelTimers(): void {
    this.cancelReadyTimer?.();
    this.cancelReadyTimer = undefined;
    this.cancelRestartTimer?.();
    this.cancelRestartTimer = undefined;
  }

  private rejectWaiters(error: CoreSupervisorError): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  private emit(event: CoreSupervisorEvent): void {
    this.options.onEvent?.(event);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
