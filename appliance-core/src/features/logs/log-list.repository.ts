/**
 * Window lists and severity counts over a partitioned log table (syslog_log, eventlog_log,
 * eve_log), fast on tens of millions of rows and bounded in time.
 *
 * How a list runs: partitions newest first (each skipped when its time range misses the window;
 * min and max come from its time index), and inside a partition the window is walked from its end
 * backwards in slices of about SLICE_ROWS rows, cut on the time index (`ORDER BY timestamp DESC
 * LIMIT 1 OFFSET SLICE_ROWS`). Each slice is counted with the caller's conditions and, when it
 * holds part of the requested page, read in order (timestamp DESC, id DESC: the time index's own
 * order). So every statement touches at most one slice of rows, whatever the filter: a substring
 * or a rare severity never turns into one unbounded scan.
 *
 * Invariants (docs/features/logs.md):
 * - `total` counts matching rows until it has the page and at least TOTAL_CAP matches, or has
 *   the page and spent COUNT_BUDGET_MS counting; the walk then stops and `totalCapped` says total
 *   is a lower bound (an exact count over ten million rows is a scan). The page itself is then
 *   complete and exact.
 * - The walk checks the deadline between slices: when the next slice would likely end past it
 *   (judged by the slowest slice so far) before the page is complete, the answer is what was
 *   found so far with `partial: true` (rows and total cover the newest part of the window only).
 * - A rollup-guided walk (`ranges`, from rollupRanges) reads only the minutes that a per-minute
 *   rollup says can hold a match: a rare severity skips the minutes without it.
 * - Conditions are SQL written in code with values as parameters (filters.repository.ts builds
 *   them); table and partition names come from the partitioned-table helper only.
 */
import type { DB } from '../../platform/db/database.js';
import type { PartitionedTable } from '../../platform/db/partitions.js';

export const SLICE_ROWS = 20_000;
const MINUTE = 60_000;
export const TOTAL_CAP = 10_000;
/** Once the page is complete, counting further matches stops after this long (ms). */
export const COUNT_BUDGET_MS = 200;

export interface Condition {
  sql: string;
  params: unknown[];
}

export const and = (conditions: readonly Condition[]): Condition => {
  const kept = conditions.filter((c) => c.sql !== '1');
  return kept.length === 0
    ? { sql: '1', params: [] }
    : {
        sql: kept.map((c) => `(${c.sql})`).join(' AND '),
        params: kept.flatMap((c) => c.params),
      };
};

export interface ListRequest {
  /** Columns to read (SQL from code). */
  columns: string;
  where: Condition;
  start: number;
  end: number;
  offset: number;
  limit: number;
  /** Epoch ms after which the walk stops and answers partial. */
  deadline: number;
  /** Rows as arrays of values in `columns` order (better-sqlite3's raw mode) instead of objects. */
  raw?: boolean;
  /** The parts of the window that can hold a match (rollupRanges); absent: the whole window. */
  ranges?: Ranges;
}

export interface ListResult<Row> {
  rows: Row[];
  total: number;
  totalCapped: boolean;
  partial: boolean;
}

const q = (name: string) => `"${name}"`;

/** Time ranges [lower, upper] (inclusive), newest first. */
export type Ranges = readonly (readonly [number, number])[];

/**
 * Slices [lower, upper] (inclusive) of `partition` within `ranges` (newest first, each inside the
 * window), newest first.
 */
function* slices(
  db: DB,
  partition: string,
  ranges: Ranges,
): Generator<{ lower: number; upper: number }> {
  const p = q(partition);
  const lo = db.prepare(`SELECT min(timestamp) AS t FROM ${p}`).pluck().get() as number | null;
  const hi = db.prepare(`SELECT max(timestamp) AS t FROM ${p}`).pluck().get() as number | null;
  if (lo === null || hi === null) return;
  const cut = db
    .prepare(
      `SELECT timestamp FROM ${p} WHERE timestamp >= ? AND timestamp <= ? ORDER BY timestamp DESC LIMIT 1 OFFSET ?`,
    )
    .pluck();
  for (const [start, end] of ranges) {
    if (hi < start || lo > end) continue;
    let upper = Math.min(end, hi);
    const floor = Math.max(start, lo);
    while (upper >= floor) {
      const boundary = cut.get(floor, upper, SLICE_ROWS) as number | undefined;
      const lower = boundary === undefined ? floor : boundary;
      yield { lower, upper };
      upper = lower - 1;
    }
  }
}

/**
 * The minutes of [start, end] that a per-minute rollup says can hold a match of `where` (over the
 * rollup's columns: severity and scope), newest first, adjacent minutes merged, clipped to the
 * window: the rollup-guided walk of a selective filter (a rare severity) reads only these. Sound
 * only for a table whose every row is counted in the rollup (the writers put both in one atomic
 * group).
 */
export function rollupRanges(
  db: DB,
  rollup: string,
  where: Condition,
  start: number,
  end: number,
): [number, number][] {
  const minutes = db
    .prepare(
      `SELECT DISTINCT minute FROM ${q(rollup)} WHERE minute >= ? AND minute <= ? AND (${where.sql}) ORDER BY minute DESC`,
    )
    .pluck()
    .all(start - (((start % MINUTE) + MINUTE) % MINUTE), end, ...where.params) as number[];
  const ranges: [number, number][] = [];
  for (const minute of minutes) {
    const last = ranges[ranges.length - 1];
    const upper = Math.min(end, minute + MINUTE - 1);
    const lower = Math.max(start, minute);
    if (last && last[0] === minute + MINUTE) last[0] = lower;
    else ranges.push([lower, upper]);
  }
  return ranges;
}

/**
 * The budget check between slices: true when the next slice would likely end past `deadline`,
 * judged by the slowest step so far (a slice's cut, count and read), so that a walk stops in
 * time instead of after the deadline by up to one slice. The first check always passes: a walk
 * reads at least its newest slice, so a request that waited past its deadline before the walk
 * began (a starved process) answers the newest rows, partial, rather than nothing.
 */
function pacer(deadline: number, now: () => number): () => boolean {
  let mark: number | null = null;
  let slowest = 0;
  return () => {
    const at = now();
    if (mark === null) {
      mark = at;
      return false;
    }
    slowest = Math.max(slowest, at - mark);
    mark = at;
    return at + slowest > deadline;
  };
}

/** A page of rows of a window, newest first, with a capped total (see the header). */
export function listWindow<Row>(
  db: DB,
  table: PartitionedTable,
  request: ListRequest,
  now: () => number = Date.now,
): ListResult<Row> {
  const rows: Row[] = [];
  let matched = 0;
  let partial = false;
  let stopped = false;
  const need = request.offset + request.limit;
  const countUntil = now() + COUNT_BUDGET_MS;
  const ranges = request.ranges ?? [[request.start, request.end]];
  const pace = pacer(request.deadline, now);
  outer: for (const partition of table.partitions()) {
    const p = q(partition);
    const count = db
      .prepare(
        `SELECT count(*) FROM ${p} WHERE timestamp >= ? AND timestamp <= ? AND (${request.where.sql})`,
      )
      .pluck();
    const read = db.prepare(
      `SELECT ${request.columns} FROM ${p} WHERE timestamp >= ? AND timestamp <= ? AND (${request.where.sql}) ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?`,
    );
    if (request.raw) read.raw(true);
    for (const { lower, upper } of slices(db, partition, ranges)) {
      if (matched >= need && (matched >= TOTAL_CAP || now() > countUntil)) {
        stopped = true;
        break outer;
      }
      if (pace()) {
        partial = true;
        break outer;
      }
      const n = count.get(lower, upper, ...request.where.params) as number;
      if (n > 0 && rows.length < request.limit && matched + n > request.offset) {
        const skip = Math.max(0, request.offset - matched);
        rows.push(
          ...(read.all(
            lower,
            upper,
            ...request.where.params,
            request.limit - rows.length,
            skip,
          ) as Row[]),
        );
      }
      matched += n;
    }
  }
  return { rows, total: matched, totalCapped: stopped, partial };
}

/** Counts by severity of rows in [start, end] matching `where`, walked in slices (see listWindow). */
export function countRowsBySeverity(
  db: DB,
  table: PartitionedTable,
  where: Condition,
  start: number,
  end: number,
  deadline: number,
  now: () => number = Date.now,
): { counts: Map<number, number>; partial: boolean } {
  const counts = new Map<number, number>();
  const pace = pacer(deadline, now);
  for (const partition of table.partitions()) {
    const statement = db.prepare(
      `SELECT severity, count(*) AS n FROM ${q(partition)} WHERE timestamp >= ? AND timestamp <= ? AND (${where.sql}) GROUP BY severity`,
    );
    for (const { lower, upper } of slices(db, partition, [[start, end]])) {
      if (pace()) return { counts, partial: true };
      for (const row of statement.all(lower, upper, ...where.params) as {
        severity: number;
        n: number;
      }[])
        counts.set(row.severity, (counts.get(row.severity) ?? 0) + row.n);
    }
  }
  return { counts, partial: false };
}

/**
 * Counts by severity over [start, end] from a per-minute rollup for the whole minutes and from
 * the rows for the partial minutes at either edge. `rollupWhere` filters the rollup's rows (scope
 * by its device columns), `rowWhere` the log rows (the same scope by their columns).
 */
export function countBySeverity(
  db: DB,
  table: PartitionedTable,
  rollup: string,
  rollupWhere: Condition,
  rowWhere: Condition,
  start: number,
  end: number,
  deadline: number,
): { counts: Map<number, number>; partial: boolean } {
  const firstWhole = Math.ceil(start / MINUTE) * MINUTE;
  const endExclusive = end + 1;
  const lastWhole = Math.floor(endExclusive / MINUTE) * MINUTE;
  if (firstWhole >= lastWhole)
    return countRowsBySeverity(db, table, rowWhere, start, end, deadline);
  const counts = new Map<number, number>();
  for (const row of db
    .prepare(
      `SELECT severity, sum(count) AS n FROM ${q(rollup)} WHERE minute >= ? AND minute < ? AND (${rollupWhere.sql}) GROUP BY severity`,
    )
    .all(firstWhole, lastWhole, ...rollupWhere.params) as { severity: number; n: number }[])
    counts.set(row.severity, row.n);
  let partial = false;
  const edges: [number, number][] = [];
  if (start < firstWhole) edges.push([start, firstWhole - 1]);
  if (lastWhole <= end) edges.push([lastWhole, end]);
  for (const [from, to] of edges) {
    const edge = countRowsBySeverity(db, table, rowWhere, from, to, deadline);
    for (const [severity, n] of edge.counts) counts.set(severity, (counts.get(severity) ?? 0) + n);
    partial ||= edge.partial;
  }
  return { counts, partial };
}
