import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './database.js';
import { migrate } from './migrate.js';
import {
  definePartitionedTable,
  partitionedTable,
  partitionedTableNames,
  PartitionedTable,
} from './partitions.js';

const DAY = 86_400_000;
const NOV21 = Date.UTC(2026, 10, 21, 12, 0, 0);

let dir: string;
let db: DB;

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

const insert = (deviceId: number, ts: number, message = 'x') =>
  db
    .prepare('INSERT INTO demo_log_latest (device_id, ts, message) VALUES (?, ?, ?)')
    .run(deviceId, ts, message);
const viewRows = () =>
  db.prepare('SELECT id, device_id, ts, message FROM demo_log ORDER BY id').all() as {
    id: number;
    device_id: number;
    ts: number;
    message: string;
  }[];
const tables = () =>
  (
    db
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'demo_log%' ORDER BY name`,
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
const indexes = () =>
  db
    .prepare(
      `SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'demo_log%' ORDER BY name`,
    )
    .all() as { name: string; tbl_name: string }[];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'partitions-test-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, NOV21);
  createDemo(db);
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('partitioned tables', () => {
  it('starts with the latest partition only and reads through the view', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(1, NOV21);
    expect(table.partitions()).toEqual(['demo_log_latest']);
    expect(viewRows()).toHaveLength(1);
    const [info] = table.list();
    expect(info).toMatchObject({
      name: 'demo_log_latest',
      isLatest: true,
      rows: 1,
      minTime: NOV21,
      maxTime: NOV21,
      rotatedOn: null,
    });
    expect(info!.sizeBytes).toBeGreaterThan(0);
  });

  it('rotates the latest partition to a dated one, keeping rows, indexes and increasing ids', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(1, NOV21 - DAY, 'old-1');
    insert(2, NOV21 - DAY, 'old-2');
    expect(table.rotate(NOV21)).toBe('demo_log_p20261121');
    expect(tables()).toEqual(['demo_log_latest', 'demo_log_p20261121']);
    // The dated partition keeps its indexes (no rebuild); the fresh live one gets generation 2's.
    expect(indexes()).toEqual([
      { name: 'demo_log_latest_by_device', tbl_name: 'demo_log_p20261121' },
      { name: 'demo_log_latest_by_ts', tbl_name: 'demo_log_p20261121' },
      { name: 'demo_log_latest_g2_by_device', tbl_name: 'demo_log_latest' },
      { name: 'demo_log_latest_g2_by_ts', tbl_name: 'demo_log_latest' },
    ]);
    insert(1, NOV21 + 1);
    table.rotate(NOV21 + 2);
    expect(
      indexes()
        .filter((i) => i.tbl_name === 'demo_log_latest')
        .map((i) => i.name),
    ).toEqual(['demo_log_latest_g3_by_device', 'demo_log_latest_g3_by_ts']);
    db.prepare('DELETE FROM demo_log_p20261121_2').run();
    insert(1, NOV21, 'new');
    const rows = viewRows();
    expect(rows.map((r) => r.message)).toEqual(['old-1', 'old-2', 'new']);
    expect(rows.map((r) => r.id)).toEqual([1, 2, 4]);
    // The fresh latest keeps the original DDL (STRICT, constraints).
    expect(() =>
      db
        .prepare('INSERT INTO demo_log_latest (device_id, ts, message) VALUES (?, ?, ?)')
        .run('not-a-number', 1, 'x'),
    ).toThrow();
    expect(
      (
        db
          .prepare('SELECT count(*) AS n FROM sqlite_sequence WHERE name = ?')
          .get('demo_log_latest') as { n: number }
      ).n,
    ).toBe(1);
  });

  it('numbers a second rotation on the same day and lists partitions newest first', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(1, NOV21 - 2 * DAY);
    expect(table.rotate(NOV21 - DAY)).toBe('demo_log_p20261120');
    insert(1, NOV21);
    expect(table.rotate(NOV21)).toBe('demo_log_p20261121');
    insert(1, NOV21 + 1000);
    expect(table.rotate(NOV21 + 2000)).toBe('demo_log_p20261121_2');
    expect(table.partitions()).toEqual([
      'demo_log_latest',
      'demo_log_p20261121_2',
      'demo_log_p20261121',
      'demo_log_p20261120',
    ]);
    const list = table.list();
    expect(list.map((p) => [p.name, p.rows, p.isLatest])).toEqual([
      ['demo_log_latest', 0, true],
      ['demo_log_p20261121_2', 1, false],
      ['demo_log_p20261121', 1, false],
      ['demo_log_p20261120', 1, false],
    ]);
    expect(list[3]!.rotatedOn).toBe(Date.UTC(2026, 10, 20));
    expect(viewRows()).toHaveLength(3);
  });

  it('does not rotate an empty latest partition', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    expect(table.rotate(NOV21)).toBeNull();
    expect(tables()).toEqual(['demo_log_latest']);
  });

  it('drops whole dated partitions older than a cutoff, never the latest', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(1, NOV21 - 30 * DAY);
    table.rotate(NOV21 - 29 * DAY);
    insert(1, NOV21 - 10 * DAY);
    table.rotate(NOV21 - 9 * DAY);
    insert(1, NOV21 - 40 * DAY); // an old row still in the latest partition
    expect(table.dropOlderThan(NOV21 - 20 * DAY)).toEqual(['demo_log_p20261023']);
    expect(table.partitions()).toEqual(['demo_log_latest', 'demo_log_p20261112']);
    expect(viewRows().map((r) => r.ts)).toEqual([NOV21 - 10 * DAY, NOV21 - 40 * DAY]);
    expect(table.dropOlderThan(NOV21 + DAY)).toEqual(['demo_log_p20261112']);
    expect(table.partitions()).toEqual(['demo_log_latest']);
  });

  it('drops a named partition only when it is one of its dated partitions', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    db.exec('CREATE TABLE unrelated (x INTEGER)');
    insert(1, NOV21);
    const dated = table.rotate(NOV21) as string;
    expect(table.dropPartition('demo_log_latest')).toBe(false);
    expect(table.dropPartition('unrelated')).toBe(false);
    expect(table.dropPartition('demo_log_p20261121; DROP TABLE unrelated')).toBe(false);
    expect(table.dropPartition('demo_log_p20991231')).toBe(false);
    expect(tables()).toContain(dated);
    expect(table.dropPartition(dated)).toBe(true);
    expect(tables()).toEqual(['demo_log_latest']);
    expect(
      db.prepare(`SELECT name FROM sqlite_master WHERE name = 'unrelated'`).get(),
    ).toBeDefined();
  });

  it('deletes matching rows from every partition', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(7, NOV21 - DAY);
    insert(8, NOV21 - DAY);
    table.rotate(NOV21);
    insert(7, NOV21);
    expect(table.deleteWhere('device_id = ?', [7])).toBe(2);
    expect(viewRows().map((r) => r.device_id)).toEqual([8]);
  });

  it('reads the newest rows of a device through the index of each partition', () => {
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    insert(1, NOV21 - DAY);
    table.rotate(NOV21);
    const plan = (
      db
        .prepare(
          'EXPLAIN QUERY PLAN SELECT * FROM demo_log WHERE device_id = ? ORDER BY ts DESC LIMIT 1',
        )
        .all(1) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('\n');
    expect(plan).toContain('demo_log_latest_g2_by_device'); // the live partition's
    expect(plan).toContain('demo_log_latest_by_device'); // the dated partition's
    expect(plan).not.toMatch(/SCAN demo_log_(latest|p20261121)\b(?! USING)/);
  });

  it('refuses bad identifiers and undeclared tables; the registry is the allowlist', () => {
    expect(
      () => new PartitionedTable(db, { name: 'demo_log; DROP TABLE x', timeColumn: 'ts' }),
    ).toThrow(/bad identifier/);
    expect(() => new PartitionedTable(db, { name: 'missing_log', timeColumn: 'ts' })).toThrow(
      /does not exist/,
    );
    expect(partitionedTable(db, 'demo_log')).toBeUndefined();
    const defined = definePartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    expect(definePartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' })).toBe(defined);
    expect(partitionedTable(db, 'demo_log')).toBe(defined);
    expect(partitionedTable(db, 'users')).toBeUndefined();
    expect(partitionedTableNames(db)).toEqual(['demo_log']);
  });

  it('repairs a stale view at start (for example after a crash between statements)', () => {
    insert(1, NOV21);
    db.exec('DROP VIEW demo_log');
    const table = new PartitionedTable(db, { name: 'demo_log', timeColumn: 'ts' });
    expect(table.partitions()).toEqual(['demo_log_latest']);
    expect(viewRows()).toHaveLength(1);
  });
});
