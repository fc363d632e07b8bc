/**
 * Tracker endpoints (spec part 2 > Trackers, and getLatencyTracker/getTCPTracker of Dashboards).
 * Every route needs `write_devices` (the two dashboard helpers need `devices`) and is tag scoped:
 * a tracker of an out-of-scope device answers exactly like a missing one. Validation failures are
 * 400 `{errors}`, not-found answers 404 `{error}` with the spec's text.
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import {
  ErrorBody,
  ErrorsBody,
  LegacyFailureBody,
  responses,
} from '../../platform/http/schemas.js';
import { deviceInScope } from '../../platform/http/scoping.js';
import { HOUR_MS } from '../../platform/time/time.js';
import { findDevice, tagIdsOfDevice } from '../devices/index.js';
import {
  deleteDiskTracker,
  diskRecord,
  DISK_DEFAULT_INTERVAL,
  findDiskTracker,
  insertDiskTracker,
  listDiskIndex,
  listDiskTrackers,
  updateDiskTracker,
} from './disks.repository.js';
import {
  deleteInterfaceTracker,
  findInterfaceTracker,
  interfaceRecord,
  listInterfaceIndex,
  listInterfaceTrackers,
  updateInterfaceTracker,
} from './interfaces.repository.js';
import {
  alertRecord,
  deviceFields,
  findLatencyTracker,
  findOidTracker,
  findPortTracker,
  insertLatencyTracker,
  insertOidTracker,
  insertPortTracker,
  LATENCY_DEFAULTS,
  latencyTrackerOfDevice,
  listLatencyIndex,
  listPortIndex,
  OID_DEFAULT_INTERVAL,
  oidTrackersOfDevice,
  PORT_DEFAULT_INTERVAL,
  portTrackerByKey,
  portTrackersOfDevice,
  SERVICE_DEFAULT_INTERVAL,
  toggleAlert,
  updateLatencyTracker,
  updateOidTracker,
  updatePortTracker,
} from './trackers.repository.js';
import {
  AnyRecord,
  AnyRecords,
  DeviceIdParams,
  DiskSetBody,
  DiskStatsBody,
  GetLatencyTrackerBody,
  GetTcpTrackerBody,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  InBodyStatus,
  InterfaceSetBody,
  LatencySetBody,
  LatencyStatsBody,
  MessageAnswer,
  OidSetBody,
  PortSetBody,
  ServiceSetBody,
  StorageEstimate,
  toBool,
} from './trackers.schema.js';
import {
  latencyRecord,
  oidRecord,
  portRecord,
  serviceOidOf,
  type TrackersService,
} from './trackers.service.js';

const TAGS = ['trackers'];
const ERRORS: RouteErrors = { validation: 'errors', failure: 'error' };
const LEGACY: RouteErrors = { validation: 'legacy', failure: 'legacy' };
const access = allOf('write_devices');
const config = { access, errors: ERRORS };
const invalid = (field: string, message: string) =>
  failure(400, message, { fields: { [field]: [message] }, family: 'errors' });
const notFound = (message: string) => failure(404, message);

export interface TrackersRoutesDeps {
  trackers: TrackersService;
}

export async function trackersRoutes(
  app: App,
  ctx: CoreContext,
  deps: TrackersRoutesDeps,
): Promise<void> {
  const { db, clock } = ctx;
  const { trackers } = deps;
  const changes = () => trackers.changes;

  const inScope = (identity: Identity, deviceId: number) =>
    deviceInScope(identity, tagIdsOfDevice(db, deviceId));
  /** The row when it exists and its device is in the caller's scope; else the route's 404. */
  const scoped = <T extends { device_id: number }>(
    identity: Identity,
    row: T | undefined,
    message: string,
  ): T => {
    if (!row || !inScope(identity, row.device_id)) throw notFound(message);
    return row;
  };
  /** A device the caller may attach a tracker to, else the field's 400. */
  const deviceForCreate = (identity: Identity, deviceId: number | undefined) => {
    if (deviceId === undefined) throw invalid('deviceId', 'The device id field is required.');
    const device = findDevice(db, deviceId);
    if (!device || !inScope(identity, deviceId))
      throw invalid('deviceId', 'The selected device id is invalid.');
    return device;
  };
  const window = (hours: number | undefined) => {
    const now = clock.now();
    return { start: now - (hours ?? 4) * HOUR_MS, end: now };
  };
  const deviceOr404 = (identity: Identity, id: number) => {
    const device = findDevice(db, id);
    if (!device || !inScope(identity, id)) throw notFound('Device not found');
    return device;
  };
  const stats = (kind: Parameters<TrackersService['storage']>[0], id: number, exists: boolean) => {
    const estimate = exists ? trackers.storage(kind, id) : null;
    if (!estimate) throw notFound('No stats found');
    return estimate;
  };
  const single = (summary: string, description?: string) => ({
    tags: TAGS,
    summary,
    ...(description ? { description } : {}),
  });

  // spec: part2 > Trackers > Disks ------------------------------------------------------------------
  app.get(
    '/api/disk/get/:id',
    {
      config,
      schema: {
        ...single('A disk tracker with its device, logs and alerts'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findDiskTracker(db, request.params.id),
        'Disk not found',
      );
      return {
        ...diskRecord(row),
        ...deviceFields(db, row.device_id),
        logs: trackers.diskLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('disk', row.id),
      };
    },
  );

  app.get(
    '/api/disk/stats/:id',
    {
      config,
      schema: {
        ...single('Storage estimate of a disk tracker’s logs'),
        params: IdParams,
        response: responses(ERRORS, { 200: StorageEstimate, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = findDiskTracker(db, request.params.id);
      return stats('disk', request.params.id, !!row && inScope(identityOf(request), row.device_id));
    },
  );

  app.post(
    '/api/disk/stats',
    {
      config: { access, errors: LEGACY },
      schema: {
        ...single(
          'Disk growth and fill-time projection',
          'Always HTTP 200 with the outcome in `status`: 204 without `diskId`, 200 with a message without logs, 500 on error.',
        ),
        body: DiskStatsBody,
        response: responses(LEGACY, { 200: InBodyStatus }),
      },
    },
    async (request) => {
      const { diskId } = request.body;
      if (diskId === undefined || diskId === null || diskId === '')
        return { status: 204, hasError: false, message: 'The diskId field is required.' };
      try {
        const id = Number(diskId);
        const row = Number.isInteger(id) && id > 0 ? findDiskTracker(db, id) : undefined;
        const data =
          row && inScope(identityOf(request), row.device_id)
            ? trackers.diskStats(row, clock.now())
            : null;
        if (!data) return { status: 200, hasError: false, message: 'No logs found for this disk' };
        return { status: 200, hasError: false, data };
      } catch (err) {
        request.log.error({ err }, 'disk stats failed');
        return { status: 500, hasError: true, message: 'Error computing disk stats' };
      }
    },
  );

  app.post(
    '/api/disk/set',
    {
      config,
      schema: {
        ...single('Create (no `id`) or update a disk tracker'),
        body: DiskSetBody,
        response: responses(ERRORS, { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody }),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const now = clock.now();
      if (body.id !== undefined) {
        const row = findDiskTracker(db, body.id);
        if (!row || !inScope(identity, row.device_id))
          throw invalid('id', 'The selected id is invalid.');
        updateDiskTracker(
          db,
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
        changes().changed('disk', row.id);
        return { id: row.id };
      }
      if (body.path === undefined) throw invalid('path', 'The path field is required.');
      if (body.name === undefined) throw invalid('name', 'The name field is required.');
      const device = deviceForCreate(identity, body.deviceId);
      const index = Number(body.path.split('.').at(-1));
      if (listDiskTrackers(db, device.id).some((d) => d.storage_index === index))
        throw invalid('path', 'A disk tracker with this index already exists on the device.');
      const id = insertDiskTracker(
        db,
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
      changes().changed('disk', id);
      reply.code(201);
      return { id };
    },
  );

  app.get(
    '/api/device/:id/disks',
    {
      config,
      schema: {
        ...single('Disk trackers of a device, sorted by name'),
        params: IdParams,
        response: responses(ERRORS, { 200: AnyRecords, 404: ErrorBody }),
      },
    },
    async (request) => {
      const device = deviceOr404(identityOf(request), request.params.id);
      const rows = listDiskTrackers(db, device.id).sort((a, b) => a.name.localeCompare(b.name));
      const alerts = trackers.alertsMany(
        'disk',
        rows.map((r) => r.id),
      );
      return rows.map((row) => ({ ...diskRecord(row), alerts: alerts(row.id) }));
    },
  );

  app.get(
    '/api/disk/all',
    {
      config,
      schema: {
        ...single('Every disk tracker the caller can see'),
        response: responses(ERRORS, { 200: AnyRecords }),
      },
    },
    async (request) => listDiskIndex(db, identityOf(request)),
  );

  app.post(
    '/api/disk/delete',
    {
      config,
      schema: {
        ...single('Delete a disk tracker and its history'),
        body: IdBody,
        response: responses(ERRORS, { 200: MessageAnswer, 400: ErrorsBody }),
      },
    },
    async (request) => {
      const row = findDiskTracker(db, request.body.id);
      if (!row || !inScope(identityOf(request), row.device_id))
        throw invalid('id', 'The selected id is invalid.');
      deleteDiskTracker(db, row.id);
      changes().removed('disk', row.id);
      return { message: 'Disk deleted' };
    },
  );

  // spec: part2 > Trackers > Interfaces ---------------------------------------------------------------
  app.get(
    '/api/interfaces/get/:id',
    {
      config,
      schema: {
        ...single('An interface tracker with logs, alerts and neighbours'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findInterfaceTracker(db, request.params.id),
        'Interface not found',
      );
      return {
        ...interfaceRecord(row),
        ...deviceFields(db, row.device_id),
        logs: trackers.interfaceLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('interface', row.id),
        connected: [],
      };
    },
  );

  app.get(
    '/api/interfaces/stats/:id',
    {
      config,
      schema: {
        ...single('Storage estimate of an interface tracker’s logs'),
        params: IdParams,
        response: responses(ERRORS, { 200: StorageEstimate, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = findInterfaceTracker(db, request.params.id);
      return stats(
        'interface',
        request.params.id,
        !!row && inScope(identityOf(request), row.device_id),
      );
    },
  );

  app.get(
    '/api/device/:id/interfaces',
    {
      config,
      schema: {
        ...single('Interface trackers of a device, by interface index'),
        params: IdParams,
        response: responses(ERRORS, { 200: AnyRecords, 404: ErrorBody }),
      },
    },
    async (request) => {
      const device = deviceOr404(identityOf(request), request.params.id);
      const rows = listInterfaceTrackers(db, device.id).sort((a, b) => a.interface - b.interface);
      const alerts = trackers.alertsMany(
        'interface',
        rows.map((r) => r.id),
      );
      return rows.map((row) => ({
        ...interfaceRecord(row),
        alerts: alerts(row.id),
        connected: [],
      }));
    },
  );

  app.get(
    '/api/device/:id/interfaces/connections',
    {
      config,
      schema: {
        ...single(
          'Neighbours per interface id (interfaces without neighbours omitted)',
          'Neighbour discovery (LLDP/CDP/ARP) is not crawled yet, so every interface is omitted.',
        ),
        params: IdParams,
        response: responses(ERRORS, {
          200: Type.Record(Type.String(), Type.Array(AnyRecord)),
          404: ErrorBody,
        }),
      },
    },
    async (request) => {
      deviceOr404(identityOf(request), request.params.id);
      return {};
    },
  );

  app.get(
    '/api/interfaces/all',
    {
      config,
      schema: {
        ...single('Every logging interface tracker the caller can see'),
        response: responses(ERRORS, { 200: AnyRecords }),
      },
    },
    async (request) => listInterfaceIndex(db, identityOf(request)),
  );

  app.post(
    '/api/interfaces/set',
    {
      config,
      schema: {
        ...single('Update an interface tracker'),
        body: InterfaceSetBody,
        response: responses(ERRORS, { 200: IdAnswer, 400: ErrorsBody }),
      },
    },
    async (request) => {
      const body = request.body;
      const row = findInterfaceTracker(db, body.id);
      if (!row || !inScope(identityOf(request), row.device_id))
        throw invalid('id', 'The selected id is invalid.');
      updateInterfaceTracker(
        db,
        row.id,
        {
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.interval !== undefined ? { interval: body.interval } : {}),
          ...(body.enable_logging !== undefined
            ? { enable_logging: toBool(body.enable_logging) }
            : {}),
        },
        clock.now(),
      );
      changes().changed('interface', row.id);
      return { id: row.id };
    },
  );

  app.post(
    '/api/interfaces/toggleupdown',
    {
      config,
      schema: {
        ...single(
          'Create the link-state alert of an interface, or flip its active flag',
          'The alert fires when the interface’s oper status changes while it is active.',
        ),
        body: IdBody,
        response: responses(ERRORS, {
          200: Type.Object({ id: Type.Integer(), alert: AnyRecord, message: Type.String() }),
          400: ErrorsBody,
          404: ErrorBody,
        }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findInterfaceTracker(db, request.body.id),
        'Interface not found',
      );
      const { alert, created } = toggleAlert(
        db,
        row.device_id,
        'interface',
        row.id,
        'linkstate',
        row.oper_status,
        clock.now(),
      );
      return {
        id: row.id,
        alert: alertRecord(alert),
        message: created ? 'Alert created successfully' : 'Alert updated successfully',
      };
    },
  );

  app.post(
    '/api/interfaces/delete',
    {
      config,
      schema: {
        ...single('Delete an interface tracker (a later crawl may recreate it)'),
        body: IdBody,
        response: responses(ERRORS, { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findInterfaceTracker(db, request.body.id),
        'Interface not found',
      );
      deleteInterfaceTracker(db, row.id);
      changes().removed('interface', row.id);
      return { message: 'Interface deleted' };
    },
  );

  // spec: part2 > Trackers > Latency -----------------------------------------------------------------
  app.get(
    '/api/latency/get/:id',
    {
      config,
      schema: {
        ...single('A latency tracker with logs and alerts'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findLatencyTracker(db, request.params.id),
        'ICMP ping configuration not found',
      );
      return {
        ...latencyRecord(row),
        dev_label: deviceFields(db, row.device_id)?.dev_label,
        logs: trackers.latencyLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('latency', row.id),
      };
    },
  );

  app.get(
    '/api/latency/stats/:id',
    {
      config,
      schema: {
        ...single('Storage estimate of a latency tracker’s logs'),
        params: IdParams,
        response: responses(ERRORS, { 200: StorageEstimate, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = findLatencyTracker(db, request.params.id);
      return stats(
        'latency',
        request.params.id,
        !!row && inScope(identityOf(request), row.device_id),
      );
    },
  );

  app.post(
    '/api/latency/stats',
    {
      config: { access, errors: LEGACY },
      schema: {
        ...single(
          'Latency averages, loss, uptime and monitoring duration',
          'Always HTTP 200 with the outcome in `status`: 204 without `icmpingId`, 200 with a message without logs, 500 on error. `monitoringDuration` is in seconds.',
        ),
        body: LatencyStatsBody,
        response: responses(LEGACY, { 200: InBodyStatus }),
      },
    },
    async (request) => {
      const { icmpingId } = request.body;
      if (icmpingId === undefined || icmpingId === null || icmpingId === '')
        return { status: 204, hasError: false, message: 'The icmpingId field is required.' };
      try {
        const id = Number(icmpingId);
        const row = Number.isInteger(id) && id > 0 ? findLatencyTracker(db, id) : undefined;
        const data =
          row && inScope(identityOf(request), row.device_id)
            ? trackers.latencyStats(row, clock.now())
            : null;
        if (!data)
          return {
            status: 200,
            hasError: false,
            message: 'No logs found for this ICMP ping configuration',
          };
        return { status: 200, hasError: false, data };
      } catch (err) {
        request.log.error({ err }, 'latency stats failed');
        return { status: 500, hasError: true, message: 'Error computing latency stats' };
      }
    },
  );

  app.post(
    '/api/latency/set',
    {
      config,
      schema: {
        ...single('Create (no `id`) or update the latency tracker of a device'),
        body: LatencySetBody,
        response: responses(ERRORS, {
          200: IdAnswer,
          201: IdAnswer,
          400: ErrorsBody,
          409: ErrorBody,
        }),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const now = clock.now();
      const fields = {
        ...(body.label !== undefined ? { label: body.label } : {}),
        ...(body.interval !== undefined ? { interval: body.interval } : {}),
        ...(body.timeout !== undefined ? { timeout: body.timeout } : {}),
        ...(body.lossout !== undefined ? { lossout: body.lossout } : {}),
      };
      if (body.id !== undefined) {
        const row = findLatencyTracker(db, body.id);
        if (!row || !inScope(identity, row.device_id))
          throw invalid('id', 'The selected id is invalid.');
        updateLatencyTracker(db, row.id, fields, now);
        changes().changed('latency', row.id);
        return { id: row.id };
      }
      if (body.label === undefined) throw invalid('label', 'The label field is required.');
      const device = deviceForCreate(identity, body.deviceId);
      if (latencyTrackerOfDevice(db, device.id))
        throw failure(409, 'ICMP ping configuration already exists for this device');
      const id = insertLatencyTracker(
        db,
        {
          deviceId: device.id,
          label: body.label,
          interval: body.interval ?? LATENCY_DEFAULTS.interval,
          timeout: body.timeout ?? LATENCY_DEFAULTS.timeout,
          lossout: body.lossout ?? LATENCY_DEFAULTS.lossout,
        },
        now,
      );
      changes().changed('latency', id);
      reply.code(201);
      return { id };
    },
  );

  app.get(
    '/api/device/:id/latency',
    {
      config,
      schema: {
        ...single('The latency tracker of a device'),
        params: IdParams,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const message = 'No ICMP ping configuration found for this device';
      const device = findDevice(db, request.params.id);
      if (!device || !inScope(identityOf(request), device.id)) throw notFound(message);
      const row = latencyTrackerOfDevice(db, device.id);
      if (!row) throw notFound(message);
      return {
        ...latencyRecord(row),
        dev_label: device.label,
        alerts: trackers.alerts('latency', row.id),
      };
    },
  );

  app.get(
    '/api/latency/all',
    {
      config,
      schema: {
        ...single('Every latency tracker the caller can see'),
        response: responses(ERRORS, { 200: AnyRecords }),
      },
    },
    async (request) => listLatencyIndex(db, identityOf(request)),
  );

  app.post(
    '/api/latency/delete',
    {
      config,
      schema: {
        ...single('Delete a latency tracker and its history'),
        body: IdBody,
        response: responses(ERRORS, { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findLatencyTracker(db, request.body.id),
        'ICMP ping configuration not found',
      );
      db.prepare('DELETE FROM latency_trackers WHERE id = ?').run(row.id);
      changes().removed('latency', row.id);
      return { message: 'ICMP ping configuration deleted' };
    },
  );

  // spec: part2 > Trackers > Custom OIDs ---------------------------------------------------------------
  app.get(
    '/api/oid/get/:id',
    {
      config,
      schema: {
        ...single('A custom OID tracker with logs and alerts'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findOidTracker(db, request.params.id, 'oid'),
        'OID not found',
      );
      return {
        ...oidRecord(row),
        ...deviceFields(db, row.device_id),
        logs: trackers.oidLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('oid', row.id),
      };
    },
  );

  app.post(
    '/api/oid/set',
    {
      config,
      schema: {
        ...single('Create (no `id`) or update a custom OID tracker'),
        body: OidSetBody,
        response: responses(ERRORS, { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody }),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const now = clock.now();
      if (body.id !== undefined) {
        const row = findOidTracker(db, body.id, 'oid');
        if (!row || !inScope(identity, row.device_id))
          throw invalid('id', 'The selected id is invalid.');
        updateOidTracker(
          db,
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
        changes().changed('oid', row.id);
        return { id: row.id };
      }
      if (body.oid === undefined) throw invalid('oid', 'The oid field is required.');
      if (body.datatype === undefined) throw invalid('datatype', 'The datatype field is required.');
      const device = deviceForCreate(identity, body.deviceId);
      const oid = body.oid.replace(/^\./, '');
      const id = insertOidTracker(
        db,
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
      changes().changed('oid', id);
      reply.code(201);
      return { id };
    },
  );

  app.post(
    '/api/oid/delete',
    {
      config,
      schema: {
        ...single('Delete a custom OID tracker and its history'),
        body: IdBody,
        response: responses(ERRORS, {
          200: Type.Object({ success: Type.String() }),
          400: ErrorsBody,
          404: ErrorBody,
        }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findOidTracker(db, request.body.id, 'oid'),
        'Error deleting oid',
      );
      db.prepare('DELETE FROM oid_trackers WHERE id = ?').run(row.id);
      changes().removed('oid', row.id);
      return { success: 'OID deleted' };
    },
  );

  // spec: part2 > Trackers > Services -------------------------------------------------------------------
  app.get(
    '/api/service/get/:id',
    {
      config,
      schema: {
        ...single('A service tracker with logs and alerts (stored, polled once the agent exists)'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findOidTracker(db, request.params.id, 'service'),
        'Service not found',
      );
      return {
        ...oidRecord(row),
        ...deviceFields(db, row.device_id),
        logs: trackers.oidLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('service', row.id),
      };
    },
  );

  app.get(
    '/api/service/statsOf/:id',
    {
      config,
      schema: {
        ...single('Storage estimate of a service tracker’s logs'),
        params: IdParams,
        response: responses(ERRORS, { 200: StorageEstimate, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = findOidTracker(db, request.params.id, 'service');
      return stats('oid', request.params.id, !!row && inScope(identityOf(request), row.device_id));
    },
  );

  app.post(
    '/api/service/set',
    {
      config,
      schema: {
        ...single('Create (no `id`) or update a service tracker'),
        body: ServiceSetBody,
        response: responses(ERRORS, { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody }),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const now = clock.now();
      if (body.id !== undefined) {
        const row = findOidTracker(db, body.id, 'service');
        if (!row || !inScope(identity, row.device_id))
          throw invalid('id', 'The selected id is invalid.');
        const label = body.label ?? body.name;
        updateOidTracker(
          db,
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
        return { id: row.id };
      }
      if (body.name === undefined) throw invalid('name', 'The name field is required.');
      const device = deviceForCreate(identity, body.deviceId);
      const id = insertOidTracker(
        db,
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
      reply.code(201);
      return { id };
    },
  );

  app.get(
    '/api/service/getAll/:deviceId',
    {
      config,
      schema: {
        ...single('Service trackers of a device, sorted by label'),
        params: DeviceIdParams,
        response: responses(ERRORS, { 200: AnyRecords, 404: ErrorBody }),
      },
    },
    async (request) => {
      const device = deviceOr404(identityOf(request), request.params.deviceId);
      const rows = oidTrackersOfDevice(db, device.id, 'service');
      const alerts = trackers.alertsMany(
        'service',
        rows.map((r) => r.id),
      );
      return rows.map((row) => ({ ...oidRecord(row), name: row.name, alerts: alerts(row.id) }));
    },
  );

  app.post(
    '/api/service/delete',
    {
      config,
      schema: {
        ...single('Delete a service tracker (stops monitoring only)'),
        body: IdBody,
        response: responses(ERRORS, {
          200: Type.Object({ success: Type.String() }),
          400: ErrorsBody,
          500: ErrorBody,
        }),
      },
    },
    async (request) => {
      const row = findOidTracker(db, request.body.id, 'service');
      if (!row || !inScope(identityOf(request), row.device_id))
        throw failure(500, 'Error deleting service');
      db.prepare('DELETE FROM oid_trackers WHERE id = ?').run(row.id);
      return { success: 'Service deleted' };
    },
  );

  // spec: part2 > Trackers > TCP ports ----------------------------------------------------------------
  app.get(
    '/api/port/get/:id',
    {
      config,
      schema: {
        ...single('A TCP port tracker with logs (latency -1: closed, filtered or unreachable)'),
        params: IdParams,
        querystring: HoursQuery,
        response: responses(ERRORS, { 200: AnyRecord, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findPortTracker(db, request.params.id),
        'Port not found',
      );
      return {
        ...portRecord(row),
        dev_id: row.device_id,
        dev_label: deviceFields(db, row.device_id)?.dev_label,
        logs: trackers.portLogs(row, window(request.query.hours)),
        alerts: trackers.alerts('port', row.id),
      };
    },
  );

  app.get(
    '/api/port/stats/:id',
    {
      config,
      schema: {
        ...single('Storage estimate of a port tracker’s logs'),
        params: IdParams,
        response: responses(ERRORS, { 200: StorageEstimate, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = findPortTracker(db, request.params.id);
      return stats('port', request.params.id, !!row && inScope(identityOf(request), row.device_id));
    },
  );

  app.post(
    '/api/port/set',
    {
      config,
      schema: {
        ...single(
          'Create or update a TCP port tracker',
          'Without `id`, (`deviceId`, `port`) is the natural key: an existing pair is updated (200), a new one created (201).',
        ),
        body: PortSetBody,
        response: responses(ERRORS, { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody }),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const now = clock.now();
      const label = body.label ?? body.name;
      const fields = {
        ...(label !== undefined ? { label } : {}),
        ...(body.interval !== undefined ? { interval: body.interval } : {}),
        ...(body.enable_logging !== undefined
          ? { enableLogging: toBool(body.enable_logging) }
          : {}),
      };
      let existing;
      if (body.id !== undefined) {
        existing = findPortTracker(db, body.id);
        if (!existing || !inScope(identity, existing.device_id))
          throw invalid('id', 'The selected id is invalid.');
      } else {
        if (body.port === undefined) throw invalid('port', 'The port field is required.');
        const device = deviceForCreate(identity, body.deviceId);
        existing = portTrackerByKey(db, device.id, body.port);
        if (!existing) {
          const id = insertPortTracker(
            db,
            {
              deviceId: device.id,
              port: body.port,
              label: label ?? '',
              interval: body.interval ?? PORT_DEFAULT_INTERVAL,
            },
            now,
          );
          changes().changed('port', id);
          reply.code(201);
          return { id };
        }
      }
      updatePortTracker(db, existing.id, fields, now);
      changes().changed('port', existing.id);
      return { id: existing.id };
    },
  );

  // designed: the port list and delete routes the spec marks "not shown", in the style of disks.
  app.get(
    '/api/device/:id/port',
    {
      config,
      schema: {
        ...single('TCP port trackers of a device, sorted by port'),
        params: IdParams,
        response: responses(ERRORS, { 200: AnyRecords, 404: ErrorBody }),
      },
    },
    async (request) => {
      const device = deviceOr404(identityOf(request), request.params.id);
      const rows = portTrackersOfDevice(db, device.id);
      const alerts = trackers.alertsMany(
        'port',
        rows.map((r) => r.id),
      );
      return rows.map((row) => ({ ...portRecord(row), alerts: alerts(row.id) }));
    },
  );

  app.get(
    '/api/port/all',
    {
      config,
      schema: {
        ...single('Every TCP port tracker the caller can see'),
        response: responses(ERRORS, { 200: AnyRecords }),
      },
    },
    async (request) => listPortIndex(db, identityOf(request)),
  );

  app.post(
    '/api/port/delete',
    {
      config,
      schema: {
        ...single('Delete a TCP port tracker and its history'),
        body: IdBody,
        response: responses(ERRORS, { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody }),
      },
    },
    async (request) => {
      const row = scoped(
        identityOf(request),
        findPortTracker(db, request.body.id),
        'Port not found',
      );
      db.prepare('DELETE FROM port_trackers WHERE id = ?').run(row.id);
      changes().removed('port', row.id);
      return { message: 'Port deleted' };
    },
  );

  // spec: part2 > Dashboards and layouts > getLatencyTracker / getTCPTracker ----------------------------
  const widgetAccess = { access: allOf('devices'), errors: LEGACY };
  const noProbe = { status: 204, hasError: false, message: {} };
  const WidgetAnswer = Type.Object({
    status: Type.Integer(),
    hasError: Type.Boolean(),
    message: AnyRecord,
  });
  app.post(
    '/api/getLatencyTracker',
    {
      config: widgetAccess,
      schema: {
        ...single('Latency logs of a device for its widget'),
        body: GetLatencyTrackerBody,
        response: responses(LEGACY, { 200: Type.Union([WidgetAnswer, LegacyFailureBody]) }),
      },
    },
    async (request) => {
      const device = findDevice(db, request.body.deviceId);
      if (!device || !inScope(identityOf(request), device.id)) return noProbe;
      const row = latencyTrackerOfDevice(db, device.id);
      if (!row) return noProbe;
      return {
        status: 200,
        hasError: false,
        message: {
          dev_label: device.label,
          dev_ip: device.ip_address,
          logs: trackers.latencyLogs(row, window(request.body.hours)),
        },
      };
    },
  );

  app.post(
    '/api/getTCPTracker',
    {
      config: widgetAccess,
      schema: {
        ...single('TCP port logs of a device for its widget'),
        body: GetTcpTrackerBody,
        response: responses(LEGACY, { 200: Type.Union([WidgetAnswer, LegacyFailureBody]) }),
      },
    },
    async (request) => {
      const device = findDevice(db, request.body.deviceId);
      if (!device || !inScope(identityOf(request), device.id) || request.body.id === undefined)
        return noProbe;
      const row = findPortTracker(db, request.body.id);
      if (!row || row.device_id !== device.id) return noProbe;
      return {
        status: 200,
        hasError: false,
        message: {
          dev_label: device.label,
          port: row.port,
          logs: trackers.portLogs(row, window(request.body.hours)),
        },
      };
    },
  );
}
