/**
 * Partitioned tables in SQLite, so that pruning is dropping a table, never deleting rows.
 *
 * A partitioned table `x` is a set of real tables with one schema: `x_latest` receives every
 * write; rotation renames it to a dated partition `x_pYYYYMMDD` (`_2`, `_3`... when rotated more
 * than once a day) and creates a fresh `x_latest` from the same DDL; the view `x` unions them
 * all for reading. The owner's migration creates `x_latest` (with its indexes) and the view.
 *
 * Invariants:
 * - Table and partition names never come from input: a table is usable only once code has
 *   defined it (the allowlist), and a partition name is accepted only when it is one of the
 *   partitions that exist for that table right now.
 * - Every structural change (rotate, drop) runs in one transaction and rebuilds the view, so
 *   readers see either the old or the new set of partitions.
 * - Rotation keeps AUTOINCREMENT ids increasing across partitions (ids stay unique in the view).
 * - A schema change to a partitioned table must be applied to every partition
 *   (`partitions()` lists them); the view selects `*` from each.
 */
import type { DB } from './database.js';

const IDENTIFIER = /^[a-z][a-z0-9_]{0,62}$/;

export interface PartitionedTableOptions {
  /** Base name: the view's name; partitions are `<name>_latest` and `<name>_pYYYYMMDD[_n]`. */
  name: string;
  /** Integer UTC-milliseconds column that orders rows in time (should be indexed). */
  timeColumn: string;
}

export interface PartitionInfo {
  name: string;
  isLatest: boolean;
  rows: number;
  /** Smallest and largest value of the time column, null when the partition is empty. */
  minTime: number | null;
  maxTime: number | null;
  /** Bytes used by the partition's table and its indexes. */
  sizeBytes: number;
  /** UTC midnight of the day in the partition's name (rotation day); null for the latest. */
  rotatedOn: number | null;
}

interface IndexDefinition {
  name: string;
  sql: string;
}

const quote = (identifier: string) => `"${identifier}"`;

function dayStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
}

export class PartitionedTable {
  readonly name: string;
  readonly latest: string;
  readonly timeColumn: string;
  private readonly datedPattern: RegExp;

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
    if (!this.tableSql(this.latest))
      throw new Error(
        `partitioned table ${this.name}: table ${this.latest} does not exist (create it in a migration)`,
      );
    if (!this.viewIsCurrent()) this.db.transaction(() => this.rebuildView())();
  }

  /** Every partition, newest first: the latest, then dated partitions from newest to oldest. */
  partitions(): string[] {
    const dated = (
      this.db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'`)
        .all(`${this.name.replace(/_/g, '\\_')}\\_p%`) as {
        name: string;
      }[]
    )
      .map((row) => row.name)
      .filter((name) => this.datedPattern.test(name))
      .sort((a, b) => this.order(b) - this.order(a));
    return [this.latest, ...dated];
  }

  /** True when `partition` is one of this table's partitions (the only way a name from input is accepted). */
  isPartition(partition: string): boolean {
    return this.partitions().includes(partition);
  }

  list(): PartitionInfo[] {
    return this.partitions().map((partition) => {
      const stats = this.db
        .prepare(
          `SELECT count(*) AS rows, min(${quote(this.timeColumn)}) AS minTime, max(${quote(this.timeColumn)}) AS maxTime FROM ${quote(partition)}`,
        )
        .get() as { rows: number; minTime: number | null; maxTime: number | null };
      return {
        name: partition,
        isLatest: partition === this.latest,
        ...stats,
        sizeBytes: this.sizeOf(partition),
        rotatedOn: this.rotatedOn(partition),
      };
    });
  }

  /**
   * Renames the latest partition to a dated one and starts a fresh latest; deletes nothing.
   * Returns the new partition's name, or null when the latest partition is empty (nothing to roll).
   */
  rotate(now: number): string | null {
    return this.db.transaction(() => {
      const empty =
        this.db.prepare(`SELECT 1 FROM ${quote(this.latest)} LIMIT 1`).get() === undefined;
      if (empty) return null;
      const tableSql = this.tableSql(this.latest) as string;
      const indexes = this.indexesOf(this.latest);
      const sequence = this.sequenceOf(this.latest);
      let dated = `${this.name}_p${dayStamp(now)}`;
      for (let n = 2; this.tableSql(dated); n++) dated = `${this.name}_p${dayStamp(now)}_${n}`;

      this.db.exec(`DROP VIEW IF EXISTS ${quote(this.name)}`);
      this.db.exec(`ALTER TABLE ${quote(this.latest)} RENAME TO ${quote(dated)}`);
      // Index names are schema-wide: move the partition's indexes to names of its own.
      for (const index of indexes) {
        this.db.exec(`DROP INDEX ${quote(index.name)}`);
        this.db.exec(retargetIndex(index, this.latest, dated));
      }
      this.db.exec(tableSql);
      for (const index of indexes) this.db.exec(index.sql);
      if (sequence !== null)
        this.db
          .prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)')
          .run(this.latest, sequence);
      this.rebuildView();
      return dated;
    })();
  }

  /**
   * Drops dated partitions whose newest row is older than `cutoff` (an empty partition counts by
   * its rotation day). The latest partition is never dropped. Returns the dropped names.
   */
  dropOlderThan(cutoff: number): string[] {
    return this.db.transaction(() => {
      const dropped: string[] = [];
      for (const partition of this.partitions()) {
        if (partition === this.latest) continue;
        const { maxTime } = this.db
          .prepare(`SELECT max(${quote(this.timeColumn)}) AS maxTime FROM ${quote(partition)}`)
          .get() as { maxTime: number | null };
        // An empty partition holds nothing newer than the end of its rotation day.
        const newest = maxTime ?? (this.rotatedOn(partition) as number) + 86_400_000;
        if (newest < cutoff) dropped.push(partition);
      }
      if (dropped.length > 0) this.dropTables(dropped);
      return dropped;
    })();
  }

  /** Drops one dated partition named by the caller; false when it is not a dated partition of this table. */
  dropPartition(partition: string): boolean {
    return this.db.transaction(() => {
      if (partition === this.latest || !this.isPartition(partition)) return false;
      this.dropTables([partition]);
      return true;
    })();
  }

  /**
   * Deletes matching rows from every partition (for example a deleted device's rows). `where`
   * is SQL written in code, never input; values go in `params`. Returns the number of rows deleted.
   */
  deleteWhere(where: string, params: readonly unknown[]): number {
    let deleted = 0;
    for (const partition of this.partitions())
      deleted += this.db
        .prepare(`DELETE FROM ${quote(partition)} WHERE ${where}`)
        .run(...params).changes;
    return deleted;
  }

  // --- helpers -----------------------------------------------------------------------------

  private order(partition: string): number {
    const m = this.datedPattern.exec(partition);
    if (!m) return -1;
    return Number(`${m[1]}${m[2]}${m[3]}`) * 10_000 + Number(m[4] ?? 1);
  }

  private rotatedOn(partition: string): number | null {
    const m = this.datedPattern.exec(partition);
    return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : null;
  }

  private tableSql(table: string): string | undefined {
    const row = this.db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`)
      .get(table) as { sql: string } | undefined;
    return row?.sql;
  }

  private indexesOf(table: string): IndexDefinition[] {
    return this.db
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`,
      )
      .all(table) as IndexDefinition[];
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

  private sizeOf(partition: string): number {
    const names = [partition, ...this.indexesOf(partition).map((i) => i.name)];
    try {
      const row = this.db
        .prepare(
          `SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name IN (SELECT value FROM json_each(?))`,
        )
        .get(JSON.stringify(names)) as { bytes: number };
      return row.bytes;
    } catch {
      // SQLite built without the dbstat virtual table: the size is unknown.
      return 0;
    }
  }

  private dropTables(partitions: readonly string[]): void {
    this.db.exec(`DROP VIEW IF EXISTS ${quote(this.name)}`);
    for (const partition of partitions) this.db.exec(`DROP TABLE ${quote(partition)}`);
    this.rebuildView();
  }

  private viewSql(): string {
    const selects = this.partitions().map((partition) => `SELECT * FROM ${quote(partition)}`);
    return `CREATE VIEW ${quote(this.name)} AS ${selects.join(' UNION ALL ')}`;
  }

  private viewIsCurrent(): boolean {
    const row = this.db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?`)
      .get(this.name) as { sql: string } | undefined;
    return row?.sql === this.viewSql();
  }

  private rebuildView(): void {
    this.db.exec(`DROP VIEW IF EXISTS ${quote(this.name)}`);
    this.db.exec(this.viewSql());
  }
}

/** The CREATE INDEX statement of `index` moved from table `from` to table `to`, under a name of its own. */
function retargetIndex(index: IndexDefinition, from: string, to: string): string {
  const m =
    /^CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?("?)([A-Za-z0-9_]+)\2\s+ON\s+("?)([A-Za-z0-9_]+)\4\s*(\([\s\S]*)$/i.exec(
      index.sql,
    );
  if (!m) throw new Error(`partitioned table: cannot read index ${index.name}`);
  const name = (m[3] as string).includes(from)
    ? (m[3] as string).replace(from, to)
    : `${to}_${m[3] as string}`;
  return `CREATE ${m[1] ?? ''}INDEX ${quote(name)} ON ${quote(to)} ${m[6] as string}`;
}

const registry = new WeakMap<DB, Map<string, PartitionedTable>>();

/**
 * Declares a partitioned table on a database (called once by its owning feature). The set of
 * defined tables is the allowlist that maintenance endpoints resolve table names against.
 */
export function definePartitionedTable(db: DB, options: PartitionedTableOptions): PartitionedTable {
  let tables = registry.get(db);
  if (!tables) registry.set(db, (tables = new Map<string, PartitionedTable>()));
  const existing = tables.get(options.name);
  if (existing) return existing;
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
