/**
 * Data maintenance of partitioned tables (spec part 3, "Data maintenance", the partition,
 * tablespace and cron endpoints): what the routes, the scheduled rotation and the retention
 * pruner call. It owns no table of its own: every operation goes through the registry of
 * platform/db/partitions.ts to the table its owner registered (walks_log by devices, eve_log,
 * syslog_log, eventlog_log by the log feeds), so the retention policy of the settings issue
 * calls these same functions.
 *
 * Invariants:
 * - A table name from a request is only looked up among the listed (spec) tables present; a
 *   partition name only among the partitions that exist; a tablespace name only among the
 *   configured ones (or `default`). Request text never becomes an identifier or a path.
 * - Rotation deletes nothing; a table assigned to a tablespace gets its new dated partition
 *   moved there right after (under the table's lock), so "the table's tablespace" stays true.
 * - Every drop is followed by `reclaimSpaceInSteps()` (incremental vacuum) and logged with the bytes
 *   returned to the file system.
 */
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import {
  listedPartitionedTables,
  maintainedPartitionedTables,
  type PartitionedTable,
  type PartitionInfo,
} from '../../platform/db/partitions.js';
import {
  DEFAULT_TABLESPACE,
  tablespaceSize,
  type Tablespace,
} from '../../platform/db/tablespaces.js';
import { tryParseCron } from '../../platform/time/cron.js';
import { DAY_MS, type Clock } from '../../platform/time/time.js';

export interface TablespaceEntry {
  name: string;
  location: string;
  /** Bytes of the tablespace's database file (and WAL); the main file's for `default`. */
  size: number;
}

export interface DeletedPartitions {
  dropped: string[];
  cutoff: number;
  bytesReturned: number;
}

export interface RotationResult {
  partition: string | null;
  movedTo: string | null;
}

/** Told when a table's rotation schedule changes (the engine reschedules its job). */
export type ScheduleListener = (table: string, cron: string) => void;

export class MaintenanceService {
  private readonly scheduleListeners: ScheduleListener[] = [];

  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    private readonly tablespaceList: readonly Tablespace[],
    private readonly log: Logger,
  ) {}

  /** Names of the spec's partitioned tables present (GET /api/getPartitionedTables). */
  tableNames(): string[] {
    return listedPartitionedTables(this.db).map((table) => table.name);
  }

  /** A listed table by the name a caller gave, or undefined (the allowlist lookup). */
  table(name: unknown): PartitionedTable | undefined {
    if (typeof name !== 'string') return undefined;
    return listedPartitionedTables(this.db).find((table) => table.name === name);
  }

  /** Every table registered for maintenance, listed or internal (the scheduler's). */
  maintainedTables(): PartitionedTable[] {
    return maintainedPartitionedTables(this.db);
  }

  partitions(table: PartitionedTable): PartitionInfo[] {
    return table.list();
  }

  /**
   * Rolls the live partition to a dated one (deletes nothing) and, when the table is assigned to
   * a tablespace, moves the new partition there. Null partition: the live one was empty.
   */
  rotate(table: PartitionedTable): Promise<RotationResult> {
    return table
      .exclusive(async () => {
        const partition = table.rotate(this.clock.now());
        const assigned = table.settings()?.tablespace ?? DEFAULT_TABLESPACE;
        return {
          partition,
          movedTo: partition && assigned !== DEFAULT_TABLESPACE ? assigned : null,
        };
      })
      .then(async (result) => {
        if (result.movedTo) {
          const space = this.tablespace(result.movedTo);
          if (space) await table.moveToTablespace(space, this.clock.now());
        }
        if (result.partition) this.log.info({ table: table.name, ...result }, 'partition rotated');
        return result;
      });
  }

  /** Drops the dated partitions whose newest row is older than `cutoff`; returns what it did. */
  deleteOlderThan(table: PartitionedTable, cutoff: number): Promise<DeletedPartitions> {
    return table.exclusive(async () => {
      const dropped = table.dropOlderThan(cutoff);
      const bytesReturned = dropped.length > 0 ? await table.reclaimSpaceInSteps() : 0;
      if (dropped.length > 0)
        this.log.info({ table: table.name, dropped, bytesReturned }, 'partitions dropped');
      return { dropped, cutoff, bytesReturned };
    });
  }

  /** POST /api/deleteOldPartitions: partitions entirely older than `weeks` weeks. */
  deleteOldPartitions(table: PartitionedTable, weeks: number): Promise<DeletedPartitions> {
    return this.deleteOlderThan(table, this.clock.now() - weeks * 7 * DAY_MS);
  }

  /** The listed table that owns a dated partition of this name, or undefined. */
  ownerOfPartition(partition: unknown): PartitionedTable | undefined {
    if (typeof partition !== 'string') return undefined;
    return listedPartitionedTables(this.db).find(
      (table) => partition !== table.latest && table.isPartition(partition),
    );
  }

  /** Drops one dated partition; false when it is not one (anymore). */
  deletePartition(table: PartitionedTable, partition: string): Promise<boolean> {
    return table.exclusive(async () => {
      const dropped = table.dropPartition(partition);
      if (dropped) {
        const bytesReturned = await table.reclaimSpaceInSteps();
        this.log.info({ table: table.name, partition, bytesReturned }, 'partition dropped');
      }
      return dropped;
    });
  }

  /** Retention: every maintained table keeps its stored number of days (default 84). */
  async pruneExpired(): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const table of this.maintainedTables()) {
      const days = table.settings()?.retentionDays;
      if (days === undefined) continue;
      const { dropped } = await this.deleteOlderThan(table, this.clock.now() - days * DAY_MS);
      if (dropped.length > 0) result[table.name] = dropped;
    }
    return result;
  }

  /** GET /api/getAvailableTablespaces: the configured ones, or the synthetic default entry. */
  tablespaces(): TablespaceEntry[] {
    if (this.tablespaceList.length === 0)
      return [
        {
          name: DEFAULT_TABLESPACE,
          location: this.db.name,
          size: tablespaceSize(this.db.name),
        },
      ];
    return this.tablespaceList.map((space) => ({
      name: space.name,
      location: space.location,
      size: tablespaceSize(space.file),
    }));
  }

  /** A configured tablespace by the name a caller gave (never `default`), or undefined. */
  tablespace(name: unknown): Tablespace | undefined {
    return this.tablespaceList.find((space) => space.name === name);
  }

  tableTablespace(table: PartitionedTable): string {
    return table.settings()?.tablespace ?? DEFAULT_TABLESPACE;
  }

  /** Moves every dated partition of the table to a tablespace (null: back to the main file). */
  moveTable(table: PartitionedTable, space: Tablespace | null): Promise<string[]> {
    return table.moveToTablespace(space, this.clock.now()).then(async (moved) => {
      const bytesReturned = moved.length > 0 ? await table.reclaimSpaceInSteps() : 0;
      this.log.info(
        { table: table.name, tablespace: space?.name ?? DEFAULT_TABLESPACE, moved, bytesReturned },
        'partitions moved',
      );
      return moved;
    });
  }

  cronSchedule(table: PartitionedTable): { schedule: string; jobid: number } | null {
    const settings = table.settings();
    return settings ? { schedule: settings.cronSchedule, jobid: settings.jobId } : null;
  }

  /** Stores a five-field cron (null: not one) and reschedules the rotation; returns the job id. */
  updateCronSchedule(table: PartitionedTable, schedule: string): number | null {
    if (!isFiveFieldCron(schedule) || table.settings() === null) return null;
    const normalised = schedule.trim().replace(/\s+/g, ' ');
    const jobId = table.setCronSchedule(normalised, this.clock.now());
    for (const listener of this.scheduleListeners) listener(table.name, normalised);
    return jobId;
  }

  onScheduleChange(listener: ScheduleListener): void {
    this.scheduleListeners.push(listener);
  }
}

/** Five fields, each valid (platform/time/cron.ts); nicknames like `@daily` are refused. */
export function isFiveFieldCron(schedule: unknown): schedule is string {
  if (typeof schedule !== 'string' || schedule.length > 200) return false;
  return schedule.trim().split(/\s+/).length === 5 && tryParseCron(schedule).ok;
}
