/**
 * SQL of latency trackers (one per device; the record's `icmping_id` is `id`, `dev_id` is
 * `device_id`) and their record.
 */
import type { DB } from '../../platform/db/database.js';
import { scopeSql, type DeviceScope } from '../../platform/http/scoping.js';
import { toSqlDateTime } from '../../platform/time/time.js';

export const LATENCY_DEFAULTS = { interval: 60, timeout: 60, lossout: 100 } as const;

export interface LatencyTrackerRow {
  id: number;
  device_id: number;
  label: string;
  interval: number;
  timeout: number;
  lossout: number;
  latency: number | null;
  loss: number | null;
  last_polled_at: number | null;
  first_sample_at: number | null;
  created_at: number;
  updated_at: number;
}

export function latencyRecord(row: LatencyTrackerRow) {
  return {
    icmping_id: row.id,
    id: row.id,
    dev_id: row.device_id,
    label: row.label,
    interval: row.interval,
    timeout: row.timeout,
    lossout: row.lossout,
    latency: row.latency,
    loss: row.loss,
    last_polled_at: row.last_polled_at === null ? null : toSqlDateTime(row.last_polled_at),
  };
}

export const findLatencyTracker = (db: DB, id: number) =>
  db.prepare('SELECT * FROM latency_trackers WHERE id = ?').get(id) as
    LatencyTrackerRow | undefined;
export const latencyTrackerOfDevice = (db: DB, deviceId: number) =>
  db.prepare('SELECT * FROM latency_trackers WHERE device_id = ?').get(deviceId) as
    LatencyTrackerRow | undefined;
export const allLatencyTrackers = (db: DB) =>
  db.prepare('SELECT * FROM latency_trackers').all() as LatencyTrackerRow[];

export function latencyTrackersOfDevices(
  db: DB,
  deviceIds: readonly number[],
): Map<number, LatencyTrackerRow> {
  const rows = db
    .prepare('SELECT * FROM latency_trackers WHERE device_id IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify(deviceIds)) as LatencyTrackerRow[];
  return new Map(rows.map((r) => [r.device_id, r]));
}

/** The latest reading of every latency tracker by device: [tracker id, latency, loss] (raw rows). */
export function latencyReadings(
  db: DB,
): Map<number, readonly [trackerId: number, latency: number | null, loss: number | null]> {
  const rows = db
    .prepare('SELECT device_id, id, latency, loss FROM latency_trackers')
    .raw()
    .all() as [number, number, number | null, number | null][];
  return new Map(rows.map(([deviceId, id, latency, loss]) => [deviceId, [id, latency, loss]]));
}

export function insertLatencyTracker(
  db: DB,
  t: { deviceId: number; label: string; interval: number; timeout: number; lossout: number },
  now: number,
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO latency_trackers (device_id, label, interval, timeout, lossout, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(t.deviceId, t.label, t.interval, t.timeout, t.lossout, now, now).lastInsertRowid,
  );
}

export function updateLatencyTracker(
  db: DB,
  id: number,
  c: { label?: string; interval?: number; timeout?: number; lossout?: number },
  now: number,
): void {
  db.prepare(
    'UPDATE latency_trackers SET label = coalesce(?, label), interval = coalesce(?, interval), timeout = coalesce(?, timeout), lossout = coalesce(?, lossout), updated_at = ? WHERE id = ?',
  ).run(c.label ?? null, c.interval ?? null, c.timeout ?? null, c.lossout ?? null, now, id);
}

/** Latency trackers of the devices in scope, for the index list (labels added by the service). */
export function listLatencyIndex(db: DB, scope: DeviceScope | null) {
  const where = scopeSql(scope, 'device_id');
  return db
    .prepare(
      `SELECT device_id AS dev_id, id, label FROM latency_trackers WHERE ${where.sql} ORDER BY id`,
    )
    .all(...where.params) as { dev_id: number; id: number; label: string }[];
}

export function deleteLatencyTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM latency_trackers WHERE id = ?').run(id).changes > 0;
}
