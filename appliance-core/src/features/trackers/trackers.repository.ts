/**
 * SQL of the latency, OID/service and port trackers and of the legacy alert records attached to
 * trackers (interface and disk trackers: interfaces.repository.ts, disks.repository.ts).
 */
import type { DB } from '../../platform/db/database.js';
import { deviceScopeSql } from '../../platform/http/scoping.js';
import type { Identity } from '../../platform/http/identity.js';

export const LATENCY_DEFAULTS = { interval: 60, timeout: 60, lossout: 100 } as const;
export const OID_DEFAULT_INTERVAL = 180;
export const SERVICE_DEFAULT_INTERVAL = 180;
export const PORT_DEFAULT_INTERVAL = 60;

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

export interface DeviceFields {
  dev_label: string;
  dev_ip: string;
  dev_profile: string;
}

export type TrackerKind = 'interface' | 'disk' | 'latency' | 'oid' | 'service' | 'port' | 'url';

export interface AlertRow {
  id: number;
  device_id: number;
  tracker_kind: TrackerKind;
  tracker_id: number;
  alert_type: string;
  active: number;
  last_state: number | null;
  last_fired_at: number | null;
  fired_count: number;
  created_at: number;
  updated_at: number;
}

export function deviceFields(db: DB, deviceId: number): DeviceFields | undefined {
  return db
    .prepare(
      'SELECT label AS dev_label, ip_address AS dev_ip, profile AS dev_profile FROM devices WHERE id = ?',
    )
    .get(deviceId) as DeviceFields | undefined;
}

// --- latency ------------------------------------------------------------------------------------

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

export function listLatencyIndex(db: DB, identity: Identity) {
  const scope = deviceScopeSql(identity, 't.device_id');
  return db
    .prepare(
      `SELECT t.device_id AS dev_id, d.label AS dev_label, t.id, t.label FROM latency_trackers t JOIN devices d ON d.id = t.device_id WHERE ${scope.sql} ORDER BY d.label, t.id`,
    )
    .all(...scope.params) as { dev_id: number; dev_label: string; id: number; label: string }[];
}

// --- OIDs and services ----------------------------------------------------------------------------

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

// --- ports ---------------------------------------------------------------------------------------

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

export function listPortIndex(db: DB, identity: Identity) {
  const scope = deviceScopeSql(identity, 't.device_id');
  return db
    .prepare(
      `SELECT t.device_id AS dev_id, d.label AS dev_label, t.id, t.port, t.label FROM port_trackers t JOIN devices d ON d.id = t.device_id WHERE ${scope.sql} ORDER BY d.label, t.port`,
    )
    .all(...scope.params) as {
    dev_id: number;
    dev_label: string;
    id: number;
    port: number;
    label: string;
  }[];
}

// --- legacy alerts --------------------------------------------------------------------------------

export function alertsOf(
  db: DB,
  kind: TrackerKind,
  trackerIds: readonly number[],
): Map<number, AlertRow[]> {
  const rows = db
    .prepare(
      'SELECT * FROM legacy_alerts WHERE tracker_kind = ? AND tracker_id IN (SELECT value FROM json_each(?)) ORDER BY id',
    )
    .all(kind, JSON.stringify(trackerIds)) as AlertRow[];
  const map = new Map<number, AlertRow[]>(trackerIds.map((id) => [id, []]));
  for (const row of rows) map.get(row.tracker_id)?.push(row);
  return map;
}

export function alertsOfDevices(db: DB, deviceIds: readonly number[]): Map<number, AlertRow[]> {
  const rows = db
    .prepare(
      'SELECT * FROM legacy_alerts WHERE device_id IN (SELECT value FROM json_each(?)) ORDER BY id',
    )
    .all(JSON.stringify(deviceIds)) as AlertRow[];
  const map = new Map<number, AlertRow[]>(deviceIds.map((id) => [id, []]));
  for (const row of rows) map.get(row.device_id)?.push(row);
  return map;
}

export const findAlert = (db: DB, kind: TrackerKind, trackerId: number, type: string) =>
  db
    .prepare(
      'SELECT * FROM legacy_alerts WHERE tracker_kind = ? AND tracker_id = ? AND alert_type = ?',
    )
    .get(kind, trackerId, type) as AlertRow | undefined;

/** Creates the alert (active) or flips its active flag; answers the row and whether it was created. */
export function toggleAlert(
  db: DB,
  deviceId: number,
  kind: TrackerKind,
  trackerId: number,
  type: string,
  state: number | null,
  now: number,
): { alert: AlertRow; created: boolean } {
  const existing = findAlert(db, kind, trackerId, type);
  if (existing) {
    db.prepare(
      'UPDATE legacy_alerts SET active = 1 - active, last_state = coalesce(last_state, ?), updated_at = ? WHERE id = ?',
    ).run(state, now, existing.id);
    return { alert: findAlert(db, kind, trackerId, type) as AlertRow, created: false };
  }
  db.prepare(
    'INSERT INTO legacy_alerts (device_id, tracker_kind, tracker_id, alert_type, active, last_state, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)',
  ).run(deviceId, kind, trackerId, type, state, now, now);
  return { alert: findAlert(db, kind, trackerId, type) as AlertRow, created: true };
}

/** Records a new state seen by an alert; fires (an event row) when it changed while active. */
export function observeAlertState(
  db: DB,
  alert: AlertRow,
  state: number,
  message: string,
  now: number,
): boolean {
  const changed = alert.last_state !== null && alert.last_state !== state;
  const fire = changed && alert.active === 1;
  db.prepare(
    'UPDATE legacy_alerts SET last_state = ?, last_fired_at = CASE WHEN ? THEN ? ELSE last_fired_at END, fired_count = fired_count + ?, updated_at = ? WHERE id = ?',
  ).run(state, fire ? 1 : 0, now, fire ? 1 : 0, now, alert.id);
  if (fire)
    db.prepare('INSERT INTO legacy_alert_events (alert_id, ts, message) VALUES (?, ?, ?)').run(
      alert.id,
      now,
      message,
    );
  return fire;
}

export const alertEvents = (db: DB, alertId: number) =>
  db
    .prepare('SELECT id, ts, message FROM legacy_alert_events WHERE alert_id = ? ORDER BY ts, id')
    .all(alertId) as { id: number; ts: number; message: string }[];

export function deleteAlertsOf(db: DB, kind: TrackerKind, trackerId: number): void {
  db.prepare('DELETE FROM legacy_alerts WHERE tracker_kind = ? AND tracker_id = ?').run(
    kind,
    trackerId,
  );
}

export function alertRecord(row: AlertRow) {
  return {
    id: row.id,
    type: row.alert_type,
    active: row.active === 1,
    last_state: row.last_state,
    last_fired_at: row.last_fired_at,
    fired_count: row.fired_count,
  };
}
