/**
 * The logs feature: syslog intake (syslog.engine.ts), Windows events intake for the agents
 * feature (eventlog-intake.service.ts), and the list, summary, saved-filter and configuration
 * endpoints of the three log feeds (syslog, Windows events, IDS events). What others use:
 *
 * - `createLogs(ctx, {storage, devices})`: builds the feature (composition root only).
 * - `LogsReader#list(feed, identity, query)` / `#summary(...)`: the lists and summaries for an
 *   identity (tag scope and the identity's saved exclusions applied), for alerting and MCP.
 * - `EventLogIntake#plan(trackerId, now)` / `#ingest(trackerId, events, polledAt)`: what the
 *   agents feature asks an agent for and hands back (one day of backfill at a tracker's first poll).
 * - `SavedFilters` and `savedFilterRoutes`: the one saved-filter module, reused by flows.
 * - `registerLogWrites(writer)`: the log tables' statements, for a writer beside the appliance's own
 *   (tests that hand events to `EventLogIntake` in process).
 * - `IntakeCounterRegistry#register(feed, read)`: where the IDS follower and flows add their
 *   counters to GET /api/intake/counters and /metrics.
 */
export { LOG_SUMMARY_RETENTION_DAYS, registerLogRetention } from './logs.writes.js';
export { createLogs, type Logs } from './logs-feature.service.js';
export { LogsReader, type LogPage, type LogQuery, type SeveritySummary } from './logs.service.js';
export {
  EventLogIntake,
  severityOfLevel,
  type EventLogPlan,
  type IngestResult,
  type WindowsEvent,
} from './eventlog-intake.service.js';
export { SavedFilters, type SavedFilterRecord } from './saved-filters.service.js';
export { savedFilterRoutes } from './saved-filters.routes.js';
export { IntakeCounterRegistry, type FeedCounters } from './intake-counters.catalog.js';
export { FEEDS, type Feed } from './log-feeds.rules.js';
export { SyslogEngine, type IntakeCounters } from './syslog.engine.js';
export { registerLogWrites } from './logs.writes.js';
// The event-log trackers the agents feature polls (its plan and ingest are EventLogIntake's).
export { allEventLogTrackers, type EventLogTrackerRow } from './logs.repository.js';
