/**
 * The log endpoints of spec part 3: Syslog, Windows events, IDS events (lists, summaries, the IDS
 * detail), their saved filters (saved-filters.routes.ts), Syslog access config, event-log queries
 * and trackers, and the designed GET /api/intake/counters (docs/spec-decisions.md).
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, IdParam } from '../../platform/http/schemas.js';
import type { DevicesService } from '../devices/index.js';
import { FilterError, type Feed } from './log-feeds.rules.js';
import {
  deleteEventLogTracker,
  ensureEventLogTracker,
  ensureSyslogConfig,
  findEventLogQuery,
  findEventLogTracker,
  listEventLogQueries,
  listEventLogTrackers,
  saveSyslogConfig,
  type EventLogTrackerRow,
} from './logs.repository.js';
import { MAX_LIMIT, type LogsReader } from './logs.service.js';
import type { IntakeCounterRegistry } from './intake-counters.catalog.js';
import { savedFilterRoutes } from './saved-filters.routes.js';
import { type SavedFilters } from './saved-filters.service.js';

const TAGS = ['logs'];

const ListQuery = Type.Object({
  startTime: Type.Optional(Type.String({ maxLength: 64 })),
  endTime: Type.Optional(Type.String({ maxLength: 64 })),
  hours: Type.Optional(Type.String({ maxLength: 16 })),
  filters: Type.Optional(Type.String({ maxLength: 16_384 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
});
const SummaryQuery = Type.Object({
  startTime: Type.Optional(Type.String({ maxLength: 64 })),
  endTime: Type.Optional(Type.String({ maxLength: 64 })),
  hours: Type.Optional(Type.String({ maxLength: 16 })),
  filters: Type.Optional(Type.String({ maxLength: 16_384 })),
});
const Row = Type.Record(Type.String(), Type.Unknown());
const Page = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(Row),
  per_page: Type.Integer(),
  total: Type.Integer(),
  total_capped: Type.Boolean(),
  partial: Type.Boolean(),
  startTime: Type.String(),
  endTime: Type.String(),
});
const Summary = Type.Object({
  severityCounts: Type.Record(Type.String(), Type.Integer()),
  partial: Type.Boolean(),
  startTime: Type.String(),
  endTime: Type.String(),
});
const StatusMessage = Type.Object({ status: Type.Literal(false), message: Type.String() });
const SyslogConfig = Type.Object({
  enabled: Type.Boolean(),
  min_severity: Type.Integer(),
  device_id: Type.Integer(),
});
const ConfigParams = Type.Object({ deviceId: Type.String({ maxLength: 32 }) });
const ConfigBody = Type.Object({
  enabled: Type.Optional(Type.Unknown()),
  min_severity: Type.Optional(Type.Unknown()),
});
const TrackerBody = Type.Object({
  device_id: Type.Optional(Type.Unknown()),
  query_id: Type.Optional(Type.Unknown()),
});
const Tracker = Type.Object({
  id: Type.Integer(),
  device_id: Type.Integer(),
  query_id: Type.Integer(),
  label: Type.String(),
  last_polled_at: Type.Union([Type.String(), Type.Null()]),
});
const TrackerCreated = Type.Object({
  id: Type.Integer(),
  device_id: Type.Integer(),
  query_id: Type.Integer(),
});
const Counters = Type.Record(Type.String(), Type.Union([Type.Null(), Row]));

/** 400 `{status: false, message}` for bad windows, filters and paging (spec: lists). */
const LIST_ERRORS: RouteErrors = {
  validation: 'statusMessage',
  validationStatus: 400,
  failure: 'statusMessage',
  internal: 'Failed to read the logs.',
};

const DEVICE_NOT_FOUND = 'Device not found';

export interface LogsRoutesDeps {
  reader: LogsReader;
  filters: Record<Feed, SavedFilters>;
  devices: DevicesService;
  counters: IntakeCounterRegistry;
  /** The syslog receiver is told when a device's access config changes. */
  onSyslogConfig: (deviceId: number, minSeverity: number | null) => void;
}

const readInput = <T>(read: () => T): T => {
  try {
    return read();
  } catch (err) {
    if (err instanceof FilterError) throw failure(400, err.message);
    throw err;
  }
};

export async function logsRoutes(app: App, ctx: CoreContext, deps: LogsRoutesDeps): Promise<void> {
  const { db, clock } = ctx;
  const { reader, devices } = deps;

  // spec: part3 > Shared log-feed rules > Syslog / Windows events / IDS events
  const feeds: { feed: Feed; prefix: string; tag: string; name: string }[] = [
    { feed: 'syslog', prefix: '/api/syslog', tag: 'syslog', name: 'syslog messages' },
    { feed: 'eventlog', prefix: '/api/eventlog', tag: 'eventlog', name: 'Windows events' },
    { feed: 'eve', prefix: '/api/eve', tag: 'eve', name: 'IDS events' },
  ];
  for (const { feed, prefix, tag, name } of feeds) {
    defineRoute(app, {
      method: 'GET',
      url: `${prefix}/list`,
      access: allOf('logs'),
      errors: LIST_ERRORS,
      tags: [...TAGS, tag],
      summary: `List ${name} in a window (filters, paging, tag scope, saved exclusions)`,
      description:
        '`total` is exact up to 10,000 matches (`total_capped: true` beyond: a lower bound); a request that runs out of its 1 s budget answers what it found with `partial: true`.',
      querystring: ListQuery,
      response: { 200: Page, 400: StatusMessage },
      handler: async (request) =>
        readInput(() => reader.list(feed, identityOf(request), request.query)),
    });
    defineRoute(app, {
      method: 'GET',
      url: `${prefix}/sevSum`,
      access: allOf('logs'),
      errors: LIST_ERRORS,
      tags: [...TAGS, tag],
      summary: `Counts of ${name} by severity in a window`,
      querystring: SummaryQuery,
      response: { 200: Summary, 400: StatusMessage },
      handler: async (request) =>
        readInput(() => reader.summary(feed, identityOf(request), request.query)),
    });
    savedFilterRoutes(app, deps.filters[feed], { prefix, tag });
  }

  // spec: part3 > IDS events > GET /api/eve/get/{event}
  const NO_EVENT = 'Event ID does not exist.';
  defineRoute(app, {
    method: 'GET',
    url: '/api/eve/get/:event',
    access: allOf('logs'),
    errors: { validation: 'statusMessage', validationStatus: 400, failure: 'statusMessage' },
    tags: [...TAGS, 'eve'],
    summary: 'One stored IDS event (400 for unknown and invisible events alike)',
    params: Type.Object({ event: Type.String({ maxLength: 32 }) }),
    response: { 200: Row, 400: StatusMessage },
    handler: async (request) => {
      const id = /^\d{1,15}$/.test(request.params.event) ? Number(request.params.event) : null;
      const event = id === null ? null : reader.eveEvent(identityOf(request), id);
      if (!event) throw failure(400, NO_EVENT);
      return event;
    },
  });

  // spec: part3 > Syslog access config
  const visibleDeviceId = (request: Parameters<typeof identityOf>[0], text: string) => {
    const id = /^\d{1,15}$/.test(text) ? Number(text) : null;
    return id === null ? null : devices.visibleDevice(identityOf(request), id);
  };
  const configOf = (row: { enabled: number; min_severity: number; device_id: number }) => ({
    enabled: row.enabled === 1,
    min_severity: row.min_severity,
    device_id: row.device_id,
  });
  const CONFIG_ERRORS: RouteErrors = {
    validation: 'error',
    failure: 'error',
    internal: 'Failed to load the syslog configuration.',
  };
  defineRoute(app, {
    method: 'GET',
    url: '/api/syslog/config/:deviceId',
    access: allOf('write_devices'),
    errors: CONFIG_ERRORS,
    tags: [...TAGS, 'syslog'],
    summary: "A device's syslog access config (an enabled default is created when none exists)",
    params: ConfigParams,
    response: {
      200: Type.Object({ status: Type.Literal(true), config: SyslogConfig }),
      404: ErrorBody,
    },
    handler: async (request) => {
      const device = visibleDeviceId(request, request.params.deviceId);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      return { status: true as const, config: configOf(ensureSyslogConfig(db, device.id)) };
    },
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/syslog/config/:deviceId',
    access: allOf('write_devices'),
    // A body that is not JSON at all: 422 {status: false, message} (the field failures add errors).
    errors: {
      validation: 'statusMessage',
      failure: 'error',
      internal: 'Failed to save the syslog configuration.',
    },
    tags: [...TAGS, 'syslog'],
    summary: "Set a device's syslog access config (disabled is stored as min_severity -1)",
    params: ConfigParams,
    accepts: ['application/json', 'application/x-www-form-urlencoded'],
    body: ConfigBody,
    response: {
      200: Type.Object({
        status: Type.Literal(true),
        message: Type.String(),
        config: SyslogConfig,
      }),
      404: ErrorBody,
      422: Type.Object({
        status: Type.Literal(false),
        message: Type.String(),
        errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
      }),
    },
    handler: async (request, reply) => {
      const device = visibleDeviceId(request, request.params.deviceId);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const errors: Record<string, string[]> = {};
      const enabled = readBoolean(body.enabled);
      if (body.enabled === undefined || body.enabled === null || body.enabled === '')
        errors.enabled = ['The enabled field is required.'];
      else if (enabled === null) errors.enabled = ['The enabled field must be true or false.'];
      const raw = body.min_severity;
      const min =
        typeof raw === 'number'
          ? raw
          : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw)
            ? Number(raw)
            : NaN;
      if (raw === undefined || raw === null || raw === '')
        errors.min_severity = ['The min severity field is required.'];
      else if (!Number.isInteger(min) || min < -1 || min > 7)
        errors.min_severity = ['The min severity field must be an integer between -1 and 7.'];
      else if (enabled === true && min === -1)
        errors.min_severity = ['The min severity field must be between 0 and 7 when enabled.'];
      if (Object.keys(errors).length > 0)
        return reply.code(422).send({
          status: false,
          message: Object.values(errors)[0]![0]!,
          errors,
        });
      const row = {
        device_id: device.id,
        enabled: enabled ? 1 : 0,
        min_severity: enabled ? min : -1,
      };
      saveSyslogConfig(db, row);
      deps.onSyslogConfig(device.id, row.min_severity);
      return {
        status: true as const,
        message: 'Syslog configuration saved.',
        config: configOf(row),
      };
    },
  });

  // spec: part3 > Windows events > event-log queries and trackers
  defineRoute(app, {
    method: 'GET',
    url: '/api/eventlog/queries',
    access: allOf('write_devices'),
    errors: { validation: 'error', failure: 'error', internal: 'Failed to load the queries.' },
    tags: [...TAGS, 'eventlog'],
    summary: 'The event-log queries a tracker can run',
    response: { 200: Type.Array(Type.Object({ id: Type.Integer(), label: Type.String() })) },
    handler: async () => listEventLogQueries(db).map((q) => ({ id: q.id, label: q.label })),
  });

  const trackerRecord = (row: EventLogTrackerRow) => ({
    id: row.id,
    device_id: row.device_id,
    query_id: row.query_id,
    label: findEventLogQuery(db, row.query_id)?.label ?? '',
    last_polled_at: row.last_polled_at === null ? null : new Date(row.last_polled_at).toISOString(),
  });
  const TRACKER_ERRORS: RouteErrors = {
    validation: 'error',
    failure: 'error',
    internal: 'Failed to process the tracker.',
  };
  defineRoute(app, {
    method: 'GET',
    url: '/api/eventlog/trackers',
    access: allOf('write_devices'),
    errors: TRACKER_ERRORS,
    tags: [...TAGS, 'eventlog'],
    summary: "A device's event-log trackers",
    querystring: Type.Object({ device_id: Type.Optional(Type.String({ maxLength: 32 })) }),
    response: { 200: Type.Array(Tracker), 404: ErrorBody, 422: ErrorBody },
    handler: async (request) => {
      const text = request.query.device_id;
      if (text === undefined || text.trim() === '') throw failure(422, 'device_id required');
      const device = visibleDeviceId(request, text.trim());
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      return listEventLogTrackers(db, device.id).map(trackerRecord);
    },
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/eventlog/trackers',
    access: allOf('write_devices'),
    errors: { ...TRACKER_ERRORS, validation: 'errors', validationStatus: 422 },
    tags: [...TAGS, 'eventlog'],
    summary: 'Track an event-log query on a device (the existing pair is answered with 200)',
    accepts: ['application/json', 'application/x-www-form-urlencoded'],
    body: TrackerBody,
    response: {
      200: TrackerCreated,
      201: TrackerCreated,
      404: ErrorBody,
      422: Type.Union([
        Type.Object({ errors: Type.Record(Type.String(), Type.Array(Type.String())) }),
        ErrorBody,
      ]),
    },
    handler: async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const errors: Record<string, string[]> = {};
      const idOf = (value: unknown) =>
        typeof value === 'number' && Number.isSafeInteger(value) && value > 0
          ? value
          : typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) && Number(value) > 0
            ? Number(value)
            : null;
      const deviceId = idOf(body.device_id);
      const queryId = idOf(body.query_id);
      if (body.device_id === undefined || body.device_id === null || body.device_id === '')
        errors.device_id = ['The device id field is required.'];
      else if (deviceId === null) errors.device_id = ['The device id must be an integer.'];
      if (body.query_id === undefined || body.query_id === null || body.query_id === '')
        errors.query_id = ['The query id field is required.'];
      else if (queryId === null || !findEventLogQuery(db, queryId))
        errors.query_id = ['The selected query id is invalid.'];
      if (Object.keys(errors).length > 0) return reply.code(422).send({ errors });
      const device = devices.visibleDevice(identityOf(request), deviceId!);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      const { row, created } = ensureEventLogTracker(db, device.id, queryId!, clock.now());
      reply.code(created ? 201 : 200);
      return { id: row.id, device_id: row.device_id, query_id: row.query_id };
    },
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/eventlog/trackers/:id',
    access: allOf('write_devices'),
    errors: TRACKER_ERRORS,
    tags: [...TAGS, 'eventlog'],
    summary: 'Stop tracking (403 when the device is out of the caller’s scope)',
    params: Type.Object({ id: IdParam() }),
    response: {
      200: Type.Object({ status: Type.Literal(true) }),
      403: ErrorBody,
      404: ErrorBody,
    },
    handler: async (request) => {
      const tracker = findEventLogTracker(db, request.params.id);
      if (!tracker) throw failure(404, 'Tracker not found');
      if (!devices.visibleDevice(identityOf(request), tracker.device_id))
        throw failure(403, 'Forbidden');
      deleteEventLogTracker(db, tracker.id);
      return { status: true as const };
    },
  });

  // designed: the one JSON view of intake (docs/spec-decisions.md), mirrored in /metrics.
  defineRoute(app, {
    method: 'GET',
    url: '/api/intake/counters',
    access: allOf('system'),
    errors: { validation: 'error', failure: 'error', internal: 'Failed to read the counters.' },
    tags: ['intake'],
    summary: 'Messages received, stored and dropped by each intake feed since start',
    response: { 200: Counters },
    handler: async () => deps.counters.snapshot(),
  });
}

function readBoolean(value: unknown): boolean | null {
  if (value === true || value === 'true' || value === 1 || value === '1') return true;
  if (value === false || value === 'false' || value === 0 || value === '0') return false;
  return null;
}
