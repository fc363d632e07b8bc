/**
 * Data maintenance's partition, tablespace and cron endpoints (spec part 3, Data maintenance;
 * permission `system`). Answers are `{status, hasError, message}` (the client throws on
 * `hasError`); bodies use the long argument names (`tableName`, `partitionName`, `tablespaceName`,
 * `cronSchedule`), which the spec says win. Query keys: the `maintenance` family.
 */
import { queryOptions } from '@tanstack/react-query';

import { api } from '../../lib/api-client.js';

export interface Envelope<T> {
  status: number | boolean;
  hasError: boolean;
  message: T;
}

/** A partition as the appliance lists it; fields beyond the name are read defensively. */
export type PartitionRow = Record<string, unknown> & { name?: string };

export interface TablespaceRow {
  name: string;
  location: string | null;
  size: number | string | null;
}

export interface CronSchedule {
  schedule: string;
  jobid: number | string;
}

export const maintenanceKeys = {
  all: ['maintenance'] as const,
  tables: ['maintenance', 'tables'] as const,
  partitions: (table: string) => ['maintenance', 'partitions', table] as const,
  tablespaces: ['maintenance', 'tablespaces'] as const,
  tablespaceOf: (table: string) => ['maintenance', 'tablespace', table] as const,
  cron: (table: string) => ['maintenance', 'cron', table] as const,
};

export const tablesQuery = queryOptions({
  queryKey: maintenanceKeys.tables,
  queryFn: () => api.get<Envelope<string[]>>('/api/getPartitionedTables'),
  select: (a) => a.message,
  staleTime: 300_000,
});

export const partitionsQuery = (table: string) =>
  queryOptions({
    queryKey: maintenanceKeys.partitions(table),
    queryFn: () =>
      api.post<Envelope<PartitionRow[]>>('/api/getTablePartitions', { tableName: table }),
    select: (a) => a.message,
  });

export const tablespacesQuery = queryOptions({
  queryKey: maintenanceKeys.tablespaces,
  queryFn: () => api.get<Envelope<TablespaceRow[]>>('/api/getAvailableTablespaces'),
  select: (a) => a.message,
});

export const tablespaceOfQuery = (table: string) =>
  queryOptions({
    queryKey: maintenanceKeys.tablespaceOf(table),
    queryFn: () => api.post<Envelope<string>>('/api/getTableTablespace', { tableName: table }),
    select: (a) => a.message,
  });

export const cronQuery = (table: string) =>
  queryOptions({
    queryKey: maintenanceKeys.cron(table),
    queryFn: () =>
      api.post<Envelope<CronSchedule | null>>('/api/getTableCronSchedule', { tableName: table }),
    select: (a) => a.message,
  });

export const rotatePartition = (table: string) =>
  api.post<Envelope<string>>('/api/rotatePartition', { tableName: table });

export const deleteOldPartitions = (table: string, weeks: number) =>
  api.post<Envelope<string> & { details?: { deleted_count: number; retention_date: string } }>(
    '/api/deleteOldPartitions',
    { tableName: table, weeks },
  );

export const deletePartition = (partition: string) =>
  api.post<Envelope<string>>('/api/deletePartition', { partitionName: partition });

export const moveTable = (table: string, tablespace: string, includeIndexes: boolean) =>
  api.post<Envelope<string>>('/api/moveTableToTablespace', {
    tableName: table,
    tablespaceName: tablespace,
    includeIndexes,
  });

export const updateCron = (table: string, schedule: string) =>
  api.post<Envelope<string> & { jobid?: number | string }>('/api/updateTableCronSchedule', {
    tableName: table,
    cronSchedule: schedule,
  });
