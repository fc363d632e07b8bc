/**
 * The retention rows of the partitioned tables (syslog_log, eventlog_log, eve_log, walks_log and
 * the internal flows table): they "shed data only by pruning", so their prune is the function
 * POST /api/deleteOldPartitions uses (`MaintenanceService#deleteOlderThan`: whole dated
 * partitions dropped under the table's lock, space reclaimed in steps), never a row delete. The
 * days are also the table's `partitioned_tables.retention_days` (kept equal in the
 * setRetentionPolicy transaction), so the maintenance engine's hourly partition retention and the
 * retention pruner agree. Size: the partitions' recorded sizes (partitionBytes).
 */
import type { PartitionedTable } from '../../platform/db/partitions.js';
import type { RetentionRegistry } from '../../platform/db/retention.js';
import type { MaintenanceService } from './maintenance.service.js';

/**
 * A partitioned table's bytes: each dated partition's size as dbstat measured it when it was
 * rotated (a dated partition never changes: partition_bounds keeps it), plus the live partition's
 * estimate (partitions.ts): no page walk of the whole table on each read.
 */
export function partitionBytes(table: PartitionedTable): number {
  return table.list().reduce((sum, partition) => sum + partition.sizeBytes, 0);
}

/** Registers a retention row for every table registered for partition maintenance. */
export function registerPartitionRetention(
  retention: RetentionRegistry,
  maintenance: MaintenanceService,
): void {
  for (const table of maintenance.maintainedTables())
    retention.register({
      table: table.name,
      defaultDays: table.settings()?.retentionDays ?? 84,
      initialDays: () => table.settings()?.retentionDays,
      onChange: (days, now) => table.setRetentionDays(days, now),
      size: () => partitionBytes(table),
      prune: async (cutoff) => (await maintenance.deleteOlderThan(table, cutoff)).dropped.length,
    });
}
