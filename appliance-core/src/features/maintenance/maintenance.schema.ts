/**
 * Shapes of the data-maintenance partition, tablespace and cron endpoints (spec part 3, "Data
 * maintenance"). Arguments come in a short and a long name (`table`/`tableName`,
 * `partition`/`partitionName`, `tablespace`/`tablespaceName`, `schedule`/`cronSchedule`; the
 * long one wins) and are typed `unknown` here: the handlers answer the spec's own message for a
 * missing or wrong one (400 `Invalid table name` ...), which a schema failure could not.
 */
import { Type, type Static } from '@sinclair/typebox';

const Arg = Type.Optional(Type.Unknown());

export const TableBody = Type.Object({ table: Arg, tableName: Arg });
export const DeleteOldBody = Type.Object({ table: Arg, tableName: Arg, weeks: Arg });
export const PartitionBody = Type.Object({ partition: Arg, partitionName: Arg });
export const MoveBody = Type.Object({
  table: Arg,
  tableName: Arg,
  tablespace: Arg,
  tablespaceName: Arg,
  includeIndexes: Arg,
});
export const CronBody = Type.Object({
  table: Arg,
  tableName: Arg,
  schedule: Arg,
  cronSchedule: Arg,
});
export type TableBodyT = Static<typeof TableBody>;

const ok = <T extends Parameters<typeof Type.Object>[0]>(fields: T) =>
  Type.Object({ status: Type.Literal(200), hasError: Type.Literal(false), ...fields });

export const TablesAnswer = ok({ message: Type.Array(Type.String()) });

export const PartitionEntry = Type.Object({
  name: Type.String(),
  table: Type.String(),
  is_latest: Type.Boolean(),
  /** Where the partition lives: `default` or a tablespace name. */
  tablespace: Type.String(),
  rows: Type.Integer(),
  /** False for the live partition: its rows are estimated from its id span (documented). */
  rows_exact: Type.Boolean(),
  first_time: Type.Union([Type.String(), Type.Null()]),
  last_time: Type.Union([Type.String(), Type.Null()]),
  /** Bytes of the partition's table and indexes. */
  size: Type.Integer(),
  /** The rotation day in the partition's name (UTC date); null for the live partition. */
  rotated_on: Type.Union([Type.String(), Type.Null()]),
});
export const PartitionsAnswer = ok({ message: Type.Array(PartitionEntry) });

export const RotateAnswer = ok({
  message: Type.String(),
  /** The new dated partition; null when the live one was empty (nothing rolled). */
  partition: Type.Union([Type.String(), Type.Null()]),
});
export const DeleteOldAnswer = ok({
  message: Type.String(),
  details: Type.Object({
    deleted_count: Type.Integer(),
    /** Partitions whose newest row is older than this were dropped (ISO 8601, UTC). */
    retention_date: Type.String(),
  }),
});
export const MessageAnswer = ok({ message: Type.String() });
export const TablespacesAnswer = ok({
  message: Type.Array(
    Type.Object({ name: Type.String(), location: Type.String(), size: Type.Integer() }),
  ),
});
export const MoveAnswer = ok({ message: Type.String(), moved: Type.Array(Type.String()) });
export const CronAnswer = ok({
  message: Type.Union([
    Type.Object({ schedule: Type.String(), jobid: Type.Integer() }),
    Type.Null(),
  ]),
});
export const UpdateCronAnswer = ok({ message: Type.String(), jobid: Type.Integer() });
