// @ts-check
/**
 * The producer side of the storage writer (storage-writer.ts): what a producer runs on its own
 * thread. `Lane` is one producer's queue, sequence numbers, counters and commit notifications;
 * the writer makes one per `producer()` on the main thread, and `StorageWriterClient` is a lane
 * in another worker thread, built from the port `writer.connect()` returned. Plain JavaScript
 * (like the writer's worker) so that a worker thread imports it under the build and Vitest
 * alike; its types are in storage-writer.client.d.mts.
 *
 * A lane buffers writes as statement ids and parameter arrays (copied: the caller may reuse its
 * arrays), and posts them straight to the writer's worker over its own data port (the main
 * thread relays nothing) when `postEvery` are buffered or `flushMs` after the first buffered
 * write: never one message per write. Each accepted write gets the next sequence number of the lane (1, 2, ...); the
 * worker answers each batch with a commit notice for the lane (what committed, by statement, and
 * up to which sequence number), which settles the writes, resolves atomic groups and flush(), and
 * is handed to `onCommit` listeners.
 *
 * Bounds and accounting (all exact, all on the producer's thread):
 *   received = written + failed + dropped + lost + queued + inFlight
 * A write is dropped (never queued) when `maxQueued` of the lane's writes are accepted and not
 * yet settled (buffered here, in transit, queued in the worker or in its transaction): the
 * newest writes of a flooding lane are dropped, nothing else is, and memory stays bounded even
 * while the worker is stalled or down. A group is accepted or dropped whole. Lost: writes posted
 * to a worker that ended before answering (a crash, or close() running out of time), and writes
 * made after the writer closed. Settlement is in sequence order (the worker takes a lane's
 * writes first in, first out), so one watermark says what is settled.
 *
 * The counters are published to a SharedArrayBuffer (a seqlock keeps each snapshot consistent)
 * after every post and every commit notice, and `flushMs` after a drop, so that the main thread
 * reads a client's counters synchronously, lagging by at most `flushMs` while the client's
 * thread runs.
 *
 * Control messages (main -> client, on the port connect() returned):
 *   {type:'hello', name, options, statements, counters, closed} (first, read synchronously),
 *   {type:'attach', port} (a data port to the current worker, after every start of it),
 *   {type:'define', id, name}, {type:'closed'} | {type:'open'} (the writer closed or started again).
 * Client -> main: {type:'problems', failed, error, dropped} (at most once per flushMs).
 * Data port (lane <-> worker): see storage-writer.worker.mjs. Messages never carry parameters
 * outside the writes themselves; errors name the statement and SQLite's message only.
 */
import { receiveMessageOnPort } from 'node:worker_threads';

/** @typedef {number | string | bigint | null} SqlParam */
/** @typedef {{ statement: string, params: readonly SqlParam[] }} GroupOp */
/** @typedef {{ committed: true } | { committed: false, error: string }} GroupResult */
/** @typedef {{ producer: string, upTo: number, written: number, failed: number, statements: Record<string, number>, at: number }} CommitNotice */
/** @typedef {{ received: number, written: number, dropped: number, failed: number, lost: number, queued: number, inFlight: number }} ProducerStats */
/** @typedef {{ maxQueued: number, flushMs: number, postEvery: number }} LaneOptions */
/**
 * @typedef {object} LaneHooks
 * @property {(name: string) => number | undefined} resolve statement name to id
 * @property {() => void} wake the lane has writes to post and no port (the writer may start)
 * @property {(count: number, error: string | null) => void} failed writes skipped by the worker
 * @property {(count: number) => void} dropped writes dropped at a full queue
 * @property {(count: number, reason: string) => void} lost writes lost with a worker
 * @property {(err: unknown) => void} listenerError an onCommit listener threw
 */
/**
 * @typedef {{ type: 'commit', upTo: number, written: number, failed: number,
 *   statements: Record<string, number>, groups: [number, string][] | null, error: string | null, at: number }} CommitMessage
 */

/** The published counters, in slot order after the seqlock's version (slot 0). */
export const COUNTER_FIELDS = /** @type {const} */ ([
  'received',
  'written',
  'dropped',
  'failed',
  'lost',
  'queued',
  'inFlight',
]);

/** A counters block for one lane, shareable between threads. */
export function newCounters() {
  return new BigInt64Array(new SharedArrayBuffer(8 * (COUNTER_FIELDS.length + 1)));
}

/**
 * A consistent snapshot of a lane's published counters (retries while the lane is writing them;
 * bounded: after 100 tries the last read is returned).
 * @param {BigInt64Array} counters
 * @returns {ProducerStats}
 */
export function readCounters(counters) {
  /** @type {Record<string, number>} */
  let out = {};
  for (let attempt = 0; attempt < 100; attempt++) {
    const before = Atomics.load(counters, 0);
    out = {};
    COUNTER_FIELDS.forEach((field, i) => (out[field] = Number(Atomics.load(counters, i + 1))));
    if (before % 2n === 0n && Atomics.load(counters, 0) === before) break;
  }
  return /** @type {ProducerStats} */ (out);
}

const NOOP = () => {};

export class Lane {
  /** @type {string} */
  name;
  /** @type {LaneOptions} */
  #options;
  /** @type {LaneHooks} */
  #hooks;
  /** @type {BigInt64Array | null} */
  #counters;
  #c = { received: 0, written: 0, dropped: 0, failed: 0, lost: 0 };
  /** Last sequence number accepted, posted, and settled (committed, failed or lost). */
  #seq = 0;
  #posted = 0;
  #settled = 0;
  /** Buffered writes: statement ids, each write's parameters (a copy), and groups as (first op, op count) pairs. */
  /** @type {number[]} */
  #ops = [];
  /** @type {SqlParam[][]} */
  #values = [];
  /** @type {number[]} */
  #groups = [];
  /** Groups posted or buffered, in sequence order, waiting for their outcome. */
  /** @type {{ last: number, resolve: (r: GroupResult) => void }[]} */
  #pendingGroups = [];
  /** @type {{ until: number, resolve: () => void }[]} */
  #waiters = [];
  /** @type {Set<(notice: CommitNotice) => void>} */
  #listeners = new Set();
  /** @type {import('node:worker_threads').MessagePort | null} */
  #port = null;
  /** @type {(() => void)[]} */
  #detachWaiters = [];
  /** @type {NodeJS.Timeout | null} */
  #timer = null;
  #closed = false;
  #dirty = false;

  /**
   * @param {string} name
   * @param {LaneOptions} options
   * @param {LaneHooks} hooks
   * @param {BigInt64Array | null} counters published here when given
   */
  constructor(name, options, hooks, counters = null) {
    this.name = name;
    this.#options = options;
    this.#hooks = hooks;
    this.#counters = counters;
  }

  /**
   * Queues a write of a registered statement. Returns its sequence number, or 0 when it was not
   * accepted (dropped at a full queue, or lost after close). Throws only for an unknown statement.
   * @param {string} statement
   * @param {readonly SqlParam[]} params
   */
  write(statement, params) {
    const id = this.#resolve(statement);
    this.#c.received++;
    if (!this.#admit(1)) return 0;
    this.#ops.push(id);
    this.#values.push(params.slice());
    const seq = ++this.#seq;
    this.#queued();
    return seq;
  }

  /**
   * Queues writes committed all-or-nothing in one transaction, never split across batches. The
   * promise says whether they committed; a group lost with a crashed worker says `committed:
   * false` and the database holds either all of it or none.
   * @param {readonly GroupOp[]} ops
   * @returns {Promise<GroupResult>}
   */
  group(ops) {
    const ids = ops.map((op) => this.#resolve(op.statement));
    this.#c.received += ops.length;
    if (ops.length === 0) return Promise.resolve({ committed: true });
    if (!this.#admit(ops.length))
      return Promise.resolve({
        committed: false,
        error: this.#closed
          ? 'storage writer closed'
          : `dropped: more than ${this.#options.maxQueued} writes queued`,
      });
    this.#groups.push(this.#ops.length, ops.length);
    ops.forEach((op, i) => {
      this.#ops.push(/** @type {number} */ (ids[i]));
      this.#values.push(op.params.slice());
    });
    this.#seq += ops.length;
    const last = this.#seq;
    const result = new Promise((resolve) => this.#pendingGroups.push({ last, resolve }));
    this.#queued();
    return /** @type {Promise<GroupResult>} */ (result);
  }

  /** Resolves when every write accepted before the call is settled (see stats()). */
  flush() {
    if (this.#settled >= this.#seq) return Promise.resolve();
    const until = this.#seq;
    /** @type {Promise<void>} */
    const done = new Promise((resolve) => this.#waiters.push({ until, resolve: () => resolve() }));
    this.post();
    if (!this.#port) this.#hooks.wake();
    this.#port?.ref();
    return done;
  }

  /**
   * Calls `listener` after each batch that held writes of this lane, with what committed.
   * @param {(notice: CommitNotice) => void} listener
   * @returns {() => void} removes the listener
   */
  onCommit(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** @returns {ProducerStats} */
  stats() {
    const queued = this.#ops.length;
    return { ...this.#c, queued, inFlight: this.#seq - this.#settled - queued };
  }

  /** Posts the buffered writes to the worker now (when a worker is attached). */
  post() {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const port = this.#port;
    if (port && this.#ops.length > 0) {
      const ops = Int32Array.from(this.#ops);
      const groups = this.#groups.length > 0 ? Int32Array.from(this.#groups) : null;
      const message = { type: 'writes', seq: this.#posted + 1, ops, values: this.#values, groups };
      port.postMessage(message, groups ? [ops.buffer, groups.buffer] : [ops.buffer]);
      this.#posted = this.#seq;
      this.#ops = [];
      this.#values = [];
      this.#groups = [];
      port.ref();
      this.#dirty = true;
    } else if (!port && this.#ops.length > 0 && !this.#closed) {
      this.#hooks.wake();
    }
    this.#publish();
  }

  // --- link to the worker (called by the writer, or by the client's control messages) ----------

  /** @param {import('node:worker_threads').MessagePort} port a data port to the current worker */
  attach(port) {
    if (this.#port) this.detach('replaced by a new worker link');
    this.#port = port;
    port.on('message', (/** @type {CommitMessage} */ msg) => {
      if (this.#port === port && msg.type === 'commit') this.#commit(msg);
    });
    port.once('close', () => {
      if (this.#port === port) this.#lose('the storage writer worker ended before answering');
    });
    port.unref();
    this.post();
  }

  /** Drops the link to the worker now: writes posted and not answered are counted lost. */
  detach(reason = 'the storage writer worker ended before answering') {
    const port = this.#port;
    if (!port) return;
    this.#lose(reason);
    port.close();
  }

  /** Resolves when the lane has no link to a worker (its port closed or it was detached). */
  detached() {
    if (!this.#port) return Promise.resolve();
    return new Promise((resolve) => this.#detachWaiters.push(() => resolve(undefined)));
  }

  get attached() {
    return this.#port !== null;
  }

  /**
   * The writer closed: later writes are counted lost until open(). What is buffered is posted
   * when a worker is still attached (it settles like any write), else counted lost.
   */
  shut() {
    this.#closed = true;
    if (this.#port) {
      this.post();
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const n = this.#ops.length;
    if (n > 0) {
      // Without a port nothing is in flight (#lose settled it): the buffered writes are the rest.
      this.#ops = [];
      this.#values = [];
      this.#groups = [];
      this.#c.lost += n;
      this.#posted = this.#seq;
      this.#settleTo(this.#seq, 'storage writer closed');
      this.#hooks.lost(n, 'closed');
    }
    this.#dirty = true;
    this.#publish();
  }

  /** The writer started again. */
  open() {
    this.#closed = false;
  }

  // --- internals --------------------------------------------------------------------------------

  /** @param {string} statement */
  #resolve(statement) {
    const id = this.#hooks.resolve(statement);
    if (id === undefined) throw new Error(`storage writer: unknown statement ${statement}`);
    return id;
  }

  /** Accepts `n` more writes, or counts them lost (closed) or dropped (queue full). @param {number} n */
  #admit(n) {
    if (this.#closed) {
      this.#c.lost += n;
      this.#changed();
      return false;
    }
    if (this.#seq - this.#settled + n > this.#options.maxQueued) {
      this.#c.dropped += n;
      this.#hooks.dropped(n);
      this.#changed();
      return false;
    }
    return true;
  }

  #queued() {
    if (this.#ops.length >= this.#options.postEvery) this.post();
    else this.#changed();
  }

  /** Schedules a post (and a publish) flushMs from now, unless one is scheduled. */
  #changed() {
    this.#dirty = true;
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => this.post(), this.#options.flushMs);
    this.#timer.unref();
  }

  /** @param {CommitMessage} msg */
  #commit(msg) {
    this.#c.written += msg.written;
    this.#c.failed += msg.failed;
    if (msg.failed > 0) this.#hooks.failed(msg.failed, msg.error);
    /** @type {Map<number, string>} */
    const failedGroups = new Map(msg.groups ?? []);
    this.#settleTo(msg.upTo, null, failedGroups);
    this.#dirty = true;
    this.#publish();
    if (this.#listeners.size > 0) {
      /** @type {CommitNotice} */
      const notice = {
        producer: this.name,
        upTo: msg.upTo,
        written: msg.written,
        failed: msg.failed,
        statements: msg.statements,
        at: msg.at,
      };
      for (const listener of this.#listeners) {
        try {
          listener(notice);
        } catch (err) {
          this.#hooks.listenerError(err);
        }
      }
    }
  }

  /** Counts what was posted and not answered as lost and forgets the port. @param {string} reason */
  #lose(reason) {
    const n = this.#posted - this.#settled;
    this.#port = null;
    this.#c.lost += n;
    this.#settleTo(this.#posted, `lost: ${reason}`);
    if (n > 0) this.#hooks.lost(n, reason);
    this.#dirty = true;
    this.#publish();
    const waiters = this.#detachWaiters;
    this.#detachWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Moves the settled watermark to `upTo` (never back), resolving groups and flush() waiters.
   * @param {number} upTo
   * @param {string | null} lostReason groups up to here failed for this reason (else committed unless in `failed`)
   * @param {Map<number, string>} [failed] failed groups by last sequence number
   */
  #settleTo(upTo, lostReason, failed) {
    if (upTo > this.#settled) this.#settled = upTo;
    while (this.#pendingGroups.length > 0) {
      const group = /** @type {{ last: number, resolve: (r: GroupResult) => void }} */ (
        this.#pendingGroups[0]
      );
      if (group.last > this.#settled) break;
      this.#pendingGroups.shift();
      const error = lostReason ?? failed?.get(group.last);
      group.resolve(error === undefined ? { committed: true } : { committed: false, error });
    }
    if (this.#waiters.length > 0) {
      const ready = this.#waiters.filter((w) => w.until <= this.#settled);
      this.#waiters = this.#waiters.filter((w) => w.until > this.#settled);
      for (const w of ready) w.resolve();
    }
    if (this.#posted <= this.#settled && this.#waiters.length === 0) this.#port?.unref();
  }

  #publish() {
    const counters = this.#counters;
    if (!counters || !this.#dirty) return;
    this.#dirty = false;
    const stats = /** @type {Record<string, number>} */ (/** @type {unknown} */ (this.stats()));
    Atomics.add(counters, 0, 1n);
    COUNTER_FIELDS.forEach((field, i) => Atomics.store(counters, i + 1, BigInt(stats[field] ?? 0)));
    Atomics.add(counters, 0, 1n);
  }
}

/**
 * A producer in another worker thread: `new StorageWriterClient(port)` with the port that
 * `writer.connect(name, options)` returned (transferred to this thread). Same producer API as
 * `writer.producer()`: write, group, flush, onCommit, stats; close() when done.
 */
export class StorageWriterClient extends Lane {
  /** @type {import('node:worker_threads').MessagePort} */
  #control;
  /** @type {Map<string, number>} */
  #ids;
  #problems = { failed: 0, error: /** @type {string | null} */ (null), dropped: 0 };
  /** @type {NodeJS.Timeout | null} */
  #problemTimer = null;
  #flushMs;

  /** @param {import('node:worker_threads').MessagePort} port */
  constructor(port) {
    const hello = receiveMessageOnPort(port)?.message;
    if (!hello || hello.type !== 'hello')
      throw new Error('storage writer client: not a port from StorageWriter.connect()');
    /** @type {Map<string, number>} */
    const ids = new Map(hello.statements);
    /** @type {LaneHooks} The ones that need `this` are set after super(). */
    const hooks = {
      resolve: (name) => ids.get(name),
      wake: NOOP,
      failed: NOOP,
      dropped: NOOP,
      lost: NOOP,
      listenerError: NOOP,
    };
    super(hello.name, hello.options, hooks, hello.counters);
    hooks.resolve = (name) => {
      if (!ids.has(name)) this.#drain();
      return ids.get(name);
    };
    hooks.failed = (count, error) => this.#problem(count, error, 0);
    hooks.dropped = (count) => this.#problem(0, null, count);
    this.#ids = ids;
    this.#control = port;
    this.#flushMs = hello.options.flushMs;
    if (hello.closed) this.shut();
    this.#drain();
    port.on('message', (msg) => this.#onControl(msg));
    port.unref();
  }

  /** Flushes (bounded by `timeoutMs`) and closes the link; later writes are counted lost. */
  async close(timeoutMs = 5000) {
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    await Promise.race([
      this.flush(),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
    this.shut();
    this.#sendProblems();
    this.detach('the client closed');
    this.#control.close();
  }

  /** Handles the control messages already queued, synchronously. */
  #drain() {
    for (let i = 0; i < 10_000; i++) {
      const received = receiveMessageOnPort(this.#control);
      if (!received) return;
      this.#onControl(received.message);
    }
  }

  /** @param {{ type: string, port?: import('node:worker_threads').MessagePort, id?: number, name?: string }} msg */
  #onControl(msg) {
    if (msg.type === 'attach' && msg.port) this.attach(msg.port);
    else if (msg.type === 'define' && msg.name !== undefined && msg.id !== undefined)
      this.#ids.set(msg.name, msg.id);
    else if (msg.type === 'closed') this.shut();
    else if (msg.type === 'open') this.open();
  }

  /** @param {number} failed @param {string | null} error @param {number} dropped */
  #problem(failed, error, dropped) {
    this.#problems.failed += failed;
    this.#problems.error ??= error;
    this.#problems.dropped += dropped;
    if (this.#problemTimer) return;
    this.#problemTimer = setTimeout(() => this.#sendProblems(), this.#flushMs);
    this.#problemTimer.unref();
  }

  #sendProblems() {
    if (this.#problemTimer) clearTimeout(this.#problemTimer);
    this.#problemTimer = null;
    const { failed, error, dropped } = this.#problems;
    if (failed === 0 && dropped === 0) return;
    this.#problems = { failed: 0, error: null, dropped: 0 };
    this.#control.postMessage({ type: 'problems', failed, error, dropped });
  }
}
