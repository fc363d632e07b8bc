/**
 * SQL of custom OID and service trackers (one table: a service is kind `service`, datatype S,
 * oid `Win32_Service::State.0.#Name!<name>`) and their record.
 */
import type { DB } from '../../platform/db/database.js';
import { toSqlDateTime } from '../../platform/time/time.js';

export const OID_DEFAULT_INTERVAL = 180;
export const SERVICE_DEFAULT_INTERVAL = 180;

export interface OidTrackerRow {
  id: number;
  device_id: number;
  kind: 'oid' | 'service';
  oid: string;
  label: string;
  name: string | null;
  datatype: 'S' | 'I';
  interval: number;
  enable_logging: number;
  value: string | null;
  last_polled_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The record of a custom OID tracker. */
export function oidRecord(row: OidTrackerRow) {
  const { name: _name, ...record } = serviceRecord(row);
  return record;
}

/** The record of a service tracker: an OID record with the service `name` after `label`. */
export function serviceRecord(row: OidTrackerRow) {
  return {
    id: row.id,
    device_id: row.device_id,
    oid: row.oid,
    label: row.label,
    name: row.name,
    datatype: row.datatype,
    interval: row.interval,
    enable_logging: row.enable_logging === 1,
    value: row.value,
    last_polled_at: row.last_polled_at === null ? null : toSqlDateTime(row.last_polled_at),
  };
}

export const SERVICE_OID_PREFIX = 'Win32_Service::State.0.#Name!';
export const serviceOidOf = (name: string) => `${SERVICE_OID_PREFIX}${name}`;

export const findOidTracker = (db: DB, id: number, kind: 'oid' | 'service') =>
  db.prepare('SELECT * FROM oid_trackers WHERE id = ? AND kind = ?').get(id, kind) as
    OidTrackerRow | undefined;
export const oidTrackersOfDevice = (db: DB, deviceId: number, kind: 'oid' | 'service') =>
  db
    .prepare('SELECT * FROM oid_trackers WHERE device_id = ? AND kind = ? ORDER BY label, id')
    .all(deviceId, kind) as OidTrackerRow[];
export const allOidTrackers = (db: DB, kind: 'oid' | 'service') =>
  db.prepare('SELECT * FROM oid_trackers WHERE kind = ?').all(kind) as OidTrackerRow[];

export function oidTrackersOfDevices(
  db: DB,
  deviceIds: readonly number[],
): Map<number, OidTrackerRow[]> {
  const rows = db
    .prepare(
      "SELECT * FROM oid_trackers WHERE kind = 'oid' AND device_id IN (SELECT value FROM json_each(?)) ORDER BY label, id",
    )
    .all(JSON.stringify(deviceIds)) as OidTrackerRow[];
  const map = new Map<number, OidTrackerRow[]>(deviceIds.map((id) => [id, []]));
  for (const row of rows) map.get(row.device_id)?.push(row);
  return map;
}

export function insertOidTracker(
  db: DB,
  t: {
    deviceId: number;
    kind: 'oid' | 'service';
    oid: string;
    label: string;
    name: string | null;
    datatype: 'S' | 'I';
    interval: number;
    enableLogging: boolean;
  },
  now: number,
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO oid_trackers (device_id, kind, oid, label, name, datatype, interval, enable_logging, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        t.deviceId,
        t.kind,
        t.oid,
        t.label,
        t.name,
        t.datatype,
        t.interval,
        t.enableLogging ? 1 : 0,
        now,
        now,
      ).lastInsertRowid,
  );
}

export function updateOidTracker(
  db: DB,
  id: number,
  c: { label?: string; interval?: number; enableLogging?: boolean; oid?: string },
  now: number,
): void {
  db.prepare(
    'UPDATE oid_trackers SET label = coalesce(?, label), interval = coalesce(?, interval), enable_logging = coalesce(?, enable_logging), oid = coalesce(?, oid), updated_at = ? WHERE id = ?',
  ).run(
    c.label ?? null,
    c.interval ?? null,
    c.enableLogging === undefined ? null : c.enableLogging ? 1 : 0,
    c.oid ?? null,
    now,
    id,
  );
}

export function deleteOidTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM oid_trackers WHERE id = ?').run(id).changes > 0;
}
