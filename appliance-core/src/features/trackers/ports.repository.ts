/**
 * SQL of TCP port trackers ((device_id, port) is the natural key of POST /api/port/set) and
 * their record.
 */
import type { DB } from '../../platform/db/database.js';
import { scopeSql, type DeviceScope } from '../../platform/http/scoping.js';
import { toSqlDateTime } from '../../platform/time/time.js';

export const PORT_DEFAULT_INTERVAL = 60;

export interface PortTrackerRow {
  id: number;
  device_id: number;
  port: number;
  label: string;
  interval: number;
  enable_logging: number;
  state: string | null;
  latency: number | null;
  last_polled_at: number | null;
  created_at: number;
  updated_at: number;
}

export function portRecord(row: PortTrackerRow) {
  return {
    id: row.id,
    device_id: row.device_id,
    port: row.port,
    state: row.state,
    interval: row.interval,
    enable_logging: row.enable_logging === 1,
    label: row.label,
    name: row.label,
    latency: row.latency,
    last_polled_at: row.last_polled_at === null ? null : toSqlDateTime(row.last_polled_at),
  };
}

export const findPortTracker = (db: DB, id: number) =>
  db.prepare('SELECT * FROM port_trackers WHERE id = ?').get(id) as PortTrackerRow | undefined;
export const portTrackerByKey = (db: DB, deviceId: number, port: number) =>
  db.prepare('SELECT * FROM port_trackers WHERE device_id = ? AND port = ?').get(deviceId, port) as
    PortTrackerRow | undefined;
export const portTrackersOfDevice = (db: DB, deviceId: number) =>
  db
    .prepare('SELECT * FROM port_trackers WHERE device_id = ? ORDER BY port')
    .all(deviceId) as PortTrackerRow[];
export const allPortTrackers = (db: DB) =>
  db.prepare('SELECT * FROM port_trackers').all() as PortTrackerRow[];

export function portTrackersOfDevices(
  db: DB,
  deviceIds: readonly number[],
): Map<number, PortTrackerRow[]> {
  const rows = db
    .prepare(
      'SELECT * FROM port_trackers WHERE device_id IN (SELECT value FROM json_each(?)) ORDER BY port',
    )
    .all(JSON.stringify(deviceIds)) as PortTrackerRow[];
  const map = new Map<number, PortTrackerRow[]>(deviceIds.map((id) => [id, []]));
  for (const row of rows) map.get(row.device_id)?.push(row);
  return map;
}

export function insertPortTracker(
  db: DB,
  t: { deviceId: number; port: number; label: string; interval: number },
  now: number,
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO port_trackers (device_id, port, label, interval, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(t.deviceId, t.port, t.label, t.interval, now, now).lastInsertRowid,
  );
}

export function updatePortTracker(
  db: DB,
  id: number,
  c: { label?: string; interval?: number; enableLogging?: boolean },
  now: number,
): void {
  db.prepare(
    'UPDATE port_trackers SET label = coalesce(?, label), interval = coalesce(?, interval), enable_logging = coalesce(?, enable_logging), updated_at = ? WHERE id = ?',
  ).run(
    c.label ?? null,
    c.interval ?? null,
    c.enableLogging === undefined ? null : c.enableLogging ? 1 : 0,
    now,
    id,
  );
}

/** Port trackers of the devices in scope, for the index list (labels added by the service). */
export function listPortIndex(db: DB, scope: DeviceScope | null) {
  const where = scopeSql(scope, 'device_id');
  return db
    .prepare(
      `SELECT device_id AS dev_id, id, port, label FROM port_trackers WHERE ${where.sql} ORDER BY id`,
    )
    .all(...where.params) as { dev_id: number; id: number; port: number; label: string }[];
}

export function deletePortTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM port_trackers WHERE id = ?').run(id).changes > 0;
}
