/**
 * Latency trackers (spec part 2 > Trackers > Latency): one per device, polled with fping; its
 * readings decide the device's reachability. Tag scoped through TrackerAccess.
 */
import { failure } from '../../platform/http/envelopes.js';
import type { Identity } from '../../platform/http/identity.js';
import type { DeviceScope } from '../../platform/http/scoping.js';
import {
  deleteLatencyTracker,
  findLatencyTracker,
  insertLatencyTracker,
  LATENCY_DEFAULTS,
  latencyRecord,
  latencyTrackerOfDevice,
  listLatencyIndex,
  updateLatencyTracker,
} from './latency.repository.js';
import {
  inBodyStats,
  invalid,
  NO_PROBE,
  notFound,
  TrackerKind,
  type ErrorLog,
} from './trackers.access.js';
import type { LatencySetBody } from './trackers.schema.js';

const NOT_FOUND = 'ICMP ping configuration not found';

export class LatencyTrackers extends TrackerKind {
  detail(identity: Identity, id: number, hours: number | undefined) {
    const { row, device } = this.access.visible(
      identity,
      findLatencyTracker(this.db, id),
      NOT_FOUND,
    );
    return {
      ...latencyRecord(row),
      dev_label: device.label,
      logs: this.trackers.latencyLogs(row, this.access.window(hours)),
      alerts: this.trackers.alerts('latency', row.id),
    };
  }

  storage(identity: Identity, id: number) {
    const visible = this.access.deviceOf(identity, findLatencyTracker(this.db, id)) !== null;
    return this.trackers.storageOr404('latency', id, visible);
  }

  /** POST /api/latency/stats: the outcome in the body, always HTTP 200 (the spec's legacy shape). */
  stats(identity: Identity, icmpingId: unknown, log: ErrorLog) {
    return inBodyStats(icmpingId, {
      missing: 'The icmpingId field is required.',
      noLogs: 'No logs found for this ICMP ping configuration',
      failed: 'Error computing latency stats',
      log,
      compute: (id) => {
        const row = findLatencyTracker(this.db, id);
        return row && this.access.deviceOf(identity, row)
          ? this.trackers.latencyStats(row, this.access.now())
          : null;
      },
    });
  }

  /** Creates (no `id`; one per device, else 409) or updates a latency tracker. */
  save(identity: Identity, body: LatencySetBody): { id: number; created: boolean } {
    const now = this.access.now();
    const fields = {
      ...(body.label !== undefined ? { label: body.label } : {}),
      ...(body.interval !== undefined ? { interval: body.interval } : {}),
      ...(body.timeout !== undefined ? { timeout: body.timeout } : {}),
      ...(body.lossout !== undefined ? { lossout: body.lossout } : {}),
    };
    if (body.id !== undefined) {
      const row = this.access.editable(identity, findLatencyTracker(this.db, body.id));
      updateLatencyTracker(this.db, row.id, fields, now);
      this.trackers.changes.changed('latency', row.id);
      return { id: row.id, created: false };
    }
    if (body.label === undefined) throw invalid('label', 'The label field is required.');
    const device = this.access.deviceForCreate(identity, body.deviceId);
    if (latencyTrackerOfDevice(this.db, device.id))
      throw failure(409, 'ICMP ping configuration already exists for this device');
    const id = insertLatencyTracker(
      this.db,
      {
        deviceId: device.id,
        label: body.label,
        interval: body.interval ?? LATENCY_DEFAULTS.interval,
        timeout: body.timeout ?? LATENCY_DEFAULTS.timeout,
        lossout: body.lossout ?? LATENCY_DEFAULTS.lossout,
      },
      now,
    );
    this.trackers.changes.changed('latency', id);
    return { id, created: true };
  }

  /** The latency tracker of a device with its alerts. */
  ofDevice(identity: Identity, deviceId: number) {
    const message = 'No ICMP ping configuration found for this device';
    const device = this.access.device(identity, deviceId, message);
    const row = latencyTrackerOfDevice(this.db, device.id);
    if (!row) throw notFound(message);
    return {
      ...latencyRecord(row),
      dev_label: device.label,
      alerts: this.trackers.alerts('latency', row.id),
    };
  }

  /** Every tracker of this kind the caller can see, by device label. */
  index(scope: DeviceScope | null) {
    return this.access.labelled(listLatencyIndex(this.db, scope), (row) => row.id);
  }

  remove(identity: Identity, id: number): void {
    const { row } = this.access.visible(identity, findLatencyTracker(this.db, id), NOT_FOUND);
    deleteLatencyTracker(this.db, row.id);
    this.trackers.changes.removed('latency', row.id);
  }

  /** The latency widget of a device page: the device's latency logs. */
  widget(identity: Identity, deviceId: number, hours?: number) {
    const device = this.access.deviceOrNull(identity, deviceId);
    const row = device ? latencyTrackerOfDevice(this.db, device.id) : undefined;
    if (!device || !row) return NO_PROBE;
    return {
      status: 200,
      hasError: false as const,
      message: {
        dev_label: device.label,
        dev_ip: device.ip_address,
        logs: this.trackers.latencyLogs(row, this.access.window(hours)),
      },
    };
  }
}
