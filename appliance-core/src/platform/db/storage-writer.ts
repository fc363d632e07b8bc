/**
 * The storage writer (ARCHITECTURE.md, Storage): high-rate feeds are written in batched
 * transactions by a worker thread with its own connection to the database file, so a burst of
 * writes never stalls the API thread. Only data crosses the thread boundary: statements are
 * registered by name with their SQL (`define`), writes are queued as (name, parameters)
 * (`write`) and posted in batches, every `flushMs` or when `maxPending` are queued; the worker
 * (storage-writer.worker.mjs) runs each batch in one transaction.
 *
 * Writes through the worker's connection do not fire the TEMP triggers of the main connection
 * (change-triggers.ts): a feed must not write a watched table or column through it.
 *
 * Failures never reach the caller: a failing op is skipped and counted (the rest of its batch is
 * committed) and reported through `onError` at most once per `errorReportMs`; a crashed worker
 * is restarted (at most once per `restartDelayMs`) and its in-flight ops are counted as lost.
 */
import { Worker } from 'node:worker_threads';

export type SqlParam = number | string | bigint | null;

export interface StorageWriterOptions {
  /** Posts queued writes at least this often (ms). */
  flushMs?: number;
  /** Posts as soon as this many writes are queued (and never posts bigger batches). */
  maxPending?: number;
  /** Writes queued beyond this while the worker is down are dropped (counted as lost). */
  maxQueued?: number;
  /** How long close() waits for the worker before terminating it (ms). */
  closeTimeoutMs?: number;
  /** Smallest delay between two starts of the worker after a crash (ms). */
  restartDelayMs?: number;
  /** Failed writes are reported at most once per this many ms (with a count and the first error). */
  errorReportMs?: number;
  /** The worker connection's page cache (KiB). */
  cacheSizeKb?: number;
  /** Told about skipped writes, worker crashes and writes lost at close. Messages never hold parameters. */
  onError?: (err: Error) => void;
}

export interface StorageWriterStats {
  /** Writes committed. */
  written: number;
  /** Batches committed. */
  flushes: number;
  /** Writes queued, not yet posted to the worker. */
  queued: number;
  /** Writes posted, not yet committed. */
  inFlight: number;
  /** Writes skipped because they failed (constraint, missing row ...). */
  failed: number;
  /** Writes lost: in flight when the worker crashed or was terminated at close, dropped when over `maxQueued` or written after close. */
  lost: number;
  /** Starts of the worker after a crash. */
  restarts: number;
}

const WORKER_URL = new URL('./storage-writer.worker.mjs', import.meta.url);
const TERMINATE_WAIT_MS = 500;

type FromWorker =
  | { type: 'done'; seq: number; committed: number; failed: number; error: string | null }
  | { type: 'define-failed'; name: string; error: string }
  | { type: 'closed' };

export class StorageWriter {
  private readonly options: Required<Omit<StorageWriterOptions, 'onError'>>;
  private readonly onError: (err: Error) => void;
  private readonly ids = new Map<string, number>();
  private readonly definitions: { name: string; sql: string }[] = [];
  private worker: Worker | null = null;
  private startedAt = 0;
  /** The uncaught error of the worker that is exiting (reported with its exit). */
  private crash: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  private closed = false;
  /** Queued writes: (statement id, parameter count) pairs and the parameters, flat. */
  private ops: number[] = [];
  private values: SqlParam[] = [];
  /** Op count of each posted batch not yet answered, by sequence number. */
  private readonly batches = new Map<number, number>();
  private seq = 0;
  /** Writes accepted and writes settled (committed, skipped or lost) since creation: flush() waits on these. */
  private accepted = 0;
  private settled = 0;
  private waiters: { until: number; resolve: () => void }[] = [];
  private unreported = { failed: 0, dropped: 0, first: null as string | null, at: 0 };

  private readonly counters = { written: 0, flushes: 0, failed: 0, lost: 0, restarts: 0 };

  constructor(
    private readonly file: string,
    options: StorageWriterOptions = {},
  ) {
    if (file === '' || file === ':memory:')
      throw new Error('the storage writer needs a database file (another connection opens it)');
    this.options = {
      flushMs: options.flushMs ?? 1000,
      maxPending: options.maxPending ?? 5000,
      maxQueued: options.maxQueued ?? 200_000,
      closeTimeoutMs: options.closeTimeoutMs ?? 3000,
      restartDelayMs: options.restartDelayMs ?? 10_000,
      errorReportMs: options.errorReportMs ?? 60_000,
      cacheSizeKb: options.cacheSizeKb ?? 512,
    };
    this.onError = options.onError ?? (() => {});
  }

  /** Registers a statement; before or after start (a restarted worker gets every definition again). */
  define(name: string, sql: string): void {
    const existing = this.ids.get(name);
    if (existing !== undefined) {
      if (this.definitions[existing]?.sql === sql) return;
      throw new Error(`storage writer: statement ${name} is already defined with other SQL`);
    }
    const id = this.definitions.length;
    this.definitions.push({ name, sql });
    this.ids.set(name, id);
    this.worker?.postMessage({ type: 'define', id, name, sql });
  }

  /** Starts the worker and the flush timer (write() and flush() start it too). */
  start(): void {
    if (this.closing) return;
    this.closed = false;
    if (!this.flushTimer) {
      this.flushTimer = setInterval(() => this.post(), this.options.flushMs);
      this.flushTimer.unref();
    }
    if (!this.worker && !this.restartTimer) this.spawn();
  }

  /** Queues a write of a defined statement. Never throws for a database failure (see the class). */
  write(name: string, params: readonly SqlParam[]): void {
    const id = this.ids.get(name);
    if (id === undefined) throw new Error(`storage writer: unknown statement ${name}`);
    this.accepted++;
    if (this.closed || this.closing || this.queued >= this.options.maxQueued) {
      this.counters.lost++;
      this.settle(1);
      if (!this.closed && !this.closing) {
        this.unreported.dropped++;
        this.maybeReport();
      }
      return;
    }
    if (!this.flushTimer) this.start();
    this.ops.push(id, params.length);
    this.values.push(...params);
    if (this.ops.length >= this.options.maxPending * 2) this.post();
  }

  /** Resolves when every write queued before the call is settled: committed, or skipped/lost (see stats). */
  flush(): Promise<void> {
    if (this.settled >= this.accepted) return Promise.resolve();
    if (!this.closed) this.start();
    const until = this.accepted;
    const done = new Promise<void>((resolve) => this.waiters.push({ until, resolve }));
    this.post();
    this.worker?.ref();
    return done;
  }

  /**
   * Posts what is queued, waits for the worker to commit it and ends the worker. Bounded: after
   * `closeTimeoutMs` the worker is terminated and the writes it had not committed are reported lost.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => {
      this.closing = null;
      this.closed = true;
    });
    return this.closing;
  }

  stats(): StorageWriterStats {
    return { ...this.counters, queued: this.queued, inFlight: this.inFlight };
  }

  get queued(): number {
    return this.ops.length / 2;
  }

  get inFlight(): number {
    let n = 0;
    for (const count of this.batches.values()) n += count;
    return n;
  }

  // --- internals ----------------------------------------------------------------------------------

  private spawn(): void {
    const worker = new Worker(WORKER_URL, {
      workerData: { file: this.file, cacheSizeKb: this.options.cacheSizeKb },
      // A small heap: the worker holds a few batches at most.
      resourceLimits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 4, stackSizeMb: 2 },
      stdout: false,
      stderr: false,
    });
    this.worker = worker;
    this.startedAt = Date.now();
    worker.unref();
    worker.on('message', (msg: FromWorker) => this.receive(msg));
    worker.on('error', (err) => (this.crash = err.message));
    worker.on('exit', (code) => this.exited(worker, code));
    this.definitions.forEach(({ name, sql }, id) =>
      worker.postMessage({ type: 'define', id, name, sql }),
    );
  }

  /** Posts the queued writes in batches of at most `maxPending`. */
  private post(): void {
    const worker = this.worker;
    if (!worker || this.ops.length === 0) return;
    const max = this.options.maxPending * 2;
    let opsAt = 0;
    let valuesAt = 0;
    while (opsAt < this.ops.length) {
      const ops = Int32Array.from(this.ops.slice(opsAt, opsAt + max));
      let count = 0;
      for (let i = 1; i < ops.length; i += 2) count += ops[i] as number;
      const values = this.values.slice(valuesAt, valuesAt + count);
      const seq = ++this.seq;
      this.batches.set(seq, ops.length / 2);
      worker.postMessage({ type: 'batch', seq, ops, values }, [ops.buffer]);
      opsAt += max;
      valuesAt += count;
    }
    this.ops = [];
    this.values = [];
    worker.ref();
  }

  private receive(msg: FromWorker): void {
    if (msg.type === 'define-failed') {
      this.report(`storage writer: statement ${msg.name} does not prepare: ${msg.error}`);
    } else if (msg.type === 'done') {
      const count = this.batches.get(msg.seq) ?? 0;
      this.batches.delete(msg.seq);
      this.counters.written += msg.committed;
      if (msg.committed > 0) this.counters.flushes++;
      if (msg.failed > 0) {
        this.counters.failed += msg.failed;
        this.unreported.failed += msg.failed;
        this.unreported.first ??= msg.error;
        this.maybeReport();
      }
      this.settle(count);
    }
  }

  private settle(count: number): void {
    this.settled += count;
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.until <= this.settled);
      this.waiters = this.waiters.filter((w) => w.until > this.settled);
      for (const w of ready) w.resolve();
    }
    if (this.batches.size === 0 && this.waiters.length === 0 && !this.closing) this.worker?.unref();
  }

  private exited(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const lost = this.inFlight;
    const crash = this.crash === null ? '' : `: ${this.crash}`;
    this.crash = null;
    this.batches.clear();
    this.counters.lost += lost;
    if (this.closing) {
      if (lost > 0)
        this.report(
          `storage writer: ${lost} writes lost at close (the worker did not finish within ${this.options.closeTimeoutMs} ms${crash})`,
        );
      this.settle(lost);
      return;
    }
    const delay = Math.max(0, this.startedAt + this.options.restartDelayMs - Date.now());
    this.report(
      `storage writer worker exited (code ${code}${crash}): ${lost} writes lost; restarting in ${Math.round(delay / 1000)} s`,
    );
    this.settle(lost);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.closing || this.closed) return;
      this.counters.restarts++;
      this.spawn();
      this.post();
    }, delay);
    this.restartTimer.unref();
  }

  private async shutdown(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (!this.worker && this.ops.length > 0) this.spawn();
    this.post();
    const worker = this.worker;
    if (worker) {
      worker.ref();
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'close' });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>(
          (resolve) => (timer = setTimeout(() => resolve(true), this.options.closeTimeoutMs)),
        ),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        // terminate() takes effect when the worker's JavaScript runs again: a worker inside a
        // SQLite call (waiting on busy_timeout) stops when that call returns. Do not wait for it
        // past TERMINATE_WAIT_MS: the process may exit meanwhile, which ends the thread anyway.
        void worker.terminate().catch(() => undefined);
        await Promise.race([
          exited,
          new Promise<void>((resolve) => setTimeout(resolve, TERMINATE_WAIT_MS).unref()),
        ]);
        if (this.worker === worker) this.exited(worker, 1);
      }
    }
    // Anything still queued (no worker could take it) is lost.
    if (this.ops.length > 0) {
      const lost = this.queued;
      this.ops = [];
      this.values = [];
      this.counters.lost += lost;
      this.report(`storage writer: ${lost} queued writes lost at close`);
      this.settle(lost);
    }
    if (this.unreported.failed > 0 || this.unreported.dropped > 0) this.reportProblems();
  }

  private maybeReport(): void {
    if (Date.now() - this.unreported.at >= this.options.errorReportMs) this.reportProblems();
  }

  /** Skipped and dropped writes since the last report, in one message (at most once per errorReportMs). */
  private reportProblems(): void {
    const { failed, dropped, first } = this.unreported;
    this.unreported = { failed: 0, dropped: 0, first: null, at: Date.now() };
    if (failed > 0)
      this.report(
        `storage writer: ${failed} writes failed and were skipped (first: ${first ?? 'unknown'})`,
      );
    if (dropped > 0)
      this.report(
        `storage writer: ${dropped} writes dropped (more than ${this.options.maxQueued} queued while the worker was down)`,
      );
  }

  private report(message: string): void {
    try {
      this.onError(new Error(message));
    } catch {
      // A failing logger must not break the writer.
    }
  }
}
