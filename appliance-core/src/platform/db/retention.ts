/**
 * The retention policy (spec part 3, "Data maintenance": getRetentionPolicy, setRetentionPolicy):
 * one row per table that grows, registered by the feature that owns the table with its default
 * retention in days and its prune function, stored in `retention_policies` (migration 0019) and
 * enforced by the maintenance feature's scheduled pruner (features/maintenance/retention.engine.ts).
 *
 * Two ways to shed old data, chosen per table by its owner:
 * - Partitioned tables (the spec's syslog_log, eventlog_log, eve_log, walks_log, and flows) drop
 *   whole dated partitions through the partition functions `deleteOldPartitions` uses: no row is
 *   ever deleted from them ("they shed data only by pruning").
 * - Every other table deletes rows in batches through the storage writer (`pruneByTime`,
 *   `pruneByKey` below): each batch is one atomic group of at most about `batchRows` rows, so the
 *   write lock is held for one short transaction at a time and the intake's batches interleave
 *   with the pruner's (the writer commits producers' writes in turn). Which rows a batch deletes
 *   is planned on the API connection by index seeks (WAL: reading never waits for the writer),
 *   so the number deleted is exact without asking the worker.
 *   The sample tables were not partitioned: their primary key (tracker_id, ts) makes "older than"
 *   one index range per tracker, the reads of a window stay one range scan, and the bench
 *   (test/bench/retention.mjs, test/bench/README.md) measured the batched deletes beside the pollers.
 *
 * Invariants:
 * - A row's name and every table or column name in a prune come from code (the owner's
 *   registration), never from a request; a request names a row only by its id.
 * - setRetentionPolicy is all-or-nothing: every update is validated before any is stored, and the
 *   stored rows change in one transaction (an owner's own copy, a partitioned table's
 *   `partitioned_tables.retention_days`, in the same one).
 * - Sizes are real: the pages of the row's tables and their indexes, from the dbstat virtual table.
 */
import type { DB } from './database.js';
import type { SqlParam, StorageWriter, StorageWriterProducer } from './storage-writer.js';

export const MIN_RETENTION_DAYS = 1;
/** Largest accepted retention (about 100 years): keeps `days * DAY_MS` an exact integer. */
export const MAX_RETENTION_DAYS = 36_500;
const DAY_MS = 86_400_000;
const IDENTIFIER = /^[a-z][a-z0-9_]{0,62}$/;

export interface RetentionOwner {
  /** The row's name (the API's `table`); unique. */
  table: string;
  /** Retention in days stored the first time the row is registered. */
  defaultDays: number;
  /** Bytes the row's data occupies (dbstat; plus files on disk where the data is files). */
  size(): number;
  /** Removes what is older than `cutoff` (UTC ms); resolves with rows (or partitions) removed. */
  prune(cutoff: number): Promise<number>;
  /** The retention already stored elsewhere when the row is first made (a partitioned table's). */
  initialDays?(): number | undefined;
  /** Told a new retention inside the setRetentionPolicy transaction (an owner's own copy). */
  onChange?(days: number, now: number): void;
}

export interface RetentionRow {
  id: number;
  table: string;
  retention: number;
  size: number;
}

export interface RetentionUpdate {
  id: unknown;
  retention: unknown;
}

export type RetentionSetResult = { ok: true; changed: string[] } | { ok: false; message: string };

export interface PruneOutcome {
  table: string;
  removed: number;
  ms: number;
  error?: string;
}

/** A size measurement slower than this is cached (ms). */
const SLOW_SIZE_MS = 50;
/** How long a slow size measurement is reused (ms). */
const SIZE_CACHE_MS = 10 * 60_000;

export class RetentionRegistry {
  private readonly owners = new Map<string, RetentionOwner>();
  private readonly sizes = new Map<string, { at: number; bytes: number }>();

  constructor(private readonly db: DB) {}

  /** Adds an owner's row (stored with its default the first time). Names are unique. */
  register(owner: RetentionOwner): void {
    if (!IDENTIFIER.test(owner.table)) throw new Error(`retention: bad row name ${owner.table}`);
    if (this.owners.has(owner.table))
      throw new Error(`retention: ${owner.table} is registered twice`);
    if (!validDays(owner.defaultDays)) throw new Error(`retention: bad default for ${owner.table}`);
    this.owners.set(owner.table, owner);
    const initial = owner.initialDays?.();
    this.db
      .prepare(
        `INSERT INTO retention_policies (table_name, retention_days, updated_at) VALUES (?, ?, 0)
         ON CONFLICT (table_name) DO NOTHING`,
      )
      .run(owner.table, initial !== undefined && validDays(initial) ? initial : owner.defaultDays);
  }

  /** Registered rows in id order (stored rows whose owner is not registered are not shown). */
  list(): RetentionRow[] {
    return this.stored()
      .filter((row) => this.owners.has(row.table_name))
      .map((row) => ({
        id: row.id,
        table: row.table_name,
        retention: row.retention_days,
        size: this.size(this.owners.get(row.table_name) as RetentionOwner),
      }));
  }

  /**
   * A row's size: measured at each call while measuring is cheap; a measurement that took longer
   * than SLOW_SIZE_MS (dbstat walks every page of the b-tree: about 7 ms per MB measured here) is
   * reused for SIZE_CACHE_MS, and measured again after each prune of the row.
   */
  private size(owner: RetentionOwner): number {
    const cached = this.sizes.get(owner.table);
    const now = Date.now();
    if (cached && now - cached.at < SIZE_CACHE_MS) return cached.bytes;
    const bytes = safeSize(owner);
    const took = Date.now() - now;
    if (took > SLOW_SIZE_MS) this.sizes.set(owner.table, { at: Date.now(), bytes });
    else this.sizes.delete(owner.table);
    return bytes;
  }

  /** The stored retention of a registered row, in days. */
  days(table: string): number | undefined {
    return this.stored().find((row) => row.table_name === table)?.retention_days;
  }

  /** Validates every update, then stores them all in one transaction; or changes nothing. */
  set(updates: readonly RetentionUpdate[], now: number): RetentionSetResult {
    if (updates.length === 0) return { ok: false, message: 'No retention rows were given.' };
    const byId = new Map(
      this.stored()
        .filter((row) => this.owners.has(row.table_name))
        .map((row) => [row.id, row]),
    );
    const seen = new Set<number>();
    for (const [i, update] of updates.entries()) {
      const id = update.id;
      if (typeof id !== 'number' || !Number.isInteger(id) || !byId.has(id))
        return { ok: false, message: `Row ${i + 1}: no retention row has the id ${show(id)}.` };
      if (seen.has(id))
        return { ok: false, message: `Row ${i + 1}: the id ${id} is given more than once.` };
      seen.add(id);
      if (!validDays(update.retention))
        return {
          ok: false,
          message: `Row ${i + 1}: the retention must be a whole number of days from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}.`,
        };
    }
    const changed: string[] = [];
    this.db.transaction(() => {
      const store = this.db.prepare(
        'UPDATE retention_policies SET retention_days = ?, updated_at = ? WHERE id = ?',
      );
      for (const update of updates) {
        const row = byId.get(update.id as number) as StoredRow;
        const days = update.retention as number;
        store.run(days, now, row.id);
        this.owners.get(row.table_name)?.onChange?.(days, now);
        if (days !== row.retention_days) changed.push(row.table_name);
      }
    })();
    return { ok: true, changed };
  }

  /** Prunes every registered row past its retention, one after the other; never throws. */
  async pruneAll(now: number): Promise<PruneOutcome[]> {
    const outcomes: PruneOutcome[] = [];
    for (const row of this.stored()) {
      const owner = this.owners.get(row.table_name);
      if (!owner) continue;
      const started = Date.now();
      try {
        const removed = await owner.prune(now - row.retention_days * DAY_MS);
        if (removed > 0) this.sizes.delete(owner.table);
        outcomes.push({ table: owner.table, removed, ms: Date.now() - started });
      } catch (err) {
        outcomes.push({
          table: owner.table,
          removed: 0,
          ms: Date.now() - started,
          error: (err as Error)?.message ?? String(err),
        });
      }
    }
    return outcomes;
  }

  private stored(): StoredRow[] {
    return this.db
      .prepare('SELECT id, table_name, retention_days FROM retention_policies ORDER BY id')
      .all() as StoredRow[];
  }
}

interface StoredRow {
  id: number;
  table_name: string;
  retention_days: number;
}

function validDays(days: unknown): days is number {
  return (
    typeof days === 'number' &&
    Number.isInteger(days) &&
    days >= MIN_RETENTION_DAYS &&
    days <= MAX_RETENTION_DAYS
  );
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function safeSize(owner: RetentionOwner): number {
  try {
    return owner.size();
  } catch {
    return 0;
  }
}

// --- sizes -----------------------------------------------------------------------------------

/**
 * Bytes of the pages of these tables and all their indexes in one schema (dbstat, aggregated per
 * b-tree: one walk of each named b-tree, not of the whole file).
 */
export function tableBytes(db: DB, tables: readonly string[], schema = 'main'): number {
  let bytes = 0;
  const master = schema === 'main' ? 'sqlite_master' : `"${schema}".sqlite_master`;
  for (const table of tables) {
    const names = db
      .prepare(`SELECT name FROM ${master} WHERE tbl_name = ? AND type IN ('table', 'index')`)
      .all(table) as { name: string }[];
    for (const { name } of names) {
      const row = db.prepare('SELECT pgsize FROM dbstat(?, 1) WHERE name = ?').get(schema, name) as
        { pgsize: number | null } | undefined;
      bytes += row?.pgsize ?? 0;
    }
  }
  return bytes;
}

// --- batched deletes through the storage writer ------------------------------------------------

/** The producer the pruner's deletes go through (its own queue and counters). */
export const RETENTION_PRODUCER = 'retention';
/** The longest stretch the pruner plans on the API thread before yielding to the event loop. */
const PLAN_SLICE_MS = 5;
/** Rows a batch deletes, about (one transaction of the writer: some 10-50 ms measured). */
export const RETENTION_BATCH_ROWS = 2000;

export interface TimePruneSpec {
  /** The owner's statement namespace (`alerts`, `logs`...). */
  namespace: string;
  table: string;
  /** An indexed time column (UTC ms), the leading column of an index. */
  time: string;
  /** Extra condition written in code (e.g. `closed_at IS NOT NULL`), never input. */
  where?: string;
  batchRows?: number;
  /** Told the rows of each committed batch (benches and tests). */
  onBatch?: (rows: number) => void;
}

/**
 * Prunes a table by an indexed time column, oldest first, in batches. A batch deletes the rows
 * with time <= T where T is the time of the batch's last row (so rows sharing a time go together:
 * a batch may exceed batchRows by the rows sharing T).
 */
export function pruneByTime(db: DB, storage: StorageWriter, spec: TimePruneSpec) {
  for (const name of [spec.table, spec.time]) assertIdentifier(name);
  const extra = spec.where ? ` AND (${spec.where})` : '';
  const statement = `${spec.namespace}.retention.${spec.table}`;
  storage.define(statement, `DELETE FROM ${spec.table} WHERE ${spec.time} <= ?${extra}`);
  const batch = spec.batchRows ?? RETENTION_BATCH_ROWS;
  const boundAt = db.prepare(
    `SELECT ${spec.time} AS t FROM ${spec.table} WHERE ${spec.time} < ?${extra} ORDER BY ${spec.time} LIMIT 1 OFFSET ?`,
  );
  const newest = db.prepare(
    `SELECT max(${spec.time}) AS t FROM ${spec.table} WHERE ${spec.time} < ?${extra}`,
  );
  const count = db.prepare(
    `SELECT count(*) AS n FROM ${spec.table} WHERE ${spec.time} <= ?${extra}`,
  );
  return async (cutoff: number): Promise<number> => {
    const producer = retentionProducer(storage);
    let removed = 0;
    for (let round = 0; round < 1_000_000; round++) {
      const bound =
        (boundAt.get(cutoff, batch - 1) as { t: number } | undefined)?.t ??
        (newest.get(cutoff) as { t: number | null }).t;
      if (bound === null || bound === undefined) break;
      const n = (count.get(bound) as { n: number }).n;
      await commit(producer, [{ statement, params: [bound] }]);
      spec.onBatch?.(n);
      removed += n;
      if (n === 0) break;
    }
    return removed;
  };
}

export interface KeyPruneSpec {
  namespace: string;
  /** Statement name suffix (unique within the namespace), e.g. the row's name. */
  name: string;
  table: string;
  /** Leading primary-key columns with fixed values (e.g. kind, in order), before `key`. */
  fixed?: readonly { column: string; value: SqlParam }[];
  /** The primary-key column walked (e.g. tracker_id). */
  key: string;
  /** Primary-key columns with fixed values between `key` and `time` (e.g. resolution). */
  between?: readonly { column: string; value: SqlParam }[];
  /** The time column, last of the primary key used here. */
  time: string;
  batchRows?: number;
  /** Told the rows of each committed batch (benches and tests). */
  onBatch?: (rows: number) => void;
}

/**
 * Prunes a table whose primary key (or an index) is (fixed..., key, between..., time): walks the
 * keys by index seeks and deletes each key's old rows as one range, batching keys into atomic
 * groups of about batchRows rows; a key with more old rows than a batch is split by time.
 */
export function pruneByKey(db: DB, storage: StorageWriter, spec: KeyPruneSpec) {
  const fixed = spec.fixed ?? [];
  const between = spec.between ?? [];
  for (const name of [
    spec.table,
    spec.key,
    spec.time,
    ...fixed.map((f) => f.column),
    ...between.map((b) => b.column),
  ])
    assertIdentifier(name);
  const fixedSql = fixed.map((f) => `${f.column} = ? AND `).join('');
  const fixedParams = fixed.map((f) => f.value);
  const betweenSql = between.map((b) => ` AND ${b.column} = ?`).join('');
  const betweenParams = between.map((b) => b.value);
  const range = `${fixedSql}${spec.key} = ?${betweenSql} AND ${spec.time}`;
  const statement = `${spec.namespace}.retention.${spec.name}`;
  storage.define(statement, `DELETE FROM ${spec.table} WHERE ${range} <= ?`);
  const batch = spec.batchRows ?? RETENTION_BATCH_ROWS;
  const nextKey = db.prepare(
    `SELECT ${spec.key} AS k FROM ${spec.table} WHERE ${fixedSql}${spec.key} > ? ORDER BY ${spec.key} LIMIT 1`,
  );
  const firstKey = db.prepare(
    `SELECT ${spec.key} AS k FROM ${spec.table}${fixed.length ? ` WHERE ${fixedSql.slice(0, -5)}` : ''} ORDER BY ${spec.key} LIMIT 1`,
  );
  const oldCount = db.prepare(
    `SELECT count(*) AS n FROM (SELECT 1 FROM ${spec.table} WHERE ${range} < ? LIMIT ?)`,
  );
  const timeAt = db.prepare(
    `SELECT ${spec.time} AS t FROM ${spec.table} WHERE ${range} < ? ORDER BY ${spec.time} LIMIT 1 OFFSET ?`,
  );
  const newestOld = db.prepare(
    `SELECT max(${spec.time}) AS t FROM ${spec.table} WHERE ${range} < ?`,
  );
  return async (cutoff: number): Promise<number> => {
    const producer = retentionProducer(storage);
    let removed = 0;
    let ops: { statement: string; params: SqlParam[] }[] = [];
    let inBatch = 0;
    const flush = async () => {
      if (ops.length === 0) return;
      await commit(producer, ops);
      spec.onBatch?.(inBatch);
      removed += inBatch;
      ops = [];
      inBatch = 0;
    };
    let key = (firstKey.get(...fixedParams) as { k: SqlParam } | undefined)?.k;
    let slice = Date.now();
    for (let keys = 0; key !== undefined && keys < 100_000_000; keys++) {
      // Planning runs on the API thread: hand the event loop back every few milliseconds, also
      // while walking keys that have nothing to delete (20,000 trackers are 40,000 seeks a row).
      if (Date.now() - slice >= PLAN_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = Date.now();
      }
      const args = [...fixedParams, key, ...betweenParams];
      // Splits a key with many old rows into batches by time (bounded: each round removes rows).
      for (let round = 0; round < 1_000_000; round++) {
        const room = batch - inBatch;
        const n = (oldCount.get(...args, cutoff, room + 1) as { n: number }).n;
        if (n === 0) break;
        if (n <= room) {
          const bound = (newestOld.get(...args, cutoff) as { t: number }).t;
          ops.push({ statement, params: [...args, bound] });
          inBatch += n;
          break;
        }
        const bound = (timeAt.get(...args, cutoff, room - 1) as { t: number }).t;
        ops.push({ statement, params: [...args, bound] });
        inBatch += room;
        await flush();
      }
      if (inBatch >= batch) await flush();
      key = (nextKey.get(...fixedParams, key) as { k: SqlParam } | undefined)?.k;
    }
    await flush();
    return removed;
  };
}

function retentionProducer(storage: StorageWriter): StorageWriterProducer {
  return storage.producer(RETENTION_PRODUCER, { flushMs: 5 });
}

async function commit(
  producer: StorageWriterProducer,
  ops: { statement: string; params: SqlParam[] }[],
): Promise<void> {
  const result = await producer.group(ops);
  if (!result.committed) throw new Error(`retention batch not committed: ${result.error}`);
}

function assertIdentifier(name: string): void {
  if (!IDENTIFIER.test(name)) throw new Error(`retention: bad identifier ${name}`);
}
