/**
 * SQL of the legacy alert catalogue (spec: the `alerts` of trackers, URL trackers and devices;
 * the interface link-state alert of POST /api/interfaces/toggleupdown; the latency tracker's
 * device-down alert) and their firings. The alerting feature owns these tables (0014_alerting.sql
 * rebuilt them from 0005): trackers create and observe their alerts through these functions
 * (features/alerts/index.ts); alerting adds the router configuration, the maintenance windows
 * and delivery of what fired.
 */
import type { DB } from '../../platform/db/database.js';

export type TrackerKind =
  'interface' | 'disk' | 'latency' | 'oid' | 'service' | 'port' | 'url' | 'localnet';

export interface AlertRow {
  id: number;
  device_id: number | null;
  tracker_kind: TrackerKind;
  tracker_id: number;
  alert_type: string;
  active: number;
  last_state: number | null;
  last_fired_at: number | null;
  fired_count: number;
  severity: number;
  renotify_minutes: number | null;
  throttle_flip_count: number | null;
  throttle_flip_window_minutes: number | null;
  throttle_stable_minutes: number | null;
  created_at: number;
  updated_at: number;
}

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
  for (const row of rows) if (row.device_id !== null) map.get(row.device_id)?.push(row);
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
    db.prepare(
      'INSERT INTO legacy_alert_events (alert_id, ts, message, state) VALUES (?, ?, ?, ?)',
    ).run(alert.id, now, message, state);
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

/** Deletes the legacy alerts of a device (inside the device delete transaction). */
export function deleteLegacyAlertsOfDevice(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM legacy_alerts WHERE device_id = ?').run(deviceId);
}

/** The latency tracker's device-down alert type (class legacy_device_down). */
export const DEVICE_DOWN_ALERT = 'device_down';

/** A URL tracker's alert type (class legacy_url_down): state 0 = the check failed, 1 = it passed. */
export const URL_DOWN_ALERT = 'url_down';

/** The alert class a legacy alert notifies with. */
export function legacyClassOf(alertType: string): string {
  if (alertType === DEVICE_DOWN_ALERT) return 'legacy_device_down';
  return alertType === URL_DOWN_ALERT ? 'legacy_url_down' : 'legacy_link_state';
}

/** Whether a state a legacy alert fired for is its down state. */
export function isDownState(alertType: string, state: number | null): boolean {
  if (alertType === DEVICE_DOWN_ALERT || alertType === URL_DOWN_ALERT) return state === 0;
  return state === 2; // link state: ifOperStatus down
}

export const listLegacyAlerts = (db: DB) =>
  db.prepare('SELECT * FROM legacy_alerts ORDER BY id').all() as AlertRow[];
export const findLegacyAlert = (db: DB, id: number) =>
  db.prepare('SELECT * FROM legacy_alerts WHERE id = ?').get(id) as AlertRow | undefined;

/** Creates a legacy alert (active) unless it exists; answers the row. */
export function ensureLegacyAlert(
  db: DB,
  a: {
    deviceId: number | null;
    kind: TrackerKind;
    trackerId: number;
    type: string;
    severity: number;
  },
  now: number,
): AlertRow {
  db.prepare(
    `INSERT INTO legacy_alerts (device_id, tracker_kind, tracker_id, alert_type, active, severity, created_at, updated_at)
     VALUES (?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT (tracker_kind, tracker_id, alert_type) DO NOTHING`,
  ).run(a.deviceId, a.kind, a.trackerId, a.type, a.severity, now, now);
  return findAlert(db, a.kind, a.trackerId, a.type) as AlertRow;
}

export const deleteLegacyAlert = (db: DB, id: number) =>
  db.prepare('DELETE FROM legacy_alerts WHERE id = ?').run(id).changes > 0;

export function setLegacyRouterConfig(
  db: DB,
  id: number,
  fields: Record<string, number>,
  now: number,
): void {
  const allowed = [
    'severity',
    'renotify_minutes',
    'throttle_flip_count',
    'throttle_flip_window_minutes',
    'throttle_stable_minutes',
  ];
  const columns = Object.keys(fields).filter((k) => allowed.includes(k));
  if (columns.length === 0) return;
  db.prepare(
    `UPDATE legacy_alerts SET ${columns.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @now WHERE id = @id`,
  ).run({ ...fields, id, now });
}
