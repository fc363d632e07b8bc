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
