/** SQL of the daemon records (`daemons`, `daemon_vars`, migration 0019). */
import type { DB } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/security/secret-box.js';

export interface DaemonRow {
  id: number;
  name: string;
  start_auto: number;
}

export interface DaemonVarRow {
  var: string;
  value: string;
  sealed: number;
}

/** Makes a row for each daemon not yet stored (start_auto on), in the order given. */
export function ensureDaemons(db: DB, names: readonly string[], now: number): void {
  const insert = db.prepare(
    'INSERT INTO daemons (name, start_auto, updated_at) VALUES (?, 1, ?) ON CONFLICT (name) DO NOTHING',
  );
  db.transaction(() => {
    for (const name of names) insert.run(name, now);
  })();
}

export const listDaemons = (db: DB): DaemonRow[] =>
  db.prepare('SELECT id, name, start_auto FROM daemons ORDER BY id').all() as DaemonRow[];

export const daemonVars = (db: DB, id: number): DaemonVarRow[] =>
  db
    .prepare('SELECT var, value, sealed FROM daemon_vars WHERE daemon_id = ? ORDER BY var')
    .all(id) as DaemonVarRow[];

/** Replaces every variable of a daemon in one transaction. */
export function replaceDaemonVars(
  db: DB,
  id: number,
  vars: readonly DaemonVarRow[],
  now: number,
): void {
  db.transaction(() => {
    db.prepare('DELETE FROM daemon_vars WHERE daemon_id = ?').run(id);
    const insert = db.prepare(
      'INSERT INTO daemon_vars (daemon_id, var, value, sealed) VALUES (?, ?, ?, ?)',
    );
    for (const v of vars) insert.run(id, v.var, v.value, v.sealed);
    db.prepare('UPDATE daemons SET updated_at = ? WHERE id = ?').run(now, id);
  })();
}

export function setStartAuto(db: DB, id: number, startAuto: boolean, now: number): void {
  db.prepare('UPDATE daemons SET start_auto = ?, updated_at = ? WHERE id = ?').run(
    startAuto ? 1 : 0,
    now,
    id,
  );
}

/** Whether a daemon starts with the appliance (true when it has no row yet). */
export function startsAutomatically(db: DB, name: string): boolean {
  const row = db.prepare('SELECT start_auto FROM daemons WHERE name = ?').get(name) as
    { start_auto: number } | undefined;
  return row === undefined || row.start_auto === 1;
}

/** A daemon's plain (non-secret) variables by name; empty when it has no row. */
export function plainDaemonVars(db: DB, name: string): Record<string, string> {
  const rows = db
    .prepare(
      'SELECT v.var, v.value FROM daemon_vars v JOIN daemons d ON d.id = v.daemon_id WHERE d.name = ? AND v.sealed = 0',
    )
    .all(name) as { var: string; value: string }[];
  return Object.fromEntries(rows.map((r) => [r.var, r.value]));
}

/**
 * A daemon's variables by name as its engine reads them at start: plain values as stored,
 * secret ones opened by the secret box (for the engine only: never answered, audited or logged).
 * An empty value counts as left out. A secret that no longer opens (another data dir's key) is
 * left out too, so the engine falls back to its configuration.
 */
export function daemonVarsForEngine(
  db: DB,
  secrets: SecretBox,
  name: string,
): Record<string, string> {
  const rows = db
    .prepare(
      'SELECT v.var, v.value, v.sealed FROM daemon_vars v JOIN daemons d ON d.id = v.daemon_id WHERE d.name = ?',
    )
    .all(name) as DaemonVarRow[];
  const out: Record<string, string> = {};
  for (const row of rows) {
    let value = row.value;
    if (row.sealed) {
      try {
        value = secrets.open(row.value);
      } catch {
        continue;
      }
    }
    if (value !== '') out[row.var] = value;
  }
  return out;
}
