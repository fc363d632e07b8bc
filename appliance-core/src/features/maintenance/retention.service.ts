/**
 * The retention rows of the partitioned tables (syslog_log, eventlog_log, eve_log, walks_log and
 * the internal flows table): they "shed data only by pruning", so their prune is the function
 * POST /api/deleteOldPartitions uses (`MaintenanceService#deleteOlderThan`: whole dated
 * partitions dropped under the table's lock, space reclaimed in steps), never a row delete. The
 * days are also the table's `partitioned_tables.retention_days` (kept equal in the
 * setRetentionPolicy transaction), so the maintenance engine's hourly partition retention and the
 * retention pruner agree. Size: every partition's pages and indexes, in whichever file it lives
 * (dbstat per schema).
 */
import type { PartitionedTable } from '../../platform/db/partitions.js';
import { tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { DB } from '../../platform/db/database.js';
import type { MaintenanceService } from './maintenance.service.js';

export function partitionBytes(db: DB, table: PartitionedTable): number {
  let bytes = 0;
  for (const ref of table.located()) bytes += tableBytes(db, [ref.name], ref.schema);
  return bytes;
}

/** Registers a retention row for every table registered for partition maintenance. */
export function registerPartitionRetention(
  retention: RetentionRegistry,
  db: DB,
  maintenance: MaintenanceService,
): void {
  for (const table of maintenance.maintainedTables())
    retention.register({
      table: table.name,
      defaultDays: table.settings()?.retentionDays ?? 84,
      initialDays: () => table.settings()?.retentionDays,
      onChange: (days, now) => table.setRetentionDays(days, now),
      size: () => partitionBytes(db, table),
      prune: async (cutoff) => (await maintenance.deleteOlderThan(table, cutoff)).dropped.length,
    });
}
