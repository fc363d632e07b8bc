import type { DB } from '../../appliance-core/src/platform/db/database.js';

/** Inserts a device tag directly (the tag endpoints come with the devices feature). */
export function insertDeviceTag(db: DB, slug: string, name = slug): number {
  return Number(
    db.prepare(`INSERT INTO tags (slug, name, type) VALUES (?, ?, 'device')`).run(slug, name)
      .lastInsertRowid,
  );
}
