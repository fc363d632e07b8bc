/**
 * The one importer of better-sqlite3. Opens the appliance database with the house pragmas
 * (WAL, foreign keys, NORMAL sync) and turns low-level failures into one-line messages.
 */
import Database from 'better-sqlite3';

export type DB = Database.Database;
export type Statement = Database.Statement;

export class DatabaseOpenError extends Error {}

export function openDatabase(file: string, options: { readonly?: boolean } = {}): DB {
  let db: DB;
  try {
    db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
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
