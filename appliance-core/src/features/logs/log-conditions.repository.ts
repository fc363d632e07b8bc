/**
 * SQL conditions of the log lists: criteria (log-feeds.rules.ts) to SQL over a feed's columns,
 * the caller's tag scope, and a user's enabled saved filters as exclusions. Column names are
 * fixed here; every value is a parameter.
 *
 * Tag scope (spec part 3 "Shared log-feed rules"): syslog and Windows events by device_id (a
 * syslog row of an unknown sender, device_id NULL, only for an unrestricted caller); IDS by
 * either endpoint's address.
 */
import type { DeviceScope } from '../../platform/http/scoping.js';
import type { Criteria, CriterionValue, Feed } from './log-feeds.rules.js';
import { and, type Condition } from './log-list.repository.js';

/** `%`, `_` and `\` match themselves: a substring, never a pattern. */
export const likeSubstring = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const oneOf = (column: string, values: readonly CriterionValue[]): Condition =>
  values.length === 1
    ? { sql: `${column} = ?`, params: [values[0]] }
    : { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };

const anyOf = (parts: Condition[]): Condition => ({
  sql: parts.map((p) => `(${p.sql})`).join(' OR '),
  params: parts.flatMap((p) => p.params),
});

/** The column of a key (message is `data` for Windows events). */
function columnOf(feed: Feed, key: string): string {
  if (key === 'message') return feed === 'eventlog' ? 'data' : 'message';
  return key;
}

/** Device id -> its address (IDS `device_id` filter), null when no such device. */
export type DeviceAddress = (deviceId: number) => string | null;

export function criteriaSql(
  feed: Feed,
  criteria: Criteria,
  deviceAddress: DeviceAddress,
): Condition {
  const parts: Condition[] = [];
  for (const [key, values] of criteria) {
    const column = columnOf(feed, key);
    if (key === 'message') {
      parts.push(
        anyOf(
          values.map((v) => ({
            sql: `${column} LIKE ? ESCAPE '\\'`,
            params: [likeSubstring(typeof v === 'object' ? '' : String(v))],
          })),
        ),
      );
    } else if (key === 'timestamp') {
      parts.push(
        anyOf(
          values.map((v) => {
            const range = v as { from: number; to: number };
            return { sql: 'timestamp >= ? AND timestamp < ?', params: [range.from, range.to] };
          }),
        ),
      );
    } else if (feed === 'eve' && key === 'ip') {
      parts.push(anyOf([oneOf('src_ip', values), oneOf('dst_ip', values)]));
    } else if (feed === 'eve' && key === 'port') {
      parts.push(anyOf([oneOf('src_port', values), oneOf('dst_port', values)]));
    } else if (feed === 'eve' && key === 'device_id') {
      const ips = values
        .map((id) => deviceAddress(Number(id)))
        .filter((ip): ip is string => ip !== null);
      parts.push(
        ips.length === 0
          ? { sql: '0', params: [] }
          : anyOf([oneOf('src_ip', ips), oneOf('dst_ip', ips)]),
      );
    } else {
      parts.push(oneOf(column, values));
    }
  }
  return and(parts);
}

/** Rows the caller may see (null scope: unrestricted). */
export function scopeCondition(feed: Feed, scope: DeviceScope | null): Condition {
  if (scope === null) return { sql: '1', params: [] };
  if (feed === 'eve') {
    const ips = JSON.stringify([...scope.ips]);
    return {
      sql: 'src_ip IN (SELECT value FROM json_each(?)) OR dst_ip IN (SELECT value FROM json_each(?))',
      params: [ips, ips],
    };
  }
  return {
    sql: 'device_id IN (SELECT value FROM json_each(?))',
    params: [JSON.stringify([...scope.deviceIds])],
  };
}

/** The rollup rows the caller may see (device 0 is the unknown sender). */
export function rollupScopeCondition(feed: Feed, scope: DeviceScope | null): Condition {
  if (scope === null) return { sql: '1', params: [] };
  const ids = JSON.stringify([...scope.deviceIds]);
  if (feed === 'eve')
    return {
      sql: 'src_id IN (SELECT value FROM json_each(?)) OR dst_id IN (SELECT value FROM json_each(?))',
      params: [ids, ids],
    };
  return { sql: 'device_id IN (SELECT value FROM json_each(?))', params: [ids] };
}

/** Hides rows matching any of the enabled saved filters (each filter's keys AND-matched). */
export function exclusionsSql(
  feed: Feed,
  exclusions: readonly Criteria[],
  deviceAddress: DeviceAddress,
): Condition {
  const parts = exclusions
    .filter((criteria) => criteria.size > 0)
    .map((criteria) => criteriaSql(feed, criteria, deviceAddress))
    .filter((c) => c.sql !== '1');
  if (parts.length === 0) return { sql: '1', params: [] };
  // coalesce: a NULL column (an unknown sender's device_id) does not match, so is not excluded.
  return {
    sql: parts.map((p) => `coalesce(NOT (${p.sql}), 1)`).join(' AND '),
    params: parts.flatMap((p) => p.params),
  };
}
