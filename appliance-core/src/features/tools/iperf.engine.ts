/**
 * The appliance's own iperf3 server on port 5201 (an engine: it starts and stops). The client
 * run is a one-shot tool (iperf.tool.ts).
 *
 * The server is one long-lived child (`iperf3 -s --forceflush`); it is ready when it prints
 * "Server listening", and a start fails when it exits first (port taken). State: `inactive`,
 * `active`, or `failed` when it ended without being asked to.
 */
import { ToolMissingError, type ToolProcess } from '../../platform/process/spawn.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { errorText, failureText, type ToolRunner } from './tools.runtime.js';

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
