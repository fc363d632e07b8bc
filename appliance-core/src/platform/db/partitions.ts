/**
 * Partitioned tables in SQLite, so that pruning is dropping a table, never deleting rows: the one
 * helper for every owner (walks_log, eve_log, syslog_log, eventlog_log, later flows and samples),
 * and the registry the maintenance routes and the retention pruner resolve table names against.
 *
 * A partitioned table `x` is a set of real tables with one schema: `x_latest` receives every
 * write; rotation renames it to a dated partition `x_pYYYYMMDD` (`_2`, `_3`... when rotated more
 * than once a day) and creates a fresh `x_latest` from the same DDL; the view `x` unions them
 * all for reading. The owner's migration creates `x_latest` (with its indexes) and the view.
 *
 * Bounds. Rotation records the new dated partition's rows, first and last time and size in
 * `partition_bounds`, in the rotating transaction (a dated partition never receives another row,
 * so they stay exact; `deleteWhere` refreshes them). Listing partitions and choosing the
 * partitions of a time window (`windowPartitions`, `windowSql`) read those rows and never count
 * or scan a dated partition. The live `_latest` partition is measured cheaply at each call:
 * first and last time through its time index (two O(log n) lookups), rows estimated as
 * max(rowid) - min(rowid) + 1 (exact while no row was deleted from it: ids are never reused),
 * size as rows times the newest dated partition's bytes per row (a dbstat page walk only while
 * no dated partition exists).
 *
 * Tablespaces (tablespaces.ts). Dated partitions may live in an attached tablespace file; the
 * latest one never moves. A main-schema view cannot name an attached table, so a table with a
 * partition in a tablespace is read through a per-connection TEMP view of the same name (and its
 * main view is dropped: a connection that did not attach the tablespaces fails loudly, "no such
 * table", instead of reading part of the data). Moving copies a partition in chunks (the event
 * loop and the writer keep running; a dated partition is immutable, so the copy is consistent),
 * then drops the source and repoints the view in one transaction, under the table's lock.
 *
 * Invariants:
 * - Table and partition names never come from input: a table is usable only once code has
 *   defined it (the allowlist), and a partition name is accepted only when it is one of the
 *   partitions that exist for that table right now.
 * - Every structural change (rotate, drop, the last step of a move) runs in one transaction and
 *   rebuilds the view, so readers see either the old or the new set of partitions.
 * - Rotation keeps AUTOINCREMENT ids increasing across partitions (ids stay unique in the view).
 * - Rotation rebuilds nothing: the dated partition keeps the live partition's indexes under their
 *   names, and the fresh live partition gets them named for the next generation
 *   (`x_latest_g<n>_<role>`), so an index is found by its role, never by its full name.
 * - A schema change to a partitioned table must be applied to every partition
 *   (`partitions()` lists them); the view selects `*` from each.
 * - The main file wins: after a crash between a move's copy and its drop, the partition is in
 *   both files; the constructor drops the tablespace's copy.
 *
 * Space. A dropped partition's pages are reused at once; `reclaimSpace()` (after drops) runs
 * `PRAGMA incremental_vacuum` on every file and returns the bytes given back to the file system
 * (the database must use auto_vacuum = INCREMENTAL: migrate.ts sets it; without it, 0).
 */
import type { DB } from './database.js';
import {
  attachedTablespaces,
  DEFAULT_TABLESPACE,
  quoteSchema,
  type Tablespace,
} from './tablespaces.js';

const IDENTIFIER = /^[a-z][a-z0-9_]{0,62}$/;
const MAIN = 'main';

/** The spec's partitioned tables (part 3, "Data maintenance"), in the order the API lists them. */
export const SPEC_PARTITIONED_TABLES = [
  'syslog_log',
  'eventlog_log',
  'eve_log',
  'walks_log',
] as const;
/** Default rotation of a log table: daily at 00:00 UTC. */
export const DAILY_ROTATION = '0 0 * * *';
/** Default rotation of walks_log: weekly, Monday 00:00 UTC. */
export const WEEKLY_ROTATION = '0 0 * * 1';
/** Default retention of a partitioned table, stored at its first registration (the retention policy,
 * setRetentionPolicy, changes it per table). */
export const DEFAULT_RETENTION_DAYS = 84;

/** How the maintenance routes and the scheduler treat a table (its owner's defaults). */
export interface PartitionMaintenance {
  /** One of the spec's tables, listed by GET /api/getPartitionedTables (flows stay internal). */
  listed: boolean;
  /** Default rotation schedule, five-field cron in UTC (stored on first registration). */
  rotationCron: string;
  /** Default retention in days (stored on first registration). */
  retentionDays: number;
}

export interface PartitionedTableOptions {
  /** Base name: the view's name; partitions are `<name>_latest` and `<name>_pYYYYMMDD[_n]`. */
  name: string;
  /** Integer UTC-milliseconds column that orders rows in time (should be indexed). */
  timeColumn: string;
  /** Registers the table for maintenance (rotation schedule, retention, the partition routes). */
  maintenance?: PartitionMaintenance;
}

export interface PartitionInfo {
  name: string;
  isLatest: boolean;
  rows: number;
  /** False for the latest partition (rows estimated from its id span, see the header). */
  rowsExact: boolean;
  /** Smallest and largest value of the time column, null when the partition is empty. */
  minTime: number | null;
  maxTime: number | null;
  /** Bytes used by the partition's table and its indexes. */
  sizeBytes: number;
  /** UTC midnight of the day in the partition's name (rotation day); null for the latest. */
  rotatedOn: number | null;
  /** Where the partition's table lives: `default` (the main file) or a tablespace name. */
  tablespace: string;
}

/** A partition and the schema (`main` or `ts_<name>`) its table lives in. */
export interface PartitionRef {
  name: string;
  schema: string;
}

/** A partition with the first and last time of its rows. */
export interface PartitionSpan extends PartitionRef {
  minTime: number;
  maxTime: number;
}

/** A table's stored maintenance settings; `jobId` is the id the cron routes answer. */
export interface PartitionSettings {
  jobId: number;
  tablespace: string;
  cronSchedule: string;
  retentionDays: number;
}

export class PartitionError extends Error {}

interface IndexDefinition {
  name: string;
  sql: string;
}

interface BoundsRow {
  partition_name: string;
  tablespace: string;
  rows: number;
  min_time: number | null;
  max_time: number | null;
  size_bytes: number;
}

const quote = (identifier: string) => `"${identifier}"`;
const qualified = (ref: PartitionRef) => `${quoteSchema(ref.schema)}.${quote(ref.name)}`;
const tablespaceOfSchema = (schema: string) =>
  schema === MAIN ? DEFAULT_TABLESPACE : schema.slice(3);

function dayStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
}

export class PartitionedTable {
  readonly name: string;
  readonly latest: string;
  readonly timeColumn: string;
  maintenance: PartitionMaintenance | undefined;
  private readonly datedPattern: RegExp;
  /** Structural work that awaits (moves) and whatever must not interleave with it. */
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: DB,
    options: PartitionedTableOptions,
  ) {
    if (!IDENTIFIER.test(options.name) || !IDENTIFIER.test(options.timeColumn)) {
      throw new Error(`partitioned table: bad identifier ${options.name}.${options.timeColumn}`);
    }
    this.name = options.name;
    this.latest = `${options.name}_latest`;
    this.timeColumn = options.timeColumn;
    this.datedPattern = new RegExp(`^${options.name}_p(\\d{4})(\\d{2})(\\d{2})(?:_(\\d+))?$`);
    if (!this.tableSql({ name: this.latest, schema: MAIN }))
      throw new Error(
        `partitioned table ${this.name}: table ${this.latest} does not exist (create it in a migration)`,
      );
    this.db.transaction(() => this.reconcile())();
    if (options.maintenance) this.setMaintenance(options.maintenance);
  }

  /** Every partition, newest first: the latest, then dated partitions from newest to oldest. */
  partitions(): string[] {
    return this.located().map((ref) => ref.name);
  }

  /** Every partition with the schema its table lives in, newest first. */
  located(): PartitionRef[] {
    const found = new Map<string, string>();
    const schemas = [MAIN, ...[...attachedTablespaces(this.db).values()].map((s) => s.schema)];
    for (const schema of schemas) {
      const rows = this.db
        .prepare(
          `SELECT name FROM ${quoteSchema(schema)}.sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'`,
        )
        .all(`${this.name.replace(/_/g, '\\_')}\\_p%`) as { name: string }[];
      // The main file wins over a tablespace's leftover copy (see the header).
      for (const row of rows)
        if (this.datedPattern.test(row.name) && !found.has(row.name)) found.set(row.name, schema);
    }
    const dated = [...found]
      .map(([name, schema]) => ({ name, schema }))
      .sort((a, b) => this.order(b.name) - this.order(a.name));
    return [{ name: this.latest, schema: MAIN }, ...dated];
  }

  /** True when `partition` is one of this table's partitions (the only way a name from input is accepted). */
  isPartition(partition: string): boolean {
    return this.partitions().includes(partition);
  }

  list(): PartitionInfo[] {
    const bounds = this.boundsByName();
    return this.located().map((ref) => {
      if (ref.name === this.latest) return this.latestInfo();
      const b = bounds.get(ref.name) ?? this.recordBounds(ref);
      return {
        name: ref.name,
        isLatest: false,
        rows: b.rows,
        rowsExact: true,
        minTime: b.min_time,
        maxTime: b.max_time,
        sizeBytes: b.size_bytes,
        rotatedOn: this.rotatedOn(ref.name),
        tablespace: tablespaceOfSchema(ref.schema),
      };
    });
  }

  /**
   * The partitions holding rows with `from <= time <= to`, newest first: dated ones chosen by
   * their recorded bounds, the latest by its time index. May be empty.
   */
  windowPartitions(from: number, to: number): PartitionRef[] {
    return this.windowSpans(from, to).map(({ name, schema }) => ({ name, schema }));
  }

  /**
   * `windowPartitions` with each partition's first and last time (the recorded bounds of a dated
   * partition, the time index of the latest), for a reader that plans by them.
   */
  windowSpans(from: number, to: number): PartitionSpan[] {
    const recorded = new Map(
      (
        this.db
          .prepare(
            'SELECT partition_name, min_time, max_time FROM partition_bounds WHERE table_name = ? AND min_time <= ? AND max_time >= ?',
          )
          .all(this.name, to, from) as {
          partition_name: string;
          min_time: number;
          max_time: number;
        }[]
      ).map((row) => [row.partition_name, { minTime: row.min_time, maxTime: row.max_time }]),
    );
    const { minTime, maxTime } = this.latestTimes();
    const spans: PartitionSpan[] = [];
    for (const ref of this.located()) {
      if (ref.name === this.latest) {
        if (minTime !== null && maxTime !== null && minTime <= to && maxTime >= from)
          spans.push({ ...ref, minTime, maxTime });
      } else {
        const span = recorded.get(ref.name);
        if (span) spans.push({ ...ref, ...span });
      }
    }
    return spans;
  }

  /**
   * A SELECT over only the partitions of a window, for a caller to wrap:
   * `SELECT ... FROM (${table.windowSql(from, to)}) WHERE ts BETWEEN ? AND ? ...` (SQLite pushes
   * the outer WHERE into each arm, so each partition is read through its own time index). With
   * no partition in the window it selects nothing from the latest partition, so the text is
   * always valid SQL. `columns` is SQL written in code, never input.
   */
  windowSql(from: number, to: number, columns = '*'): string {
    const refs = this.windowPartitions(from, to);
    if (refs.length === 0) return `SELECT ${columns} FROM ${quote(this.latest)} WHERE 0`;
    return refs.map((ref) => `SELECT ${columns} FROM ${qualified(ref)}`).join(' UNION ALL ');
  }

  /**
   * Renames the latest partition to a dated one, starts a fresh latest and records the dated
   * partition's bounds; deletes nothing. Returns the new partition's name, or null when the
   * latest partition is empty (nothing to roll).
   */
  rotate(now: number): string | null {
    return this.db.transaction(() => {
      const empty =
        this.db.prepare(`SELECT 1 FROM ${quote(this.latest)} LIMIT 1`).get() === undefined;
      if (empty) return null;
      const latestRef = { name: this.latest, schema: MAIN };
      const tableSql = this.tableSql(latestRef) as string;
      const indexes = this.indexesOf(latestRef);
      const sequence = this.sequenceOf(this.latest);
      const taken = new Set(this.partitions());
      let dated = `${this.name}_p${dayStamp(now)}`;
      for (let n = 2; taken.has(dated) || this.tableSql({ name: dated, schema: MAIN }); n++)
        dated = `${this.name}_p${dayStamp(now)}_${n}`;

      this.dropViews();
      this.db.exec(`ALTER TABLE ${quote(this.latest)} RENAME TO ${quote(dated)}`);
      // Index names are schema-wide and SQLite cannot rename an index: the dated partition keeps
      // its indexes as they are (rebuilding them under dated names held the write lock ~2.5 s per
      // million rows per index, long enough for the storage writer to give up), and the fresh
      // live partition gets the same indexes under the next generation's names.
      const generation = this.nextIndexGeneration();
      this.db.exec(tableSql);
      for (const index of indexes) this.db.exec(generationIndex(index, this.latest, generation));
      if (sequence !== null)
        this.db
          .prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)')
          .run(this.latest, sequence);
      this.recordBounds({ name: dated, schema: MAIN }, now);
      this.rebuildView();
      return dated;
    })();
  }

  /**
   * Drops dated partitions whose newest row is older than `cutoff` (an empty partition counts by
   * its rotation day), read from the recorded bounds. The latest partition is never dropped.
   * Returns the dropped names.
   */
  dropOlderThan(cutoff: number): string[] {
    return this.db.transaction(() => {
      const bounds = this.boundsByName();
      const dropped: PartitionRef[] = [];
      for (const ref of this.located()) {
        if (ref.name === this.latest) continue;
        const maxTime = (bounds.get(ref.name) ?? this.recordBounds(ref)).max_time;
        // An empty partition holds nothing newer than the end of its rotation day.
        const newest = maxTime ?? (this.rotatedOn(ref.name) as number) + 86_400_000;
        if (newest < cutoff) dropped.push(ref);
      }
      if (dropped.length > 0) this.dropTables(dropped);
      return dropped.map((ref) => ref.name);
    })();
  }

  /** Drops one dated partition named by the caller; false when it is not a dated partition of this table. */
  dropPartition(partition: string): boolean {
    return this.db.transaction(() => {
      const ref = this.located().find((r) => r.name === partition);
      if (!ref || partition === this.latest) return false;
      this.dropTables([ref]);
      return true;
    })();
  }

  /**
   * Deletes matching rows from every partition (for example a deleted device's rows). `where`
   * is SQL written in code, never input; values go in `params`. Returns the number of rows
   * deleted. The bounds of a dated partition that lost rows are recorded again.
   */
  deleteWhere(where: string, params: readonly unknown[]): number {
    return this.db.transaction(() => {
      let deleted = 0;
      for (const ref of this.located()) {
        const changes = this.db
          .prepare(`DELETE FROM ${qualified(ref)} WHERE ${where}`)
          .run(...params).changes;
        deleted += changes;
        if (changes > 0 && ref.name !== this.latest) this.recordBounds(ref);
      }
      return deleted;
    })();
  }

  /**
   * Returns free pages of every file this table may use (main and attached tablespaces) to the
   * file system (`PRAGMA incremental_vacuum`); the bytes returned. The files shrink at the next
   * WAL checkpoint (one is attempted here, passive: it never waits for readers).
   */
  reclaimSpace(): number {
    let bytes = 0;
    const schemas = [MAIN, ...[...attachedTablespaces(this.db).values()].map((s) => s.schema)];
    for (const schema of schemas) {
      const q = quoteSchema(schema);
      if ((this.db.pragma(`${q}.auto_vacuum`, { simple: true }) as number) !== 2) continue;
      const pageSize = this.db.pragma(`${q}.page_size`, { simple: true }) as number;
      const before = this.db.pragma(`${q}.page_count`, { simple: true }) as number;
      this.db.pragma(`${q}.incremental_vacuum`);
      const after = this.db.pragma(`${q}.page_count`, { simple: true }) as number;
      bytes += Math.max(0, before - after) * pageSize;
      this.db.pragma(`${q}.wal_checkpoint(PASSIVE)`);
    }
    return bytes;
  }

  /**
   * reclaimSpace in steps of `stepPages` pages, yielding to the event loop between them, so the
   * write lock is never held for long (measured: 127 MB returned in one step held it 3-4 s).
   */
  async reclaimSpaceInSteps(stepPages = 2048): Promise<number> {
    let bytes = 0;
    const schemas = [MAIN, ...[...attachedTablespaces(this.db).values()].map((s) => s.schema)];
    for (const schema of schemas) {
      const q = quoteSchema(schema);
      if ((this.db.pragma(`${q}.auto_vacuum`, { simple: true }) as number) !== 2) continue;
      const pageSize = this.db.pragma(`${q}.page_size`, { simple: true }) as number;
      for (let step = 0; step < 1_000_000; step++) {
        const free = this.db.pragma(`${q}.freelist_count`, { simple: true }) as number;
        if (free === 0) break;
        const before = this.db.pragma(`${q}.page_count`, { simple: true }) as number;
        this.db.pragma(`${q}.incremental_vacuum(${Math.max(1, Math.floor(stepPages))})`);
        const after = this.db.pragma(`${q}.page_count`, { simple: true }) as number;
        if (after >= before) break;
        bytes += (before - after) * pageSize;
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.db.pragma(`${q}.wal_checkpoint(PASSIVE)`);
    }
    return bytes;
  }

  /**
   * Runs `work` under the table's lock: moves hold it from their first copied row to their last
   * drop, and a rotation or drop asked for meanwhile waits its turn.
   */
  exclusive<T>(work: () => Promise<T> | T): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /**
   * Moves every dated partition to `target` (a tablespace attached on this connection, or null
   * for the main file) and records it as the table's tablespace. Copies in chunks of
   * `chunkRows` rows, yielding to the event loop between chunks; SQLite keeps an index in its
   * table's file, so indexes always move with their partition. Returns the partitions moved.
   */
  moveToTablespace(
    target: Tablespace | null,
    now: number,
    options: { chunkRows?: number } = {},
  ): Promise<string[]> {
    const targetSchema = target?.schema ?? MAIN;
    if (target && !attachedTablespaces(this.db).has(target.name))
      return Promise.reject(new PartitionError(`tablespace ${target.name} is not attached`));
    return this.exclusive(async () => {
      const moved: string[] = [];
      for (const ref of this.located()) {
        if (ref.name === this.latest || ref.schema === targetSchema) continue;
        if (await this.movePartition(ref, targetSchema, options.chunkRows ?? 5000))
          moved.push(ref.name);
      }
      this.db
        .prepare(
          'UPDATE partitioned_tables SET tablespace = ?, updated_at = ? WHERE table_name = ?',
        )
        .run(target?.name ?? DEFAULT_TABLESPACE, now, this.name);
      return moved;
    });
  }

  /** The table's stored maintenance settings, or null when it was never registered for maintenance. */
  settings(): PartitionSettings | null {
    const row = this.db
      .prepare(
        'SELECT id, tablespace, cron_schedule, retention_days FROM partitioned_tables WHERE table_name = ?',
      )
      .get(this.name) as
      { id: number; tablespace: string; cron_schedule: string; retention_days: number } | undefined;
    return row
      ? {
          jobId: row.id,
          tablespace: row.tablespace,
          cronSchedule: row.cron_schedule,
          retentionDays: row.retention_days,
        }
      : null;
  }

  /** Stores a new rotation schedule (validated by the caller); returns the job id. */
  setCronSchedule(cron: string, now: number): number {
    this.db
      .prepare(
        'UPDATE partitioned_tables SET cron_schedule = ?, updated_at = ? WHERE table_name = ?',
      )
      .run(cron, now, this.name);
    return (this.settings() as PartitionSettings).jobId;
  }

  /** Stores a new retention in days (the retention policy, platform/db/retention.ts). */
  setRetentionDays(days: number, now: number): void {
    this.db
      .prepare(
        'UPDATE partitioned_tables SET retention_days = ?, updated_at = ? WHERE table_name = ?',
      )
      .run(days, now, this.name);
  }

  /** Registers maintenance defaults (stored once: later changes come from the routes). */
  setMaintenance(maintenance: PartitionMaintenance): void {
    this.maintenance = maintenance;
    this.db
      .prepare(
        `INSERT INTO partitioned_tables (table_name, cron_schedule, retention_days, updated_at)
         VALUES (?, ?, ?, 0) ON CONFLICT (table_name) DO NOTHING`,
      )
      .run(this.name, maintenance.rotationCron, maintenance.retentionDays);
  }

  // --- helpers -----------------------------------------------------------------------------

  private async movePartition(ref: PartitionRef, to: string, chunkRows: number): Promise<boolean> {
    const target = { name: ref.name, schema: to };
    const sql = this.tableSql(ref);
    if (!sql) return false;
    const indexes = this.indexesOf(ref);
    this.db
      .transaction(() => {
        this.db.exec(`DROP TABLE IF EXISTS ${qualified(target)}`);
        this.db.exec(qualifyCreateTable(sql, target));
      })
      .deferred();
    // Dated partitions are immutable: copying by rowid ranges across event-loop turns is consistent.
    let last = -Infinity;
    for (;;) {
      const copied = this.db
        .transaction(() => {
          const result = this.db
            .prepare(
              `INSERT INTO ${qualified(target)} SELECT * FROM ${qualified(ref)} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
            )
            .run(last === -Infinity ? Number.MIN_SAFE_INTEGER : last, chunkRows);
          return result.changes;
        })
        .deferred();
      if (copied === 0) break;
      last = (
        this.db.prepare(`SELECT max(rowid) AS id FROM ${qualified(target)}`).get() as { id: number }
      ).id;
      if (copied < chunkRows) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.db
      .transaction(() => {
        for (const index of indexes) this.db.exec(qualifyCreateIndex(index, target));
      })
      .deferred();
    return this.db.transaction(() => {
      // Dropped while we copied: discard the copy.
      if (!this.tableSql(ref)) {
        this.db.exec(`DROP TABLE IF EXISTS ${qualified(target)}`);
        return false;
      }
      this.dropViews();
      this.db.exec(`DROP TABLE ${qualified(ref)}`);
      this.db
        .prepare(
          'UPDATE partition_bounds SET tablespace = ?, size_bytes = ? WHERE partition_name = ?',
        )
        .run(tablespaceOfSchema(to), this.sizeOf(target), ref.name);
      this.rebuildView();
      return true;
    })();
  }

  /** Brings the view and the bounds in line with the partitions found (start, after a crash). */
  private reconcile(): void {
    const located = this.located();
    const where = new Map(located.map((ref) => [ref.name, ref.schema]));
    const attached = attachedTablespaces(this.db);
    // Leftover copies of an interrupted move (the main file holds the partition): drop them.
    for (const space of attached.values())
      for (const ref of located)
        if (
          ref.schema === MAIN &&
          ref.name !== this.latest &&
          this.tableSql({ name: ref.name, schema: space.schema })
        )
          this.db.exec(`DROP TABLE ${qualified({ name: ref.name, schema: space.schema })}`);
    for (const row of this.boundsByName().values()) {
      const schema = where.get(row.partition_name);
      if (schema === undefined) {
        if (row.tablespace !== DEFAULT_TABLESPACE && !attached.has(row.tablespace))
          throw new PartitionError(
            `partitioned table ${this.name}: partition ${row.partition_name} lives in tablespace ${row.tablespace}, which is not configured (APPLIANCE_TABLESPACES)`,
          );
        this.db
          .prepare('DELETE FROM partition_bounds WHERE partition_name = ?')
          .run(row.partition_name);
      } else if (tablespaceOfSchema(schema) !== row.tablespace) {
        this.db
          .prepare('UPDATE partition_bounds SET tablespace = ? WHERE partition_name = ?')
          .run(tablespaceOfSchema(schema), row.partition_name);
      }
    }
    const bounds = this.boundsByName();
    for (const ref of located)
      if (ref.name !== this.latest && !bounds.has(ref.name)) this.recordBounds(ref);
    if (!this.viewIsCurrent()) this.rebuildView();
  }

  private boundsByName(): Map<string, BoundsRow> {
    const rows = this.db
      .prepare(
        'SELECT partition_name, tablespace, rows, min_time, max_time, size_bytes FROM partition_bounds WHERE table_name = ?',
      )
      .all(this.name) as BoundsRow[];
    return new Map(rows.map((row) => [row.partition_name, row]));
  }

  /** Counts a dated partition once and stores its bounds (rotation, backfill, after deletes). */
  private recordBounds(ref: PartitionRef, rotatedAt?: number): BoundsRow {
    // Three statements: count(*) reads the smallest index; a lone min() or max() is one index
    // lookup, where the three together scan the table (measured: 28 + 0.4 ms against 196 ms on
    // a million syslog-like rows).
    const t = quote(this.timeColumn);
    const one = (sql: string) => (this.db.prepare(sql).get() as { v: number | null }).v;
    const row: BoundsRow = {
      partition_name: ref.name,
      tablespace: tablespaceOfSchema(ref.schema),
      rows: one(`SELECT count(*) AS v FROM ${qualified(ref)}`) ?? 0,
      min_time: one(`SELECT min(${t}) AS v FROM ${qualified(ref)}`),
      max_time: one(`SELECT max(${t}) AS v FROM ${qualified(ref)}`),
      size_bytes: this.sizeOf(ref),
    };
    this.db
      .prepare(
        `INSERT INTO partition_bounds (partition_name, table_name, tablespace, rows, min_time, max_time, size_bytes, rotated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (partition_name) DO UPDATE SET tablespace = excluded.tablespace, rows = excluded.rows,
           min_time = excluded.min_time, max_time = excluded.max_time, size_bytes = excluded.size_bytes`,
      )
      .run(
        ref.name,
        this.name,
        row.tablespace,
        row.rows,
        row.min_time,
        row.max_time,
        row.size_bytes,
        rotatedAt ?? this.rotatedOn(ref.name) ?? 0,
      );
    return row;
  }

  private latestTimes(): { minTime: number | null; maxTime: number | null } {
    const t = quote(this.timeColumn);
    // Two statements: SQLite answers a lone min() or max() from the index, not both at once.
    const min = this.db.prepare(`SELECT min(${t}) AS v FROM ${quote(this.latest)}`).get() as {
      v: number | null;
    };
    const max = this.db.prepare(`SELECT max(${t}) AS v FROM ${quote(this.latest)}`).get() as {
      v: number | null;
    };
    return { minTime: min.v, maxTime: max.v };
  }

  private latestInfo(): PartitionInfo {
    // Two statements, each answered from the rowid b-tree's edge (one with both would scan).
    const span = {
      first: (
        this.db.prepare(`SELECT min(rowid) AS v FROM ${quote(this.latest)}`).get() as {
          v: number | null;
        }
      ).v,
      last: (
        this.db.prepare(`SELECT max(rowid) AS v FROM ${quote(this.latest)}`).get() as {
          v: number | null;
        }
      ).v,
    };
    const rows = span.first === null || span.last === null ? 0 : span.last - span.first + 1;
    // Size: the newest dated partition's bytes per row times the rows (a page walk of a live
    // partition costs ~0.2 s per million rows); measured by dbstat only while none exists.
    const sample = this.db
      .prepare(
        'SELECT rows, size_bytes FROM partition_bounds WHERE table_name = ? AND rows > 0 ORDER BY rotated_at DESC LIMIT 1',
      )
      .get(this.name) as { rows: number; size_bytes: number } | undefined;
    return {
      name: this.latest,
      isLatest: true,
      rows,
      rowsExact: false,
      ...this.latestTimes(),
      sizeBytes: sample
        ? Math.round((sample.size_bytes / sample.rows) * rows)
        : this.sizeOf({ name: this.latest, schema: MAIN }),
      rotatedOn: null,
      tablespace: DEFAULT_TABLESPACE,
    };
  }

  private order(partition: string): number {
    const m = this.datedPattern.exec(partition);
    if (!m) return -1;
    return Number(`${m[1]}${m[2]}${m[3]}`) * 10_000 + Number(m[4] ?? 1);
  }

  private rotatedOn(partition: string): number | null {
    const m = this.datedPattern.exec(partition);
    return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : null;
  }

  private tableSql(ref: PartitionRef): string | undefined {
    const row = this.db
      .prepare(
        `SELECT sql FROM ${quoteSchema(ref.schema)}.sqlite_master WHERE type = 'table' AND name = ?`,
      )
      .get(ref.name) as { sql: string } | undefined;
    return row?.sql;
  }

  private indexesOf(ref: PartitionRef): IndexDefinition[] {
    return this.db
      .prepare(
        `SELECT name, sql FROM ${quoteSchema(ref.schema)}.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`,
      )
      .all(ref.name) as IndexDefinition[];
  }

  /** 1 + the highest index generation of this table in any attached file (2 after the migration's names). */
  private nextIndexGeneration(): number {
    let highest = 1;
    const schemas = [MAIN, ...[...attachedTablespaces(this.db).values()].map((s) => s.schema)];
    const pattern = new RegExp(`^${this.latest}_g(\\d+)_`);
    for (const schema of schemas) {
      const rows = this.db
        .prepare(
          `SELECT name FROM ${quoteSchema(schema)}.sqlite_master WHERE type = 'index' AND name LIKE ? ESCAPE '\\'`,
        )
        .all(`${this.latest.replace(/_/g, '\\_')}\\_g%`) as { name: string }[];
      for (const row of rows) {
        const m = pattern.exec(row.name);
        if (m) highest = Math.max(highest, Number(m[1]));
      }
    }
    return highest + 1;
  }

  private sequenceOf(table: string): number | null {
    const hasSequence = this.db
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'`)
      .get();
    if (!hasSequence) return null;
    const row = this.db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table) as
      { seq: number } | undefined;
    return row?.seq ?? null;
  }

  private sizeOf(ref: PartitionRef): number {
    const names = [ref.name, ...this.indexesOf(ref).map((i) => i.name)];
    try {
      let bytes = 0;
      const statement = this.db.prepare(
        'SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat(?, 1) WHERE name = ?',
      );
      for (const name of names)
        bytes += (statement.get(ref.schema, name) as { bytes: number }).bytes;
      return bytes;
    } catch {
      // SQLite built without the dbstat virtual table: the size is unknown.
      return 0;
    }
  }

  private dropTables(partitions: readonly PartitionRef[]): void {
    this.dropViews();
    for (const ref of partitions) {
      this.db.exec(`DROP TABLE ${qualified(ref)}`);
      this.db.prepare('DELETE FROM partition_bounds WHERE partition_name = ?').run(ref.name);
    }
    this.rebuildView();
  }

  /** The view's SQL: a main-schema view while every partition is in the main file, else TEMP. */
  private viewSql(): { temp: boolean; sql: string } {
    const located = this.located();
    const temp = located.some((ref) => ref.schema !== MAIN);
    const selects = located.map(
      (ref) => `SELECT * FROM ${temp ? qualified(ref) : quote(ref.name)}`,
    );
    return {
      temp,
      sql: `CREATE ${temp ? 'TEMP ' : ''}VIEW ${quote(this.name)} AS ${selects.join(' UNION ALL ')}`,
    };
  }

  private viewIsCurrent(): boolean {
    const wanted = this.viewSql();
    const read = (master: string) =>
      (
        this.db
          .prepare(`SELECT sql FROM ${master} WHERE type = 'view' AND name = ?`)
          .get(this.name) as { sql: string } | undefined
      )?.sql;
    const main = read('main.sqlite_master');
    const temp = read('temp.sqlite_master');
    return wanted.temp
      ? temp === wanted.sql && main === undefined
      : main === wanted.sql && temp === undefined;
  }

  private dropViews(): void {
    this.db.exec(`DROP VIEW IF EXISTS temp.${quote(this.name)}`);
    this.db.exec(`DROP VIEW IF EXISTS main.${quote(this.name)}`);
  }

  private rebuildView(): void {
    this.dropViews();
    this.db.exec(this.viewSql().sql);
  }
}

/**
 * The CREATE INDEX statement of a live partition's `index` for the fresh live partition, named
 * for `generation`: `x_latest_by_time` (the migration's) becomes `x_latest_g2_by_time`, then
 * `x_latest_g3_by_time` ...; a name without the `x_latest_` prefix keeps its text after it.
 */
function generationIndex(index: IndexDefinition, latest: string, generation: number): string {
  const m = readIndex(index);
  const role = m.name.startsWith(`${latest}_`)
    ? m.name.slice(latest.length + 1).replace(/^g\d+_/, '')
    : m.name;
  return `CREATE ${m.unique}INDEX ${quote(`${latest}_g${generation}_${role}`)} ON ${quote(latest)} ${m.rest}`;
}

/** The CREATE INDEX statement of `index` (same name) on the table `target` in its schema. */
function qualifyCreateIndex(index: IndexDefinition, target: PartitionRef): string {
  const m = readIndex(index);
  return `CREATE ${m.unique}INDEX ${quoteSchema(target.schema)}.${quote(m.name)} ON ${quote(target.name)} ${m.rest}`;
}

function readIndex(index: IndexDefinition): { unique: string; name: string; rest: string } {
  const m =
    /^CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?("?)([A-Za-z0-9_]+)\2\s+ON\s+("?)([A-Za-z0-9_]+)\4\s*(\([\s\S]*)$/i.exec(
      index.sql,
    );
  if (!m) throw new Error(`partitioned table: cannot read index ${index.name}`);
  return { unique: m[1] ?? '', name: m[3] as string, rest: m[6] as string };
}

/** The CREATE TABLE statement `sql` (of a partition) creating the same table in `target`'s schema. */
function qualifyCreateTable(sql: string, target: PartitionRef): string {
  const m = /^CREATE\s+TABLE\s+("?)([A-Za-z0-9_]+)\1\s*(\([\s\S]*)$/i.exec(sql);
  if (!m || m[2] !== target.name)
    throw new Error(`partitioned table: cannot read table ${target.name}`);
  return `CREATE TABLE ${qualified(target)} ${m[3] as string}`;
}

const registry = new WeakMap<DB, Map<string, PartitionedTable>>();

/**
 * Declares a partitioned table on a database (called by its owning feature, one line per
 * table). The set of defined tables is the allowlist that maintenance endpoints resolve table
 * names against. Defining a table again returns the same instance; maintenance defaults given
 * on any of the calls register it for maintenance.
 */
export function definePartitionedTable(db: DB, options: PartitionedTableOptions): PartitionedTable {
  let tables = registry.get(db);
  if (!tables) registry.set(db, (tables = new Map<string, PartitionedTable>()));
  const existing = tables.get(options.name);
  if (existing) {
    if (options.maintenance && !existing.maintenance) existing.setMaintenance(options.maintenance);
    return existing;
  }
  const table = new PartitionedTable(db, options);
  tables.set(options.name, table);
  return table;
}

/** The defined partitioned table called `name`, or undefined (never creates one). */
export function partitionedTable(db: DB, name: string): PartitionedTable | undefined {
  return registry.get(db)?.get(name);
}

/** Names of the partitioned tables defined on this database. */
export function partitionedTableNames(db: DB): string[] {
  return [...(registry.get(db)?.keys() ?? [])].sort();
}

/** The tables registered for maintenance (rotation schedule, retention), by name. */
export function maintainedPartitionedTables(db: DB): PartitionedTable[] {
  return [...(registry.get(db)?.values() ?? [])]
    .filter((table) => table.maintenance !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The spec's partitioned tables present on this database (registered and listed), in the
 * spec's order: what GET /api/getPartitionedTables answers and the routes accept.
 */
export function listedPartitionedTables(db: DB): PartitionedTable[] {
  const tables = registry.get(db);
  return SPEC_PARTITIONED_TABLES.map((name) => tables?.get(name)).filter(
    (table): table is PartitionedTable => table?.maintenance?.listed === true,
  );
}
