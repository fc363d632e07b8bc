/**
 * Synchronous change notification for in-memory caches: TEMP triggers on this connection call
 * `onChange` inside every statement that writes a watched table, so a cache cleared by it is never
 * stale. TEMP triggers live only in this connection (the database file holds none that need the
 * function), so other tools can still write to the file — but writes through another connection
 * are not seen: watched tables must be written through this one.
 */
import type { DB } from './database.js';

export interface WatchedTable {
  table: string;
  /** Columns whose UPDATE counts; every UPDATE counts when omitted. */
  updateOf?: string;
  /** Skip INSERT (for tables whose new rows cannot be in the cache yet). */
  ignoreInsert?: boolean;
}

const NAME = /^[a-z_][a-z0-9_]*$/;

export function watchTables(
  db: DB,
  name: string,
  watched: readonly WatchedTable[],
  onChange: () => void,
): void {
  if (!NAME.test(name)) throw new Error(`bad watcher name ${name}`);
  const fn = `${name}_changed`;
  db.function(fn, { deterministic: false }, () => {
    onChange();
    return null;
  });
  for (const { table, updateOf, ignoreInsert } of watched) {
    if (!NAME.test(table) || (updateOf && !/^[a-z0-9_, ]+$/.test(updateOf)))
      throw new Error(`bad watched table ${table}`);
    for (const event of ['INSERT', 'DELETE', 'UPDATE'] as const) {
      if (event === 'INSERT' && ignoreInsert) continue;
      const on = event === 'UPDATE' && updateOf ? `UPDATE OF ${updateOf}` : event;
      db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS ${name}_${table}_${event.toLowerCase()}
               AFTER ${on} ON main.${table} BEGIN SELECT ${fn}(); END`);
    }
  }
}
