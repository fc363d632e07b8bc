/**
 * The trackers feature: latency, TCP port, custom OID and service trackers (and the endpoints and
 * pollers of the interface and disk trackers the device crawl creates), their samples and
 * rollups, the legacy link-state alerts, and the polling engine.
 */
export { trackersRoutes } from './trackers.routes.js';
export { TrackersService } from './trackers.service.js';
export { findLatencyTracker } from './latency.repository.js';
export {
  registerTrackerRetention,
  registerTrackerWrites,
  SAMPLE_RETENTION_DAYS,
} from './trackers.writes.js';
export { TrackersEngine, type TrackersEngineOptions } from './trackers.engine.js';
export { registerTrackerWidgets } from './trackers.widgets.js';
// Service trackers for the agents feature, which polls them through the agent channel and
// writes their readings and samples with the trackers' own statements.
export { allOidTrackers, SERVICE_OID_PREFIX, type OidTrackerRow } from './oids.repository.js';
export { TrackerWrites } from './trackers.writes.js';
