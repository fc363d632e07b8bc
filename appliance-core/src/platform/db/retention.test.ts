/**
 * The retention registry and the batched deletes against a real SQLite file and a real storage
 * writer: rows stored once with their default, all-or-nothing updates with every validation
 * rule, exact counts of rows deleted, batches never larger than asked (a key split by time, a
 * time shared by many rows kept together), and dbstat sizes that follow the data.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './database.js';
import { migrate } from './migrate.js';
import { pruneByKey, pruneByTime, RetentionRegistry, tableBytes } from './retention.js';
import { StorageWriter } from './storage-writer.js';

let dir: string;
let db: DB;
let storage: StorageWriter;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retention-test-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, 0);
  db.exec(`
    CREATE TABLE samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, v REAL NOT NULL, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;
    CREATE TABLE rollups (kind TEXT NOT NULL, tracker_id INTEGER NOT NULL, resolution INTEGER NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (kind, tracker_id, resolution, ts)) STRICT, WITHOUT ROWID;
    CREATE TABLE history (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, open INTEGER NOT NULL) STRICT;
    CREATE INDEX history_at ON history (at);`);
  storage = new StorageWriter(db, { onError: () => {} });
});

afterEach(async () => {
  await storage.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const n = (sql: string, ...params: unknown[]) =>
  (db.prepare(sql).get(...params) as { n: number }).n;

function owner(table: string, defaultDays = 30, extra: Partial<{ initial: number }> = {}) {
  const pruned: number[] = [];
  return {
    pruned,
    owner: {
      table,
      defaultDays,
      size: () => 123,
      prune: async (cutoff: number) => {
        pruned.push(cutoff);
        return 1;
      },
      initialDays: () => extra.initial,
    },
  };
}

describe('RetentionRegistry', () => {
  it('stores each row once with its default (or the days already stored elsewhere), lists only registered rows', () => {
    const registry = new RetentionRegistry(db);
    registry.register(owner('alpha', 30).owner);
    registry.register(owner('beta', 90, { initial: 14 }).owner);
    expect(registry.list()).toEqual([
      { id: 1, table: 'alpha', retention: 30, size: 123 },
      { id: 2, table: 'beta', retention: 14, size: 123 },
    ]);
    expect(() => registry.register(owner('alpha').owner)).toThrow(/twice/);
    // A second start keeps the stored value, not the default.
    registry.set([{ id: 1, retention: 7 }], 1000);
    const again = new RetentionRegistry(db);
    again.register(owner('beta', 90).owner);
    again.register(owner('alpha', 30).owner);
    expect(again.list().map((r) => [r.id, r.table, r.retention])).toEqual([
      [1, 'alpha', 7],
      [2, 'beta', 14],
    ]);
  });

  it('rejects the whole submission when any row fails, with a message naming the row', () => {
    const registry = new RetentionRegistry(db);
    const changes: number[] = [];
    registry.register({ ...owner('alpha').owner, onChange: (days) => changes.push(days) });
    registry.register(owner('beta').owner);
    const before = db.prepare('SELECT * FROM retention_policies ORDER BY id').all();
    const bad: [unknown[], RegExp][] = [
      [[], /No retention rows/],
      [
        [
          { id: 1, retention: 5 },
          { id: 99, retention: 5 },
        ],
        /Row 2: no retention row has the id 99/,
      ],
      [[{ id: '1', retention: 5 }], /Row 1: no retention row has the id "1"/],
      [[{ id: 1.5, retention: 5 }], /no retention row/],
      [
        [
          { id: 1, retention: 5 },
          { id: 2, retention: 0 },
        ],
        /Row 2: the retention must be/,
      ],
      [[{ id: 1, retention: -3 }], /retention must be/],
      [[{ id: 1, retention: 1.5 }], /retention must be/],
      [[{ id: 1, retention: '5' }], /retention must be/],
      [[{ id: 1, retention: null }], /retention must be/],
      [[{ id: 1, retention: 36_501 }], /retention must be/],
      [
        [
          { id: 1, retention: 5 },
          { id: 1, retention: 6 },
        ],
        /given more than once/,
      ],
    ];
    for (const [updates, message] of bad) {
      const result = registry.set(updates as { id: unknown; retention: unknown }[], 5);
      expect(result.ok, JSON.stringify(updates)).toBe(false);
      expect(result.ok ? '' : result.message).toMatch(message);
    }
    expect(db.prepare('SELECT * FROM retention_policies ORDER BY id').all()).toEqual(before);
    expect(changes).toEqual([]);
    expect(
      registry.set(
        [
          { id: 1, retention: 1 },
          { id: 2, retention: 365 },
        ],
        5,
      ),
    ).toEqual({
      ok: true,
      changed: ['alpha', 'beta'],
    });
    expect(changes).toEqual([1]);
    expect(registry.list().map((r) => r.retention)).toEqual([1, 365]);
  });

  it('prunes each row at now minus its retention and reports a failing owner without stopping', async () => {
    const registry = new RetentionRegistry(db);
    const a = owner('alpha', 2);
    registry.register(a.owner);
    registry.register({
      ...owner('beta').owner,
      prune: async () => {
        throw new Error('disk on fire');
      },
    });
    const c = owner('gamma', 1);
    registry.register(c.owner);
    const outcomes = await registry.pruneAll(10 * 86_400_000);
    expect(a.pruned).toEqual([8 * 86_400_000]);
    expect(c.pruned).toEqual([9 * 86_400_000]);
    expect(outcomes.map((o) => [o.table, o.removed, o.error])).toEqual([
      ['alpha', 1, undefined],
      ['beta', 0, 'disk on fire'],
      ['gamma', 1, undefined],
    ]);
  });
});

describe('sizes', () => {
  it('measures cheap rows at every read, reuses a slow measurement until the row is pruned', async () => {
    const registry = new RetentionRegistry(db);
    let cheap = 1;
    let slow = 100;
    let removed = 0;
    registry.register({ ...owner('cheap').owner, size: () => cheap });
    registry.register({
      ...owner('slow').owner,
      size: () => {
        const until = Date.now() + 60;
        while (Date.now() < until); // a slow dbstat walk
        return slow;
      },
      prune: async () => removed,
    });
    expect(registry.list().map((r) => r.size)).toEqual([1, 100]);
    cheap = 2;
    slow = 200;
    expect(registry.list().map((r) => r.size)).toEqual([2, 100]);
    await registry.pruneAll(Date.now()); // removed nothing: the cached size stays
    expect(registry.list().map((r) => r.size)).toEqual([2, 100]);
    removed = 5;
    await registry.pruneAll(Date.now());
    expect(registry.list().map((r) => r.size)).toEqual([2, 200]);
  });
});

describe('pruneByKey', () => {
  it('deletes exactly the rows older than the cutoff, per key, in batches of at most batchRows', async () => {
    storage.start();
    const insert = db.prepare('INSERT INTO samples VALUES (?, ?, 1)');
    db.transaction(() => {
      for (let t = 1; t <= 5; t++) for (let ts = 0; ts < 100; ts++) insert.run(t, ts);
      for (let ts = 0; ts < 3; ts++) insert.run(9, ts); // few rows: batched with others
    })();
    const batches: number[] = [];
    const prune = pruneByKey(db, storage, {
      namespace: 'test',
      name: 'samples',
      table: 'samples',
      key: 'tracker_id',
      time: 'ts',
      batchRows: 64,
      onBatch: (rows) => batches.push(rows),
    });
    const removed = await prune(60);
    expect(removed).toBe(5 * 60 + 3);
    expect(n('SELECT count(*) AS n FROM samples')).toBe(5 * 40);
    expect(n('SELECT count(*) AS n FROM samples WHERE ts < 60')).toBe(0);
    expect(n('SELECT min(ts) AS n FROM samples')).toBe(60);
    // Nothing left to prune: nothing deleted.
    expect(await prune(60)).toBe(0);
    expect(n('SELECT count(*) AS n FROM samples')).toBe(200);
    // Batches of at most 64 rows (a key of 60 old rows is split when it does not fit).
    expect(batches.reduce((a, b) => a + b, 0)).toBe(303);
    expect(Math.max(...batches)).toBeLessThanOrEqual(64);
    expect(batches.length).toBe(Math.ceil(303 / 64));
  });

  it('walks fixed leading key columns and a fixed column between key and time (the rollups shape)', async () => {
    storage.start();
    const insert = db.prepare('INSERT INTO rollups VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (const kind of ['latency', 'port'])
        for (const res of [300, 3600]) for (let ts = 0; ts < 10; ts++) insert.run(kind, 1, res, ts);
    })();
    const prune = pruneByKey(db, storage, {
      namespace: 'test',
      name: 'rollups_latency_5m',
      table: 'rollups',
      fixed: [{ column: 'kind', value: 'latency' }],
      key: 'tracker_id',
      between: [{ column: 'resolution', value: 300 }],
      time: 'ts',
      batchRows: 3,
    });
    expect(await prune(5)).toBe(5);
    expect(
      db
        .prepare(
          'SELECT kind, resolution, count(*) AS n FROM rollups GROUP BY kind, resolution ORDER BY 1, 2',
        )
        .all(),
    ).toEqual([
      { kind: 'latency', resolution: 300, n: 5 },
      { kind: 'latency', resolution: 3600, n: 10 },
      { kind: 'port', resolution: 300, n: 10 },
      { kind: 'port', resolution: 3600, n: 10 },
    ]);
  });
});

describe('pruneByTime', () => {
  it('deletes oldest first in batches, keeps rows sharing a time together, honours the extra condition', async () => {
    storage.start();
    const insert = db.prepare('INSERT INTO history (at, open) VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 50; i++) insert.run(i, 0);
      for (let i = 0; i < 20; i++) insert.run(10, 0); // 21 rows at time 10
      insert.run(5, 1); // open: never pruned
    })();
    const prune = pruneByTime(db, storage, {
      namespace: 'test',
      table: 'history',
      time: 'at',
      where: 'open = 0',
      batchRows: 8,
      onBatch: (rows) => batches.push(rows),
    });
    const batches: number[] = [];
    expect(await prune(30)).toBe(30 + 20);
    // 8 rows a batch, except the batch that reaches time 10 takes all 21 rows sharing it.
    expect(batches).toEqual([8, 23, 8, 8, 3]);
    expect(n('SELECT count(*) AS n FROM history WHERE at < 30 AND open = 0')).toBe(0);
    expect(n('SELECT count(*) AS n FROM history WHERE open = 1')).toBe(1);
    expect(n('SELECT count(*) AS n FROM history')).toBe(21);
    expect(await prune(30)).toBe(0);
  });
});

describe('tableBytes', () => {
  it('counts the pages of a table and its indexes (dbstat), growing with the data', () => {
    const empty = tableBytes(db, ['history']);
    expect(empty).toBeGreaterThan(0); // the table's and its index's root pages
    const insert = db.prepare('INSERT INTO history (at, open) VALUES (?, 0)');
    db.transaction(() => {
      for (let i = 0; i < 20_000; i++) insert.run(i);
    })();
    const full = tableBytes(db, ['history']);
    expect(full).toBeGreaterThan(empty + 200_000);
    expect(full).toBe(
      (
        db
          .prepare("SELECT sum(pgsize) AS n FROM dbstat WHERE name IN ('history', 'history_at')")
          .get() as { n: number }
      ).n,
    );
  });
});
