/**
 * Data maintenance (spec part 3): the partition, tablespace and cron endpoints over every
 * partitioned table registered in platform/db/partitions.ts, the scheduled rotation and the
 * default retention. The settings issue's retention policy calls MaintenanceService.
 */
export { MaintenanceEngine } from './maintenance.engine.js';
export { maintenanceRoutes } from './maintenance.routes.js';
export { MaintenanceService } from './maintenance.service.js';
