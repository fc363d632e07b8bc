/**
 * SQL for per-user dashboards and per-user device page layouts (free-form JSON the console owns).
 */
import type { DB } from '../../platform/db/database.js';

export type JsonObject = Record<string, unknown>;

export function getDashboards(
  db: DB,
  userId: number,
): { dashboards: JsonObject; layouts: JsonObject } {
  const row = db
    .prepare('SELECT dashboards, layouts FROM user_dashboards WHERE user_id = ?')
    .get(userId) as { dashboards: string; layouts: string } | undefined;
  if (!row) return { dashboards: {}, layouts: {} };
  return {
    dashboards: JSON.parse(row.dashboards) as JsonObject,
    layouts: JSON.parse(row.layouts) as JsonObject,
  };
}

export function saveDashboards(
  db: DB,
  userId: number,
  dashboards: JsonObject,
  layouts: JsonObject,
  now: number,
): void {
  db.prepare(
    `INSERT INTO user_dashboards (user_id, dashboards, layouts, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET dashboards = excluded.dashboards, layouts = excluded.layouts, updated_at = excluded.updated_at`,
  ).run(userId, JSON.stringify(dashboards), JSON.stringify(layouts), now);
}

/** A saved layout or pin list: the console's JSON (an object or an array), as it was sent. */
export type JsonValue = JsonObject | unknown[];

export interface DeviceLayoutRow {
  layouts: JsonValue | null;
  pinnedWidgets: JsonValue | null;
}

export function getDeviceLayout(db: DB, userId: number, deviceId: number): DeviceLayoutRow | null {
  const row = db
    .prepare(
      'SELECT layouts, pinned_widgets FROM device_layouts WHERE user_id = ? AND device_id = ?',
    )
    .get(userId, deviceId) as { layouts: string | null; pinned_widgets: string | null } | undefined;
  if (!row) return null;
  return {
    layouts: row.layouts === null ? null : (JSON.parse(row.layouts) as JsonValue),
    pinnedWidgets:
      row.pinned_widgets === null ? null : (JSON.parse(row.pinned_widgets) as JsonValue),
  };
}

export function saveDeviceLayouts(
  db: DB,
  userId: number,
  deviceId: number,
  layouts: unknown,
  now: number,
): void {
  db.prepare(
    `INSERT INTO device_layouts (user_id, device_id, layouts, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, device_id) DO UPDATE SET layouts = excluded.layouts, updated_at = excluded.updated_at`,
  ).run(userId, deviceId, JSON.stringify(layouts), now);
}

export function saveDevicePinnedWidgets(
  db: DB,
  userId: number,
  deviceId: number,
  pinned: unknown,
  now: number,
): void {
  db.prepare(
    `INSERT INTO device_layouts (user_id, device_id, pinned_widgets, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, device_id) DO UPDATE SET pinned_widgets = excluded.pinned_widgets, updated_at = excluded.updated_at`,
  ).run(userId, deviceId, JSON.stringify(pinned), now);
}

/** Removes the saved layout (pinned widgets stay); false when there was none. */
export function deleteDeviceLayouts(db: DB, userId: number, deviceId: number): boolean {
  return db.transaction(() => {
    const changed =
      db
        .prepare(
          'UPDATE device_layouts SET layouts = NULL WHERE user_id = ? AND device_id = ? AND layouts IS NOT NULL',
        )
        .run(userId, deviceId).changes > 0;
    db.prepare(
      'DELETE FROM device_layouts WHERE user_id = ? AND device_id = ? AND layouts IS NULL AND pinned_widgets IS NULL',
    ).run(userId, deviceId);
    return changed;
  })();
}

/** Every user's layouts of a device (device deletion). */
export function deleteLayoutsOfDevice(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM device_layouts WHERE device_id = ?').run(deviceId);
}
