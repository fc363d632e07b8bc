/**
 * Every tracker endpoint (spec part 2 > Trackers, and the getLatencyTracker/getTCPTracker
 * widgets of Dashboards), one route file per spec section over one service per tracker kind.
 * Every tracker route needs `write_devices` (the widgets need `devices`) and is tag scoped: a
 * tracker of an out-of-scope device answers exactly like a missing one (TrackerAccess).
 * Validation failures are 400 `{errors}`, other failures `{error}` with the spec's text.
 */
import type { CoreContext } from '../../platform/context.js';
import type { App } from '../../platform/http/http-server.js';
import type { DevicesService } from '../devices/index.js';
import { diskRoutes } from './disks.routes.js';
import { DiskTrackers } from './disks.service.js';
import { interfaceRoutes } from './interfaces.routes.js';
import { InterfaceTrackers } from './interfaces.service.js';
import { latencyRoutes } from './latency.routes.js';
import { LatencyTrackers } from './latency.service.js';
import { oidRoutes } from './oids.routes.js';
import { OidTrackers } from './oids.service.js';
import { portRoutes } from './ports.routes.js';
import { PortTrackers } from './ports.service.js';
import { serviceRoutes } from './services.routes.js';
import { TrackerAccess } from './trackers.access.js';
import type { TrackersService } from './trackers.service.js';
import { widgetRoutes } from './widgets.routes.js';

export interface TrackersRoutesDeps {
  trackers: TrackersService;
  devices: Pick<DevicesService, 'visibleDevice' | 'scopeResolver' | 'ipMap'>;
}

export async function trackersRoutes(
  app: App,
  ctx: CoreContext,
  deps: TrackersRoutesDeps,
): Promise<void> {
  const { db, clock } = ctx;
  const access = new TrackerAccess(deps.devices, clock);
  const latency = new LatencyTrackers(db, access, deps.trackers);
  const ports = new PortTrackers(db, access, deps.trackers);
  const oids = new OidTrackers(db, access, deps.trackers);
  diskRoutes(app, new DiskTrackers(db, access, deps.trackers));
  interfaceRoutes(app, new InterfaceTrackers(db, access, deps.trackers));
  latencyRoutes(app, latency);
  oidRoutes(app, oids);
  serviceRoutes(app, oids);
  portRoutes(app, ports);
  widgetRoutes(app, latency, ports);
}
