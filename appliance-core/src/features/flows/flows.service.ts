/**
 * The flow explorer's reads (spec part 3 "Flow explorer"): the flow list, the aggregated list,
 * the designed aggregate (top talkers and bytes over time) and the device summary, each with the
 * caller's tag scope (either endpoint in scope) and saved exclusions applied. Throws
 * FlowQueryError for bad input (the routes' 400).
 */
import type { DB } from '../../platform/db/database.js';
import type { PartitionedTable } from '../../platform/db/partitions.js';
import type { Identity } from '../../platform/http/identity.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import type { Clock } from '../../platform/time/time.js';
import { toIso } from '../../platform/time/time.js';
import {
  ACTIVE_MS,
  AGG_LIST_KEYS,
  aggSortOf,
  bitsPerSecond,
  FLOW_LIST_KEYS,
  parseFilters,
  protocolName,
  windowOf,
  type Criteria,
  type WindowQuery,
} from './flow-query.rules.js';
import {
  and,
  bytesByHour,
  criteriaSql,
  exclusionsCondition,
  listConversations,
  listFlows,
  scopeCondition,
  topConversations,
  type ConversationRow,
  type FlowRow,
  type FlowTable,
} from './flows.repository.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10_000;
/** Rows beyond this depth (offset + limit) are not served: deep pages of bytes order are scans. */
export const MAX_DEPTH = 100_000;
const HOUR = 3_600_000;
const FAR_FUTURE = 8_640_000_000_000_000;

export interface FlowListQuery extends WindowQuery {
  filters?: string;
  limit?: number;
  page?: number;
  sort?: string;
}

export interface FlowPage<Row> {
  current_page: number;
  data: Row[];
  per_page: number;
  total: number;
  total_capped: boolean;
  startTime: string | null;
  endTime: string | null;
}

export interface FlowsReaderDeps {
  db: DB;
  clock: Clock;
  table: PartitionedTable;
  scopeOf: (identity: Identity) => DeviceScope | null;
  /** The identity's enabled saved flow filters as criteria. */
  exclusions: (userId: number) => Criteria[];
}

const nullIfZero = (n: number): number | null => (n === 0 ? null : n);

export function presentFlow(row: FlowRow): Record<string, unknown> {
  return {
    ...row,
    start_time: toIso(row.start_time),
    end_time: toIso(row.end_time),
    prot_name: protocolName(row.protocol),
    bps: bitsPerSecond(row.bytes, row.start_time, row.end_time),
  };
}

function presentConversation(row: ConversationRow): Record<string, unknown> {
  const { hour: _hour, src_ports, ...rest } = row;
  return {
    ...rest,
    src_ports: JSON.parse(src_ports) as number[],
    vlan: nullIfZero(row.vlan),
    in_iface: nullIfZero(row.in_iface),
    out_iface: nullIfZero(row.out_iface),
    start_time: toIso(row.start_time),
    end_time: toIso(row.end_time),
    prot_name: protocolName(row.protocol),
    bps: bitsPerSecond(row.bytes, row.start_time, row.end_time),
  };
}

function paging(query: FlowListQuery): { limit: number; page: number; offset: number } {
  const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
  const page = Math.max(1, Math.trunc(query.page ?? 1));
  return { limit, page, offset: (page - 1) * limit };
}

export class FlowsReader {
  constructor(private readonly deps: FlowsReaderDeps) {}

  private where(table: FlowTable, identity: Identity, criteria: Criteria) {
    return and([
      criteriaSql(table, criteria),
      scopeCondition(this.deps.scopeOf(identity)),
      exclusionsCondition(table, this.deps.exclusions(identity.user.id)),
    ]);
  }

  /** GET /api/netflow/list: bytes descending; active flows without a window. */
  list(identity: Identity, query: FlowListQuery): FlowPage<Record<string, unknown>> {
    const now = this.deps.clock.now();
    const window = windowOf(query, now);
    const criteria = parseFilters(FLOW_LIST_KEYS, query.filters);
    const { limit, page, offset } = paging(query);
    const result = listFlows(this.deps.db, this.deps.table, {
      endFrom: window ? window.start : now - ACTIVE_MS,
      endTo: window ? window.end : FAR_FUTURE,
      startFrom: window ? window.start : null,
      where: this.where('flows', identity, criteria),
      offset: Math.min(offset, MAX_DEPTH),
      limit: Math.max(0, Math.min(limit, MAX_DEPTH - offset)),
    });
    return {
      current_page: page,
      data: result.rows.map(presentFlow),
      per_page: limit,
      total: result.total,
      total_capped: result.totalCapped,
      startTime: window ? toIso(window.start) : null,
      endTime: window ? toIso(window.end) : null,
    };
  }

  /** The window of the rollup reads: the query's, or the last 24 hours. */
  private rollupWindow(query: WindowQuery): { start: number; end: number } {
    const now = this.deps.clock.now();
    return windowOf(query, now) ?? { start: now - 24 * HOUR, end: now };
  }

  /** GET /api/aggnetflow/list: conversations per hour, `sort` descending. */
  aggregated(identity: Identity, query: FlowListQuery): FlowPage<Record<string, unknown>> {
    const window = this.rollupWindow(query);
    const criteria = parseFilters(AGG_LIST_KEYS, query.filters);
    const { limit, page, offset } = paging(query);
    const result = listConversations(this.deps.db, {
      start: window.start,
      end: window.end,
      where: this.where('conversations', identity, criteria),
      sort: aggSortOf(query.sort),
      offset,
      limit,
    });
    return {
      current_page: page,
      data: result.rows.map(presentConversation),
      per_page: limit,
      total: result.total,
      total_capped: result.totalCapped,
      startTime: toIso(window.start),
      endTime: toIso(window.end),
    };
  }

  /**
   * The designed aggregate (GET /api/netflow/top): top sources, destinations, conversations and
   * protocols by bytes over a window, and bytes and bits per second per hour.
   */
  top(identity: Identity, query: FlowListQuery & { top?: number }) {
    const window = this.rollupWindow(query);
    const criteria = parseFilters(AGG_LIST_KEYS, query.filters);
    const where = this.where('conversations', identity, criteria);
    const limit = Math.min(Math.max(1, Math.trunc(query.top ?? 10)), 100);
    const { db } = this.deps;
    const { start, end } = window;
    const withName = (rows: Record<string, unknown>[]) =>
      rows.map((r) => ({ ...r, prot_name: protocolName(r.protocol as number) }));
    return {
      startTime: toIso(start),
      endTime: toIso(end),
      top_sources: topConversations(db, start, end, where, 'src_ip', limit),
      top_destinations: topConversations(db, start, end, where, 'dst_ip', limit),
      top_conversations: withName(topConversations(db, start, end, where, 'conversation', limit)),
      top_protocols: withName(topConversations(db, start, end, where, 'protocol', limit)),
      series: bytesByHour(db, start, end, where).map((b) => ({
        time: toIso(b.hour),
        bytes: b.bytes,
        packets: b.packets,
        flows: b.flows,
        bps: Math.round((b.bytes * 8) / 3600),
      })),
    };
  }
}
