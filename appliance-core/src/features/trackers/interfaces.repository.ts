/**
 * SQL of interface trackers (IF-MIB ifTable/ifXTable): created and refreshed by the device crawl
 * (tracker-crawl.ts, a crawl handler registered with the devices feature), updated and deleted
 * through their endpoints, read by the pollers.
 */
import type { DB } from '../../platform/db/database.js';
import { scopeSql, type DeviceScope } from '../../platform/http/scoping.js';
import type { InterfaceTrackerRecord } from './trackers.schema.js';

export const INTERFACE_DEFAULT_INTERVAL = 300;

export interface InterfaceTrackerRow {
  id: number;
  device_id: number;
  interface: number;
  name: string;
  description: string;
  interval: number;
  enable_logging: number;
  if_descr: string | null;
  if_alias: string | null;
  if_type: number | null;
  mtu: number | null;
  speed: number | null;
  mac: string | null;
  admin_status: number | null;
  oper_status: number | null;
  last_seen_at: number;
  created_at: number;
  updated_at: number;
}

export function interfaceRecord(row: InterfaceTrackerRow): InterfaceTrackerRecord {
  return {
    id: row.id,
    device_id: row.device_id,
    interface: row.interface,
    name: row.name,
    description: row.description,
    interval: row.interval,
    enable_logging: row.enable_logging === 1,
    type: row.if_type,
    speed: row.speed,
    mac: row.mac,
    admin_status: row.admin_status,
    oper_status: row.oper_status,
  };
}

/** One interface as a crawl sees it. */
export interface CrawledInterface {
  index: number;
  name: string;
  descr: string | null;
  alias: string | null;
  type: number | null;
  mtu: number | null;
  speed: number | null;
  mac: string | null;
  adminStatus: number | null;
  operStatus: number | null;
}

export function listInterfaceTrackers(db: DB, deviceId: number): InterfaceTrackerRow[] {
  return db
    .prepare('SELECT * FROM interface_trackers WHERE device_id = ? ORDER BY interface')
    .all(deviceId) as InterfaceTrackerRow[];
}

export function interfaceTrackersOfDevices(
  db: DB,
  deviceIds: readonly number[],
): Map<number, InterfaceTrackerRow[]> {
  const map = new Map<number, InterfaceTrackerRow[]>(deviceIds.map((id) => [id, []]));
  const rows = db
    .prepare(
      'SELECT * FROM interface_trackers WHERE device_id IN (SELECT value FROM json_each(?)) ORDER BY device_id, interface',
    )
    .all(JSON.stringify(deviceIds)) as InterfaceTrackerRow[];
  for (const row of rows) map.get(row.device_id)?.push(row);
  return map;
}

export function findInterfaceTracker(db: DB, id: number): InterfaceTrackerRow | undefined {
  return db.prepare('SELECT * FROM interface_trackers WHERE id = ?').get(id) as
    InterfaceTrackerRow | undefined;
}

/**
 * Creates or refreshes the interface trackers of a crawl. A new interface gets its description
 * from ifAlias (else ifDescr) and logging on unless it is a software loopback (ifType 24); an
 * existing one keeps the operator's description, interval and logging. Interfaces the agent no
 * longer reports are kept (with their history) and keep their last `last_seen_at`.
 */
export function upsertCrawledInterfaces(
  db: DB,
  deviceId: number,
  interfaces: readonly CrawledInterface[],
  now: number,
): { created: number; refreshed: number } {
  const existing = new Set(listInterfaceTrackers(db, deviceId).map((row) => row.interface));
  const insert = db.prepare(
    `INSERT INTO interface_trackers (device_id, interface, name, description, interval, enable_logging, if_descr, if_alias, if_type, mtu, speed, mac,
       admin_status, oper_status, last_seen_at, created_at, updated_at)
     VALUES (@device_id, @index, @name, @description, @interval, @enable_logging, @descr, @alias, @type, @mtu, @speed, @mac, @adminStatus, @operStatus, @now, @now, @now)`,
  );
  const refresh = db.prepare(
    `UPDATE interface_trackers SET name = @name, if_descr = @descr, if_alias = @alias, if_type = @type, mtu = @mtu, speed = @speed, mac = @mac,
       admin_status = @adminStatus, oper_status = @operStatus, last_seen_at = @now, updated_at = @now WHERE device_id = @device_id AND interface = @index`,
  );
  let created = 0;
  let refreshed = 0;
  for (const crawled of interfaces) {
    const values = { ...crawled, device_id: deviceId, now };
    if (existing.has(crawled.index)) {
      refresh.run(values);
      refreshed++;
    } else {
      insert.run({
        ...values,
        description: crawled.alias || crawled.descr || '',
        interval: INTERFACE_DEFAULT_INTERVAL,
        enable_logging: crawled.type === 24 ? 0 : 1,
      });
      created++;
    }
  }
  return { created, refreshed };
}

export function updateInterfaceTracker(
  db: DB,
  id: number,
  changes: { description?: string; interval?: number; enable_logging?: boolean },
  now: number,
): void {
  const row = findInterfaceTracker(db, id);
  if (!row) return;
  db.prepare(
    'UPDATE interface_trackers SET description = ?, interval = ?, enable_logging = ?, updated_at = ? WHERE id = ?',
  ).run(
    changes.description ?? row.description,
    changes.interval ?? row.interval,
    changes.enable_logging === undefined ? row.enable_logging : changes.enable_logging ? 1 : 0,
    now,
    id,
  );
}

export function deleteInterfaceTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM interface_trackers WHERE id = ?').run(id).changes > 0;
}

/** Logging interface trackers of the devices in scope, for the index list (labels added by the service). */
export function listInterfaceIndex(db: DB, scope: DeviceScope | null) {
  const where = scopeSql(scope, 'device_id');
  return db
    .prepare(
      `SELECT device_id AS dev_id, id, description, name, interface FROM interface_trackers
       WHERE enable_logging = 1 AND ${where.sql} ORDER BY id`,
    )
    .all(...where.params) as {
    dev_id: number;
    id: number;
    description: string;
    name: string;
    interface: number;
  }[];
}
