/**
 * Interface trackers (spec part 2 > Trackers > Interfaces): created by the device crawl only;
 * updated, deleted (a later crawl may recreate the row) and given a link-state alert here. Tag
 * scoped through TrackerAccess. Neighbours (LLDP/CDP/ARP) are not crawled yet: `connected` is
 * always empty and the connections map has no entry.
 */
import type { Identity } from '../../platform/http/identity.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import { alertRecord, toggleAlert } from '../alerts/index.js';
import {
  deleteInterfaceTracker,
  findInterfaceTracker,
  interfaceRecord,
  listInterfaceIndex,
  listInterfaceTrackers,
  updateInterfaceTracker,
} from './interfaces.repository.js';
import { deviceFieldsOf, TrackerKind } from './trackers.access.js';
import { toBool, type InterfaceSetBody } from './trackers.schema.js';

const NOT_FOUND = 'Interface not found';
/** The alert type POST /api/interfaces/toggleupdown manages (fires on an ifOperStatus change). */
export const LINK_STATE_ALERT = 'linkstate';

export class InterfaceTrackers extends TrackerKind {
  detail(identity: Identity, id: number, hours: number | undefined) {
    const { row, device } = this.access.visible(
      identity,
      findInterfaceTracker(this.db, id),
      NOT_FOUND,
    );
    return {
      ...interfaceRecord(row),
      ...deviceFieldsOf(device),
      logs: this.trackers.interfaceLogs(row, this.access.window(hours)),
      alerts: this.trackers.alerts('interface', row.id),
      connected: [],
    };
  }

  storage(identity: Identity, id: number) {
    const visible = this.access.deviceOf(identity, findInterfaceTracker(this.db, id)) !== null;
    return this.trackers.storageOr404('interface', id, visible);
  }

  /** The interface trackers of a device by interface index, each with its alerts. */
  ofDevice(identity: Identity, deviceId: number) {
    const device = this.access.device(identity, deviceId);
    const rows = listInterfaceTrackers(this.db, device.id).sort(
      (a, b) => a.interface - b.interface,
    );
    const alerts = this.trackers.alertsMany(
      'interface',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ ...interfaceRecord(row), alerts: alerts(row.id), connected: [] }));
  }

  /** Neighbours per interface id of a device; interfaces without neighbours are omitted. */
  connections(identity: Identity, deviceId: number): Record<string, never[]> {
    this.access.device(identity, deviceId);
    return {};
  }

  /** Every tracker of this kind the caller can see, by device label. */
  index(scope: DeviceScope | null) {
    return this.access.labelled(listInterfaceIndex(this.db, scope), (row) => row.interface);
  }

  update(identity: Identity, body: InterfaceSetBody): number {
    const row = this.access.editable(identity, findInterfaceTracker(this.db, body.id));
    updateInterfaceTracker(
      this.db,
      row.id,
      {
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.interval !== undefined ? { interval: body.interval } : {}),
        ...(body.enable_logging !== undefined
          ? { enable_logging: toBool(body.enable_logging) }
          : {}),
      },
      this.access.now(),
    );
    this.trackers.changes.changed('interface', row.id);
    return row.id;
  }

  /** Creates the link-state alert of an interface (active), or flips its active flag. */
  toggleLinkStateAlert(identity: Identity, id: number) {
    const { row } = this.access.visible(identity, findInterfaceTracker(this.db, id), NOT_FOUND);
    const { alert, created } = toggleAlert(
      this.db,
      row.device_id,
      'interface',
      row.id,
      LINK_STATE_ALERT,
      row.oper_status,
      this.access.now(),
    );
    return {
      id: row.id,
      alert: alertRecord(alert),
      message: created ? 'Alert created successfully' : 'Alert updated successfully',
    };
  }

  remove(identity: Identity, id: number): void {
    const { row } = this.access.visible(identity, findInterfaceTracker(this.db, id), NOT_FOUND);
    deleteInterfaceTracker(this.db, row.id);
    this.trackers.changes.removed('interface', row.id);
  }
}
