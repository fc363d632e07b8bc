/**
 * SQL of the legacy alert records attached to trackers (spec: trackers' `alerts`; the interface
 * link-state alert of POST /api/interfaces/toggleupdown) and their firings.
 */
import type { DB } from '../../platform/db/database.js';

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
