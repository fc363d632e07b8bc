/**
 * The maintenance side of the partitioned-table helper, on real file databases: bounds recorded
 * at rotation (listing never counts a dated partition), window queries that read only the
 * overlapping partitions (query plan), incremental vacuum returning bytes to the file system,
 * tablespaces (attached files, the TEMP view, moves back and forth, crash leftovers, a missing
 * tablespace), and the storage writer's worker writing with the tablespaces attached.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './database.js';
import { ensureIncrementalVacuum, migrate } from './migrate.js';
import {
  definePartitionedTable,
  listedPartitionedTables,
  maintainedPartitionedTables,
  PartitionedTable,
  PartitionError,
} from './partitions.js';
import { StorageWriter } from './storage-writer.js';
import { attachTablespaces, parseTablespaces, type Tablespace } from './tablespaces.js';

const DAY = 86_400_000;
const NOV21 = Date.UTC(2026, 10, 21, 12, 0, 0);

let dir: string;
let file: string;
let db: DB;
let archive: Tablespace;

function open(): DB {
  const connection = openDatabase(file);
  attachTablespaces(connection, [archive]);
  return connection;
}

function createDemo(database: DB) {
  database.exec(`
    CREATE TABLE demo_log_latest (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      device_id INTEGER NOT NULL,
      ts INTEGER NOT NULL,
      message TEXT NOT NULL
    ) STRICT;
    CREATE INDEX demo_log_latest_by_device ON demo_log_latest (device_id, ts);
    CREATE INDEX demo_log_latest_by_ts ON demo_log_latest (ts);
    CREATE VIEW demo_log AS SELECT * FROM demo_log_latest;`);
}

const insertMany = (database: DB, n: number, from: number, step: number, size = 10) => {
  const statement = database.prepare(
    'INSERT INTO demo_log_latest (device_id, ts, message) VALUES (?, ?, ?)',
  );
  database.transaction(() => {
    for (let i = 0; i < n; i++) statement.run(i % 7, from + i * step, 'x'.repeat(size));
  })();
};
const count = (database: DB, sql: string) => (database.prepare(sql).get() as { n: number }).n;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'partitions-maint-'));
  fs.mkdirSync(path.join(dir, 'disk2'));
  [archive] = parseTablespaces([`archive=${path.join(dir, 'disk2')}`]) as [Tablespace];
  file = path.join(dir, 'appliance.db');
  db = openDatabase(file);
  expect(ensureIncrementalVacuum(db)).toBe('set-on-new-file');
  expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
  migrate(db, NOV21);
  createDemo(db);
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('bounds', () => {
  it('are recorded in the rotating transaction; listing reads them, never the rows', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 500, NOV21 - 2 * DAY, 60_000);
    const dated = table.rotate(NOV21) as string;
    const bounds = db
      .prepare('SELECT * FROM partition_bounds WHERE partition_name = ?')
      .get(dated) as Record<string, number | string>;
    expect(bounds).toMatchObject({
      table_name: 'demo_log',
      tablespace: 'default',
      rows: 500,
      min_time: NOV21 - 2 * DAY,
      max_time: NOV21 - 2 * DAY + 499 * 60_000,
      rotated_at: NOV21,
    });
    expect(bounds.size_bytes).toBeGreaterThan(4096);
    // A row slipped in behind the helper's back is not seen: the listing does not count.
    db.prepare(`INSERT INTO ${dated} (device_id, ts, message) VALUES (1, 1, 'x')`).run();
    const [latest, listed] = table.list();
    expect(listed).toMatchObject({ name: dated, rows: 500, rowsExact: true });
    // The live partition: estimated from its id span, times from its index.
    insertMany(db, 3, NOV21, 1000);
    expect(table.list()[0]).toMatchObject({
      name: 'demo_log_latest',
      rows: 3,
      rowsExact: false,
      minTime: NOV21,
      maxTime: NOV21 + 2000,
    });
    expect(latest).toMatchObject({ rows: 0, minTime: null });
  });

  it('are backfilled for dated partitions that have none (made before bounds existed)', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 10, NOV21 - DAY, 1000);
    const dated = table.rotate(NOV21) as string;
    db.prepare('DELETE FROM partition_bounds').run();
    const again = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    expect(count(db, 'SELECT rows AS n FROM partition_bounds')).toBe(10);
    expect(again.list()[1]).toMatchObject({ name: dated, rows: 10 });
  });
});

describe('window queries', () => {
  it('read only the partitions that overlap the window (query plan)', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    for (const day of [10, 5, 2]) {
      insertMany(db, 50, NOV21 - day * DAY, 60_000);
      table.rotate(NOV21 - day * DAY + DAY / 2);
    }
    insertMany(db, 50, NOV21, 60_000);
    const [p2, p5, p10] = table.partitions().slice(1) as [string, string, string];
    const from = NOV21 - 5 * DAY - 1000;
    const to = NOV21 - 5 * DAY + 3_600_000;
    expect(table.windowPartitions(from, to).map((p) => p.name)).toEqual([p5]);
    const sql = `SELECT id, ts FROM (${table.windowSql(from, to)}) WHERE ts BETWEEN ? AND ? ORDER BY ts DESC LIMIT 10`;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(from, to) as { detail: string }[])
      .map((row) => row.detail)
      .join('\n');
    // p5 through its time index (named for its generation), and no other partition at all.
    expect(plan).toMatch(
      new RegExp(`SEARCH (main\\.)?${p5} USING (COVERING )?INDEX demo_log_latest_g2_by_ts`),
    );
    expect(plan).not.toContain(p2);
    expect(plan).not.toContain(p10);
    expect(plan).not.toMatch(/(SEARCH|SCAN) (main\.)?demo_log_latest\b/);
    expect(db.prepare(sql).all(from, to).length).toBe(10);
    // A window over the live partition and the newest dated one; one over nothing.
    expect(table.windowPartitions(NOV21 - 2 * DAY, NOV21 + DAY).map((p) => p.name)).toEqual([
      'demo_log_latest',
      p2,
    ]);
    const empty = table.windowSql(NOV21 - 100 * DAY, NOV21 - 99 * DAY);
    expect(db.prepare(`SELECT count(*) AS n FROM (${empty})`).get()).toEqual({ n: 0 });
  });
});

describe('incremental vacuum', () => {
  it('returns the pages of dropped partitions to the file system', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 20_000, NOV21 - 30 * DAY, 1000, 200);
    table.rotate(NOV21 - 29 * DAY);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = fs.statSync(file).size;
    expect(table.dropOlderThan(NOV21)).toHaveLength(1);
    const returned = table.reclaimSpace();
    db.pragma('wal_checkpoint(TRUNCATE)');
    const after = fs.statSync(file).size;
    expect(returned).toBeGreaterThan(4_000_000);
    expect(before - after).toBe(returned);
  });

  it('returns them in steps, yielding between steps, to the same total', async () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 20_000, NOV21 - 30 * DAY, 1000, 200);
    table.rotate(NOV21 - 29 * DAY);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = fs.statSync(file).size;
    table.dropOlderThan(NOV21);
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const returned = await table.reclaimSpaceInSteps(64);
    running = false;
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(returned).toBeGreaterThan(4_000_000);
    expect(before - fs.statSync(file).size).toBe(returned);
    expect(db.pragma('freelist_count', { simple: true })).toBe(0);
    // About 20 steps of 64 pages (~5 MB): the event loop ran between them.
    expect(turns).toBeGreaterThan(10);
  });

  it('switches an existing database once (VACUUM), or leaves a large one as it is', () => {
    const other = openDatabase(path.join(dir, 'old.db'));
    other.exec('CREATE TABLE t (x TEXT)');
    expect(other.pragma('auto_vacuum', { simple: true })).toBe(0);
    expect(ensureIncrementalVacuum(other, 1)).toBe('too-large');
    expect(other.pragma('auto_vacuum', { simple: true })).toBe(0);
    expect(ensureIncrementalVacuum(other)).toBe('vacuumed');
    expect(other.pragma('auto_vacuum', { simple: true })).toBe(2);
    expect(ensureIncrementalVacuum(other)).toBe('incremental');
    other.close();
  });
});

describe('tablespaces', () => {
  const tableIn = (database: DB, schema: string, name: string) =>
    database.prepare(`SELECT 1 FROM "${schema}".sqlite_master WHERE name = ?`).get(name) !==
    undefined;

  it('moves dated partitions with their indexes to the other file; reads go through a TEMP view', async () => {
    db.close();
    db = open();
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 12_000, NOV21 - 3 * DAY, 10);
    const old = table.rotate(NOV21 - 2 * DAY) as string;
    insertMany(db, 100, NOV21, 10);
    const moved = await table.moveToTablespace(archive, NOV21, { chunkRows: 5000 });
    expect(moved).toEqual([old]);
    expect(tableIn(db, 'main', old)).toBe(false);
    expect(tableIn(db, 'ts_archive', old)).toBe(true);
    expect(
      count(
        db,
        `SELECT count(*) AS n FROM ts_archive.sqlite_master WHERE type = 'index' AND tbl_name = '${old}'`,
      ),
    ).toBe(2);
    expect(tableIn(db, 'main', 'demo_log_latest')).toBe(true);
    expect(count(db, 'SELECT count(*) AS n FROM demo_log')).toBe(12_100);
    expect(count(db, `SELECT count(*) AS n FROM temp.sqlite_master WHERE name = 'demo_log'`)).toBe(
      1,
    );
    expect(count(db, `SELECT count(*) AS n FROM main.sqlite_master WHERE name = 'demo_log'`)).toBe(
      0,
    );
    expect(table.list()[1]).toMatchObject({ name: old, tablespace: 'archive', rows: 12_000 });
    // The data really is in the other directory's file.
    const archiveFile = new (db.constructor as new (f: string, o: object) => DB)(archive.file, {
      readonly: true,
    });
    expect(count(archiveFile, `SELECT count(*) AS n FROM "${old}"`)).toBe(12_000);
    archiveFile.close();
    // A connection that did not attach the tablespace fails loudly instead of reading part of it.
    const bare = openDatabase(file);
    expect(() => bare.prepare('SELECT count(*) FROM demo_log').get()).toThrow(/no such table/);
    bare.close();
    // Another connection that attaches it builds its own TEMP view at registration.
    const second = open();
    new PartitionedTable(second, { name: 'demo_log', timeColumn: 'ts' });
    expect(count(second, 'SELECT count(*) AS n FROM demo_log')).toBe(12_100);
    second.close();
    // Window queries name the attached schema.
    expect(table.windowSql(NOV21 - 3 * DAY, NOV21 - 3 * DAY + 1)).toContain(
      `"ts_archive"."${old}"`,
    );
    // Rotation and drop keep working; moving back brings it home.
    table.rotate(NOV21);
    expect(await table.moveToTablespace(null, NOV21)).toEqual([old]);
    expect(tableIn(db, 'main', old)).toBe(true);
    expect(tableIn(db, 'ts_archive', old)).toBe(false);
    expect(count(db, `SELECT count(*) AS n FROM main.sqlite_master WHERE name = 'demo_log'`)).toBe(
      1,
    );
    expect(count(db, 'SELECT count(*) AS n FROM demo_log')).toBe(12_100);
  });

  it('holds the table lock: a rotation asked for during a move waits for it', async () => {
    db.close();
    db = open();
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 20_000, NOV21 - 3 * DAY, 10);
    table.rotate(NOV21 - 2 * DAY);
    insertMany(db, 10, NOV21, 10);
    const order: string[] = [];
    const move = table.moveToTablespace(archive, NOV21, { chunkRows: 1000 }).then((m) => {
      order.push('move');
      return m;
    });
    const rotation = table.exclusive(() => {
      order.push('rotate');
      return table.rotate(NOV21);
    });
    await Promise.all([move, rotation]);
    expect(order).toEqual(['move', 'rotate']);
    expect(count(db, 'SELECT count(*) AS n FROM demo_log')).toBe(20_010);
  });

  it('drops the leftover copy of an interrupted move; refuses to start without a tablespace that holds partitions', async () => {
    db.close();
    db = open();
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insertMany(db, 10, NOV21 - 3 * DAY, 10);
    const old = table.rotate(NOV21 - 2 * DAY) as string;
    // A crash after the copy committed and before the drop: the partition is in both files.
    db.exec(`CREATE TABLE ts_archive."${old}" AS SELECT * FROM main."${old}"`);
    new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    expect(tableIn(db, 'ts_archive', old)).toBe(false);
    expect(count(db, 'SELECT count(*) AS n FROM demo_log')).toBe(10);

    await table.moveToTablespace(archive, NOV21);
    db.close();
    db = openDatabase(file); // the tablespace no longer configured
    expect(() => new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' })).toThrow(
      PartitionError,
    );
    expect(() => new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' })).toThrow(
      /tablespace archive, which is not configured/,
    );
  });

  it('takes names only from the configuration', () => {
    expect(() => parseTablespaces(['Bad Name=/tmp'])).toThrow(/not a tablespace name/);
    expect(() => parseTablespaces(['default=/tmp'])).toThrow(/not a tablespace name/);
    expect(() => parseTablespaces(['a=relative/dir'])).toThrow(/absolute/);
    expect(() => parseTablespaces(['a=/x', 'a=/y'])).toThrow(/named twice/);
    expect(() =>
      attachTablespaces(db, parseTablespaces([`gone=${path.join(dir, 'missing')}`])),
    ).toThrow(/does not exist/);
  });

  it("are attached by the storage writer's worker, whose writes land in the live partition", async () => {
    db.close();
    db = open();
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    const writer = new StorageWriter(db, { flushMs: 5 });
    // Inserts only where the writing connection has the tablespace attached.
    writer.define(
      'test.demo',
      `INSERT INTO demo_log_latest (device_id, ts, message)
       SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM pragma_database_list WHERE name = 'ts_archive')`,
    );
    writer.start();
    try {
      for (let i = 0; i < 100; i++) writer.write('test.demo', [1, NOV21 - 2 * DAY + i, 'w']);
      await writer.flush();
      expect(count(db, 'SELECT count(*) AS n FROM demo_log_latest')).toBe(100);
      const old = table.rotate(NOV21 - DAY) as string;
      await table.moveToTablespace(archive, NOV21);
      for (let i = 0; i < 5; i++) writer.write('test.demo', [1, NOV21 + i, 'w']);
      await writer.flush();
      expect(count(db, 'SELECT count(*) AS n FROM demo_log')).toBe(105);
      expect(count(db, `SELECT count(*) AS n FROM ts_archive."${old}"`)).toBe(100);
    } finally {
      await writer.close();
    }
  });
});

describe('registry', () => {
  it('lists exactly the spec tables registered as listed; others are maintained but internal', () => {
    // walks_log_latest exists (migration 0003); flows_log stands for a later internal table.
    db.exec('CREATE TABLE flows_log_latest (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL) STRICT');
    const defaults = { rotationCron: '0 0 * * *', retentionDays: 84 };
    definePartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    definePartitionedTable(db, {
      name: 'flows_log',
      timeColumn: 'ts',
      maintenance: { listed: false, ...defaults },
    });
    const walks = definePartitionedTable(db, { name: 'walks_log', timeColumn: 'timestamp' });
    expect(listedPartitionedTables(db)).toEqual([]);
    // A second registration (the owner's, then the composition root's) adds the maintenance defaults.
    definePartitionedTable(db, {
      name: 'walks_log',
      timeColumn: 'timestamp',
      maintenance: { listed: true, ...defaults },
    });
    expect(listedPartitionedTables(db).map((t) => t.name)).toEqual(['walks_log']);
    expect(maintainedPartitionedTables(db).map((t) => t.name)).toEqual(['flows_log', 'walks_log']);
    expect(walks.settings()).toMatchObject({
      cronSchedule: '0 0 * * *',
      retentionDays: 84,
      tablespace: 'default',
    });
    // Stored once: a schedule changed later survives the next registration.
    walks.setCronSchedule('5 4 * * *', NOV21);
    walks.setMaintenance({ listed: true, ...defaults });
    expect(walks.settings()?.cronSchedule).toBe('5 4 * * *');
  });
});
