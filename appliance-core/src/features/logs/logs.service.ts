/**
 * Reading the three log feeds for a caller (spec part 3 "Shared log-feed rules", Syslog, Windows
 * events, IDS events): window, filters, tag scope and the caller's saved exclusions, paging with a
 * capped total and a time budget, and the severity summary from the rollups. The routes and, in
 * process, alerting and MCP (index.ts) call the same functions with an identity.
 *
 * Decisions (docs/features/logs.md, docs/spec-decisions.md):
 * - `limit` 1..MAX_LIMIT (default 1000), `page` from 1.
 * - `total` is exact up to TOTAL_CAP matches (10,000) counted from the newest row; past it the
 *   answer says `total_capped: true` and total is a lower bound.
 * - A list or summary stops at the 1 s budget (the walk RESPONSE_RESERVE_MS before it, judged
 *   by its slowest slice) and answers what it found with `partial: true`.
 * - A severity filter on syslog and Windows events walks only the minutes whose rollup rows hold
 *   one of its levels (rollupRanges): a rare severity reads a few minutes, not the window.
 * - sevSum counts whole minutes from the rollup and the partial edge minutes from rows; when the
 *   caller has an enabled saved filter of the feed, or sends `filters`, it counts rows instead
 *   (the rollup cannot know what an exclusion hides), under the same budget.
 */
import type { DB } from '../../platform/db/database.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import type { Identity } from '../../platform/http/identity.js';
import type { Clock } from '../../platform/time/time.js';
import { toIso } from '../../platform/time/time.js';
import {
  criteriaSql,
  exclusionsSql,
  rollupScopeCondition,
  scopeCondition,
  type DeviceAddress,
} from './log-conditions.repository.js';
import { FEEDS, parseFilters, windowOf, type Feed } from './log-feeds.rules.js';
import {
  and,
  countBySeverity,
  countRowsBySeverity,
  listWindow,
  rollupRanges,
} from './log-list.repository.js';
import type { LogTables } from './logs.repository.js';
import { findEveEvent, type EveRow } from './logs.repository.js';
import type { SavedFilters } from './saved-filters.service.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 5000;
export const TIME_BUDGET_MS = 1000;
/** Kept from the budget for what follows the walk (presenting rows, encoding, sending). */
export const RESPONSE_RESERVE_MS = 100;
/** Feeds whose every row is counted in their rollup (the guided walk relies on it). */
const GUIDED: ReadonlySet<Feed> = new Set(['syslog', 'eventlog']);

export interface LogQuery {
  startTime?: string;
  endTime?: string;
  hours?: string | number;
  /** The `filters` JSON object (text as sent, or already an object). */
  filters?: string | Record<string, unknown>;
  limit?: number;
  page?: number;
}

export interface LogPage<Row> {
  current_page: number;
  data: Row[];
  per_page: number;
  total: number;
  total_capped: boolean;
  partial: boolean;
  startTime: string;
  endTime: string;
}

export interface SeveritySummary {
  severityCounts: Record<string, number>;
  partial: boolean;
  startTime: string;
  endTime: string;
}

const COLUMNS: Record<Feed, readonly string[]> = {
  syslog: [
    'id',
    'device_id',
    'timestamp',
    'facility',
    'severity',
    'source',
    'message',
    'host',
    'sender',
    'reported_at',
    'malformed',
  ],
  eventlog: ['id', 'device_id', 'timestamp', 'event_id', 'log', 'source', 'severity', 'data'],
  eve: [
    'id',
    'timestamp',
    'signature_id',
    'signature',
    'category',
    'severity',
    'proto',
    'iface',
    'vlan',
    'src_ip',
    'src_port',
    'dst_ip',
    'dst_port',
    'src_id',
    'src_host',
    'src_profile',
    'dst_id',
    'dst_host',
    'dst_profile',
    'flow_id',
  ],
};
const ROLLUPS: Record<Feed, string> = {
  syslog: 'syslog_minute_rollup',
  eventlog: 'eventlog_minute_rollup',
  eve: 'eve_minute_rollup',
};

/**
 * A row as the API shows it, from the values SQLite returned in COLUMNS order (read as arrays:
 * building the objects here in one pass costs a fraction of better-sqlite3's row objects).
 */
function present(feed: Feed, values: readonly unknown[]): Record<string, unknown> {
  const names = COLUMNS[feed];
  const out: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) out[names[i]!] = values[i];
  out.timestamp = toIso(out.timestamp as number);
  if (feed === 'syslog') {
    out.reported_at = out.reported_at === null ? null : toIso(out.reported_at as number);
    out.malformed = out.malformed === 1;
  }
  return out;
}

export interface LogsReaderDeps {
  db: DB;
  clock: Clock;
  tables: LogTables;
  filters: Record<Feed, SavedFilters>;
  /** The caller's device scope (null: unrestricted). */
  scopeOf: (identity: Identity) => DeviceScope | null;
  deviceAddress: DeviceAddress;
}

export class LogsReader {
  constructor(private readonly deps: LogsReaderDeps) {}

  /** One page of a feed for `identity`; throws FilterError (the routes' 400) for bad input. */
  list(feed: Feed, identity: Identity, query: LogQuery): LogPage<Record<string, unknown>> {
    const { db, clock } = this.deps;
    const started = Date.now();
    const window = windowOf(query, clock.now());
    const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
    const page = Math.max(1, Math.trunc(query.page ?? 1));
    const criteria = this.criteria(feed, query.filters);
    const where = this.where(feed, identity, query.filters);
    const severities = criteria.get('severity');
    // A severity filter walks only the minutes whose rollup rows hold one of its levels.
    const ranges =
      severities && GUIDED.has(feed)
        ? rollupRanges(
            db,
            ROLLUPS[feed],
            and([
              {
                sql: 'severity IN (SELECT value FROM json_each(?))',
                params: [JSON.stringify(severities)],
              },
              rollupScopeCondition(feed, this.deps.scopeOf(identity)),
            ]),
            window.start,
            window.end,
          )
        : undefined;
    const result = listWindow<unknown[]>(db, this.deps.tables[feed], {
      columns: COLUMNS[feed].join(', '),
      raw: true,
      where,
      start: window.start,
      end: window.end,
      offset: (page - 1) * limit,
      limit,
      deadline: started + TIME_BUDGET_MS - RESPONSE_RESERVE_MS,
      ranges,
    });
    return {
      current_page: page,
      data: result.rows.map((values) => present(feed, values)),
      per_page: limit,
      total: result.total,
      total_capped: result.totalCapped,
      partial: result.partial,
      startTime: toIso(window.start),
      endTime: toIso(window.end),
    };
  }

  /** Counts by severity over the window (levels of the feed, zero-filled). */
  summary(feed: Feed, identity: Identity, query: LogQuery): SeveritySummary {
    const { db, clock } = this.deps;
    const started = Date.now();
    const window = windowOf(query, clock.now());
    const scope = this.deps.scopeOf(identity);
    const exclusions = this.deps.filters[feed].exclusions(identity.user.id);
    const criteria = this.criteria(feed, query.filters);
    const table = this.deps.tables[feed];
    const deadline = started + TIME_BUDGET_MS - RESPONSE_RESERVE_MS;
    const fromRows = exclusions.length > 0 || criteria.size > 0;
    const counted = fromRows
      ? countRowsBySeverity(
          db,
          table,
          this.where(feed, identity, query.filters),
          window.start,
          window.end,
          deadline,
        )
      : countBySeverity(
          db,
          table,
          ROLLUPS[feed],
          rollupScopeCondition(feed, scope),
          scopeCondition(feed, scope),
          window.start,
          window.end,
          deadline,
        );
    const severityCounts: Record<string, number> = {};
    for (const level of FEEDS[feed].summaryLevels)
      severityCounts[String(level)] = counted.counts.get(level) ?? 0;
    return {
      severityCounts,
      partial: counted.partial,
      startTime: toIso(window.start),
      endTime: toIso(window.end),
    };
  }

  /** An IDS event the caller may see (either endpoint in scope), or null. */
  eveEvent(identity: Identity, id: number): Record<string, unknown> | null {
    const row: EveRow | undefined = findEveEvent(this.deps.tables, this.deps.db, id);
    if (!row) return null;
    const scope = this.deps.scopeOf(identity);
    if (scope !== null && !scope.ips.has(row.src_ip) && !scope.ips.has(row.dst_ip)) return null;
    return { ...row, timestamp: toIso(row.timestamp) };
  }

  private criteria(feed: Feed, filters: LogQuery['filters']) {
    return parseFilters(
      FEEDS[feed],
      typeof filters === 'object' && filters !== null ? JSON.stringify(filters) : filters,
    );
  }

  private where(feed: Feed, identity: Identity, filters: LogQuery['filters']) {
    const criteria = this.criteria(feed, filters);
    return and([
      scopeCondition(feed, this.deps.scopeOf(identity)),
      criteriaSql(feed, criteria, this.deps.deviceAddress),
      exclusionsSql(
        feed,
        this.deps.filters[feed].exclusions(identity.user.id),
        this.deps.deviceAddress,
      ),
    ]);
  }
}
