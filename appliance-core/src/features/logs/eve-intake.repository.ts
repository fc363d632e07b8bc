/**
 * The IDS intake's reads on the API connection: where the follower stands in the configured
 * file. Writes go through the storage writer only (eve-intake.writes.ts); this read is how the
 * follower learns its position at start and after a group whose outcome it could not know.
 */
import type { DB } from '../../platform/db/database.js';
import type { EvePosition } from './eve-intake.writes.js';

/** The stored position for `path`, or null when the file was never read. */
export function storedEvePosition(db: DB, path: string): EvePosition | null {
  const row = db
    .prepare('SELECT dev, inode, offset FROM eve_intake_state WHERE path = ?')
    .safeIntegers(true)
    .get(path) as { dev: bigint; inode: bigint; offset: bigint } | undefined;
  return row ? { dev: row.dev, inode: row.inode, offset: Number(row.offset) } : null;
}
