/**
 * Disk trackers (spec part 2 > Trackers > Disks): what the disk routes do, tag scoped through
 * TrackerAccess. Created by the device crawl or here (`path` is the free-space OID; its last
 * component is the hrStorageIndex, unique per device).
 */
import type { Identity } from '../../platform/http/identity.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import {
  deleteDiskTracker,
  DISK_DEFAULT_INTERVAL,
  diskRecord,
  findDiskTracker,
  insertDiskTracker,
  listDiskIndex,
  listDiskTrackers,
  updateDiskTracker,
} from './disks.repository.js';
import {
  deviceFieldsOf,
  inBodyStats,
  invalid,
  TrackerKind,
  type ErrorLog,
} from './trackers.access.js';
import { toBool, type DiskSetBody } from './trackers.schema.js';

export class DiskTrackers extends TrackerKind {
  detail(identity: Identity, id: number, hours: number | undefined) {
    const { row, device } = this.access.visible(
      identity,
      findDiskTracker(this.db, id),
      'Disk not found',
    );
    return {
      ...diskRecord(row),
      ...deviceFieldsOf(device),
      logs: this.trackers.diskLogs(row, this.access.window(hours)),
      alerts: this.trackers.alerts('disk', row.id),
    };
  }

  storage(identity: Identity, id: number) {
    const visible = this.access.deviceOf(identity, findDiskTracker(this.db, id)) !== null;
    return this.trackers.storageOr404('disk', id, visible);
  }

  /** POST /api/disk/stats: the outcome in the body, always HTTP 200 (the spec's legacy shape). */
  stats(identity: Identity, diskId: unknown, log: ErrorLog) {
    return inBodyStats(diskId, {
      missing: 'The diskId field is required.',
      noLogs: 'No logs found for this disk',
      failed: 'Error computing disk stats',
      log,
      compute: (id) => {
        const row = findDiskTracker(this.db, id);
        return row && this.access.deviceOf(identity, row)
          ? this.trackers.diskStats(row, this.access.now())
          : null;
      },
    });
  }

  /** Creates (no `id`) or updates a disk tracker. */
  save(identity: Identity, body: DiskSetBody): { id: number; created: boolean } {
    const now = this.access.now();
    if (body.id !== undefined) {
      const row = this.access.editable(identity, findDiskTracker(this.db, body.id));
      updateDiskTracker(
        this.db,
        row.id,
        {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.interval !== undefined ? { interval: body.interval } : {}),
          ...(body.enable_logging !== undefined
            ? { enable_logging: toBool(body.enable_logging) }
            : {}),
        },
        now,
      );
      this.trackers.changes.changed('disk', row.id);
      return { id: row.id, created: false };
    }
    if (body.path === undefined) throw invalid('path', 'The path field is required.');
    if (body.name === undefined) throw invalid('name', 'The name field is required.');
    const device = this.access.deviceForCreate(identity, body.deviceId);
    const index = Number(body.path.split('.').at(-1));
    if (listDiskTrackers(this.db, device.id).some((d) => d.storage_index === index))
      throw invalid('path', 'A disk tracker with this index already exists on the device.');
    const id = insertDiskTracker(
      this.db,
      {
        deviceId: device.id,
        name: body.name,
        index,
        freespaceOid: body.path,
        interval: body.interval ?? DISK_DEFAULT_INTERVAL,
        enableLogging: body.enable_logging === undefined ? true : toBool(body.enable_logging),
      },
      now,
    );
    this.trackers.changes.changed('disk', id);
    return { id, created: true };
  }

  /** The disk trackers of a device, sorted by name, each with its alerts. */
  ofDevice(identity: Identity, deviceId: number) {
    const device = this.access.device(identity, deviceId);
    const rows = listDiskTrackers(this.db, device.id).sort((a, b) => a.name.localeCompare(b.name));
    const alerts = this.trackers.alertsMany(
      'disk',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ ...diskRecord(row), alerts: alerts(row.id) }));
  }

  /** Every tracker of this kind the caller can see, by device label. */
  index(scope: DeviceScope | null) {
    return this.access.labelled(listDiskIndex(this.db, scope), (row) => row.name);
  }

  remove(identity: Identity, id: number): void {
    const row = this.access.editable(identity, findDiskTracker(this.db, id));
    deleteDiskTracker(this.db, row.id);
    this.trackers.changes.removed('disk', row.id);
  }
}
