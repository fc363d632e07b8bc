/**
 * Tag scoping (spec part 1, conventions 8): a user restricted to device tags sees only devices,
 * and rows tied to devices, inside those tags. Out of scope answers exactly like missing.
 *
 * Large lists (logs, flows, samples: millions of rows) are scoped by the caller's device ids and
 * addresses, resolved ONCE per request (`scopeOf`), never by a correlated sub-query per row: the
 * list query gets one `IN (SELECT value FROM json_each(?))` condition on its device id column
 * (`scopeSql`), which SQLite serves from that column's index. The resolver comes from the devices
 * feature (the platform never queries a feature's tables).
 */
import type { Identity } from './identity.js';

/** The devices a tag-restricted caller may see: their ids and their (canonical) addresses. */
export interface DeviceScope {
  readonly deviceIds: ReadonlySet<number>;
  readonly ips: ReadonlySet<string>;
}

/** Resolves the devices carrying any of `tagIds` (supplied by the devices feature). */
export type DeviceScopeResolver = (tagIds: readonly number[]) => DeviceScope;

const perRequest = new WeakMap<object, DeviceScope>();

/**
 * The caller's scope: null when unrestricted (no tags, or `sa`), else the devices and addresses
 * they may see. Resolved once per request and kept on it (later calls answer the same object).
 */
export function scopeOf(
  request: { identity: Identity | null },
  resolve: DeviceScopeResolver,
): DeviceScope | null {
  const tagIds = request.identity?.tagIds ?? null;
  if (tagIds === null) {
    if (!request.identity) throw new Error('scopeOf() used on a route without authentication');
    return null;
  }
  let scope = perRequest.get(request);
  if (!scope) {
    scope = resolve(tagIds);
    perRequest.set(request, scope);
  }
  return scope;
}

/**
 * An SQL condition keeping rows whose `column` (a device id, or an address with `on: 'ips'`) is
 * in the scope, with its one parameter (the list as JSON); `1` for an unrestricted caller. The
 * column name must come from code, never from input.
 */
export function scopeSql(
  scope: DeviceScope | null,
  column: string,
  on: 'deviceIds' | 'ips' = 'deviceIds',
): { sql: string; params: unknown[] } {
  if (!/^[a-z_][a-z0-9_.]*$/i.test(column)) throw new Error(`bad column name ${column}`);
  if (scope === null) return { sql: '1', params: [] };
  return {
    sql: `${column} IN (SELECT value FROM json_each(?))`,
    params: [JSON.stringify([...scope[on]])],
  };
}

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
 * An SQL condition restricting `deviceIdColumn` to in-scope devices through `device_tags` (a
 * correlated sub-query per row: fit for short lists only; large lists use `scopeSql`). The
 * column name must come from code, never from input.
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
