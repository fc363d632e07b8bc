/**
 * Data maintenance (spec part 3): the partition, tablespace and cron endpoints over every
 * partitioned table registered in platform/db/partitions.ts, the scheduled rotation and the
 * default retention; the retention policy (every table that grows, platform/db/retention.ts),
 * its scheduled pruner and its endpoints.
 */
export { MaintenanceEngine } from './maintenance.engine.js';
export { maintenanceRoutes } from './maintenance.routes.js';
export { MaintenanceService } from './maintenance.service.js';
export { RetentionEngine } from './retention.engine.js';
export { retentionRoutes } from './retention.routes.js';
export { registerPartitionRetention } from './retention.service.js';
export { daemonsRoutes } from './daemons.routes.js';
export { DaemonsService, type EngineControl } from './daemons.service.js';
export { daemonVarsForEngine, plainDaemonVars, startsAutomatically } from './daemons.repository.js';
