/**
 * The storage writer (ARCHITECTURE.md, Storage): the one writer of high-rate rows in the process,
 * shared by every feed (poller samples now; syslog, Windows events, IDS events, flows later). It
 * is built once by the composition root, started first and closed last. A worker thread with its
 * own connection to the database file runs the writes in batched transactions
 * (storage-writer.worker.mjs), so a burst of writes never stalls the API thread.
 *
 * Statements. The feature that owns a table registers its statements by name (`define`), with
 * its namespace: `trackers.*`, `devices.*`, later `logs.*`, `flows.*`; a name without one is
 * refused. Only data crosses the thread boundary: statement ids and parameter arrays (no
 * closures). Reports, errors and notices never carry parameters.
 *
 * Producers. Whoever queues writes is a producer (`producer('trackers')` on this thread,
 * `connect('logs')` for another worker thread, `write()` alone is the `default` producer); a
 * producer may write any registered statement. Each has its own queue limit (`maxQueued`: writes
 * accepted and not yet settled) and its own counters, exact on the producer's thread:
 *   received = written + dropped + failed + lost + queued + inFlight
 * A write beyond the limit is dropped and counted (the NEWEST writes of the flooding producer;
 * no other producer's writes are touched, and memory stays bounded while the worker is stalled).
 * Each accepted write gets the producer's next sequence number (1, 2, ...: write() returns it).
 *
 * Fair batches and the latency bound. Producers buffer on their own thread and post straight to
 * the worker over their own port (the main thread relays nothing) every `flushMs` or
 * `postEvery` writes. A batch holds at most `maxPending` writes, taken from the producers in
 * turn (equal shares of what is left, the first producer rotating): with k producers queued,
 * each gets at least floor(maxPending / k) writes of every batch, so a producer with q writes
 * queued waits for at most the batch in progress plus ceil(q / floor(maxPending / k)) batches,
 * whatever the others have queued. A batch of 5000 rows takes about 25 ms (1 column) to 100 ms
 * (10 columns) on the 2 shared cores measured (test/bench/storage-writer.mjs). A producer's
 * writes commit in sequence order.
 *
 * Commit notices. After each batch every producer with writes in it hears (`onCommit`) which
 * statements committed (counts by name), how many failed, and up to which of its sequence
 * numbers everything is settled, with the commit time: a feed reports its "queryable" delay
 * from it, and alerting evaluates what was just stored without re-reading.
 *
 * Atomic groups. `group([{statement, params}, ...])` commits all-or-nothing in one transaction
 * and is never split across batches (one larger than `maxPending` is committed whole, as a batch
 * of its own); a failing op fails the group (the rest of the batch commits) and the promise says
 * `{committed: false, error}`. A group in flight when the worker dies resolves `{committed:
 * false, error: 'lost: ...'}`: the database then holds none of it (SQLite rolls back an
 * uncommitted transaction, also after a SIGKILL), except in the instant between COMMIT and the
 * notice, where a feed that must know (an IDS file offset) reads its committed offset back.
 *
 * Failures never reach the caller: a failing op is skipped and counted (the rest of its batch is
 * committed), and failures and drops are reported through `onError` at most once per
 * `errorReportMs`; a busy database is retried (worker); a crashed worker is restarted (at most
 * once per `restartDelayMs`), the writes it had not answered counted lost by their producers, and
 * the producers' buffers posted to the new one. close() is bounded by `closeTimeoutMs` (plus
 * about a second to terminate a worker stuck in SQLite); flush() waits for this thread's producers.
 *
 * Metrics. stats() is a synchronous snapshot by producer name: this thread's producers exactly,
 * clients in other threads as they last published (a seqlock'd SharedArrayBuffer written after
 * each post and each commit notice: at most their `flushMs` behind while their thread runs).
 *
 * TEMP-trigger caches (change-triggers.ts): the worker's connection does not fire the TEMP
 * triggers of the API connection, so a statement of the writer must never write a table or
 * column that a cache watches. Built from the API connection (`new StorageWriter(db)`), define()
 * and start() refuse such a statement, as SQLite compiles it (see refuseWatched).
 *
 * Defaults: flushMs 1000 and maxPending 5000 (poller samples: one transaction a second; a feed
 * that wants a short "queryable" delay asks for a few ms), maxQueued 200,000 per producer (about
 * 20 s of the pollers bench's load, ~8,000 writes/s; some 40-60 MB of rows), a worker heap of 256
 * MB (posted writes wait there: the sum of the producers' limits must fit), a page cache of 512
 * KiB. Throughput (test/bench/storage-writer.mjs, 300,000 rows, median of 3, 2 cores shared
 * with other work at load 12-14, so read it against the baseline of the same run): 1 column
 * 92,000-191,000 rows/s through the writer against 206,000 for better-sqlite3 alone on one
 * thread; 10 columns (a syslog-like row) 33,000-51,000 against 87,000. In CPU per row the writer
 * costs 2.2-3.5 µs (1 column; alone 1.6) and 7.8-9.7 µs (10 columns; alone 3.7): the structured
 * clone to the worker and its garbage. Parameters travel as one array per write, which halved
 * the worker's time against one flat array sliced per write.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { openDatabase, writeIntent, type DB } from './database.js';
import {
  Lane,
  newCounters,
  readCounters,
  COUNTER_FIELDS,
  type CommitNotice,
  type GroupOp,
  type GroupResult,
  type LaneHooks,
  type LaneOptions,
  type ProducerStats,
  type SqlParam,
} from './storage-writer.client.mjs';

export { StorageWriterClient } from './storage-writer.client.mjs';
export type { CommitNotice, GroupOp, GroupResult, ProducerStats, SqlParam };

export interface StorageWriterOptions {
  /** Producers post their buffered writes at most this long after the first of them (ms); producers' default. */
  flushMs?: number;
  /** The largest batch (one transaction; a larger atomic group excepted); producers' default post size. */
  maxPending?: number;
  /** Producers' default queue limit: writes accepted and not yet committed beyond this are dropped. */
  maxQueued?: number;
  /** How long close() waits for the producers' writes and the worker before terminating it (ms). */
  closeTimeoutMs?: number;
  /** Smallest delay between two starts of the worker after a crash (ms). */
  restartDelayMs?: number;
  /** Failed and dropped writes are reported at most once per this many ms (with counts and the first error). */
  errorReportMs?: number;
  /** The worker connection's page cache (KiB). */
  cacheSizeKb?: number;
  /** The worker's V8 heap limit (MB): the producers' queues live there once posted. */
  workerHeapMb?: number;
  /** Told about skipped and dropped writes, worker crashes and writes lost. Messages never hold parameters. */
  onError?: (err: Error) => void;
}

export interface ProducerOptions {
  /** Writes of this producer accepted and not yet settled beyond this are dropped (its newest). */
  maxQueued?: number;
  /** Buffered writes are posted at most this long after the first of them (ms). */
  flushMs?: number;
  /** Buffered writes are posted as soon as this many are buffered. */
  postEvery?: number;
}

/** What a producer can do: the same on the main thread and in a StorageWriterClient. */
export interface StorageWriterProducer {
  readonly name: string;
  /** Queues a write; returns its sequence number, or 0 when it was dropped or lost. Throws for an unknown statement. */
  write(statement: string, params: readonly SqlParam[]): number;
  /** Queues writes committed all-or-nothing in one transaction, never split across batches. */
  group(ops: readonly GroupOp[]): Promise<GroupResult>;
  /** Resolves when every write of this producer accepted before the call is settled. */
  flush(): Promise<void>;
  /** Called after each batch that held writes of this producer; returns a function that removes the listener. */
  onCommit(listener: (notice: CommitNotice) => void): () => void;
  stats(): ProducerStats;
}

export interface StorageWriterStats {
  /** Totals over every producer (see ProducerStats). */
  written: number;
  failed: number;
  dropped: number;
  lost: number;
  queued: number;
  inFlight: number;
  /** Batches committed. */
  flushes: number;
  /** Starts of the worker after a crash. */
  restarts: number;
  /** By producer name (the lanes of one name summed; clients of other threads as last published). */
  producers: Record<string, ProducerStats>;
}

const WORKER_URL = new URL('./storage-writer.worker.mjs', import.meta.url);
const TERMINATE_WAIT_MS = 500;
/** `<namespace>.<name>`: the namespace is the feature that owns the table (`trackers.`, `devices.`, `logs.` ...). */
const STATEMENT_NAME = /^[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)+$/;
const PRODUCER_NAME = /^[a-z][a-z0-9_-]*$/;
const EXPLAIN_MAX_PARAMS = 999;

interface LaneEntry {
  id: number;
  name: string;
  options: LaneOptions;
  /** A producer of this thread. */
  local: Lane | null;
  /** A client in another thread: the control port and the counters it publishes. */
  control: MessagePort | null;
  counters: BigInt64Array | null;
}

const zeroStats = (): ProducerStats => ({
  received: 0,
  written: 0,
  dropped: 0,
  failed: 0,
  lost: 0,
  queued: 0,
  inFlight: 0,
});

function addStats(into: ProducerStats, from: ProducerStats): void {
  for (const field of COUNTER_FIELDS) into[field] += from[field];
}

const sleep = (ms: number) =>
  new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export class StorageWriter {
  private readonly file: string;
  /** The API connection whose TEMP triggers a statement of the writer must not fire. */
  private readonly guard: DB | null;
  private readonly options: Required<Omit<StorageWriterOptions, 'onError'>>;
  private readonly onError: (err: Error) => void;
  private readonly ids = new Map<string, number>();
  private readonly definitions: { name: string; sql: string }[] = [];
  private readonly lanes = new Map<number, LaneEntry>();
  /** The producers of this thread, by name. */
  private readonly producers = new Map<string, Lane>();
  /** Final counters of clients that went away, by producer name. */
  private readonly retired = new Map<string, ProducerStats>();
  private nextLane = 1;
  /** Shared with the worker: [0] batches committed. */
  private readonly shared = new BigInt64Array(new SharedArrayBuffer(8));
  private worker: Worker | null = null;
  private startedAt = 0;
  /** The uncaught error of the worker that is exiting (reported with its exit). */
  private crash: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  private closed = false;
  private restarts = 0;
  /** Writes of this thread's producers lost in flight, and lost queued at close (for the messages). */
  private lostInFlight = 0;
  private lostQueued = 0;
  /** lostInFlight when the current worker started (its ports may close before its exit event). */
  private lostAtSpawn = 0;
  private unreported = {
    failed: 0,
    first: null as string | null,
    dropped: new Map<string, number>(),
    at: 0,
  };

  /**
   * @param target the database file, or the API connection to it: then define() and start()
   *   also refuse a statement that would fire one of its TEMP triggers (see the header).
   */
  constructor(target: string | DB, options: StorageWriterOptions = {}) {
    const file = typeof target === 'string' ? target : target.name;
    if (file === '' || file === ':memory:')
      throw new Error('the storage writer needs a database file (another connection opens it)');
    this.file = file;
    this.guard = typeof target === 'string' ? null : target;
    this.options = {
      flushMs: options.flushMs ?? 1000,
      maxPending: options.maxPending ?? 5000,
      maxQueued: options.maxQueued ?? 200_000,
      closeTimeoutMs: options.closeTimeoutMs ?? 3000,
      restartDelayMs: options.restartDelayMs ?? 10_000,
      errorReportMs: options.errorReportMs ?? 60_000,
      cacheSizeKb: options.cacheSizeKb ?? 512,
      workerHeapMb: options.workerHeapMb ?? 256,
    };
    this.onError = options.onError ?? (() => {});
  }

  /**
   * Registers a statement under `<namespace>.<name>` (the namespace is the feature that owns the
   * table), before or after start (a restarted worker gets every definition again). Throws for a
   * name without a namespace, a name already defined with other SQL, and (given the API
   * connection) a statement that writes what a TEMP trigger of that connection watches.
   */
  define(name: string, sql: string): void {
    if (!STATEMENT_NAME.test(name))
      throw new Error(
        `storage writer: statement name ${name} needs a namespace (<feature>.<name>, lower case)`,
      );
    const existing = this.ids.get(name);
    if (existing !== undefined) {
      if (this.definitions[existing]?.sql === sql) return;
      throw new Error(`storage writer: statement ${name} is already defined with other SQL`);
    }
    this.refuseWatched([{ name, sql }]);
    const id = this.definitions.length;
    this.definitions.push({ name, sql });
    this.ids.set(name, id);
    this.worker?.postMessage({ type: 'define', id, name, sql });
    for (const entry of this.lanes.values())
      entry.control?.postMessage({ type: 'define', id, name });
  }

  /**
   * The producer `name` of this thread (made on first use; later calls return the same one and
   * ignore `options`). Its writes, limit and counters are its own.
   */
  producer(name: string, options: ProducerOptions = {}): StorageWriterProducer {
    const existing = this.producers.get(name);
    if (existing) return existing;
    const entry = this.newLane(name, options);
    const lane = new Lane(name, entry.options, this.hooks(name));
    entry.local = lane;
    this.producers.set(name, lane);
    if (this.closed) lane.shut();
    this.openLane(entry);
    return lane;
  }

  /**
   * A producer in another worker thread: transfer the returned port to it and build a
   * `StorageWriterClient` on it there. Each call makes a new lane (its own queue, limit and
   * counters); lanes of one name are summed in stats(). Its counters reach stats() as it
   * publishes them (after each post and each commit notice: at most `flushMs` behind).
   */
  connect(name: string, options: ProducerOptions = {}): MessagePort {
    const entry = this.newLane(name, options);
    const { port1: control, port2: theirs } = new MessageChannel();
    entry.control = control;
    entry.counters = newCounters();
    control.postMessage({
      type: 'hello',
      name,
      options: entry.options,
      statements: [...this.ids],
      counters: entry.counters,
      closed: this.closed,
    });
    control.on(
      'message',
      (msg: { type: string; failed: number; error: string | null; dropped: number }) => {
        if (msg.type !== 'problems') return;
        if (msg.failed > 0) this.failed(msg.failed, msg.error);
        if (msg.dropped > 0) this.dropped(name, msg.dropped);
      },
    );
    control.once('close', () => this.retire(entry));
    control.unref();
    this.openLane(entry);
    return theirs;
  }

  /** Starts the worker (a write starts it too). Throws when a statement fires a TEMP trigger of the API connection. */
  start(): void {
    if (this.closing) return;
    const running = this.worker !== null || this.restartTimer !== null;
    if (!running) this.refuseWatched(this.definitions);
    if (this.closed) {
      this.closed = false;
      for (const entry of this.lanes.values()) {
        entry.local?.open();
        entry.control?.postMessage({ type: 'open' });
      }
    }
    if (!running) this.spawn();
  }

  /** Queues a write through the `default` producer (see StorageWriterProducer.write). */
  write(name: string, params: readonly SqlParam[]): number {
    return this.producer('default').write(name, params);
  }

  /** Resolves when every write of this thread's producers queued before the call is settled. */
  async flush(): Promise<void> {
    await Promise.all([...this.producers.values()].map((lane) => lane.flush()));
  }

  /**
   * Posts what this thread's producers queued, waits for the worker to commit it and ends the
   * worker. Bounded: after `closeTimeoutMs` the worker is terminated and the writes it had not
   * answered are counted lost. Clients in other threads are told; their later writes are lost.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => {
      this.closing = null;
      this.closed = true;
    });
    return this.closing;
  }

  /** A synchronous snapshot (clients of other threads as they last published: see connect()). */
  stats(): StorageWriterStats {
    const producers: Record<string, ProducerStats> = {};
    const add = (name: string, stats: ProducerStats) =>
      addStats((producers[name] ??= zeroStats()), stats);
    for (const [name, stats] of this.retired) add(name, stats);
    for (const entry of this.lanes.values()) {
      if (entry.local) add(entry.name, entry.local.stats());
      else if (entry.counters) add(entry.name, readCounters(entry.counters));
    }
    const total = zeroStats();
    for (const stats of Object.values(producers)) addStats(total, stats);
    const { written, failed, dropped, lost, queued, inFlight } = total;
    return {
      written,
      failed,
      dropped,
      lost,
      queued,
      inFlight,
      flushes: Number(Atomics.load(this.shared, 0)),
      restarts: this.restarts,
      producers,
    };
  }

  get queued(): number {
    return this.stats().queued;
  }

  get inFlight(): number {
    return this.stats().inFlight;
  }

  // --- lanes --------------------------------------------------------------------------------------

  private newLane(name: string, options: ProducerOptions): LaneEntry {
    if (!PRODUCER_NAME.test(name)) throw new Error(`storage writer: bad producer name ${name}`);
    const entry: LaneEntry = {
      id: this.nextLane++,
      name,
      options: {
        maxQueued: options.maxQueued ?? this.options.maxQueued,
        flushMs: options.flushMs ?? this.options.flushMs,
        postEvery: options.postEvery ?? this.options.maxPending,
      },
      local: null,
      control: null,
      counters: null,
    };
    this.lanes.set(entry.id, entry);
    return entry;
  }

  private hooks(name: string): LaneHooks {
    return {
      resolve: (statement) => this.ids.get(statement),
      wake: () => {
        if (!this.closed && !this.closing && !this.worker && !this.restartTimer) this.spawn();
      },
      failed: (count, error) => this.failed(count, error),
      dropped: (count) => this.dropped(name, count),
      lost: (count, reason) => {
        if (reason === 'closed') this.lostQueued += count;
        else this.lostInFlight += count;
      },
      listenerError: (err) =>
        this.report(
          `storage writer: a commit listener of ${name} threw: ${err instanceof Error ? err.message : String(err)}`,
        ),
    };
  }

  /** Links a lane to the running worker (spawn() links every lane to a new one). */
  private openLane(entry: LaneEntry): void {
    const worker = this.worker;
    if (!worker) return;
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ type: 'lane', id: entry.id, name: entry.name, port: port1 }, [port1]);
    this.attach(entry, port2);
  }

  private attach(entry: LaneEntry, port: MessagePort): void {
    if (entry.local) entry.local.attach(port);
    else entry.control?.postMessage({ type: 'attach', port }, [port]);
  }

  /** A client went away: its last published counters are kept under its name. */
  private retire(entry: LaneEntry): void {
    if (!this.lanes.delete(entry.id) || !entry.counters) return;
    addStats(
      this.retired.get(entry.name) ??
        (this.retired.set(entry.name, zeroStats()).get(entry.name) as ProducerStats),
      readCounters(entry.counters),
    );
  }

  // --- the worker -----------------------------------------------------------------------------

  private spawn(): void {
    const lanes: { id: number; name: string; port: MessagePort }[] = [];
    const links: [LaneEntry, MessagePort][] = [];
    for (const entry of this.lanes.values()) {
      const { port1, port2 } = new MessageChannel();
      lanes.push({ id: entry.id, name: entry.name, port: port1 });
      links.push([entry, port2]);
    }
    const worker = new Worker(WORKER_URL, {
      workerData: {
        file: this.file,
        attached: this.attachedTablespaces(),
        cacheSizeKb: this.options.cacheSizeKb,
        maxBatch: this.options.maxPending,
        counters: this.shared,
        writeIntent: this.guard ? writeIntent(this.guard) : null,
        statements: this.definitions.map(({ name, sql }, id) => ({ id, name, sql })),
        lanes,
      },
      transferList: lanes.map((lane) => lane.port),
      resourceLimits: {
        maxOldGenerationSizeMb: this.options.workerHeapMb,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 2,
      },
      stdout: false,
      stderr: false,
    });
    this.worker = worker;
    this.startedAt = Date.now();
    this.lostAtSpawn = this.lostInFlight;
    worker.on('message', (msg: { type: string; name?: string; error?: string }) => {
      if (msg.type === 'define-failed')
        this.report(`storage writer: statement ${msg.name} does not prepare: ${msg.error}`);
    });
    worker.on('error', (err) => (this.crash = err.message));
    worker.on('exit', (code) => this.exited(worker, code));
    worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
    for (const [entry, port] of links) this.attach(entry, port);
  }

  private exited(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (this.closing) return;
    const crash = this.crash === null ? '' : `: ${this.crash}`;
    this.crash = null;
    const delay = Math.max(0, this.startedAt + this.options.restartDelayMs - Date.now());
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.closing || this.closed) return;
      this.restarts++;
      this.spawn();
    }, delay);
    this.restartTimer.unref();
    const before = this.lostAtSpawn;
    void this.detachLocal(true).then(() =>
      this.report(
        `storage writer worker exited (code ${code}${crash}): ${this.lostInFlight - before} writes lost; restarting in ${Math.round(delay / 1000)} s`,
      ),
    );
  }

  /**
   * Unlinks this thread's producers from an ended worker: their ports close once its last
   * answers are delivered (waited for up to TERMINATE_WAIT_MS when `ended`); the rest is
   * detached at once, its unanswered writes counted lost.
   */
  private async detachLocal(ended: boolean): Promise<void> {
    const lanes = [...this.producers.values()].filter((lane) => lane.attached);
    if (ended && lanes.length > 0)
      await Promise.race([
        Promise.all(lanes.map((lane) => lane.detached())),
        sleep(TERMINATE_WAIT_MS),
      ]);
    for (const lane of lanes) lane.detach('the storage writer worker did not end in time');
  }

  private async shutdown(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    const lostBefore = this.lostInFlight;
    const lanes = [...this.producers.values()];
    if (!this.worker && lanes.some((lane) => lane.stats().queued > 0)) this.spawn();
    // This thread's producers post what they hold, and it is committed (or the time is up).
    await Promise.race([
      Promise.all(lanes.map((lane) => lane.flush())),
      sleep(this.options.closeTimeoutMs),
    ]);
    for (const entry of this.lanes.values()) entry.control?.postMessage({ type: 'closed' });
    const worker = this.worker;
    let ended = true;
    if (worker) {
      worker.ref();
      const exited = new Promise<'exited'>((resolve) =>
        worker.once('exit', () => resolve('exited')),
      );
      worker.postMessage({ type: 'close' });
      if ((await Promise.race([exited, sleep(Math.max(0, deadline - Date.now()))])) === 'timeout') {
        // terminate() takes effect when the worker's JavaScript runs again: a worker inside a
        // SQLite call (waiting on busy_timeout) stops when that call returns. Do not wait for it
        // past TERMINATE_WAIT_MS: the process may exit meanwhile, which ends the thread anyway.
        void worker.terminate().catch(() => undefined);
        ended = (await Promise.race([exited, sleep(TERMINATE_WAIT_MS)])) === 'exited';
      }
      if (this.worker === worker) this.worker = null;
    }
    const crash = this.crash === null ? '' : `: ${this.crash}`;
    this.crash = null;
    await this.detachLocal(ended);
    const lost = this.lostInFlight - lostBefore;
    if (lost > 0)
      this.report(
        `storage writer: ${lost} writes lost at close (the worker did not finish within ${this.options.closeTimeoutMs} ms${crash})`,
      );
    // Anything still queued (no worker could take it) is lost.
    const queuedBefore = this.lostQueued;
    for (const lane of lanes) lane.shut();
    if (this.lostQueued > queuedBefore)
      this.report(`storage writer: ${this.lostQueued - queuedBefore} queued writes lost at close`);
    if (this.unreported.failed > 0 || this.unreported.dropped.size > 0) this.reportProblems();
  }

  // --- the TEMP-trigger guard -------------------------------------------------------------------

  /**
   * Refuses statements that would fire a TEMP trigger of the API connection (the caches of
   * change-triggers.ts): run by the worker's connection they would not, and the cache would be
   * stale. SQLite decides, not a parser: the statement is compiled (EXPLAIN) on the API
   * connection and on a plain one; trigger programs (`Program` opcodes, nested ones included)
   * that only the API connection has are TEMP triggers it would fire.
   */
  /**
   * The tablespaces (tablespaces.ts) attached to the API connection, attached by the worker's
   * connection too at each start: every connection of the process sees the same files.
   */
  private attachedTablespaces(): { schema: string; file: string }[] {
    if (!this.guard) return [];
    return (this.guard.pragma('database_list') as { name: string; file: string }[])
      .filter((row) => /^ts_[a-z][a-z0-9_]{0,30}$/.test(row.name))
      .map((row) => ({ schema: row.name, file: row.file }));
  }

  private refuseWatched(definitions: readonly { name: string; sql: string }[]): void {
    const main = this.guard;
    if (!main || definitions.length === 0) return;
    const { n } = main
      .prepare("SELECT count(*) AS n FROM sqlite_temp_master WHERE type = 'trigger'")
      .get() as { n: number };
    if (n === 0) return;
    const plain = openDatabase(this.file, { readonly: true });
    try {
      for (const { name, sql } of definitions) {
        const watched = programs(main, sql);
        const unwatched = programs(plain, sql);
        if (watched !== null && unwatched !== null && watched > unwatched)
          throw new Error(
            `storage writer: statement ${name} writes a table or column that a cache of the API connection watches (it would fire ${watched - unwatched} TEMP trigger(s) there, and none from the writer's connection): write it on the API connection`,
          );
      }
    } finally {
      plain.close();
    }
  }

  // --- reports ------------------------------------------------------------------------------------

  private failed(count: number, error: string | null): void {
    this.unreported.failed += count;
    this.unreported.first ??= error;
    this.maybeReport();
  }

  private dropped(name: string, count: number): void {
    this.unreported.dropped.set(name, (this.unreported.dropped.get(name) ?? 0) + count);
    this.maybeReport();
  }

  private maybeReport(): void {
    if (Date.now() - this.unreported.at >= this.options.errorReportMs) this.reportProblems();
  }

  /** Skipped and dropped writes since the last report, in one message each (at most once per errorReportMs). */
  private reportProblems(): void {
    const { failed, first, dropped } = this.unreported;
    this.unreported = { failed: 0, first: null, dropped: new Map(), at: Date.now() };
    if (failed > 0)
      this.report(
        `storage writer: ${failed} writes failed and were skipped (first: ${first ?? 'unknown'})`,
      );
    if (dropped.size > 0) {
      const total = [...dropped.values()].reduce((a, b) => a + b, 0);
      const by = [...dropped].map(([name, n]) => `${name}: ${n}`).join(', ');
      this.report(`storage writer: ${total} writes dropped at full producer queues (${by})`);
    }
  }

  private report(message: string): void {
    try {
      this.onError(new Error(message));
    } catch {
      // A failing logger must not break the writer.
    }
  }
}

/** How many trigger programs `sql` compiles to on `db` (null when it does not prepare there). */
function programs(db: DB, sql: string): number | null {
  const nulls: null[] = [];
  for (let i = 0; i <= EXPLAIN_MAX_PARAMS; i++, nulls.push(null)) {
    try {
      const rows = db.prepare(`EXPLAIN ${sql}`).all(...nulls) as { opcode: string }[];
      return rows.filter((row) => row.opcode === 'Program').length;
    } catch (err) {
      if (!(err instanceof RangeError) || !/Too few/.test(err.message)) return null;
    }
  }
  return null;
}
