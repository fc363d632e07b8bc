/**
 * The explicit list of features (no autoload): the services they share, the engines app.ts
 * starts, and their routes in registration order.
 */
import type { CoreContext } from '../platform/context.js';
import {
  DAILY_ROTATION,
  DEFAULT_RETENTION_DAYS,
  definePartitionedTable,
} from '../platform/db/partitions.js';
import { RetentionRegistry } from '../platform/db/retention.js';
import { StorageWriter } from '../platform/db/storage-writer.js';
import { ROOT_HELPER_DEFAULT_SOCKET } from '../platform/host/root-helper.protocol.js';
import { registerAuditRetention } from '../platform/audit/audit-log.js';
import { parseTablespaces } from '../platform/db/tablespaces.js';
import { schedulerCollector, storageWriterCollector } from '../platform/metrics/collectors.js';
import { Scheduler } from '../platform/scheduler/scheduler.js';
import type { App } from '../platform/http/http-server.js';
import type { IdentityResolver } from '../platform/http/identity.js';
import {
  checkOutletUrl,
  createAlertDelivery,
  registerDeliveryRetention,
  renderTemplate,
} from './alerts/delivery/index.js';
import { createAgents } from './agents/index.js';
import { createAlerts, registerAlertRetention } from './alerts/index.js';
import { authRoutes, CachedIdentityResolver } from './auth/index.js';
import { createCaptures, registerCaptureRetention } from './captures/index.js';
import { certificateRoutes } from './certificate/index.js';
import { createDirectory } from './directory/index.js';
import { dashboardsRoutes, deleteLayoutsOfDevice, TrackerWidgets } from './dashboards/index.js';
import {
  credentialsRoutes,
  DevicesEngine,
  devicesRoutes,
  DevicesService,
  pendingRoutes,
  registerDeviceWrites,
  walksRoutes,
} from './devices/index.js';
import { DiscoveryEngine, localnetsRoutes } from './discovery/index.js';
import { createFlows, registerFlowRetention } from './flows/index.js';
import { EveIntakeEngine } from './logs/eve-intake.engine.js';
import { registerEveWrites } from './logs/eve-intake.writes.js';
import { createLogs, registerLogRetention } from './logs/index.js';
import {
  daemonsRoutes,
  DaemonsService,
  type EngineControl,
  MaintenanceEngine,
  maintenanceRoutes,
  MaintenanceService,
  plainDaemonVars,
  registerPartitionRetention,
  startsAutomatically,
  RetentionEngine,
  retentionRoutes,
} from './maintenance/index.js';
import { oauthFeatureRoutes } from './oauth/index.js';
import { createSettings } from './settings/index.js';
import { nodePtySpawn, terminalRoutes } from './terminal/index.js';
import { TokenService, tokensRoutes } from './tokens/index.js';
import { ToolsEngine, ToolsService, toolsRoutes } from './tools/index.js';
import {
  findLatencyTracker,
  registerTrackerWidgets,
  registerTrackerRetention,
  registerTrackerWrites,
  TrackersEngine,
  trackersRoutes,
  TrackersService,
} from './trackers/index.js';
import { createUpgrader } from './upgrader/index.js';
import {
  registerUrlRetention,
  UrlMonitorEngine,
  urlMonitorsRoutes,
  urlOfTracker,
} from './url-monitors/index.js';
import { holdsSuperAdmin, userExists, usersRoutes } from './users/index.js';

export type { Engine } from '../platform/engines/engine-registry.js';
import type { Engine, EngineRegistry } from '../platform/engines/engine-registry.js';

export interface Features {
  resolver: IdentityResolver;
  engines: Engine[];
  /** Hands the engine registry app.ts builds to the features that list and restart engines. */
  attachRegistry(registry: EngineRegistry): void;
  /** `engines`: the engine registry the composition root built (the daemon endpoints use it). */
  register(app: App, engines: EngineControl): Promise<void>;
  /** Whether an engine starts at boot (a daemon's stored start_auto). */
  autoStart(name: string): boolean;
}

export function createFeatures(ctx: CoreContext): Features {
  const tokens = new TokenService(ctx.db, ctx.clock);
  const resolver = new CachedIdentityResolver(ctx.db, ctx.clock, tokens);
  const tools = new ToolsService(ctx);
  // One scheduler for the device crawl, partition rotation and retention, discovery sweeps and tools retention.
  const scheduler = new Scheduler(ctx.clock, undefined, undefined, (err, jobs) =>
    ctx.log.error({ err, jobs: jobs.map((j) => j.id) }, 'scheduled job failed'),
  );
  ctx.metrics.register(
    'scheduler',
    schedulerCollector(() => scheduler.stats()),
  );
  // One storage writer for every high-rate producer (ARCHITECTURE.md, Storage): the features that
  // own tables register their statements; producers (the trackers' pollers now, the log and flow
  // receivers later) queue writes by name with their own limits and counters.
  const storage = new StorageWriter(ctx.db, {
    onError: (err) => ctx.log.error({ err }, 'storage writer'),
  });
  registerDeviceWrites(storage);
  registerTrackerWrites(storage);
  registerEveWrites(storage);
  ctx.metrics.register(
    'storage',
    storageWriterCollector(() => storage.stats()),
  );
  const devices = new DevicesService(ctx, scheduler);
  const discovery = new DiscoveryEngine({
    db: ctx.db,
    clock: ctx.clock,
    secrets: ctx.secrets,
    log: ctx.log,
    scheduler,
  });
  const widgets = new TrackerWidgets();
  const trackers = new TrackersService(ctx.db, storage);
  const trackersEngine = new TrackersEngine(ctx, trackers, scheduler);
  trackers.attachToDevices(devices, () => trackersEngine.resync());
  registerTrackerWidgets(widgets, ctx.db);
  const urlMonitors = new UrlMonitorEngine(ctx, scheduler);
  ctx.metrics.register('pollers', () => {
    const c = trackersEngine.counters;
    return [
      {
        name: 'appliance_poller_readings_total',
        help: 'Readings taken by the pollers, by kind.',
        type: 'counter',
        samples: [
          { labels: { kind: 'icmp' }, value: c.pingReadings },
          { labels: { kind: 'tcp' }, value: c.portReadings },
          { labels: { kind: 'snmp' }, value: c.snmpReadings },
        ],
      },
      {
        name: 'appliance_poller_batches_total',
        help: 'fping processes started and SNMP devices polled.',
        type: 'counter',
        samples: [
          { labels: { kind: 'icmp' }, value: c.pingBatches },
          { labels: { kind: 'snmp' }, value: c.snmpDevices },
        ],
      },
      {
        name: 'appliance_poller_snmp_failures_total',
        help: 'SNMP polls of a device that failed.',
        type: 'counter',
        samples: [{ value: c.snmpFailures }],
      },
    ];
  });
  // IDS intake (APPLIANCE_EVE_FILE; off when unset): its own producer, so that a backlog of eve
  // lines never takes another feed's share of the writer; one chunk group in flight at a time.
  const idsIntake = ctx.config.eveFile
    ? new EveIntakeEngine({
        file: ctx.config.eveFile,
        db: ctx.db,
        writer: storage.producer('ids', { flushMs: 10, maxQueued: 50_000 }),
        devices: devices.ipMap,
        log: ctx.log,
        clock: ctx.clock,
      })
    : null;
  devices.registerDeviceCleanup('device-layouts', (id) => deleteLayoutsOfDevice(ctx.db, id));
  // Syslog intake, Windows events intake and the log feeds' endpoints (issue 14).
  const logs = createLogs(ctx, { storage, devices });
  // Appliance settings on the host (issue 18): services, network, hostname, host map, time, license.
  const settings = createSettings(ctx);
  // Packet capture (issue 16): dumpcap or libpcap, pcapng files under the data dir.
  const captures = createCaptures(ctx, {
    devices,
    sniffInterfaces: settings.sniffInterfaces,
    daemonVars: (name) => plainDaemonVars(ctx.db, name),
  });
  // The IDS follower's counters in GET /api/intake/counters and /metrics (null while it is off).
  if (idsIntake)
    logs.counters.register('ids', () => {
      const { droppedBy, ...counters } = idsIntake.counters();
      return {
        ...counters,
        ...Object.fromEntries(
          Object.entries(droppedBy).map(([reason, n]) => [`dropped_${reason}`, n]),
        ),
      };
    });
  // NetFlow v5/v9/IPFIX collection and the flow explorer (issue 15); counters beside the logs'.
  const flows = createFlows(ctx, { storage, devices, scheduler, counters: logs.counters });
  // Partitioned tables for maintenance, one line each (walks_log registers in its repository).
  const logTable = {
    listed: true,
    rotationCron: DAILY_ROTATION,
    retentionDays: DEFAULT_RETENTION_DAYS,
  };
  for (const name of ['syslog_log', 'eventlog_log', 'eve_log'])
    definePartitionedTable(ctx.db, { name, timeColumn: 'timestamp', maintenance: logTable });
  // Alert delivery (issue 17): the persisted queue the alerting feature enqueues into, and the mail relay.
  const delivery = createAlertDelivery(ctx);
  // Alerting (issue 17): evaluates what the syslog writer just committed; delivery is connected
  // with alerts.connectDelivery (features/alerts/delivery).
  const alerts = createAlerts(ctx, {
    devices,
    onSyslogCommitted: (listener) => logs.syslog.onCommitted(listener),
    latencyTrackerDevice: (id) => findLatencyTracker(ctx.db, id)?.device_id ?? null,
    urlOfTracker: (id) => urlOfTracker(ctx.db, id),
  });
  alerts.connectDelivery({
    queue: delivery.queue,
    renderTemplate,
    checkOutletUrl: (url) => checkOutletUrl(url, delivery.policy),
  });
  // Queued deliveries follow outlet edits and stop when their outlet is deleted.
  delivery.followOutlets((id) => alerts.outletTarget(id));
  // Agents (issue 20): enrollment, check-in, adoption, probes, trackers through the agent channel.
  const agents = createAgents(ctx, {
    devices,
    storage,
    eventLogIntake: logs.eventLogIntake,
  });
  // Directory (LDAP) sign-in (issue 19): plugs search-then-bind into login().
  const directory = createDirectory(ctx, { tokens });
  const maintenance = new MaintenanceService(
    ctx.db,
    ctx.clock,
    parseTablespaces(ctx.config.tablespaces),
    ctx.log,
  );
  // OS upgrade bootstrap (issue 19): the host package's upgrader through its root helper.
  const upgrader = createUpgrader(ctx, {
    socketPath: ctx.config.rootHelperSocket ?? ROOT_HELPER_DEFAULT_SOCKET,
  });
  // The retention policy: every table that grows is a row its owner registers (issue 18).
  const retention = new RetentionRegistry(ctx.db);
  registerPartitionRetention(retention, maintenance);
  registerFlowRetention(retention, ctx.db, storage);
  registerLogRetention(retention, ctx.db, storage);
  registerTrackerRetention(retention, ctx.db, storage);
  registerUrlRetention(retention, ctx.db, storage);
  registerAlertRetention(retention, ctx.db, storage);
  registerDeliveryRetention(retention, ctx.db, storage);
  registerCaptureRetention(retention, ctx.db, captures.service);
  registerAuditRetention(retention, ctx.db, storage);
  return {
    resolver,
    attachRegistry: (registry) => settings.attachRegistry(registry),
    autoStart: (name) => startsAutomatically(ctx.db, name),
    engines: [
      // First: it starts before any producer and closes (flushing every queue) after all of them.
      {
        name: 'storage-writer',
        shared: true,
        start: async () => storage.start(),
        stop: () => storage.close(),
      },
      { name: 'token-usage', start: () => tokens.start(), stop: () => tokens.stop() },
      new ToolsEngine(tools, ctx.clock, ctx.log, scheduler),
      new DevicesEngine(devices),
      discovery,
      trackersEngine,
      urlMonitors,
      logs.syslog,
      captures.engine,
      alerts.engine,
      ...(idsIntake ? [idsIntake] : []),
      flows.collector,
      new MaintenanceEngine(maintenance, scheduler, ctx.log),
      new RetentionEngine(
        retention,
        scheduler,
        ctx.clock,
        ctx.log,
        (ctx.config.retentionIntervalSeconds ?? 3600) * 1000,
      ),
      delivery.queue,
      agents.channel,
      agents.trackers,
      // Last: jobs are in place before it starts, and it stops (aborting runs) before their engines.
      {
        name: 'scheduler',
        shared: true,
        start: () => scheduler.start(),
        stop: () => scheduler.stop(),
      },
    ],
    async register(app, engines) {
      await authRoutes(app, ctx, { tokens, resolver });
      await tokensRoutes(app, ctx, {
        tokens,
        userExists: (id) => userExists(ctx.db, id),
        holdsSuperAdmin: (id) => holdsSuperAdmin(ctx.db, id),
      });
      await usersRoutes(app, ctx, { tokens });
      await oauthFeatureRoutes(app, ctx, { tokens });
      await toolsRoutes(app, ctx, { tools });
      await devicesRoutes(app, ctx, { devices });
      await credentialsRoutes(app, ctx);
      await pendingRoutes(app, ctx, { devices, discoveryStatus: () => discovery.latestStatus() });
      await walksRoutes(app, ctx, { devices, toolRuns: tools.runs });
      await localnetsRoutes(app, ctx, { discovery });
      await dashboardsRoutes(app, ctx, { devices, widgets });
      await trackersRoutes(app, ctx, { trackers, devices });
      await urlMonitorsRoutes(app, ctx, { engine: urlMonitors });
      await logs.register(app);
      await captures.register(app);
      await flows.register(app);
      await terminalRoutes(app, ctx, { resolver, spawn: nodePtySpawn() });
      await maintenanceRoutes(app, ctx, { maintenance });
      await retentionRoutes(app, ctx, { retention });
      const daemons = new DaemonsService(ctx.db, ctx.clock, ctx.secrets, engines);
      await daemonsRoutes(app, ctx, { daemons: () => daemons });
      await delivery.register(app);
      await alerts.register(app);
      await settings.register(app);
      await certificateRoutes(app, ctx);
      await upgrader.register(app);
      await directory.register(app);
      await agents.register(app);
    },
  };
}
