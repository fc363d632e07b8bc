/**
 * SQL of URL trackers and their check history (url_trackers, url_samples in 0005_trackers.sql).
 */
import type { DB } from '../../platform/db/database.js';
import { toSqlDateTime } from '../../platform/time/time.js';
import {
  alertRecord,
  alertsOf,
  findAlert,
  observeAlertState,
  URL_DOWN_ALERT,
} from '../alerts/index.js';
import type { UrlCheckResult } from './url.checker.js';

export const URL_DEFAULT_INTERVAL = 300;
/** Checks at most every 30 s (the url_interval_floor migration raised shorter stored intervals to it). */
export const URL_MIN_INTERVAL = 30;
export const URL_MAX_INTERVAL = 2_592_000;
/** URL trackers the appliance keeps at most. */
export const URL_TRACKER_LIMIT = 1000;

export interface UrlTrackerRow {
  id: number;
  url: string;
  pattern: string;
  interval: number;
  timestamp: number | null;
  latency: number | null;
  message: string | null;
  status: number | null;
  ssldate: string | null;
  ok: number | null;
  created_at: number;
  updated_at: number;
}

export const listUrlTrackers = (db: DB) =>
  db.prepare('SELECT * FROM url_trackers ORDER BY id').all() as UrlTrackerRow[];
export const findUrlTracker = (db: DB, id: number) =>
  db.prepare('SELECT * FROM url_trackers WHERE id = ?').get(id) as UrlTrackerRow | undefined;

export function insertUrlTracker(
  db: DB,
  t: { url: string; pattern: string; interval: number },
  now: number,
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO url_trackers (url, pattern, interval, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(t.url, t.pattern, t.interval, now, now).lastInsertRowid,
  );
}

export function updateUrlTracker(
  db: DB,
  id: number,
  t: { url: string; pattern: string; interval: number },
  now: number,
): void {
  db.prepare(
    'UPDATE url_trackers SET url = ?, pattern = ?, interval = ?, updated_at = ? WHERE id = ?',
  ).run(t.url, t.pattern, t.interval, now, id);
}

/** The URL a tracker checks, or null when there is no such tracker. */
export const urlOfTracker = (db: DB, id: number): string | null =>
  (db.prepare('SELECT url FROM url_trackers WHERE id = ?').pluck().get(id) as string | undefined) ??
  null;

export const countUrlTrackers = (db: DB) =>
  (db.prepare('SELECT count(*) AS n FROM url_trackers').get() as { n: number }).n;

export const deleteUrlTracker = (db: DB, id: number) =>
  db.prepare('DELETE FROM url_trackers WHERE id = ?').run(id).changes > 0;

/**
 * Stores a check: the latest reading on the tracker, one history row and what its url_down alert
 * saw (one transaction).
 */
export function recordUrlCheck(db: DB, id: number, result: UrlCheckResult, now: number): void {
  db.transaction(() => {
    const updated = db
      .prepare(
        'UPDATE url_trackers SET timestamp = ?, latency = ?, message = ?, status = ?, ssldate = coalesce(?, ssldate), ok = ? WHERE id = ?',
      )
      .run(
        Math.floor(now / 1000),
        result.latency,
        result.message,
        result.status,
        result.sslExpiresAt === null ? null : toSqlDateTime(result.sslExpiresAt),
        result.ok ? 1 : 0,
        id,
      );
    if (updated.changes === 0) return;
    db.prepare(
      'INSERT OR REPLACE INTO url_samples (tracker_id, ts, ok, latency, http_status, ssl_expires_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(id, now, result.ok ? 1 : 0, result.latency, result.status, result.sslExpiresAt);
    // The tracker's url_down alert sees the state (1 passed, 0 failed): a change fires, which the
    // alerting engine routes (features/alerts).
    const alert = findAlert(db, 'url', id, URL_DOWN_ALERT);
    if (alert) observeAlertState(db, alert, result.ok ? 1 : 0, result.message, now);
  })();
}

export function urlSamples(db: DB, id: number, start: number, end: number) {
  return db
    .prepare(
      'SELECT ts, ok, latency, http_status, ssl_expires_at FROM url_samples WHERE tracker_id = ? AND ts >= ? AND ts <= ? ORDER BY ts',
    )
    .all(id, start, end) as {
    ts: number;
    ok: number;
    latency: number;
    http_status: number | null;
    ssl_expires_at: number | null;
  }[];
}

/** The URL trackers as the API shows them, with their legacy alerts (null where none is attached). */
export function urlRecords(db: DB, rows: readonly UrlTrackerRow[]) {
  const alerts = alertsOf(
    db,
    'url',
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const attached = alerts.get(row.id) ?? [];
    return urlRecord(row, attached.length > 0 ? attached.map(alertRecord) : null);
  });
}

function urlRecord(row: UrlTrackerRow, alerts: ReturnType<typeof alertRecord>[] | null) {
  return {
    id: row.id,
    url: row.url,
    interval: row.interval,
    pattern: row.pattern,
    timestamp: row.timestamp,
    latency: row.latency,
    message: row.message,
    status: row.status,
    ssldate: row.ssldate,
    // The url_down alert (POST /api/legacy-alerts), or null when none is attached (spec).
    alerts,
  };
}
