/**
 * Tag scoping (spec part 1, conventions 8): a user restricted to device tags sees only devices,
 * and rows tied to devices, inside those tags. Out of scope answers exactly like missing.
 */
import type { Identity } from './identity.js';

/** True when the caller may see a record anchored to a device carrying `deviceTagIds`. */
export function deviceInScope(identity: Identity, deviceTagIds: readonly number[]): boolean {
  if (identity.tagIds === null) return true;
  const allowed = new Set(identity.tagIds);
  return deviceTagIds.some((id) => allowed.has(id));
}

/**
 * Returns the record when it exists and is in scope; otherwise throws the same failure for both
 * cases, so a caller can never tell an out-of-scope id from a missing one.
 */
export function scopedOrNotFound<T>(
  identity: Identity,
  record: T | null | undefined,
  tagsOf: (record: T) => readonly number[],
  notFound: () => Error,
): T {
  if (record === null || record === undefined || !deviceInScope(identity, tagsOf(record)))
    throw notFound();
  return record;
}

/**
 * An SQL condition restricting `deviceIdColumn` to in-scope devices, for list queries.
 * The column name must come from code, never from input.
 */
export function deviceScopeSql(
  identity: Identity,
  deviceIdColumn: string,
): { sql: string; params: unknown[] } {
  if (identity.tagIds === null) return { sql: '1', params: [] };
  if (!/^[a-z_][a-z0-9_.]*$/i.test(deviceIdColumn))
    throw new Error(`bad column name ${deviceIdColumn}`);
  return {
    sql: `EXISTS (SELECT 1 FROM device_tags st WHERE st.device_id = ${deviceIdColumn} AND st.tag_id IN (SELECT value FROM json_each(?)))`,
    params: [JSON.stringify(identity.tagIds)],
  };
}
