// @ts-check
/**
 * The storage writer's thread (see storage-writer.ts): its own better-sqlite3 connection to the
 * appliance database with the house pragmas, statements registered by name, one queue per lane
 * (a producer's link: storage-writer.client.mjs), and batches, each run in one transaction.
 * Plain JavaScript so the build and Vitest run this file.
 *
 * Batches. A batch takes at most `maxBatch` writes, from the lanes in turn (the first lane
 * rotates from batch to batch): each lane with queued writes gets an equal share of what is
 * left, in rounds, until the batch is full or the queues are empty. So with k lanes queued, each
 * gets at least floor(maxBatch / k) writes of every batch, whatever the others have queued, and
 * one lane's backlog never delays another's writes by more than the batch in progress plus
 * ceil(own queued / floor(maxBatch / k)) batches. A lane's writes are taken first in, first out.
 * An atomic group is taken whole or not at all: when it does not fit in the lane's share it
 * waits, and it is taken whatever its size when the lane comes first in a batch (so within k
 * batches); a group larger than maxBatch is a batch of its own.
 *
 * Failures. A batch that fails is re-run op by op inside one transaction, each op (each group)
 * in its own SAVEPOINT: failing ops are skipped and counted failed, a group with a failing op
 * fails whole, and the rest of the batch commits. A busy database (another connection holding
 * the write lock past busy_timeout) is retried BUSY_ATTEMPTS times before the batch counts failed.
 * A write whose statement the worker has not yet been told about (the define message travels on
 * another port than the lane's writes) waits for it: its lane is skipped until it arrives.
 *
 * Messages in (parent port):
 *   {type:'define', id, name, sql} | {type:'lane', id, name, port} | {type:'close'}
 *   workerData: {file, attached: [{schema, file}], cacheSizeKb, maxBatch, counters, writeIntent, statements: [{id, name, sql}], lanes: [{id, name, port}]}
 * Messages in (a lane's port): {type:'writes', seq, ops, values, groups}
 *   `ops` is an Int32Array of statement ids; `values` the parameter array of each op (an array
 *   per op clones and binds in about half the time of one flat array sliced per op, measured);
 *   `groups` an Int32Array of (first op, op count) pairs or null; `seq` the lane's sequence
 *   number of the first op (the others follow).
 * Messages out (a lane's port), one per batch that held writes of the lane, after its commit:
 *   {type:'commit', upTo, written, failed, statements: {name: committed}, groups: [[last seq, error]] | null, error, at}
 *   `groups` lists the failed groups of the batch; `error` is the first failure's statement name
 *   and SQLite message: never parameters.
 * Messages out (parent port): {type:'define-failed', name, error} | {type:'closed'}
 * Shared counters (workerData.counters, BigInt64Array): [0] batches committed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @typedef {number | string | bigint | null} Param */
/** @typedef {import('node:worker_threads').MessagePort} Port */
/** @typedef {{ name: string, statement: import('better-sqlite3').Statement | null, error: string | null }} Entry */
/** @typedef {{ seq: number, ops: Int32Array, values: Param[][], groups: Int32Array | null, maxId: number }} Chunk */
/**
 * A lane's queue: chunks in arrival order, and a cursor in the first one (op index, next group
 * index).
 * @typedef {{ id: number, name: string, port: Port | null, chunks: Chunk[], op: number, group: number, queued: number }} Lane
 */
/** A run of consecutive ops of one chunk in a batch, with the groups inside it as (first op, op count) pairs. */
/** @typedef {{ lane: Lane, chunk: Chunk, from: number, to: number, groups: number[] }} Segment */
/** What a batch did for one lane. */
/** @typedef {{ upTo: number, written: number, failed: number, counts: Map<number, number>, failedGroups: [number, string][], error: string | null }} Outcome */

const port = /** @type {Port} */ (parentPort);
const data =
  /** @type {{ file: string, attached?: { schema: string, file: string }[], cacheSizeKb: number, maxBatch: number, counters: BigInt64Array, writeIntent?: Int32Array | null, statements: { id: number, name: string, sql: string }[], lanes: { id: number, name: string, port: Port }[] }} */ (
    workerData
  );
/** A busy database (another connection holding the write lock past busy_timeout) is retried, not skipped. */
const BUSY_ATTEMPTS = 3;

const db = new Database(data.file, { fileMustExist: true });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma(`cache_size = -${Math.max(64, Math.floor(data.cacheSizeKb))}`);
// The API connection's tablespaces (platform/db/tablespaces.ts), attached here too.
for (const space of data.attached ?? []) {
  if (!/^ts_[a-z][a-z0-9_]{0,30}$/.test(space.schema)) continue;
  db.prepare(`ATTACH DATABASE ? AS "${space.schema}"`).run(space.file);
  db.pragma(`"${space.schema}".journal_mode = WAL`);
  db.pragma(`"${space.schema}".synchronous = NORMAL`);
}

/** @type {Entry[]} */
const statements = [];
/** @type {Map<number, Lane>} */
const lanes = new Map();
let rotation = 0;
let scheduled = false;
let closing = false;

/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err));
/** @param {unknown} err */
const isBusy = (err) =>
  /^SQLITE_(BUSY|LOCKED)/.test(String(/** @type {{ code?: unknown }} */ (err)?.code ?? ''));

/** @param {number} id @param {string} name @param {string} sql */
function define(id, name, sql) {
  /** @type {Entry} */
  const entry = { name, statement: null, error: null };
  try {
    entry.statement = db.prepare(sql);
  } catch (err) {
    entry.error = messageOf(err);
    port.postMessage({ type: 'define-failed', name, error: entry.error });
  }
  statements[id] = entry;
}

/** @param {number} id */
function statementOf(id) {
  const entry = statements[id];
  if (!entry) throw new Error(`unknown statement #${id}`);
  if (!entry.statement) throw new Error(`statement ${entry.name} did not prepare: ${entry.error}`);
  return entry.statement;
}

/** @param {number} id @param {string} name @param {Port} lanePort */
function addLane(id, name, lanePort) {
  const existing = lanes.get(id);
  /** @type {Lane} */
  const lane = existing ?? {
    id,
    name,
    port: null,
    chunks: [],
    op: 0,
    group: 0,
    queued: 0,
  };
  if (existing?.port) existing.port.close();
  lane.port = lanePort;
  lanes.set(id, lane);
  lanePort.on(
    'message',
    (
      /** @type {{ type: 'writes', seq: number, ops: Int32Array, values: Param[][], groups: Int32Array | null }} */ msg,
    ) => {
      if (msg.type !== 'writes' || lane.port !== lanePort) return;
      let maxId = 0;
      for (let i = 0; i < msg.ops.length; i++)
        maxId = Math.max(maxId, /** @type {number} */ (msg.ops[i]));
      lane.chunks.push({
        seq: msg.seq,
        ops: msg.ops,
        values: msg.values,
        groups: msg.groups,
        maxId,
      });
      lane.queued += msg.ops.length;
      schedule();
    },
  );
  // A lane whose producer went away: what it queued is still committed, then the lane is forgotten.
  lanePort.once('close', () => {
    if (lane.port !== lanePort) return;
    lane.port = null;
    if (lane.queued === 0) lanes.delete(id);
  });
}

function schedule() {
  if (scheduled || closing) return;
  scheduled = true;
  setImmediate(tick);
}

/** Longest wait for the API connection's writes before a batch (then the batch goes anyway). */
const YIELD_MAX_MS = 1000;

/**
 * The API connection's write transactions go first: while any is running or waiting for the
 * lock (workerData.writeIntent, counted by database.ts), no batch starts, for at most
 * YIELD_MAX_MS. Without it a writer committing back to back can hold off an API write past its
 * busy_timeout (SQLite's busy handler polls with sleeps of up to 100 ms, and the gap between
 * two batches is microseconds).
 */
function yieldToApiWrites() {
  const intent = data.writeIntent;
  if (!intent) return;
  const until = Date.now() + YIELD_MAX_MS;
  for (let n = Atomics.load(intent, 0); n > 0; n = Atomics.load(intent, 0)) {
    const left = until - Date.now();
    if (left <= 0) return;
    Atomics.wait(intent, 0, n, Math.min(left, 50));
  }
}

/** Runs one batch, then lets messages in before the next one. */
function tick() {
  scheduled = false;
  yieldToApiWrites();
  if (runOne()) schedule();
}

/** Builds and runs one batch; false when there was nothing to take. */
function runOne() {
  const batch = take();
  if (batch.length === 0) return false;
  const outcomes = runBatch(batch);
  let committed = 0;
  for (const outcome of outcomes.values()) committed += outcome.written;
  // Counted before the notices go out: a producer that hears of the commit sees it in stats().
  if (committed > 0) Atomics.add(data.counters, 0, 1n);
  for (const [lane, outcome] of outcomes) {
    if (lane.queued === 0 && lane.port === null) lanes.delete(lane.id);
    /** @type {Record<string, number>} */
    const counts = {};
    for (const [id, n] of outcome.counts) counts[statements[id]?.name ?? `#${id}`] = n;
    lane.port?.postMessage({
      type: 'commit',
      upTo: outcome.upTo,
      written: outcome.written,
      failed: outcome.failed,
      statements: counts,
      groups: outcome.failedGroups.length > 0 ? outcome.failedGroups : null,
      error: outcome.error,
      at: Date.now(),
    });
  }
  return true;
}

// --- building a batch -------------------------------------------------------------------------

/** The lanes' shares of one batch, in rounds (see the header). @returns {Segment[]} */
function take() {
  /** @type {Segment[]} */
  const batch = [];
  const all = [...lanes.values()];
  if (all.length === 0) return batch;
  const start = rotation++ % all.length;
  let active = [...all.slice(start), ...all.slice(0, start)].filter(ready);
  let capacity = data.maxBatch;
  let taken = 0;
  while (capacity > 0 && active.length > 0) {
    const share = Math.max(1, Math.ceil(capacity / active.length));
    /** @type {Lane[]} */
    const next = [];
    for (const lane of active) {
      const n = takeFrom(lane, Math.min(share, capacity), taken === 0, batch);
      taken += n;
      capacity -= n;
      // A lane that filled its share may have more: it stays in the next round.
      if (n > 0 && ready(lane)) next.push(lane);
      if (capacity <= 0) break;
    }
    active = next;
  }
  return batch;
}

/** A lane with writes whose statements are all defined. @param {Lane} lane */
function ready(lane) {
  const chunk = lane.chunks[0];
  return (
    chunk !== undefined && chunk.maxId < statements.length && statements[chunk.maxId] !== undefined
  );
}

/**
 * Takes up to `limit` writes of `lane` into `batch`, whole groups only (a group larger than the
 * limit only into an empty batch). Returns how many it took.
 * @param {Lane} lane @param {number} limit @param {boolean} batchEmpty @param {Segment[]} batch
 */
function takeFrom(lane, limit, batchEmpty, batch) {
  let taken = 0;
  while (lane.chunks.length > 0 && ready(lane)) {
    const chunk = /** @type {Chunk} */ (lane.chunks[0]);
    const total = chunk.ops.length;
    /** @type {Segment} */
    const segment = { lane, chunk, from: lane.op, to: lane.op, groups: [] };
    let full = false;
    while (lane.op < total) {
      const groups = chunk.groups;
      const size =
        groups && lane.group * 2 < groups.length && groups[lane.group * 2] === lane.op
          ? /** @type {number} */ (groups[lane.group * 2 + 1])
          : 0;
      const n = size > 0 ? size : 1;
      if (taken + n > limit && !(size > 0 && batchEmpty && taken === 0)) {
        full = true;
        break;
      }
      if (size > 0) {
        segment.groups.push(lane.op, size);
        lane.group++;
      }
      lane.op += n;
      taken += n;
    }
    segment.to = lane.op;
    if (segment.to > segment.from) batch.push(segment);
    if (lane.op >= total) {
      lane.chunks.shift();
      lane.op = 0;
      lane.group = 0;
    }
    if (full) break;
  }
  lane.queued -= taken;
  return taken;
}

// --- running a batch --------------------------------------------------------------------------

/** Runs op `i` of a chunk. @param {Chunk} chunk @param {number} i */
function runOp(chunk, i) {
  statementOf(/** @type {number} */ (chunk.ops[i])).run(/** @type {Param[]} */ (chunk.values[i]));
}

const all = db.transaction(
  /** @param {Segment[]} batch */ (batch) => {
    for (const s of batch) for (let i = s.from; i < s.to; i++) runOp(s.chunk, i);
  },
);

/** The op of the last failed `one` call that threw (the failing op of a group). */
let failedAt = 0;

/** Called inside `each`: better-sqlite3 runs a nested transaction function as a SAVEPOINT. */
const one = db.transaction(
  /** @param {Chunk} chunk @param {number} from @param {number} to */ (chunk, from, to) => {
    for (let i = from; i < to; i++) {
      failedAt = i;
      runOp(chunk, i);
    }
  },
);

/** @param {Map<Lane, Outcome>} outcomes @param {Lane} lane */
function outcomeOf(outcomes, lane) {
  let outcome = outcomes.get(lane);
  if (!outcome) {
    outcome = { upTo: 0, written: 0, failed: 0, counts: new Map(), failedGroups: [], error: null };
    outcomes.set(lane, outcome);
  }
  return outcome;
}

/** @param {Outcome} outcome @param {Chunk} chunk @param {number} from @param {number} to */
function countWritten(outcome, chunk, from, to) {
  outcome.written += to - from;
  for (let i = from; i < to; i++) {
    const id = /** @type {number} */ (chunk.ops[i]);
    outcome.counts.set(id, (outcome.counts.get(id) ?? 0) + 1);
  }
}

/** @param {Chunk} chunk @param {number} i @param {unknown} err */
const failure = (chunk, i, err) =>
  `${statements[/** @type {number} */ (chunk.ops[i])]?.name ?? '?'}: ${messageOf(err)}`;

const each = db.transaction(
  /** @param {Segment[]} batch */ (batch) => {
    /** @type {Map<Lane, Outcome>} */
    const outcomes = new Map();
    for (const s of batch) {
      const outcome = outcomeOf(outcomes, s.lane);
      let g = 0;
      for (let i = s.from; i < s.to;) {
        const grouped = g < s.groups.length && s.groups[g] === i;
        const n = grouped ? /** @type {number} */ (s.groups[g + 1]) : 1;
        try {
          one(s.chunk, i, i + n);
          countWritten(outcome, s.chunk, i, i + n);
        } catch (err) {
          if (isBusy(err)) throw err;
          outcome.failed += n;
          const error = failure(s.chunk, failedAt, err);
          outcome.error ??= error;
          if (grouped) outcome.failedGroups.push([s.chunk.seq + i + n - 1, error]);
        }
        if (grouped) g += 2;
        i += n;
      }
    }
    return outcomes;
  },
);

/** @param {Segment[]} batch @returns {Map<Lane, Outcome>} */
function runBatch(batch) {
  /** @type {Map<Lane, Outcome>} */
  let outcomes = new Map();
  /** @type {unknown} */
  let last = null;
  let done = false;
  for (let attempt = 0; attempt < BUSY_ATTEMPTS && !done; attempt++) {
    try {
      all.immediate(batch);
      outcomes = new Map();
      for (const s of batch) countWritten(outcomeOf(outcomes, s.lane), s.chunk, s.from, s.to);
      done = true;
      break;
    } catch (err) {
      last = err;
      if (isBusy(err)) continue;
    }
    try {
      outcomes = each.immediate(batch);
      done = true;
    } catch (err) {
      last = err;
      if (!isBusy(err)) break;
    }
  }
  if (!done) {
    // The whole batch failed (busy past every attempt, or the transaction itself failed).
    outcomes = new Map();
    const error = `batch: ${messageOf(last)}`;
    for (const s of batch) {
      const outcome = outcomeOf(outcomes, s.lane);
      outcome.failed += s.to - s.from;
      outcome.error ??= error;
      for (let g = 0; g < s.groups.length; g += 2)
        outcome.failedGroups.push([
          s.chunk.seq +
            /** @type {number} */ (s.groups[g]) +
            /** @type {number} */ (s.groups[g + 1]) -
            1,
          error,
        ]);
    }
  }
  for (const s of batch) outcomeOf(outcomes, s.lane).upTo = s.chunk.seq + s.to - 1;
  return outcomes;
}

// --- messages ---------------------------------------------------------------------------------

for (const { id, name, sql } of data.statements) define(id, name, sql);
for (const lane of data.lanes) addLane(lane.id, lane.name, lane.port);

port.on(
  'message',
  /** @param {{ type: 'define', id: number, name: string, sql: string } | { type: 'lane', id: number, name: string, port: Port } | { type: 'close' }} msg */ (
    msg,
  ) => {
    switch (msg.type) {
      case 'define':
        define(msg.id, msg.name, msg.sql);
        schedule();
        break;
      case 'lane':
        addLane(msg.id, msg.name, msg.port);
        break;
      case 'close': {
        // Commits what is queued (the writer waited for its own producers' writes first), then ends.
        closing = true;
        for (let i = 0; i < 1_000_000 && runOne(); i++);
        db.close();
        port.postMessage({ type: 'closed' });
        for (const lane of lanes.values()) lane.port?.close();
        port.close();
        break;
      }
    }
  },
);
