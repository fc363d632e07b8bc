/**
 * Tracker samples and their rollups. Raw samples are kept per kind in `<kind>_samples`; every
 * numeric sample also updates its 5-minute and 1-hour buckets in `sample_rollups` in the same
 * transaction, so a long window is read from the rollups (a 30-day chart is 720 hourly points) and
 * never rescans raw rows. The pollers write samples as data (`sampleWrites`: statement names
 * and parameters) through the storage writer (trackers.writes.ts), which runs them in batched
 * transactions on its own thread; the statements are `SAMPLE_STATEMENTS`.
 */
import type { DB } from '../../platform/db/database.js';
import type { SqlParam } from '../../platform/db/storage-writer.js';
import { HOUR_MS } from '../../platform/time/time.js';

export type SampleKind = 'latency' | 'port' | 'disk' | 'interface' | 'oid';

export const FIVE_MINUTES = 300_000;
export const ONE_HOUR = HOUR_MS;
/** Windows up to this long are served from raw samples. */
export const RAW_MAX_SPAN = 6 * HOUR_MS;
/** Windows up to this long are served from 5-minute rollups; longer ones from 1-hour rollups. */
export const FIVE_MINUTE_MAX_SPAN = 48 * HOUR_MS;

/** Approximate stored bytes of one raw sample row (key, values, b-tree overhead), per kind. */
const ROW_BYTES: Record<SampleKind, number> = {
  latency: 40,
  port: 32,
  disk: 40,
  interface: 44,
  oid: 48,
};
export const SAMPLE_TABLES: Record<SampleKind, string> = {
  latency: 'latency_samples',
  port: 'port_samples',
  disk: 'disk_samples',
  interface: 'interface_samples',
  oid: 'oid_samples',
};
const TRACKER_TABLES: Record<SampleKind, string> = {
  latency: 'latency_trackers',
  port: 'port_trackers',
  disk: 'disk_trackers',
  interface: 'interface_trackers',
  oid: 'oid_trackers',
};
const SAMPLE_KINDS = Object.keys(SAMPLE_TABLES) as SampleKind[];

/** One reading: `a`/`b` are the kind's values (see 0005_trackers.sql); `answered` false for a -1 latency. */
export interface Sample {
  kind: SampleKind;
  trackerId: number;
  ts: number;
  a: number;
  b: number;
  /** Interface: oper status; OID: the text value. */
  extra?: number | string | null;
  /** False when `a` is not a measurement (latency -1, OID text). */
  answered?: boolean;
}

export interface SeriesPoint {
  ts: number;
  a: number | null;
  b: number | null;
  n: number;
  extra?: number | string | null;
}

/** A write as data: a statement name (of SAMPLE_STATEMENTS or TRACKER_STATEMENTS) and its parameters. */
export type WriteOp = readonly [name: string, params: readonly SqlParam[]];

const SAMPLE_COLUMNS: Record<SampleKind, string> = {
  latency: 'tracker_id, ts, latency, loss',
  port: 'tracker_id, ts, latency',
  disk: 'tracker_id, ts, available, total',
  interface: 'tracker_id, ts, in_bps, out_bps, oper_status',
  oid: 'tracker_id, ts, value',
};
const sampleStatement = (kind: SampleKind) => `trackers.sample.${kind}`;
const rollupStatement = (kind: SampleKind) => `trackers.rollup.${kind}`;

/**
 * The statements of sample writes, by name. A sample is written only while its tracker exists:
 * a reading queued before the tracker's deletion and committed after it (the purge triggers of
 * 0005_trackers.sql have run) is dropped rather than left orphaned (the samples tables have no
 * foreign key). One rollup statement updates both buckets (5 minutes and 1 hour).
 */
export const SAMPLE_STATEMENTS: Readonly<Record<string, string>> = Object.fromEntries(
  SAMPLE_KINDS.flatMap((kind) => {
    const columns = SAMPLE_COLUMNS[kind];
    const exists = `WHERE EXISTS (SELECT 1 FROM ${TRACKER_TABLES[kind]} WHERE id = ?)`;
    return [
      [
        sampleStatement(kind),
        `INSERT OR REPLACE INTO ${SAMPLE_TABLES[kind]} (${columns}) SELECT ${columns.replace(/\w+/g, '?')} ${exists}`,
      ],
      [
        rollupStatement(kind),
        `INSERT INTO sample_rollups (kind, tracker_id, resolution, ts, n, sum_a, n_a, sum_b)
         SELECT '${kind}', s.id, r.column1, s.ts - s.ts % r.column1, 1, s.a, s.n_a, s.b
         FROM (SELECT ? AS id, ? AS ts, ? AS a, ? AS n_a, ? AS b) s, (VALUES (${FIVE_MINUTES}), (${ONE_HOUR})) r
         ${exists.replace('id = ?', 'id = s.id')}
         ON CONFLICT (kind, tracker_id, resolution, ts) DO UPDATE SET n = n + 1, sum_a = sum_a + excluded.sum_a, n_a = n_a + excluded.n_a, sum_b = sum_b + excluded.sum_b`,
      ],
    ];
  }),
);

/** The writes of one sample: its raw row and (numeric samples) its rollups. */
export function sampleWrites(sample: Sample): WriteOp[] {
  const { kind, trackerId: id, ts } = sample;
  let values: SqlParam[];
  switch (kind) {
    case 'latency':
    case 'disk':
      values = [sample.a, sample.b];
      break;
    case 'port':
      values = [sample.a];
      break;
    case 'interface':
      values = [sample.a, sample.b, sample.extra ?? null];
      break;
    case 'oid':
      values = [String(sample.extra ?? sample.a)];
      break;
  }
  const ops: WriteOp[] = [[sampleStatement(kind), [id, ts, ...values, id]]];
  const answered = sample.answered !== false;
  if (kind === 'oid' && !answered) return ops;
  ops.push([rollupStatement(kind), [id, ts, answered ? sample.a : 0, answered ? 1 : 0, sample.b]]);
  return ops;
}

export interface DiskReading {
  ts: number;
  available: number;
  total: number;
}

export interface RollupTotals {
  n: number | null;
  n_a: number | null;
  sum_a: number | null;
  sum_b: number | null;
}

export class SamplesRepository {
  constructor(private readonly db: DB) {}

  /**
   * Writes a sample on this repository's connection, now (tests and fixtures); the pollers write
   * the same statements through the storage writer.
   */
  write(sample: Sample): void {
    for (const [name, params] of sampleWrites(sample))
      this.db.prepare(SAMPLE_STATEMENTS[name] as string).run(...params);
  }

  /**
   * The samples of a window: raw rows for short windows, rollup averages (bucket start, average of
   * answered `a`, average `b`) for long ones.
   */
  series(kind: SampleKind, trackerId: number, start: number, end: number): SeriesPoint[] {
    const span = end - start;
    if (span <= RAW_MAX_SPAN) return this.raw(kind, trackerId, start, end);
    const resolution = span <= FIVE_MINUTE_MAX_SPAN ? FIVE_MINUTES : ONE_HOUR;
    const rows = this.db
      .prepare(
        `SELECT ts, n, n_a, sum_a, sum_b FROM sample_rollups WHERE kind = ? AND tracker_id = ? AND resolution = ? AND ts >= ? AND ts <= ? ORDER BY ts`,
      )
      .all(kind, trackerId, resolution, start - (start % resolution), end) as {
      ts: number;
      n: number;
      n_a: number;
      sum_a: number;
      sum_b: number;
    }[];
    return rows.map((r) => ({
      ts: r.ts,
      n: r.n,
      a: r.n_a > 0 ? r.sum_a / r.n_a : null,
      b: r.sum_b / r.n,
    }));
  }

  raw(kind: SampleKind, trackerId: number, start: number, end: number): SeriesPoint[] {
    const columns: Record<SampleKind, string> = {
      latency: 'latency AS a, loss AS b, NULL AS extra',
      port: 'latency AS a, NULL AS b, NULL AS extra',
      disk: 'available AS a, total AS b, NULL AS extra',
      interface: 'in_bps AS a, out_bps AS b, oper_status AS extra',
      oid: 'NULL AS a, NULL AS b, value AS extra',
    };
    const rows = this.db
      .prepare(
        `SELECT ts, ${columns[kind]} FROM ${SAMPLE_TABLES[kind]} WHERE tracker_id = ? AND ts >= ? AND ts <= ? ORDER BY ts`,
      )
      .all(trackerId, start, end) as {
      ts: number;
      a: number | null;
      b: number | null;
      extra: number | string | null;
    }[];
    return rows.map((r) => ({ ...r, n: 1 }));
  }

  /** The query plan of the raw window query (tests assert it uses the primary key). */
  windowPlan(kind: SampleKind): string {
    const rows = this.db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT ts FROM ${SAMPLE_TABLES[kind]} WHERE tracker_id = ? AND ts >= ? AND ts <= ? ORDER BY ts`,
      )
      .all(1, 0, 1) as { detail: string }[];
    return rows.map((r) => r.detail).join('; ');
  }

  rollupPlan(): string {
    const rows = this.db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT ts FROM sample_rollups WHERE kind = ? AND tracker_id = ? AND resolution = ? AND ts >= ? AND ts <= ? ORDER BY ts',
      )
      .all('latency', 1, FIVE_MINUTES, 0, 1) as { detail: string }[];
    return rows.map((r) => r.detail).join('; ');
  }

  /** Storage estimate of one tracker's samples. */
  stats(kind: SampleKind, trackerId: number): { rows: number; bytes: number } {
    const { rows } = this.db
      .prepare(`SELECT count(*) AS rows FROM ${SAMPLE_TABLES[kind]} WHERE tracker_id = ?`)
      .get(trackerId) as { rows: number };
    const { rollups } = this.db
      .prepare('SELECT count(*) AS rollups FROM sample_rollups WHERE kind = ? AND tracker_id = ?')
      .get(kind, trackerId) as { rollups: number };
    return { rows, bytes: rows * ROW_BYTES[kind] + rollups * 56 };
  }

  /** Rows and bytes of every tracker of a kind belonging to a device (device stats). */
  deviceStats(kind: SampleKind, trackerIds: readonly number[]): { rows: number; bytes: number } {
    let rows = 0;
    let bytes = 0;
    for (const id of trackerIds) {
      const s = this.stats(kind, id);
      rows += s.rows;
      bytes += s.bytes;
    }
    return { rows, bytes };
  }

  /** Deletes a tracker's samples and rollups (tracker deletion). */
  purge(kind: SampleKind, trackerId: number): void {
    this.db.prepare(`DELETE FROM ${SAMPLE_TABLES[kind]} WHERE tracker_id = ?`).run(trackerId);
    this.db
      .prepare('DELETE FROM sample_rollups WHERE kind = ? AND tracker_id = ?')
      .run(kind, trackerId);
  }

  /** The newest disk reading of a tracker. */
  latestDisk(trackerId: number): DiskReading | undefined {
    return this.db
      .prepare(
        'SELECT ts, available, total FROM disk_samples WHERE tracker_id = ? ORDER BY ts DESC LIMIT 1',
      )
      .get(trackerId) as DiskReading | undefined;
  }

  /** The first disk reading of a tracker at or after `since`. */
  firstDiskSince(trackerId: number, since: number): DiskReading | undefined {
    return this.db
      .prepare(
        'SELECT ts, available, total FROM disk_samples WHERE tracker_id = ? AND ts >= ? ORDER BY ts LIMIT 1',
      )
      .get(trackerId, since) as DiskReading | undefined;
  }

  /** Sums of a tracker's hourly rollups from the hour holding `start` on (nulls without rollups). */
  hourlyTotals(kind: SampleKind, trackerId: number, start: number): RollupTotals {
    return this.db
      .prepare(
        'SELECT sum(n) AS n, sum(n_a) AS n_a, sum(sum_a) AS sum_a, sum(sum_b) AS sum_b FROM sample_rollups WHERE kind = ? AND tracker_id = ? AND resolution = ? AND ts >= ?',
      )
      .get(kind, trackerId, ONE_HOUR, start - (start % ONE_HOUR)) as RollupTotals;
  }

  /** Oldest and newest raw sample of a tracker. */
  extent(kind: SampleKind, trackerId: number): { first: number | null; last: number | null } {
    const row = this.db
      .prepare(
        `SELECT min(ts) AS first, max(ts) AS last FROM ${SAMPLE_TABLES[kind]} WHERE tracker_id = ?`,
      )
      .get(trackerId) as {
      first: number | null;
      last: number | null;
    };
    return row;
  }
}
