/**
 * The flows feature assembled (called once by the composition root, features/index.ts): the
 * partitioned `flows` table (internal, rotated hourly, pruned by the retention policy through
 * maintenance), the writer's statements, the collector engine, the reader, the saved filters
 * (the logs' module, feed `flows`), the intake counters, the devices hooks (the `netflow`
 * section of GET /api/device/{device} and the `flows` row of its stats). The conversation rollup
 * is its own retention row (`registerFlowRetention`, flows.writes.ts).
 *
 * Device rename or delete: enrichment is a snapshot taken at intake, so stored rows keep the
 * label and profile they were stored with, and a deleted device's rows stay until pruned
 * (deleting millions of rows inside the device-delete transaction would stall the API).
 */
import type { CoreContext } from '../../platform/context.js';
import { definePartitionedTable } from '../../platform/db/partitions.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';
import type { App } from '../../platform/http/http-server.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import { Type } from '@sinclair/typebox';
import type { DevicesService } from '../devices/index.js';
import { SavedFilters, type IntakeCounterRegistry } from '../logs/index.js';
import { FlowCollectorEngine } from './flow-collector.engine.js';
import { criteriaOf, FLOW_LIST_KEYS, SAVED_KEYS, type Criteria } from './flow-query.rules.js';
import { deviceFlowStats, deviceFlowSummary } from './flows.repository.js';
import { flowsRoutes } from './flows.routes.js';
import { FlowsReader } from './flows.service.js';
import { registerFlowWrites } from './flows.writes.js';

/** Flow partitions rotate every hour; rows (and rollup hours) are kept this many days by default. */
export const FLOW_ROTATION = '0 * * * *';
export const FLOW_RETENTION_DAYS = 7;
const TOP_PARTNERS = 10;

export interface Flows {
  collector: FlowCollectorEngine;
  reader: FlowsReader;
  filters: SavedFilters;
  register(app: App): Promise<void>;
}

export function createFlows(
  ctx: CoreContext,
  deps: {
    storage: StorageWriter;
    devices: DevicesService;
    scheduler: Scheduler;
    counters: IntakeCounterRegistry;
    /** The daemons' stored variables (features/maintenance daemon catalogue), read at each start. */
    daemonVars?: (daemon: string) => Record<string, string>;
  },
): Flows {
  const { db, clock } = ctx;
  const { storage, devices } = deps;
  registerFlowWrites(storage);
  const table = definePartitionedTable(db, {
    name: 'flows',
    timeColumn: 'end_time',
    maintenance: {
      listed: false,
      rotationCron: FLOW_ROTATION,
      retentionDays: FLOW_RETENTION_DAYS,
    },
  });
  const filters = new SavedFilters(
    db,
    clock,
    'flows',
    (filter) => criteriaOf(FLOW_LIST_KEYS, filter, SAVED_KEYS),
    SAVED_KEYS,
  );
  // A saved filter's src_port/port mean the same in both lists' terms (flow-query.rules.ts).
  const exclusions = (userId: number): Criteria[] => filters.exclusions(userId);
  const reader = new FlowsReader({
    db,
    clock,
    table,
    scopeOf: (identity) => devices.scopeOfIdentity(identity),
    exclusions,
  });
  const collector = new FlowCollectorEngine(
    ctx,
    storage,
    devices.ipMap,
    () => deps.daemonVars?.('flows') ?? {},
  );
  deps.counters.register('flows', () => ({ ...collector.counts(), port: collector.port }));

  devices.provideDeviceSection(
    'netflow',
    (deviceId, window) => {
      const ip = devices.ipMap.byId(deviceId)?.ip;
      if (!ip) return { bytes: 0, count: 0, top_partners: [] };
      return deviceFlowSummary(db, ip, window.start, window.end, TOP_PARTNERS);
    },
    Type.Object({
      bytes: Type.Integer(),
      count: Type.Integer(),
      top_partners: Type.Array(
        Type.Object({
          ip: Type.String(),
          device_id: Type.Union([Type.Integer(), Type.Null()]),
          host: Type.Union([Type.String(), Type.Null()]),
          bytes: Type.Integer(),
        }),
      ),
    }),
  );
  devices.registerDeviceLogStats('flows', (id) => {
    const ip = devices.ipMap.byId(id)?.ip;
    return ip ? deviceFlowStats(db, ip) : { rows: 0, bytes: 0 };
  });

  return {
    collector,
    reader,
    filters,
    register: (app) => flowsRoutes(app, { reader, filters }),
  };
}
