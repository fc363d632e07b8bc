/**
 * Custom OID and service trackers (spec part 2 > Trackers > Custom OIDs, Services): one table,
 * `kind` tells them apart. A custom OID is polled over SNMP; a service tracker is stored with its
 * `Win32_Service::State` OID and polled once the agent exists. Tag scoped through TrackerAccess;
 * an id of the other kind answers like a missing one.
 */
import { failure } from '../../platform/http/envelopes.js';
import type { Identity } from '../../platform/http/identity.js';
import {
  deleteOidTracker,
  findOidTracker,
  insertOidTracker,
  OID_DEFAULT_INTERVAL,
  oidRecord,
  oidTrackersOfDevice,
  serviceRecord,
  SERVICE_DEFAULT_INTERVAL,
  serviceOidOf,
  updateOidTracker,
} from './oids.repository.js';
import { deviceFieldsOf, invalid, TrackerKind } from './trackers.access.js';
import {
  toBool,
  type OidDetail,
  type OidSetBody,
  type ServiceDetail,
  type ServiceSetBody,
} from './trackers.schema.js';

type Kind = 'oid' | 'service';
const NOT_FOUND: Record<Kind, string> = { oid: 'OID not found', service: 'Service not found' };

export class OidTrackers extends TrackerKind {
  /** A custom OID or service tracker with its device, logs and alerts. */
  detail(kind: 'oid', identity: Identity, id: number, hours: number | undefined): OidDetail;
  detail(kind: 'service', identity: Identity, id: number, hours: number | undefined): ServiceDetail;
  detail(kind: Kind, identity: Identity, id: number, hours: number | undefined) {
    const { row, device } = this.access.visible(
      identity,
      findOidTracker(this.db, id, kind),
      NOT_FOUND[kind],
    );
    return {
      ...(kind === 'service' ? serviceRecord(row) : oidRecord(row)),
      ...deviceFieldsOf(device),
      logs: this.trackers.oidLogs(row, this.access.window(hours)),
      alerts: this.trackers.alerts(kind, row.id),
    };
  }

  /** The storage estimate of a service tracker's logs (stored with the OID samples). */
  serviceStorage(identity: Identity, id: number) {
    const row = findOidTracker(this.db, id, 'service');
    return this.trackers.storageOr404('oid', id, this.access.deviceOf(identity, row) !== null);
  }

  /** Creates (no `id`) or updates a custom OID tracker. */
  saveOid(identity: Identity, body: OidSetBody): { id: number; created: boolean } {
    const now = this.access.now();
    if (body.id !== undefined) {
      const row = this.access.editable(identity, findOidTracker(this.db, body.id, 'oid'));
      updateOidTracker(
        this.db,
        row.id,
        {
          ...(body.label !== undefined ? { label: body.label } : {}),
          ...(body.interval !== undefined ? { interval: body.interval } : {}),
          ...(body.enable_logging !== undefined
            ? { enableLogging: toBool(body.enable_logging) }
            : {}),
        },
        now,
      );
      this.trackers.changes.changed('oid', row.id);
      return { id: row.id, created: false };
    }
    if (body.oid === undefined) throw invalid('oid', 'The oid field is required.');
    if (body.datatype === undefined) throw invalid('datatype', 'The datatype field is required.');
    const device = this.access.deviceForCreate(identity, body.deviceId);
    const oid = body.oid.replace(/^\./, '');
    const id = insertOidTracker(
      this.db,
      {
        deviceId: device.id,
        kind: 'oid',
        oid,
        label: body.label ?? oid,
        name: null,
        datatype: body.datatype,
        interval: body.interval ?? OID_DEFAULT_INTERVAL,
        enableLogging: true,
      },
      now,
    );
    this.trackers.changes.changed('oid', id);
    return { id, created: true };
  }

  /** Creates (no `id`; the OID is generated from `name` when omitted) or updates a service tracker. */
  saveService(identity: Identity, body: ServiceSetBody): { id: number; created: boolean } {
    const now = this.access.now();
    if (body.id !== undefined) {
      const row = this.access.editable(identity, findOidTracker(this.db, body.id, 'service'));
      const label = body.label ?? body.name;
      updateOidTracker(
        this.db,
        row.id,
        {
          ...(label !== undefined ? { label } : {}),
          ...(body.interval !== undefined ? { interval: body.interval } : {}),
          ...(body.enable_logging !== undefined
            ? { enableLogging: toBool(body.enable_logging) }
            : {}),
          ...(body.oid !== undefined ? { oid: body.oid } : {}),
        },
        now,
      );
      return { id: row.id, created: false };
    }
    if (body.name === undefined) throw invalid('name', 'The name field is required.');
    const device = this.access.deviceForCreate(identity, body.deviceId);
    const id = insertOidTracker(
      this.db,
      {
        deviceId: device.id,
        kind: 'service',
        oid: body.oid ?? serviceOidOf(body.name),
        label: body.name,
        name: body.name,
        datatype: 'S',
        interval: body.interval ?? SERVICE_DEFAULT_INTERVAL,
        enableLogging: body.enable_logging === undefined ? true : toBool(body.enable_logging),
      },
      now,
    );
    return { id, created: true };
  }

  /** The service trackers of a device by label, each with its name and alerts. */
  servicesOfDevice(identity: Identity, deviceId: number) {
    const device = this.access.device(identity, deviceId);
    const rows = oidTrackersOfDevice(this.db, device.id, 'service');
    const alerts = this.trackers.alertsMany(
      'service',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ ...serviceRecord(row), alerts: alerts(row.id) }));
  }

  /** Deletes a custom OID tracker and its history (404 `Error deleting oid` when not visible). */
  removeOid(identity: Identity, id: number): void {
    const { row } = this.access.visible(
      identity,
      findOidTracker(this.db, id, 'oid'),
      'Error deleting oid',
    );
    deleteOidTracker(this.db, row.id);
    this.trackers.changes.removed('oid', row.id);
  }

  /** Deletes a service tracker (500 `Error deleting service` when not visible, as the spec says). */
  removeService(identity: Identity, id: number): void {
    const row = findOidTracker(this.db, id, 'service');
    if (!row || !this.access.deviceOf(identity, row)) throw failure(500, 'Error deleting service');
    deleteOidTracker(this.db, row.id);
  }
}
