/**
 * The alerting feature assembled (called once by the composition root, features/index.ts): the
 * service, the evaluation engine fed by the syslog engine's commit hook, the device deletion
 * cascade (device-scoped alerts disabled with their scope kept; history rows kept) and the
 * routes. Delivery (features/alerts/delivery) is connected with `connectDelivery`.
 */
import type { CoreContext } from '../../platform/context.js';
import type { App } from '../../platform/http/http-server.js';
import type { DevicesService } from '../devices/index.js';
import { AlertsEngine } from './alerts.engine.js';
import { alertsRoutes } from './alerts.routes.js';
import { findOutlet } from './alerts.repository.js';
import { AlertsService, type DeliverySeam, type OutletTarget } from './alerts.service.js';

export interface Alerts {
  service: AlertsService;
  engine: AlertsEngine;
  connectDelivery(seam: DeliverySeam): void;
  /** An outlet as delivery sends to it now (secrets in clear, server side only); null when deleted. */
  outletTarget(id: number): OutletTarget | null;
  register(app: App): Promise<void>;
}

export function createAlerts(
  ctx: CoreContext,
  deps: {
    devices: DevicesService;
    /** The syslog engine's commit hook (null when intake is off). */
    onSyslogCommitted: ((listener: () => void) => () => void) | null;
    /** The device of a latency tracker, or null (trackers). */
    latencyTrackerDevice: (trackerId: number) => number | null;
    /** The URL of a URL tracker, or null (url-monitors). */
    urlOfTracker: (trackerId: number) => string | null;
    /** The appliance's time zone for maintenance windows. */
    timeZone?: () => string;
  },
): Alerts {
  const { devices } = deps;
  const service = new AlertsService(ctx.db, ctx.clock, ctx.secrets, {
    delivery: null,
    devices: {
      visibleDevice: (identity, id) => devices.visibleDevice(identity, id),
      entries: () => devices.ipMap.snapshot().entries,
    },
    timeZone: deps.timeZone ?? (() => 'UTC'),
    urlOfTracker: deps.urlOfTracker,
  });
  devices.registerDeviceCleanup('alerts', (id) => service.onDeviceDeleted(id));
  const engine = new AlertsEngine(ctx, service, deps.onSyslogCommitted);
  return {
    service,
    engine,
    connectDelivery: (seam) => service.connectDelivery(seam),
    outletTarget: (id) => {
      const row = findOutlet(ctx.db, id);
      return row ? service.target(row) : null;
    },
    register: (app) =>
      alertsRoutes(app, ctx, {
        alerts: service,
        latencyTrackerDevice: deps.latencyTrackerDevice,
        flappingLegacyAlerts: () => engine.flappingLegacyAlerts(),
      }),
  };
}
