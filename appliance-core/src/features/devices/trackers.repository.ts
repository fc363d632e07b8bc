/**
 * SQL for the trackers the device crawl creates: interface trackers (IF-MIB) and disk trackers
 * (HOST-RESOURCES-MIB). The trackers feature builds its endpoints and pollers on these functions
 * (exported through devices/index.ts).
 */
import type { DB } from '../../platform/db/database.js';
import type { DiskTrackerRecord, InterfaceTrackerRecord } from './devices.schema.js';

export const INTERFACE_DEFAULT_INTERVAL = 300;
export const DISK_DEFAULT_INTERVAL = 600;

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

export interface DiskTrackerRow {
  id: number;
  device_id: number;
  name: string;
  storage_index: number;
  freespace_oid: string;
  interval: number;
  enable_logging: number;
  available: number | null;
  total: number | null;
  storage_type: string | null;
  allocation_units: number | null;
  source: 'crawl' | 'manual';
  last_seen_at: number | null;
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

export function diskRecord(row: DiskTrackerRow): DiskTrackerRecord {
  return {
    id: row.id,
    device_id: row.device_id,
    name: row.name,
    index: row.storage_index,
    freespace_oid: row.freespace_oid,
    interval: row.interval,
    enable_logging: row.enable_logging === 1,
    available: row.available,
    total: row.total,
  };
}

// --- interfaces -----------------------------------------------------------------------------

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

// --- disks ----------------------------------------------------------------------------------

export interface CrawledDisk {
  index: number;
  name: string;
  storageType: string;
  allocationUnits: number;
  total: number;
  available: number;
}

/** hrStorageUsed of a storage row: the reading a disk tracker's poller takes (with size and units at the same index). */
export const freespaceOidOf = (index: number) => `1.3.6.1.2.1.25.2.3.1.6.${index}`;

export function listDiskTrackers(db: DB, deviceId: number): DiskTrackerRow[] {
  return db
    .prepare('SELECT * FROM disk_trackers WHERE device_id = ? ORDER BY name, id')
    .all(deviceId) as DiskTrackerRow[];
}

export function diskTrackersOfDevices(
  db: DB,
  deviceIds: readonly number[],
): Map<number, DiskTrackerRow[]> {
  const map = new Map<number, DiskTrackerRow[]>(deviceIds.map((id) => [id, []]));
  const rows = db
    .prepare(
      'SELECT * FROM disk_trackers WHERE device_id IN (SELECT value FROM json_each(?)) ORDER BY device_id, name, id',
    )
    .all(JSON.stringify(deviceIds)) as DiskTrackerRow[];
  for (const row of rows) map.get(row.device_id)?.push(row);
  return map;
}

export function findDiskTracker(db: DB, id: number): DiskTrackerRow | undefined {
  return db.prepare('SELECT * FROM disk_trackers WHERE id = ?').get(id) as
    DiskTrackerRow | undefined;
}

/** Creates or refreshes the disk trackers of a crawl (name, size and free space); operator settings are kept. */
export function upsertCrawledDisks(
  db: DB,
  deviceId: number,
  disks: readonly CrawledDisk[],
  now: number,
): { created: number; refreshed: number } {
  const existing = new Set(listDiskTrackers(db, deviceId).map((row) => row.storage_index));
  const insert = db.prepare(
    `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, interval, enable_logging, available, total, storage_type, allocation_units,
       source, last_seen_at, created_at, updated_at)
     VALUES (@device_id, @name, @index, @freespace_oid, @interval, 1, @available, @total, @storageType, @allocationUnits, 'crawl', @now, @now, @now)`,
  );
  const refresh = db.prepare(
    `UPDATE disk_trackers SET name = @name, available = @available, total = @total, storage_type = @storageType, allocation_units = @allocationUnits,
       last_seen_at = @now, updated_at = @now WHERE device_id = @device_id AND storage_index = @index`,
  );
  let created = 0;
  let refreshed = 0;
  for (const disk of disks) {
    const values = { ...disk, device_id: deviceId, now };
    if (existing.has(disk.index)) {
      refresh.run(values);
      refreshed++;
    } else {
      insert.run({
        ...values,
        freespace_oid: freespaceOidOf(disk.index),
        interval: DISK_DEFAULT_INTERVAL,
      });
      created++;
    }
  }
  return { created, refreshed };
}

export interface NewDiskTracker {
  deviceId: number;
  name: string;
  index: number;
  freespaceOid: string;
  interval?: number;
  enableLogging?: boolean;
}

/** A disk tracker created by an operator (POST /api/disk/set). */
export function insertDiskTracker(db: DB, disk: NewDiskTracker, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, interval, enable_logging, source, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'manual', ?, ?)`,
      )
      .run(
        disk.deviceId,
        disk.name,
        disk.index,
        disk.freespaceOid,
        disk.interval ?? DISK_DEFAULT_INTERVAL,
        disk.enableLogging === false ? 0 : 1,
        now,
        now,
      ).lastInsertRowid,
  );
}

export function updateDiskTracker(
  db: DB,
  id: number,
  changes: { name?: string; interval?: number; enable_logging?: boolean },
  now: number,
): void {
  const row = findDiskTracker(db, id);
  if (!row) return;
  db.prepare(
    'UPDATE disk_trackers SET name = ?, interval = ?, enable_logging = ?, updated_at = ? WHERE id = ?',
  ).run(
    changes.name ?? row.name,
    changes.interval ?? row.interval,
    changes.enable_logging === undefined ? row.enable_logging : changes.enable_logging ? 1 : 0,
    now,
    id,
  );
}

/** A poller's reading of a disk as data (SQL and its parameters), for a writer on another connection (the trackers' storage writer). */
export const DISK_READING_SQL =
  'UPDATE disk_trackers SET available = ?, total = ?, last_seen_at = ?, updated_at = ? WHERE id = ?';
export const diskReadingParams = (
  id: number,
  reading: { available: number; total: number },
  now: number,
) => [reading.available, reading.total, now, now, id] as const;

export function deleteDiskTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM disk_trackers WHERE id = ?').run(id).changes > 0;
}
