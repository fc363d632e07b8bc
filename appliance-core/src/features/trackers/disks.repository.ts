/**
 * SQL of disk trackers (HOST-RESOURCES-MIB hrStorageTable): created and refreshed by the device
 * crawl (tracker-crawl.ts) or by POST /api/disk/set, read by the pollers.
 */
import type { DB } from '../../platform/db/database.js';
import { scopeSql, type DeviceScope } from '../../platform/http/scoping.js';
import type { DiskTrackerRecord } from './trackers.schema.js';

export const DISK_DEFAULT_INTERVAL = 600;

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

export function deleteDiskTracker(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM disk_trackers WHERE id = ?').run(id).changes > 0;
}

/** Disk trackers of the devices in scope, for the index list (the service adds device labels). */
export function listDiskIndex(db: DB, scope: DeviceScope | null) {
  const where = scopeSql(scope, 'device_id');
  return db
    .prepare(
      `SELECT device_id AS dev_id, id, name FROM disk_trackers WHERE ${where.sql} ORDER BY id`,
    )
    .all(...where.params) as { dev_id: number; id: number; name: string }[];
}
