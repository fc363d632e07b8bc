/**
 * The engine registry: every engine of the appliance (pollers, collectors, capture, alerting)
 * by name, with its state, and start / stop / restart. The composition root registers engines in
 * start order and hands the registry to whoever needs to list or restart them (the settings
 * feature's service list), so no feature imports the composition root.
 *
 * Invariants:
 * - `startAll` starts engines in registration order and `stopAll` stops the started ones in
 *   reverse order; a failing stop is reported and the others still stop. The composition root
 *   chooses the order: the storage writer first (so it closes last, after every producer), the
 *   scheduler last (its jobs are in place when it starts, and it stops, aborting runs, first).
 * - `restart(name)` stops and starts that one engine only. Shared resources (the scheduler, the
 *   storage writer) are registered `shared`: they start and stop only with the appliance and are
 *   never stopped or restarted on request, because every other engine depends on them.
 * - Operations on one engine are serialised: a restart during a start waits for the start.
 * - A failed start leaves the engine `failed` with its error message, never half-running in the
 *   list; `startAll` rethrows it so boot fails loudly.
 */

export interface Engine {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A resource every engine depends on (scheduler, storage writer): never stopped alone. */
  readonly shared?: boolean;
}

export type EngineState = 'stopped' | 'starting' | 'running' | 'stopping' | 'failed';

export interface EngineStatus {
  name: string;
  state: EngineState;
  shared: boolean;
  /** When it last entered `running` (ms since the epoch), or null. */
  startedAt: number | null;
  /** The last start or stop failure, or null. */
  error: string | null;
}

export class EngineNotFoundError extends Error {}
export class SharedEngineError extends Error {}

interface Entry {
  engine: Engine;
  shared: boolean;
  state: EngineState;
  startedAt: number | null;
  error: string | null;
  /** The operation in progress (start, stop or restart); later ones wait for it. */
  busy: Promise<void>;
}

export class EngineRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly onStopError: (name: string, err: unknown) => void = () => {},
  ) {}

  /** Adds an engine; shared resources (scheduler, storage writer) say `shared: true`. */
  register(engine: Engine): void {
    if (this.entries.has(engine.name)) throw new Error(`engine ${engine.name} is registered twice`);
    this.entries.set(engine.name, {
      engine,
      shared: engine.shared === true,
      state: 'stopped',
      startedAt: null,
      error: null,
      busy: Promise.resolve(),
    });
  }

  list(): EngineStatus[] {
    return [...this.entries.values()].map((e) => ({
      name: e.engine.name,
      state: e.state,
      shared: e.shared,
      startedAt: e.startedAt,
      error: e.error,
    }));
  }

  status(name: string): EngineStatus {
    const found = this.list().find((s) => s.name === name);
    if (!found) throw new EngineNotFoundError(`no engine named ${name}`);
    return found;
  }

  /**
   * In registration order; the first failure stops the boot (rethrown). `autoStart` may keep an
   * engine stopped at boot (a daemon whose start_auto is off); shared resources always start.
   */
  async startAll(autoStart: (name: string) => boolean = () => true): Promise<void> {
    for (const entry of this.entries.values()) {
      if (!entry.shared && !autoStart(entry.engine.name)) continue;
      await this.run(entry, () => this.doStart(entry, true));
    }
  }

  /** In reverse registration order; never throws (failures go to onStopError). */
  async stopAll(): Promise<void> {
    for (const entry of [...this.entries.values()].reverse())
      await this.run(entry, () => this.doStop(entry));
  }

  async start(name: string): Promise<void> {
    const entry = this.entry(name);
    return this.run(entry, () => this.doStart(entry, false));
  }

  async stop(name: string): Promise<void> {
    const entry = this.entry(name);
    if (entry.shared)
      throw new SharedEngineError(`${name} is shared by every engine and stops with the appliance`);
    return this.run(entry, () => this.doStop(entry));
  }

  /** Stops and starts one engine; resolves with its status (a failed start is in it). */
  async restart(name: string): Promise<EngineStatus> {
    const entry = this.entry(name);
    if (entry.shared)
      throw new SharedEngineError(
        `${name} is shared by every engine and cannot be restarted alone`,
      );
    await this.run(entry, async () => {
      await this.doStop(entry);
      await this.doStart(entry, false);
    });
    return this.status(name);
  }

  private entry(name: string): Entry {
    const entry = this.entries.get(name);
    if (!entry) throw new EngineNotFoundError(`no engine named ${name}`);
    return entry;
  }

  private run(entry: Entry, operation: () => Promise<void>): Promise<void> {
    const next = entry.busy.then(operation, operation);
    entry.busy = next.catch(() => undefined);
    return next;
  }

  private async doStart(entry: Entry, rethrow: boolean): Promise<void> {
    if (entry.state === 'running') return;
    entry.state = 'starting';
    entry.error = null;
    try {
      await entry.engine.start();
      entry.state = 'running';
      entry.startedAt = this.now();
    } catch (err) {
      entry.state = 'failed';
      entry.error = (err as Error)?.message ?? String(err);
      // A half-started engine may hold sockets or timers: give it the chance to release them.
      await entry.engine.stop().catch(() => undefined);
      if (rethrow) throw err;
    }
  }

  private async doStop(entry: Entry): Promise<void> {
    if (entry.state !== 'running') return;
    entry.state = 'stopping';
    try {
      await entry.engine.stop();
      entry.state = 'stopped';
    } catch (err) {
      entry.state = 'failed';
      entry.error = (err as Error)?.message ?? String(err);
      this.onStopError(entry.engine.name, err);
    }
    entry.startedAt = null;
  }
}
