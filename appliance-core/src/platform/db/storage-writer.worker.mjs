// @ts-check
/**
 * The storage writer's thread (see storage-writer.ts): its own better-sqlite3 connection to the
 * appliance database with the house pragmas, statements registered by name, and batches of
 * writes, each run in one transaction. A batch that fails is re-run op by op (each in its own
 * SAVEPOINT inside one transaction): failing ops are skipped and counted, the rest committed.
 * Only data crosses the thread boundary. Plain JavaScript so the build and Vitest run this file.
 *
 * Messages in:  {type:'define', id, name, sql} | {type:'batch', seq, ops, values} | {type:'close'}
 *   `ops` is an Int32Array of (statement id, parameter count) pairs; `values` the parameters, flat.
 * Messages out: {type:'done', seq, committed, failed, error} | {type:'define-failed', name, error} | {type:'closed'}
 *   `error` is the first failure's statement name and SQLite message: never parameters.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @typedef {number | string | bigint | null} Param */
/** @typedef {{ name: string, statement: import('better-sqlite3').Statement | null, error: string | null }} Entry */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { file, cacheSizeKb } = /** @type {{ file: string, cacheSizeKb: number }} */ (workerData);
/** A busy database (another connection holding the write lock past busy_timeout) is retried, not skipped. */
const BUSY_ATTEMPTS = 3;

const db = new Database(file, { fileMustExist: true });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma(`cache_size = -${Math.max(64, Math.floor(cacheSizeKb))}`);

/** @type {Entry[]} */
const statements = [];

/** @param {number} id */
function statementOf(id) {
  const entry = statements[id];
  if (!entry) throw new Error(`unknown statement #${id}`);
  if (!entry.statement) throw new Error(`statement ${entry.name} did not prepare: ${entry.error}`);
  return entry.statement;
}

/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err));
/** @param {unknown} err */
const isBusy = (err) =>
  /^SQLITE_(BUSY|LOCKED)/.test(String(/** @type {{ code?: unknown }} */ (err)?.code ?? ''));

const all = db.transaction(
  /** @param {Int32Array} ops @param {Param[]} values */ (ops, values) => {
    for (let i = 0, v = 0; i < ops.length; i += 2) {
      const count = /** @type {number} */ (ops[i + 1]);
      statementOf(/** @type {number} */ (ops[i])).run(values.slice(v, v + count));
      v += count;
    }
  },
);

/** Called inside `each`: better-sqlite3 runs a nested transaction function as a SAVEPOINT. */
const one = db.transaction(
  /** @param {number} id @param {Param[]} params */ (id, params) => {
    statementOf(id).run(params);
  },
);

const each = db.transaction(
  /** @param {Int32Array} ops @param {Param[]} values */ (ops, values) => {
    let committed = 0;
    let failed = 0;
    /** @type {string | null} */
    let error = null;
    for (let i = 0, v = 0; i < ops.length; i += 2) {
      const id = /** @type {number} */ (ops[i]);
      const count = /** @type {number} */ (ops[i + 1]);
      try {
        one(id, values.slice(v, v + count));
        committed++;
      } catch (err) {
        if (isBusy(err)) throw err;
        failed++;
        error ??= `${statements[id]?.name ?? `#${id}`}: ${messageOf(err)}`;
      }
      v += count;
    }
    return { committed, failed, error };
  },
);

/** @param {Int32Array} ops @param {Param[]} values */
function runBatch(ops, values) {
  const total = ops.length / 2;
  /** @type {unknown} */
  let last = null;
  for (let attempt = 0; attempt < BUSY_ATTEMPTS; attempt++) {
    try {
      all.immediate(ops, values);
      return { committed: total, failed: 0, error: null };
    } catch (err) {
      last = err;
      if (isBusy(err)) continue;
    }
    try {
      return each.immediate(ops, values);
    } catch (err) {
      last = err;
      if (!isBusy(err)) break;
    }
  }
  return { committed: 0, failed: total, error: `batch: ${messageOf(last)}` };
}

port.on(
  'message',
  /** @param {{ type: 'define', id: number, name: string, sql: string } | { type: 'batch', seq: number, ops: Int32Array, values: Param[] } | { type: 'close' }} msg */ (
    msg,
  ) => {
    switch (msg.type) {
      case 'define': {
        /** @type {Entry} */
        const entry = { name: msg.name, statement: null, error: null };
        try {
          entry.statement = db.prepare(msg.sql);
        } catch (err) {
          entry.error = messageOf(err);
          port.postMessage({ type: 'define-failed', name: msg.name, error: entry.error });
        }
        statements[msg.id] = entry;
        break;
      }
      case 'batch':
        port.postMessage({ type: 'done', seq: msg.seq, ...runBatch(msg.ops, msg.values) });
        break;
      case 'close':
        db.close();
        port.postMessage({ type: 'closed' });
        port.close();
        break;
    }
  },
);
