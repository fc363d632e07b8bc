/**
 * The one importer of better-sqlite3. Opens the appliance database with the house pragmas
 * (WAL, foreign keys, NORMAL sync) and turns low-level failures into one-line messages.
 */
import Database from 'better-sqlite3';

export type DB = Database.Database;
export type Statement = Database.Statement;

export class DatabaseOpenError extends Error {}

const STATEMENT_CACHE_SIZE = 1000;

/**
 * Makes `db.prepare(sql)` return a cached statement for SQL it has seen before. Preparing costs
 * far more than running a short query (measured: 25 µs against 5 µs), and repositories prepare
 * at the call site for readability. A cached statement is handed back with its result modes
 * reset; one that is mid-iteration is not shared (a fresh statement is prepared instead).
 */
function cacheStatements(db: DB): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Statement>();
  db.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached && !cached.busy) {
      if (cached.reader) cached.pluck(false).expand(false).raw(false);
      return cached;
    }
    const statement = prepare(source);
    if (!cached) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  }) as DB['prepare'];
}

const intents = new WeakMap<DB, Int32Array>();

/**
 * How many write transactions of this connection are running or waiting for the write lock, in
 * shared memory: the storage writer's worker reads it before each batch and lets them go first
 * (see storage-writer.worker.mjs). SQLite's busy handler polls with sleeps of up to 100 ms, so a
 * writer committing batch after batch could otherwise keep an API write waiting past busy_timeout.
 */
export function writeIntent(db: DB): Int32Array {
  let intent = intents.get(db);
  if (!intent) {
    intent = new Int32Array(new SharedArrayBuffer(4));
    intents.set(db, intent);
  }
  return intent;
}

/**
 * Makes `db.transaction(fn)()` begin IMMEDIATE (take the write lock up front) instead of DEFERRED.
 * Another connection writes the same file (the storage writer's worker thread): in WAL mode a
 * deferred transaction that reads and then writes fails at once with SQLITE_BUSY when the other
 * connection committed in between (its snapshot is stale; busy_timeout cannot help), whereas an
 * immediate one waits for the lock under busy_timeout. Nested calls still use savepoints, and
 * `.deferred` / `.exclusive` remain available for a caller that wants them.
 */
function immediateTransactions(db: DB): void {
  const transaction = db.transaction.bind(db);
  const waiting = writeIntent(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const variants = transaction(fn);
    const immediate = (...args: never[]) => {
      Atomics.add(waiting, 0, 1);
      try {
        return variants.immediate(...args);
      } finally {
        Atomics.sub(waiting, 0, 1);
        Atomics.notify(waiting, 0);
      }
    };
    return Object.assign(immediate, {
      default: immediate,
      deferred: (...args: never[]) => variants.deferred(...args),
      immediate,
      exclusive: (...args: never[]) => variants.exclusive(...args),
    });
  }) as DB['transaction'];
}

export function openDatabase(file: string, options: { readonly?: boolean } = {}): DB {
  let db: DB;
  try {
    db = new Database(file, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
    });
    cacheStatements(db);
    if (!(options.readonly ?? false)) immediateTransactions(db);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // Reading the schema forces SQLite to parse the header: a corrupt or foreign file fails here.
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
  } catch (err) {
    throw new DatabaseOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
  return db;
}

/** Runs fn in one synchronous transaction (never await inside). */
export function inTransaction<T>(db: DB, fn: () => T): T {
  return db.transaction(fn)();
}
