/**
 * Forward-only numbered SQL migrations (`migrations/NNNN_name.sql`), applied at start in one
 * transaction and recorded in schema_migrations. A database that holds a migration this build
 * does not know is refused: it was written by a newer release.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DB } from './database.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const migrations = files.map((file) => ({
    id: Number(file.slice(0, 4)),
    name: file.slice(5, -4),
    sql: fs.readFileSync(`${dir}/${file}`, 'utf8'),
  }));
  migrations.forEach((m, i) => {
    if (m.id !== i + 1)
      throw new MigrationError(`migration numbering has a gap or duplicate at ${m.id}_${m.name}`);
  });
  return migrations;
}

/** auto_vacuum values of SQLite. */
const AUTO_VACUUM_INCREMENTAL = 2;
/** An existing database at most this large is switched to incremental auto_vacuum at start. */
export const AUTO_VACUUM_SWITCH_MAX_BYTES = 1024 ** 3;

export type AutoVacuumOutcome = 'incremental' | 'set-on-new-file' | 'vacuumed' | 'too-large';

/**
 * Puts the database in `auto_vacuum = INCREMENTAL`, so that dropping a partition can return its
 * pages to the file system (partitions.ts `reclaimSpace`). Runs outside the migration
 * transaction (neither the pragma nor VACUUM works inside one). A new file gets it before its
 * first table (a VACUUM of an empty file: instant). An existing file needs one VACUUM (rewrites the file; needs its size again
 * in free space and, measured here, about 1 s per 100 MB): done at start when the file is at
 * most `maxVacuumBytes`; a larger one is left as it is (dropped pages are still reused, the file
 * just does not shrink) and the caller logs how to switch it offline (docs/features/maintenance.md).
 */
export function ensureIncrementalVacuum(
  db: DB,
  maxVacuumBytes: number = AUTO_VACUUM_SWITCH_MAX_BYTES,
): AutoVacuumOutcome {
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === AUTO_VACUUM_INCREMENTAL)
    return 'incremental';
  const tables = db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number };
  db.pragma('auto_vacuum = INCREMENTAL');
  // Setting WAL (openDatabase) already wrote page 1, so even an empty file needs a VACUUM (instant).
  if (tables.n === 0) {
    db.exec('VACUUM');
    return 'set-on-new-file';
  }
  const bytes =
    (db.pragma('page_count', { simple: true }) as number) *
    (db.pragma('page_size', { simple: true }) as number);
  if (bytes > maxVacuumBytes) return 'too-large';
  db.exec('VACUUM');
  return 'vacuumed';
}

/** Applies pending migrations; returns the ids applied. */
export function migrate(db: DB, now: number, migrations: Migration[] = loadMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  const applied = new Set(
    (db.prepare('SELECT id FROM schema_migrations').all() as { id: number }[]).map((r) => r.id),
  );
  const known = new Set(migrations.map((m) => m.id));
  const unknown = [...applied].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new MigrationError(
      `database has migrations ${unknown.join(', ')} that this release does not know (written by a newer release)`,
    );
  }
  const pending = migrations.filter((m) => !applied.has(m.id));
  if (pending.length === 0) return [];
  const record = db.prepare(
    'INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)',
  );
  db.transaction(() => {
    for (const m of pending) {
      db.exec(m.sql);
      record.run(m.id, m.name, now);
    }
  })();
  return pending.map((m) => m.id);
}
