/**
 * TCP port trackers (spec part 2 > Trackers > TCP ports): (`deviceId`, `port`) is the natural key
 * of a create, so posting an existing pair updates it. The list and delete routes the spec marks
 * "not shown" are designed in the style of disks. Tag scoped through TrackerAccess.
 */
import type { Identity } from '../../platform/http/identity.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import {
  deletePortTracker,
  findPortTracker,
  insertPortTracker,
  listPortIndex,
  PORT_DEFAULT_INTERVAL,
  portRecord,
  portTrackerByKey,
  portTrackersOfDevice,
  updatePortTracker,
  type PortTrackerRow,
} from './ports.repository.js';
import { invalid, NO_PROBE, TrackerKind } from './trackers.access.js';
import { toBool, type PortSetBody } from './trackers.schema.js';

const NOT_FOUND = 'Port not found';

export class PortTrackers extends TrackerKind {
  detail(identity: Identity, id: number, hours: number | undefined) {
    const { row, device } = this.access.visible(identity, findPortTracker(this.db, id), NOT_FOUND);
    return {
      ...portRecord(row),
      dev_id: row.device_id,
      dev_label: device.label,
      logs: this.trackers.portLogs(row, this.access.window(hours)),
      alerts: this.trackers.alerts('port', row.id),
    };
  }

  storage(identity: Identity, id: number) {
    const visible = this.access.deviceOf(identity, findPortTracker(this.db, id)) !== null;
    return this.trackers.storageOr404('port', id, visible);
  }

  /** Updates by `id`, else by (`deviceId`, `port`), else creates. */
  save(identity: Identity, body: PortSetBody): { id: number; created: boolean } {
    const now = this.access.now();
    const label = body.label ?? body.name;
    let existing: PortTrackerRow | undefined;
    if (body.id !== undefined) {
      existing = this.access.editable(identity, findPortTracker(this.db, body.id));
    } else {
      if (body.port === undefined) throw invalid('port', 'The port field is required.');
      const device = this.access.deviceForCreate(identity, body.deviceId);
      existing = portTrackerByKey(this.db, device.id, body.port);
      if (!existing) {
        const id = insertPortTracker(
          this.db,
          {
            deviceId: device.id,
            port: body.port,
            label: label ?? '',
            interval: body.interval ?? PORT_DEFAULT_INTERVAL,
          },
          now,
        );
        this.trackers.changes.changed('port', id);
        return { id, created: true };
      }
    }
    updatePortTracker(
      this.db,
      existing.id,
      {
        ...(label !== undefined ? { label } : {}),
        ...(body.interval !== undefined ? { interval: body.interval } : {}),
        ...(body.enable_logging !== undefined
          ? { enableLogging: toBool(body.enable_logging) }
          : {}),
      },
      now,
    );
    this.trackers.changes.changed('port', existing.id);
    return { id: existing.id, created: false };
  }

  /** The port trackers of a device by port, each with its alerts. */
  ofDevice(identity: Identity, deviceId: number) {
    const device = this.access.device(identity, deviceId);
    const rows = portTrackersOfDevice(this.db, device.id);
    const alerts = this.trackers.alertsMany(
      'port',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ ...portRecord(row), alerts: alerts(row.id) }));
  }

  /** Every tracker of this kind the caller can see, by device label. */
  index(scope: DeviceScope | null) {
    return this.access.labelled(listPortIndex(this.db, scope), (row) => row.port);
  }

  remove(identity: Identity, id: number): void {
    const { row } = this.access.visible(identity, findPortTracker(this.db, id), NOT_FOUND);
    deletePortTracker(this.db, row.id);
    this.trackers.changes.removed('port', row.id);
  }

  /** The TCP widget of a device page: logs of one of the device's port trackers. */
  widget(identity: Identity, deviceId: number, portId: number | undefined, hours?: number) {
    const device = this.access.deviceOrNull(identity, deviceId);
    if (!device || portId === undefined) return NO_PROBE;
    const row = findPortTracker(this.db, portId);
    if (!row || row.device_id !== device.id) return NO_PROBE;
    return {
      status: 200,
      hasError: false as const,
      message: {
        dev_label: device.label,
        port: row.port,
        logs: this.trackers.portLogs(row, this.access.window(hours)),
      },
    };
  }
}
