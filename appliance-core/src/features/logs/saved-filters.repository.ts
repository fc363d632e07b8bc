/**
 * Saved filters of every log feed (and flows later): one table, `log_filters`, keyed by owner and
 * feed. A filter is a personal exclusion: enabled, it hides matching rows from its owner's list
 * and summary of that feed.
 */
import type { DB } from '../../platform/db/database.js';

export type SavedFilterFeed = 'syslog' | 'eventlog' | 'eve' | 'flows';

export interface SavedFilterRow {
  id: number;
  users_id: number;
  feed: SavedFilterFeed;
  label: string;
  filter: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export function listSavedFilters(db: DB, userId: number, feed: SavedFilterFeed): SavedFilterRow[] {
  return db
    .prepare('SELECT * FROM log_filters WHERE users_id = ? AND feed = ? ORDER BY id')
    .all(userId, feed) as SavedFilterRow[];
}

export function enabledSavedFilters(
  db: DB,
  userId: number,
  feed: SavedFilterFeed,
): SavedFilterRow[] {
  return db
    .prepare(
      'SELECT * FROM log_filters WHERE users_id = ? AND feed = ? AND enabled = 1 ORDER BY id',
    )
    .all(userId, feed) as SavedFilterRow[];
}

/** The caller's own filter of this feed, or undefined (missing and foreign alike). */
export function ownSavedFilter(
  db: DB,
  userId: number,
  feed: SavedFilterFeed,
  id: number,
): SavedFilterRow | undefined {
  return db
    .prepare('SELECT * FROM log_filters WHERE id = ? AND users_id = ? AND feed = ?')
    .get(id, userId, feed) as SavedFilterRow | undefined;
}

export function insertSavedFilter(
  db: DB,
  row: { userId: number; feed: SavedFilterFeed; label: string; filter: string; now: number },
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO log_filters (users_id, feed, label, filter, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)',
      )
      .run(row.userId, row.feed, row.label, row.filter, row.now, row.now).lastInsertRowid,
  );
}

export function updateSavedFilter(
  db: DB,
  id: number,
  change: { label: string; filter: string; now: number },
): void {
  db.prepare('UPDATE log_filters SET label = ?, filter = ?, updated_at = ? WHERE id = ?').run(
    change.label,
    change.filter,
    change.now,
    id,
  );
}

export function toggleSavedFilter(db: DB, id: number, now: number): void {
  db.prepare('UPDATE log_filters SET enabled = 1 - enabled, updated_at = ? WHERE id = ?').run(
    now,
    id,
  );
}

export function deleteSavedFilter(db: DB, id: number): void {
  db.prepare('DELETE FROM log_filters WHERE id = ?').run(id);
}
