/**
 * Tablespaces on SQLite (spec part 3, "Data maintenance"): a tablespace is a configured directory
 * (`APPLIANCE_TABLESPACES=name=/path,...`, typically on another disk) holding one database file,
 * `<path>/appliance-tablespace-<name>.db`, that every connection of the process ATTACHes under the
 * schema name `ts_<name>` (the API's in app.ts, the storage writer's worker from the API
 * connection's database list). Dated partitions of a table moved there live in that file
 * (partitions.ts moves them); the live `_latest` partition always stays in the main file.
 *
 * Invariants:
 * - Names come from the configuration only (a name is `[a-z][a-z0-9_]{0,30}`, a location an
 *   absolute path); request text is only ever compared with them, never used as an identifier
 *   or a path.
 * - The file is created on first attach with `auto_vacuum = INCREMENTAL` (set before its first
 *   table) and WAL, like the main file; the directory must exist (a missing disk is an error at
 *   start, not a silently created directory on the wrong disk).
 * - SQLite attaches at most 10 databases per connection (better-sqlite3's build): at most 8
 *   tablespaces are accepted, leaving room for temp and one spare.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DB } from './database.js';

export const TABLESPACE_NAME = /^[a-z][a-z0-9_]{0,30}$/;
export const MAX_TABLESPACES = 8;
/** The synthetic tablespace of the main database file. */
export const DEFAULT_TABLESPACE = 'default';

export interface Tablespace {
  name: string;
  /** The configured directory. */
  location: string;
  /** The database file inside it. */
  file: string;
  /** The schema name it is attached under on every connection. */
  schema: string;
}

export class TablespaceError extends Error {}

export const schemaOf = (name: string) => `ts_${name}`;

/** Parses `name=/absolute/path` entries; throws TablespaceError naming every bad entry. */
export function parseTablespaces(entries: readonly string[]): Tablespace[] {
  const problems: string[] = [];
  const spaces: Tablespace[] = [];
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq === -1 ? entry : entry.slice(0, eq).trim();
    const location = eq === -1 ? '' : entry.slice(eq + 1).trim();
    if (!TABLESPACE_NAME.test(name) || name === DEFAULT_TABLESPACE)
      problems.push(`"${name}" is not a tablespace name (a-z, 0-9, _; not "default")`);
    else if (!path.isAbsolute(location))
      problems.push(`${name}: location must be an absolute path`);
    else if (spaces.some((s) => s.name === name)) problems.push(`${name}: named twice`);
    else
      spaces.push({
        name,
        location: path.normalize(location),
        file: path.join(path.normalize(location), `appliance-tablespace-${name}.db`),
        schema: schemaOf(name),
      });
  }
  if (spaces.length > MAX_TABLESPACES)
    problems.push(`at most ${MAX_TABLESPACES} tablespaces (SQLite attaches at most 10 databases)`);
  if (problems.length > 0) throw new TablespaceError(problems.join('; '));
  return spaces;
}

/**
 * Attaches every tablespace to a connection (creating its file on first use). Idempotent: a
 * tablespace already attached under its schema is left as it is.
 */
export function attachTablespaces(db: DB, tablespaces: readonly Tablespace[]): void {
  const attached = new Set(
    (db.pragma('database_list') as { name: string }[]).map((row) => row.name),
  );
  for (const space of tablespaces) {
    if (attached.has(space.schema)) continue;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(space.location);
    } catch {
      throw new TablespaceError(
        `tablespace ${space.name}: directory ${space.location} does not exist`,
      );
    }
    if (!stat.isDirectory())
      throw new TablespaceError(`tablespace ${space.name}: ${space.location} is not a directory`);
    db.prepare('ATTACH DATABASE ? AS ' + quoteSchema(space.schema)).run(space.file);
    const schema = quoteSchema(space.schema);
    // A new file: auto_vacuum must be chosen before its first table exists.
    const tables = db.prepare(`SELECT count(*) AS n FROM ${schema}.sqlite_master`).get() as {
      n: number;
    };
    if (tables.n === 0) db.pragma(`${schema}.auto_vacuum = INCREMENTAL`);
    db.pragma(`${schema}.journal_mode = WAL`);
    db.pragma(`${schema}.synchronous = NORMAL`);
  }
}

/** The tablespaces attached to this connection (by name), read back from its database list. */
export function attachedTablespaces(db: DB): Map<string, Tablespace> {
  const spaces = new Map<string, Tablespace>();
  for (const row of db.pragma('database_list') as { name: string; file: string }[]) {
    if (!row.name.startsWith('ts_')) continue;
    const name = row.name.slice(3);
    if (!TABLESPACE_NAME.test(name)) continue;
    spaces.set(name, {
      name,
      location: path.dirname(row.file),
      file: row.file,
      schema: row.name,
    });
  }
  return spaces;
}

/** Bytes of the tablespace's database file (and its WAL), 0 when it does not exist yet. */
export function tablespaceSize(file: string): number {
  let bytes = 0;
  for (const name of [file, `${file}-wal`]) {
    try {
      bytes += fs.statSync(name).size;
    } catch {
      // absent: nothing stored there yet
    }
  }
  return bytes;
}

function quoteSchema(schema: string): string {
  if (!/^(main|ts_[a-z][a-z0-9_]{0,30})$/.test(schema))
    throw new TablespaceError(`bad schema name ${schema}`);
  return `"${schema}"`;
}
export { quoteSchema };
