import { actorOf, recordAudit, type AuditEntry } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { LegacyValidationBody } from '../../platform/http/schemas.js';
import type { PartitionInfo } from '../../platform/db/partitions.js';
import { DEFAULT_TABLESPACE } from '../../platform/db/tablespaces.js';
import { toIso } from '../../platform/time/time.js';
import { argument, includeIndexesOf, weeksOf } from './maintenance.rules.js';
import {
  CronAnswer,
  CronBody,
  DeleteOldAnswer,
  DeleteOldBody,
  MessageAnswer,
  MoveAnswer,
  MoveBody,
  PartitionBody,
  PartitionsAnswer,
  RotateAnswer,
  TableBody,
  TablesAnswer,
  TablespacesAnswer,
  UpdateCronAnswer,
} from './maintenance.schema.js';
import type { MaintenanceService } from './maintenance.service.js';

const TAGS = ['maintenance'];
const INVALID_TABLE = 'Invalid table name';

export interface MaintenanceDeps {
  maintenance: MaintenanceService;
}

const errors = (internal: string): RouteErrors => ({
  validation: 'legacyValidation',
  failure: 'legacyValidation',
  internal,
});

const partitionEntry = (table: string, p: PartitionInfo) => ({
  name: p.name,
  table,
  is_latest: p.isLatest,
  tablespace: p.tablespace,
  rows: p.rows,
  rows_exact: p.rowsExact,
  first_time: p.minTime === null ? null : toIso(p.minTime),
  last_time: p.maxTime === null ? null : toIso(p.maxTime),
  size: p.sizeBytes,
  rotated_on: p.rotatedOn === null ? null : toIso(p.rotatedOn).slice(0, 10),
});

export async function maintenanceRoutes(
  app: App,
  ctx: CoreContext,
  deps: MaintenanceDeps,
): Promise<void> {
  const { maintenance } = deps;
  const { db, clock } = ctx;
  const access = allOf('system');
  const audit = (request: Parameters<typeof actorOf>[0], entry: AuditEntry) =>
    recordAudit(db, clock.now(), actorOf(request), entry);
  /** The listed table named by `table`/`tableName`, or the spec's 400. */
  const tableOf = (body: Record<string, unknown>, message = INVALID_TABLE) => {
    const table = maintenance.table(argument(body, 'table', 'tableName'));
    if (!table) throw failure(400, message);
    return table;
  };

  // spec: part3 > Data maintenance > GET /api/getPartitionedTables
  defineRoute(app, {
    method: 'GET',
    url: '/api/getPartitionedTables',
    access,
    errors: errors('Failed to list partitioned tables'),
    tags: TAGS,
    summary: "The spec's partitioned tables present on this appliance",
    response: { 200: TablesAnswer },
    handler: async () => ({
      status: 200 as const,
      hasError: false as const,
      message: maintenance.tableNames(),
    }),
  });

  // spec: part3 > Data maintenance > POST /api/getTablePartitions
  defineRoute(app, {
    method: 'POST',
    url: '/api/getTablePartitions',
    access,
    errors: errors('Failed to list partitions'),
    tags: TAGS,
    summary: 'Partitions of a table, newest first, with their bounds and sizes',
    body: TableBody,
    response: { 200: PartitionsAnswer },
    handler: async (request) => {
      const name = argument(request.body, 'table', 'tableName');
      if (name === undefined || name === null || name === '')
        throw failure(422, 'Validation failed', {
          fields: { table: ['The table field is required.'] },
        });
      const table = maintenance.table(name);
      if (!table)
        throw failure(422, 'Validation failed', {
          fields: { table: ['The selected table is invalid.'] },
        });
      return {
        status: 200 as const,
        hasError: false as const,
        message: maintenance.partitions(table).map((p) => partitionEntry(table.name, p)),
      };
    },
  });

  // spec: part3 > Data maintenance > POST /api/rotatePartition
  defineRoute(app, {
    method: 'POST',
    url: '/api/rotatePartition',
    access,
    errors: errors('Failed to rotate partition'),
    tags: TAGS,
    summary: 'Roll the live partition to a dated one (deletes nothing)',
    body: TableBody,
    response: { 200: RotateAnswer, 400: LegacyValidationBody },
    handler: async (request) => {
      const table = tableOf(request.body);
      const { partition } = await maintenance.rotate(table);
      audit(request, {
        action: 'partition.rotate',
        outcome: 'success',
        target: { type: 'table', label: table.name },
        detail: { partition },
      });
      return {
        status: 200 as const,
        hasError: false as const,
        message: partition
          ? `Partition ${table.latest} rotated to ${partition}`
          : `Nothing to rotate: ${table.latest} is empty`,
        partition,
      };
    },
  });

  // spec: part3 > Data maintenance > POST /api/deleteOldPartitions
  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteOldPartitions',
    access,
    errors: errors('Failed to delete old partitions'),
    tags: TAGS,
    summary: 'Drop the dated partitions older than a number of weeks (permanent)',
    body: DeleteOldBody,
    response: { 200: DeleteOldAnswer, 400: LegacyValidationBody },
    handler: async (request) => {
      const table = tableOf(request.body);
      const weeks = weeksOf(request.body.weeks);
      if (weeks === null)
        throw failure(422, 'Validation failed', {
          fields: { weeks: ['The weeks field must be an integer of at least 1.'] },
        });
      const { dropped, cutoff, bytesReturned } = await maintenance.deleteOldPartitions(
        table,
        weeks,
      );
      audit(request, {
        action: 'partition.delete_old',
        outcome: 'success',
        target: { type: 'table', label: table.name },
        detail: { weeks, dropped, bytes_returned: bytesReturned },
      });
      return {
        status: 200 as const,
        hasError: false as const,
        message: `${dropped.length} partition${dropped.length === 1 ? '' : 's'} deleted`,
        details: { deleted_count: dropped.length, retention_date: toIso(cutoff) },
      };
    },
  });

  // spec: part3 > Data maintenance > POST /api/deletePartition
  defineRoute(app, {
    method: 'POST',
    url: '/api/deletePartition',
    access,
    errors: errors('Failed to delete partition'),
    tags: TAGS,
    summary: 'Drop one dated partition (permanent; never the live one)',
    body: PartitionBody,
    response: { 200: MessageAnswer, 400: LegacyValidationBody },
    handler: async (request) => {
      const name = argument(request.body, 'partition', 'partitionName');
      const table = maintenance.ownerOfPartition(name);
      if (!table || !(await maintenance.deletePartition(table, name as string)))
        throw failure(400, 'Invalid partition name');
      audit(request, {
        action: 'partition.delete',
        outcome: 'success',
        target: { type: 'partition', label: name as string },
        detail: { table: table.name },
      });
      return {
        status: 200 as const,
        hasError: false as const,
        message: `Partition ${name as string} deleted`,
      };
    },
  });

  // spec: part3 > Data maintenance > GET /api/getAvailableTablespaces
  defineRoute(app, {
    method: 'GET',
    url: '/api/getAvailableTablespaces',
    access,
    errors: errors('Failed to list tablespaces'),
    tags: TAGS,
    summary: 'Configured tablespaces (a synthetic default entry when none is configured)',
    response: { 200: TablespacesAnswer },
    handler: async () => ({
      status: 200 as const,
      hasError: false as const,
      message: maintenance.tablespaces(),
    }),
  });

  // spec: part3 > Data maintenance > POST /api/getTableTablespace
  defineRoute(app, {
    method: 'POST',
    url: '/api/getTableTablespace',
    access,
    errors: errors('Failed to read the table tablespace'),
    tags: TAGS,
    summary: "The tablespace of a table's dated partitions, or default",
    body: TableBody,
    response: { 200: MessageAnswer, 400: LegacyValidationBody },
    handler: async (request) => ({
      status: 200 as const,
      hasError: false as const,
      message: maintenance.tableTablespace(tableOf(request.body)),
    }),
  });

  // spec: part3 > Data maintenance > POST /api/moveTableToTablespace
  defineRoute(app, {
    method: 'POST',
    url: '/api/moveTableToTablespace',
    access,
    errors: errors('Failed to move table'),
    tags: TAGS,
    summary: "Move a table's dated partitions (with their indexes) to a tablespace",
    body: MoveBody,
    response: { 200: MoveAnswer, 400: LegacyValidationBody },
    handler: async (request) => {
      const invalid = 'Invalid table name or tablespace name';
      const table = tableOf(request.body, invalid);
      const spaceName = argument(request.body, 'tablespace', 'tablespaceName');
      const space = maintenance.tablespace(spaceName);
      if (!space && spaceName !== DEFAULT_TABLESPACE) throw failure(400, invalid);
      // SQLite keeps an index in its table's file: indexes always move (includeIndexes=false has no effect).
      if (includeIndexesOf(request.body.includeIndexes) === null)
        throw failure(422, 'Validation failed', {
          fields: { includeIndexes: ['The includeIndexes field must be true or false.'] },
        });
      const moved = await maintenance.moveTable(table, space ?? null);
      const target = space?.name ?? DEFAULT_TABLESPACE;
      audit(request, {
        action: 'partition.move',
        outcome: 'success',
        target: { type: 'table', label: table.name },
        detail: { tablespace: target, moved },
      });
      return {
        status: 200 as const,
        hasError: false as const,
        message: `Table ${table.name} moved to tablespace ${target}`,
        moved,
      };
    },
  });

  // spec: part3 > Data maintenance > POST /api/getTableCronSchedule
  defineRoute(app, {
    method: 'POST',
    url: '/api/getTableCronSchedule',
    access,
    errors: errors('Failed to read the cron schedule'),
    tags: TAGS,
    summary: "A table's rotation schedule and its job id",
    body: TableBody,
    response: { 200: CronAnswer, 400: LegacyValidationBody },
    handler: async (request) => ({
      status: 200 as const,
      hasError: false as const,
      message: maintenance.cronSchedule(tableOf(request.body)),
    }),
  });

  // spec: part3 > Data maintenance > POST /api/updateTableCronSchedule
  defineRoute(app, {
    method: 'POST',
    url: '/api/updateTableCronSchedule',
    access,
    errors: errors('Failed to update the cron schedule'),
    tags: TAGS,
    summary: "Change a table's rotation schedule (five-field cron, UTC; rotation only)",
    body: CronBody,
    response: { 200: UpdateCronAnswer, 400: LegacyValidationBody },
    handler: async (request) => {
      const table = tableOf(request.body);
      const schedule = argument(request.body, 'schedule', 'cronSchedule');
      const jobid =
        typeof schedule === 'string' ? maintenance.updateCronSchedule(table, schedule) : null;
      if (jobid === null) throw failure(400, 'Invalid cron schedule format');
      audit(request, {
        action: 'partition.schedule',
        outcome: 'success',
        target: { type: 'table', label: table.name },
        detail: { schedule: maintenance.cronSchedule(table)?.schedule ?? '' },
      });
      return {
        status: 200 as const,
        hasError: false as const,
        message: 'Cron schedule updated',
        jobid,
      };
    },
  });
}
