/**
 * The SQL of the flows feature: the partitioned `flows` table (rows) and the hourly rollup
 * `flow_conversations`. Column names are fixed here; every value is a parameter; partition
 * names come from the partitioned-table helper only.
 *
 * How the flow list runs (bytes descending over a window): each partition the window touches
 * is asked for its own first `offset + limit` rows and the answers are merged. A partition is read
 * through its end_time index with a top-N sort (SQLite keeps only the page while it sorts: 141 ms
 * for 1.2 million window rows) unless the window holds many rows (more than WIDE_ROWS) and few
 * rows of the partition lie outside it (at most OUTSIDE_ROWS, both counted on the end_time index
 * up to those bounds): then it walks its bytes index from the top instead (the end_time terms
 * written `+end_time` so that SQLite does not pick the range), stopping after the page. The walk
 * visits every row outside the window that has more bytes than the page's last row, so it is
 * only taken when those are few: with 1.2 million small active flows in a partition of 22
 * million larger ones it visited nearly all of them (20 s; measured in the flows bench).
 * `total` counts matches up to TOTAL_CAP on the end_time index (`total_capped` beyond: a lower
 * bound).
 *
 * A short window without a start-time bound (the active list: the last minute) is read by
 * seconds instead, where the partition has the slot index (end_time / 1000, bytes): each second's
 * (bytes, id) pairs come from that index in order (index only, when the second lies wholly inside
 * the window and nothing filters), at most `offset + limit` of them and, once a page is held, only
 * down to its lowest bytes; the pairs are merged, and only the page's rows are fetched by id. At 20,000 records/s the last minute holds 1.2 million flows:
 * the top-N sort read all of them (0.18-0.42 s); the slot walk reads at most 61 x 1,000 index
 * entries. A filter is evaluated on the rows the walk visits, so a selective one visits up to
 * the whole window, as the sort did.
 */
import type { DB } from '../../platform/db/database.js';
import type {
  PartitionedTable,
  PartitionRef,
  PartitionSpan,
} from '../../platform/db/partitions.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import type { Criteria, CriterionValue } from './flow-query.rules.js';

export const TOTAL_CAP = 10_000;
export const WIDE_ROWS = 50_000;
export const OUTSIDE_ROWS = 200_000;
/** Widest window (in seconds, once clamped to the partition's end times) read by slots. */
export const SLOT_WALK_MAX = 120;
const HOUR = 3_600_000;

export interface Condition {
  sql: string;
  params: unknown[];
}

export const and = (conditions: readonly Condition[]): Condition => {
  const kept = conditions.filter((c) => c.sql !== '1');
  return kept.length === 0
    ? { sql: '1', params: [] }
    : { sql: kept.map((c) => `(${c.sql})`).join(' AND '), params: kept.flatMap((c) => c.params) };
};

const anyOf = (parts: Condition[]): Condition => ({
  sql: parts.map((p) => `(${p.sql})`).join(' OR '),
  params: parts.flatMap((p) => p.params),
});

const oneOf = (column: string, values: readonly CriterionValue[]): Condition =>
  values.length === 1
    ? { sql: `${column} = ?`, params: [values[0]] }
    : { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };

export type FlowTable = 'flows' | 'conversations';

/** Criteria as SQL over the flow rows or the rollup (see flow-query.rules.ts for the keys). */
export function criteriaSql(table: FlowTable, criteria: Criteria): Condition {
  const parts: Condition[] = [];
  for (const [key, values] of criteria) {
    if (key === 'start_time' || key === 'end_time')
      parts.push(
        anyOf(
          values.map((v) => {
            const range = v as { from: number; to: number };
            return { sql: `${key} >= ? AND ${key} < ?`, params: [range.from, range.to] };
          }),
        ),
      );
    else if (key === 'ip') parts.push(anyOf([oneOf('src_ip', values), oneOf('dst_ip', values)]));
    else if (key === 'port')
      parts.push(
        table === 'flows'
          ? anyOf([oneOf('src_port', values), oneOf('dst_port', values)])
          : oneOf('dst_port', values),
      );
    else if (key === 'src_port' && table === 'conversations')
      parts.push({
        sql: 'EXISTS (SELECT 1 FROM json_each(src_ports) WHERE value IN (SELECT value FROM json_each(?)))',
        params: [JSON.stringify(values)],
      });
    else if (table === 'conversations' && (key === 'vlan' || key.endsWith('_iface')))
      // The rollup keys an unknown vlan or interface as 0.
      parts.push(oneOf(key, values));
    else parts.push(oneOf(key, values));
  }
  return and(parts);
}

/** Rows visible to a scoped caller: either endpoint's address belongs to an in-scope device. */
export function scopeCondition(scope: DeviceScope | null): Condition {
  if (scope === null) return { sql: '1', params: [] };
  const ips = JSON.stringify([...scope.ips]);
  return {
    sql: 'src_ip IN (SELECT value FROM json_each(?)) OR dst_ip IN (SELECT value FROM json_each(?))',
    params: [ips, ips],
  };
}

/** The user's enabled saved filters as exclusions: NOT (filter) for each. */
export function exclusionsCondition(table: FlowTable, exclusions: readonly Criteria[]): Condition {
  return and(
    exclusions
      .filter((c) => c.size > 0)
      .map((c) => {
        const inner = criteriaSql(table, c);
        return { sql: `NOT (${inner.sql})`, params: inner.params };
      }),
  );
}

export interface FlowRow {
  id: number;
  start_time: number;
  end_time: number;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  protocol: number;
  bytes: number;
  packets: number;
  flow_src: string;
  vlan: number | null;
  in_iface: number | null;
  out_iface: number | null;
  src_id: number | null;
  src_host: string | null;
  src_profile: string | null;
  dst_id: number | null;
  dst_host: string | null;
  dst_profile: string | null;
}

const FLOW_SELECT =
  'id, start_time, end_time, src_ip, src_port, dst_ip, dst_port, protocol, bytes, packets, flow_src, vlan, in_iface, out_iface, src_id, src_host, src_profile, dst_id, dst_host, dst_profile';

export interface FlowListRequest {
  /** end_time range (inclusive) and the lower bound of start_time (null: none). */
  endFrom: number;
  endTo: number;
  startFrom: number | null;
  where: Condition;
  offset: number;
  limit: number;
}

/**
 * Rows of a partition with end_time in [from, to], counted on the end_time index up to `cap` + 1
 * (a bounded index-only walk: flows arrive in bursts, so bounds say little).
 */
function windowRows(db: DB, p: string, from: number, to: number, cap: number): number {
  return db
    .prepare(
      `SELECT count(*) FROM (SELECT 1 FROM ${p} WHERE end_time >= ? AND end_time <= ? LIMIT ?)`,
    )
    .pluck()
    .get(from, to, cap + 1) as number;
}

const qualified = (ref: PartitionRef) =>
  ref.schema === 'main' ? `"${ref.name}"` : `"${ref.schema}"."${ref.name}"`;

/** Rows of a partition outside [from, to], counted on the end_time index up to `cap` + 1. */
function outsideRows(db: DB, p: string, from: number, to: number, cap: number): number {
  return db
    .prepare(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM ${p} WHERE end_time < ? LIMIT ?)) + (SELECT count(*) FROM (SELECT 1 FROM ${p} WHERE end_time > ? LIMIT ?))`,
    )
    .pluck()
    .get(from, cap + 1, to, cap + 1) as number;
}

/** Whether a partition has the slot index (migration 0021; rotation carries it forward). */
function hasSlotIndex(db: DB, ref: PartitionRef): boolean {
  const schema = ref.schema === 'main' ? 'main' : `"${ref.schema}"`;
  return (
    db
      .prepare(
        `SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql LIKE '%(end_time / 1000, bytes)'`,
      )
      .get(ref.name) !== undefined
  );
}

/**
 * The first `need` (bytes, id) pairs of a partition's window read second by second on the slot
 * index, or null when the window is not short (see the header). Pairs are bytes descending, id
 * descending.
 */
function slotWalk(
  db: DB,
  span: PartitionSpan,
  p: string,
  request: FlowListRequest,
  need: number,
): { bytes: number; id: number }[] | null {
  if (request.startFrom !== null || !hasSlotIndex(db, span)) return null;
  // The window clamped to the partition's own first and last end time (an open end costs nothing).
  const from = Math.max(request.endFrom, span.minTime);
  const to = Math.min(request.endTo, span.maxTime);
  const first = Math.floor(from / 1000);
  const last = Math.floor(to / 1000);
  if (last - first + 1 > SLOT_WALK_MAX) return null;
  const unfiltered = request.where.sql === '1';
  const whole = db.prepare(
    `SELECT bytes, id FROM ${p} WHERE end_time / 1000 = ? AND bytes >= ? ORDER BY bytes DESC, id DESC LIMIT ?`,
  );
  const part = db.prepare(
    `SELECT bytes, id FROM ${p} WHERE end_time / 1000 = ? AND bytes >= ? AND +end_time >= ? AND +end_time <= ? AND (${request.where.sql}) ORDER BY bytes DESC, id DESC LIMIT ?`,
  );
  type Pair = { bytes: number; id: number };
  let pairs: Pair[] = [];
  // Once `need` pairs are held, a second can only contribute pairs with at least the bytes of
  // the need-th best so far: each slot reads from the top of its range down to that floor.
  let floor = -Infinity;
  const keep = () => {
    pairs.sort((a, b) => b.bytes - a.bytes || b.id - a.id);
    if (pairs.length >= need) {
      pairs = pairs.slice(0, need);
      floor = (pairs[need - 1] as Pair).bytes;
    }
  };
  for (let slot = first; slot <= last; slot++) {
    const inside =
      unfiltered && slot * 1000 >= request.endFrom && slot * 1000 + 999 <= request.endTo;
    const got = (
      inside
        ? whole.all(slot, floor, need)
        : part.all(slot, floor, request.endFrom, request.endTo, ...request.where.params, need)
    ) as Pair[];
    for (const pair of got) pairs.push(pair);
    if (pairs.length >= 2 * need) keep();
  }
  keep();
  return pairs;
}

/** A page of flows by bytes descending, with a capped total (see the header). */
export function listFlows(
  db: DB,
  table: PartitionedTable,
  request: FlowListRequest,
  bounds: { wideRows: number; outsideRows: number } = {
    wideRows: WIDE_ROWS,
    outsideRows: OUTSIDE_ROWS,
  },
): { rows: FlowRow[]; total: number; totalCapped: boolean } {
  const need = request.offset + request.limit;
  const merged: FlowRow[] = [];
  let total = 0;
  for (const span of table.windowSpans(request.endFrom, request.endTo)) {
    const p = qualified(span);
    const slots = request.limit > 0 ? slotWalk(db, span, p, request, need) : null;
    const wide =
      slots === null &&
      windowRows(db, p, request.endFrom, request.endTo, bounds.wideRows) > bounds.wideRows &&
      outsideRows(db, p, request.endFrom, request.endTo, bounds.outsideRows) <= bounds.outsideRows;
    const windowOn = (e: string) =>
      request.startFrom === null
        ? { sql: `${e} >= ? AND ${e} <= ?`, params: [request.endFrom, request.endTo] }
        : {
            sql: `${e} >= ? AND ${e} <= ? AND +start_time >= ?`,
            params: [request.endFrom, request.endTo, request.startFrom],
          };
    const where = and([windowOn(wide ? '+end_time' : 'end_time'), request.where]);
    const counted = and([windowOn('end_time'), request.where]);
    if (slots !== null && slots.length > 0)
      merged.push(
        ...(db
          .prepare(`SELECT ${FLOW_SELECT} FROM ${p} WHERE id IN (SELECT value FROM json_each(?))`)
          .all(JSON.stringify(slots.map((pair) => pair.id))) as FlowRow[]),
      );
    else if (slots === null && request.limit > 0)
      merged.push(
        ...(db
          .prepare(
            `SELECT ${FLOW_SELECT} FROM ${p} WHERE ${where.sql} ORDER BY bytes DESC, id DESC LIMIT ?`,
          )
          .all(...where.params, need) as FlowRow[]),
      );
    if (total < TOTAL_CAP)
      total += db
        .prepare(`SELECT count(*) FROM (SELECT 1 FROM ${p} WHERE ${counted.sql} LIMIT ?)`)
        .pluck()
        .get(...counted.params, TOTAL_CAP - total + 1) as number;
  }
  merged.sort((a, b) => b.bytes - a.bytes || b.id - a.id);
  const capped = total > TOTAL_CAP;
  return {
    rows: merged.slice(request.offset, need),
    total: capped ? TOTAL_CAP : total,
    totalCapped: capped,
  };
}

export interface ConversationRow {
  hour: number;
  src_ip: string;
  dst_ip: string;
  dst_port: number;
  protocol: number;
  flow_src: string;
  vlan: number;
  in_iface: number;
  out_iface: number;
  src_ports: string;
  bytes: number;
  packets: number;
  flows: number;
  start_time: number;
  end_time: number;
  src_id: number | null;
  src_host: string | null;
  src_profile: string | null;
  dst_id: number | null;
  dst_host: string | null;
  dst_profile: string | null;
}

/** The rollup's rows of a window: hours the window touches, times within it. */
function conversationWindow(start: number, end: number): Condition {
  return {
    sql: 'hour >= ? AND hour <= ? AND start_time >= ? AND end_time <= ?',
    params: [start - (start % HOUR), end, start, end],
  };
}

/** A page of the aggregated list, `sort` descending (a column of the allowlist). */
export function listConversations(
  db: DB,
  request: {
    start: number;
    end: number;
    where: Condition;
    sort: 'start_time' | 'bytes';
    offset: number;
    limit: number;
  },
): { rows: ConversationRow[]; total: number; totalCapped: boolean } {
  const where = and([conversationWindow(request.start, request.end), request.where]);
  const order = request.sort === 'bytes' ? 'bytes DESC' : 'start_time DESC';
  const rows = db
    .prepare(
      `SELECT * FROM flow_conversations WHERE ${where.sql} ORDER BY ${order}, src_ip, dst_ip, dst_port LIMIT ? OFFSET ?`,
    )
    .all(...where.params, request.limit, request.offset) as ConversationRow[];
  const counted = db
    .prepare(`SELECT count(*) FROM (SELECT 1 FROM flow_conversations WHERE ${where.sql} LIMIT ?)`)
    .pluck()
    .get(...where.params, TOTAL_CAP + 1) as number;
  return {
    rows,
    total: Math.min(counted, TOTAL_CAP),
    totalCapped: counted > TOTAL_CAP,
  };
}

export interface TopEntry {
  key: string;
  bytes: number;
  packets: number;
  flows: number;
}

/** Top groups by bytes over the rollup rows of a window (`group` is SQL from code). */
export function topConversations(
  db: DB,
  start: number,
  end: number,
  where: Condition,
  group: 'src_ip' | 'dst_ip' | 'protocol' | 'conversation',
  limit: number,
): Record<string, unknown>[] {
  const w = and([conversationWindow(start, end), where]);
  const columns =
    group === 'conversation'
      ? 'src_ip, dst_ip, dst_port, protocol, max(src_id) AS src_id, max(src_host) AS src_host, max(dst_id) AS dst_id, max(dst_host) AS dst_host'
      : group === 'protocol'
        ? 'protocol'
        : group === 'src_ip'
          ? 'src_ip AS ip, max(src_id) AS device_id, max(src_host) AS host'
          : 'dst_ip AS ip, max(dst_id) AS device_id, max(dst_host) AS host';
  const by = group === 'conversation' ? 'src_ip, dst_ip, dst_port, protocol' : group;
  return db
    .prepare(
      `SELECT ${columns}, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows FROM flow_conversations WHERE ${w.sql} GROUP BY ${by} ORDER BY bytes DESC LIMIT ?`,
    )
    .all(...w.params, limit) as Record<string, unknown>[];
}

/** Bytes per hour of a window (the rollup's granularity), oldest first. */
export function bytesByHour(
  db: DB,
  start: number,
  end: number,
  where: Condition,
): { hour: number; bytes: number; packets: number; flows: number }[] {
  const w = and([conversationWindow(start, end), where]);
  return db
    .prepare(
      `SELECT hour, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows FROM flow_conversations WHERE ${w.sql} GROUP BY hour ORDER BY hour`,
    )
    .all(...w.params) as { hour: number; bytes: number; packets: number; flows: number }[];
}

/** A device's flow summary over a window: bytes, flows and its top partners by bytes. */
export function deviceFlowSummary(
  db: DB,
  ip: string,
  start: number,
  end: number,
  partners: number,
): {
  bytes: number;
  count: number;
  top_partners: { ip: string; device_id: number | null; host: string | null; bytes: number }[];
} {
  const from = start - (start % HOUR);
  const total = db
    .prepare(
      `SELECT coalesce(sum(bytes), 0) AS bytes, coalesce(sum(flows), 0) AS count FROM (
         SELECT bytes, flows FROM flow_conversations WHERE src_ip = ? AND hour >= ? AND hour <= ?
         UNION ALL
         SELECT bytes, flows FROM flow_conversations WHERE dst_ip = ? AND src_ip <> ? AND hour >= ? AND hour <= ?)`,
    )
    .get(ip, from, end, ip, ip, from, end) as { bytes: number; count: number };
  const top = db
    .prepare(
      `SELECT ip, max(device_id) AS device_id, max(host) AS host, sum(bytes) AS bytes FROM (
         SELECT dst_ip AS ip, dst_id AS device_id, dst_host AS host, bytes FROM flow_conversations WHERE src_ip = ? AND hour >= ? AND hour <= ?
         UNION ALL
         SELECT src_ip, src_id, src_host, bytes FROM flow_conversations WHERE dst_ip = ? AND src_ip <> ? AND hour >= ? AND hour <= ?)
       GROUP BY ip ORDER BY bytes DESC LIMIT ?`,
    )
    .all(ip, from, end, ip, ip, from, end, partners) as {
    ip: string;
    device_id: number | null;
    host: string | null;
    bytes: number;
  }[];
  return { bytes: total.bytes, count: total.count, top_partners: top };
}

/** Flows stored for a device's address (from the rollup) and an estimate of their bytes on disk. */
export function deviceFlowStats(db: DB, ip: string): { rows: number; bytes: number } {
  const rows = db
    .prepare(
      `SELECT coalesce(sum(flows), 0) FROM (
         SELECT flows FROM flow_conversations WHERE src_ip = ?
         UNION ALL
         SELECT flows FROM flow_conversations WHERE dst_ip = ? AND src_ip <> ?)`,
    )
    .pluck()
    .get(ip, ip, ip) as number;
  // Estimated: a flow row (integers and short address text) with its two index entries.
  return { rows, bytes: rows * 120 };
}
