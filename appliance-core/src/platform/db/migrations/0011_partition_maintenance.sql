-- Partition maintenance (spec part 3, "Data maintenance"): per-table settings and per-partition
-- bounds for the partitioned tables of platform/db/partitions.ts.
--
-- One row per registered partitioned table, written when the table is first registered with its
-- owner's defaults (rotation cron, retention) and changed only through the maintenance routes.
-- `id` is the `jobid` the cron routes answer (the scheduled rotation of the table).
CREATE TABLE partitioned_tables (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  table_name TEXT NOT NULL UNIQUE,
  tablespace TEXT NOT NULL DEFAULT 'default', -- where dated partitions live: 'default' = the main file
  cron_schedule TEXT NOT NULL,                -- five-field cron (UTC) of the scheduled rotation
  retention_days INTEGER NOT NULL CHECK (retention_days >= 1),
  updated_at INTEGER NOT NULL
) STRICT;

-- Bounds of each dated partition, recorded in the transaction that rotates it (a dated partition
-- never receives another row, so they stay exact), so listing partitions and choosing the
-- partitions of a time window never count or scan rows. Removed with the partition.
CREATE TABLE partition_bounds (
  partition_name TEXT PRIMARY KEY,
  table_name TEXT NOT NULL,
  tablespace TEXT NOT NULL DEFAULT 'default', -- where the partition's table lives now
  rows INTEGER NOT NULL,
  min_time INTEGER,                           -- NULL for an empty partition
  max_time INTEGER,
  size_bytes INTEGER NOT NULL,
  rotated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX partition_bounds_by_table ON partition_bounds (table_name, min_time, max_time);
