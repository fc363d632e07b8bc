/**
 * The logs feature assembled (called once by the composition root, features/index.ts): the
 * readers, the saved filters of each feed, the syslog engine, the Windows intake, the intake
 * counters, the writer's statements and the devices hooks (syslogconfig section, log stats,
 * deletion cascade of syslog config and event-log trackers; log rows stay until pruned).
 */
import type { CoreContext } from '../../platform/context.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';
import type { App } from '../../platform/http/http-server.js';
import { Type } from '@sinclair/typebox';
import type { DevicesService } from '../devices/index.js';
import { EventLogIntake } from './eventlog-intake.service.js';
import { IntakeCounterRegistry } from './intake-counters.catalog.js';
import type { Feed } from './log-feeds.rules.js';
import {
  allSyslogConfigs,
  deleteEventLogTrackersOfDevice,
  deleteSyslogConfig,
  deviceLogStats,
  findSyslogConfig,
  logTables,
} from './logs.repository.js';
import { logsRoutes } from './logs.routes.js';
import { LogsReader } from './logs.service.js';
import { registerLogWrites } from './logs.writes.js';
import { SavedFilters } from './saved-filters.service.js';
import { SyslogEngine } from './syslog.engine.js';

export interface Logs {
  reader: LogsReader;
  syslog: SyslogEngine;
  eventLogIntake: EventLogIntake;
  counters: IntakeCounterRegistry;
  filters: Record<Feed, SavedFilters>;
  register(app: App): Promise<void>;
}

export function createLogs(
  ctx: CoreContext,
  deps: {
    storage: StorageWriter;
    devices: DevicesService;
    /** The daemons' stored variables (features/maintenance daemon catalogue), read at each start. */
    daemonVars?: (daemon: string) => Record<string, string>;
  },
): Logs {
  const { db, clock } = ctx;
  const { storage, devices } = deps;
  registerLogWrites(storage);
  const tables = logTables(db);
  const filters: Record<Feed, SavedFilters> = {
    syslog: SavedFilters.forFeed(db, clock, 'syslog'),
    eventlog: SavedFilters.forFeed(db, clock, 'eventlog'),
    eve: SavedFilters.forFeed(db, clock, 'eve'),
  };
  const reader = new LogsReader({
    db,
    clock,
    tables,
    filters,
    scopeOf: (identity) => devices.scopeOfIdentity(identity),
    deviceAddress: (id) => devices.ipMap.byId(id)?.ip ?? null,
  });
  const syslog = new SyslogEngine(
    ctx,
    storage,
    devices.ipMap,
    () => allSyslogConfigs(db),
    () => deps.daemonVars?.('syslog') ?? {},
  );
  const eventLogIntake = new EventLogIntake(db, storage.producer('windows', { maxQueued: 50_000 }));
  const counters = new IntakeCounterRegistry();
  counters.register('syslog', () => ({
    ...syslog.counts(),
    queryable_p99_ms: syslog.delayP99(),
    port: syslog.port,
  }));
  counters.register('windows', () => ({ ...eventLogIntake.counters }));
  ctx.metrics.register('intake', () => counters.metrics());

  devices.provideDeviceSection(
    'syslogconfig',
    (deviceId) => ({ severity: findSyslogConfig(db, deviceId)?.min_severity ?? null }),
    Type.Object({ severity: Type.Union([Type.Integer(), Type.Null()]) }),
  );
  devices.registerDeviceLogStats('syslog_log', (id) =>
    deviceLogStats(db, tables.syslog, id, ['message', 'source', 'host', 'sender']),
  );
  devices.registerDeviceLogStats('eventlog_log', (id) =>
    deviceLogStats(db, tables.eventlog, id, ['data', 'source', 'log']),
  );
  devices.registerDeviceCleanup(
    'syslog-config',
    (id) => deleteSyslogConfig(db, id),
    (id) => syslog.setDeviceConfig(id, null),
  );
  devices.registerDeviceCleanup('eventlog-trackers', (id) =>
    deleteEventLogTrackersOfDevice(db, id),
  );

  return {
    reader,
    syslog,
    eventLogIntake,
    counters,
    filters,
    register: (app) =>
      logsRoutes(app, ctx, {
        reader,
        filters,
        devices,
        counters,
        onSyslogConfig: (id, min) => syslog.setDeviceConfig(id, min),
      }),
  };
}
