/**
 * Who may see or change which tracker (spec part 2 > Trackers: tag scoped). A tracker belongs to
 * a device; the device's tags decide. Invariant: a tracker of an out-of-scope device answers
 * exactly like a missing one, on every route (404 with the route's text for reads, the `id`
 * field's 400 for writes), and a tracker is created only on a device the caller can see.
 */
import type { DB } from '../../platform/db/database.js';
import { failure } from '../../platform/http/envelopes.js';
import { allOf, type Identity } from '../../platform/http/identity.js';
import {
  scopeOf,
  type DeviceScope,
  type DeviceScopeResolver,
} from '../../platform/http/scoping.js';
import { HOUR_MS, type Clock } from '../../platform/time/time.js';
import type { DeviceRow, DeviceWindow } from '../devices/index.js';
import type { TrackersService } from './trackers.service.js';

/** What trackers ask the devices feature: visibility, the list scope, and device labels. */
export interface DeviceVisibility {
  /** The device when it exists and the caller may see it (null: missing or out of scope). */
  visibleDevice(identity: Identity, deviceId: number): DeviceRow | null;
  /** The devices a tag-restricted caller may see (platform scoping's resolver). */
  scopeResolver: DeviceScopeResolver;
  ipMap: { byId(id: number): { label: string } | undefined };
}

/** 400 `{errors: {<field>: [message]}}`. */
export const invalid = (field: string, message: string) =>
  failure(400, message, { fields: { [field]: [message] }, family: 'errors' });
/** 404 `{error: message}`. */
export const notFound = (message: string) => failure(404, message);

/**
 * What every tracker route declares: permission `write_devices`, 400 `{errors}` for validation
 * and `{error}` for failures (a route may override `errors`).
 */
export const TRACKER_ROUTE = {
  access: allOf('write_devices'),
  errors: 'errors',
  tags: ['trackers'],
} as const;

export const DEFAULT_LOG_HOURS = 4;

/** Where an unexpected failure of an in-body-status answer is logged (the request's logger). */
export interface ErrorLog {
  error(details: object, message: string): void;
}

/** A device widget's answer when the device has no such probe (spec: `{status: 204, hasError: false, message: {}}`). */
export const NO_PROBE = { status: 204, hasError: false as const, message: {} };

export class TrackerAccess {
  constructor(
    private readonly devices: DeviceVisibility,
    private readonly clock: Clock,
  ) {}

  /** The tracker's device when the tracker exists and its device is visible, else null. */
  deviceOf(identity: Identity, row: { device_id: number } | undefined): DeviceRow | null {
    return row ? this.devices.visibleDevice(identity, row.device_id) : null;
  }

  /** The tracker and its device, or the route's 404 `{error: message}`. */
  visible<T extends { device_id: number }>(
    identity: Identity,
    row: T | undefined,
    message: string,
  ): { row: T; device: DeviceRow } {
    const device = this.deviceOf(identity, row);
    if (!row || !device) throw notFound(message);
    return { row, device };
  }

  /** A tracker to update or delete, or the `id` field's 400. */
  editable<T extends { device_id: number }>(identity: Identity, row: T | undefined): T {
    if (!row || !this.deviceOf(identity, row)) throw invalid('id', 'The selected id is invalid.');
    return row;
  }

  /** A device to attach a new tracker to, or the `deviceId` field's 400. */
  deviceForCreate(identity: Identity, deviceId: number | undefined): DeviceRow {
    if (deviceId === undefined) throw invalid('deviceId', 'The device id field is required.');
    const device = this.devices.visibleDevice(identity, deviceId);
    if (!device) throw invalid('deviceId', 'The selected device id is invalid.');
    return device;
  }

  /** The device named by a route, or 404 `{error: message}`. */
  device(identity: Identity, deviceId: number, message = 'Device not found'): DeviceRow {
    const device = this.devices.visibleDevice(identity, deviceId);
    if (!device) throw notFound(message);
    return device;
  }

  /** The device when visible, else null (the widgets answer "no probe" instead of failing). */
  deviceOrNull(identity: Identity, deviceId: number): DeviceRow | null {
    return this.devices.visibleDevice(identity, deviceId);
  }

  /** The caller's list scope (null: unrestricted), resolved once per request. */
  listScope(request: { identity: Identity | null }): DeviceScope | null {
    return scopeOf(request, this.devices.scopeResolver);
  }

  /**
   * Index rows with their device's label after `dev_id`, in the order of `ORDER BY dev_label,
   * <then>` (labels compared byte-wise, as SQLite's BINARY collation does). The labels come from
   * the devices feature (its IP map), not from a join on its table.
   */
  labelled<R extends { dev_id: number; id: number }>(
    rows: readonly R[],
    then: (row: R) => string | number,
  ): ({ dev_id: number; dev_label: string } & Omit<R, 'dev_id'>)[] {
    const keyed = rows.flatMap((row) => {
      const device = this.devices.ipMap.byId(row.dev_id);
      if (!device) return [];
      const { dev_id, ...rest } = row;
      return [
        {
          record: { dev_id, dev_label: device.label, ...rest },
          label: Buffer.from(device.label, 'utf8'),
          then: then(row),
        },
      ];
    });
    const compare = (a: string | number, b: string | number) =>
      typeof a === 'number' && typeof b === 'number'
        ? a - b
        : Buffer.compare(Buffer.from(String(a), 'utf8'), Buffer.from(String(b), 'utf8'));
    keyed.sort((a, b) => Buffer.compare(a.label, b.label) || compare(a.then, b.then));
    return keyed.map((k) => k.record);
  }

  /** The log window of a `get`: `hours` back from now (default 4). */
  window(hours: number | undefined): DeviceWindow {
    const now = this.clock.now();
    return { start: now - (hours ?? DEFAULT_LOG_HOURS) * HOUR_MS, end: now };
  }

  now(): number {
    return this.clock.now();
  }
}

/**
 * The in-body-status answer of POST /api/disk/stats and /api/latency/stats (spec: always HTTP
 * 200): 204 without an id, 200 with `noLogs` when the tracker is missing, not visible or has no
 * logs, 200 with `data`, or 500 `failed` (logged) when computing throws.
 */
export function inBodyStats<T>(
  id: unknown,
  options: {
    missing: string;
    noLogs: string;
    failed: string;
    log: ErrorLog;
    /** The statistics of the tracker with this positive integer id, or null. */
    compute: (id: number) => T | null;
  },
) {
  if (id === undefined || id === null || id === '')
    return { status: 204, hasError: false, message: options.missing };
  try {
    const n = Number(id);
    const data = Number.isInteger(n) && n > 0 ? options.compute(n) : null;
    if (!data) return { status: 200, hasError: false, message: options.noLogs };
    return { status: 200, hasError: false, data };
  } catch (err) {
    options.log.error({ err }, options.failed);
    return { status: 500, hasError: true, message: options.failed };
  }
}

/** What the service of one tracker kind stands on. */
export abstract class TrackerKind {
  constructor(
    protected readonly db: DB,
    protected readonly access: TrackerAccess,
    protected readonly trackers: TrackersService,
  ) {}

  /** The caller's list scope (null: unrestricted), resolved once per request. */
  listScope(request: { identity: Identity | null }): DeviceScope | null {
    return this.access.listScope(request);
  }
}

/** The device fields a tracker answer carries. */
export const deviceFieldsOf = (device: DeviceRow) => ({
  dev_label: device.label,
  dev_ip: device.ip_address,
  dev_profile: device.profile,
});
