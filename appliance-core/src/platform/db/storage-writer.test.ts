/**
 * The storage writer against real SQLite files: a worker thread with its own connection, batches
 * in one transaction, failing ops skipped, flush/close semantics, crash restart, the API thread
 * kept free while the worker commits; producers with their own limits and counters, fair
 * batches, commit notices, atomic groups (never split, all or nothing, also when the worker or
 * the whole process is killed mid-group), a producer in a second worker thread, and the guard
 * that keeps the API connection's TEMP-trigger caches right.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchTables } from './change-triggers.js';
import { openDatabase, writeIntent, type DB } from './database.js';
import {
  CHILD_INSERT,
  closeFixture,
  countChildren,
  openFixture,
  sleep,
  until,
  workerOf,
} from './testing/writer-fixture.js';
import {
  StorageWriter,
  type CommitNotice,
  type ProducerStats,
  type StorageWriterOptions,
} from './storage-writer.js';

let dir: string;
let file: string;
let db: DB;
const writers: StorageWriter[] = [];
let errors: string[] = [];

const SCHEMA = `
    CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT;
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent (id), value INTEGER NOT NULL CHECK (value >= 0), note TEXT) STRICT;
    CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL) STRICT;
    INSERT INTO parent (id) VALUES (1), (2);
    INSERT INTO counter (id, n) VALUES (1, 0);`;

beforeEach(() => {
  ({ dir, file, db } = openFixture('storage-writer-test-', SCHEMA));
  errors = [];
});

afterEach(async () => {
  await closeFixture({ dir, db }, writers.splice(0));
});

function writer(options: StorageWriterOptions = {}): StorageWriter {
  const w = new StorageWriter(file, { onError: (err) => errors.push(err.message), ...options });
  w.define('test.child', CHILD_INSERT);
  w.define('test.bump', 'UPDATE counter SET n = n + ? WHERE id = 1');
  writers.push(w);
  return w;
}

const childCount = () => countChildren(db);
const count = (sql: string, ...params: unknown[]) =>
  (db.prepare(sql).get(...params) as { n: number }).n;

describe('StorageWriter', () => {
  it('commits a batch in one transaction, visible to another connection after flush()', async () => {
    const w = writer({ flushMs: 60_000 });
    for (let i = 1; i <= 10; i++) w.write('test.child', [i, 1, i, null]);
    w.write('test.bump', [5]);
    expect(w.queued).toBe(11);
    await w.flush();
    expect(childCount()).toBe(10);
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 5 });
    expect(w.stats()).toMatchObject({
      written: 11,
      flushes: 1,
      queued: 0,
      inFlight: 0,
      failed: 0,
      lost: 0,
    });
  });

  it('flush() waits for everything queued before it (also across batches of maxPending) and nothing else', async () => {
    const w = writer({ flushMs: 60_000, maxPending: 100 });
    await w.flush(); // nothing queued: resolves at once
    for (let i = 1; i <= 250; i++) w.write('test.child', [i, 1, i, null]);
    expect(w.queued).toBe(50); // two batches of 100 were posted as they filled
    const first = w.flush();
    w.write('test.bump', [1]);
    await first;
    expect(childCount()).toBe(250);
    expect(w.stats()).toMatchObject({ flushes: 3, written: 250, queued: 1 });
    await w.flush();
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 1 });
  });

  it('posts on its own every flushMs', async () => {
    const w = writer({ flushMs: 50 });
    w.write('test.child', [1, 1, 1, null]);
    await until(() => childCount() > 0);
    expect(childCount()).toBe(1);
  });

  it('skips a failing op (FOREIGN KEY, CHECK) and commits the rest of its batch; reports without parameters, rate-limited', async () => {
    const w = writer({ flushMs: 60_000 });
    for (let i = 1; i <= 100; i++)
      w.write('test.child', [i, i === 50 ? 99 : 1, i === 70 ? -1 : i, 'secret-param-value']);
    await w.flush();
    expect(childCount()).toBe(98);
    expect(db.prepare('SELECT count(*) AS n FROM child WHERE id IN (50, 70)').get()).toEqual({
      n: 0,
    });
    expect(w.stats()).toMatchObject({ written: 98, failed: 2, flushes: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /2 writes failed and were skipped \(first: test\.child: FOREIGN KEY constraint failed\)/,
    );
    // Another failure within the minute is counted, and reported at close.
    w.write('test.child', [1, 1, 1, 'secret-param-value']); // duplicate primary key
    w.write('test.child', [200, 2, 1, null]);
    await w.flush();
    expect(childCount()).toBe(99);
    expect(errors).toHaveLength(1);
    await w.close();
    expect(errors).toHaveLength(2);
    expect(errors[1]).toMatch(/1 writes failed.*UNIQUE constraint failed: child.id/);
    expect(errors.join('\n')).not.toContain('secret-param-value');
  });

  it('reports a statement that does not prepare and skips its writes', async () => {
    const w = writer({ flushMs: 60_000 });
    w.define('test.broken', 'INSERT INTO nowhere (x) VALUES (?)');
    w.write('test.broken', [1]);
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(1);
    expect(w.stats()).toMatchObject({ written: 1, failed: 1 });
    // The worker's define-failed notice and the batch's failure arrive on different ports, in
    // either order.
    const notPrepared =
      'storage writer: statement test.broken does not prepare: no such table: nowhere';
    await until(() => errors.includes(notPrepared));
    expect(errors).toContain(notPrepared);
    expect(() => w.write('test.unknown', [])).toThrow('unknown statement test.unknown');
    expect(() => w.define('test.child', 'DELETE FROM child')).toThrow('already defined');
  });

  it('binds integers, reals, text, bigint and null', async () => {
    db.exec('CREATE TABLE mixed (i INTEGER, r REAL, t TEXT, b INTEGER, z ANY) STRICT');
    const w = writer({ flushMs: 60_000 });
    w.define('test.mixed', 'INSERT INTO mixed (i, r, t, b, z) VALUES (?, ?, ?, ?, ?)');
    w.write('test.mixed', [1, 2.5, 'x', 2n ** 60n, null]);
    await w.flush();
    expect(db.prepare('SELECT i, r, t, b, z FROM mixed').safeIntegers(true).get()).toEqual({
      i: 1n,
      r: 2.5,
      t: 'x',
      b: 2n ** 60n,
      z: null,
    });
  });

  it('close() flushes, ends the worker, and counts later writes as lost', async () => {
    const w = writer({ flushMs: 60_000 });
    for (let i = 1; i <= 20; i++) w.write('test.child', [i, 1, i, null]);
    await w.close();
    expect(childCount()).toBe(20);
    w.write('test.child', [21, 1, 1, null]);
    await w.flush();
    expect(w.stats()).toMatchObject({ written: 20, lost: 1, queued: 0 });
    expect(childCount()).toBe(20);
    // It can be started again (an engine stopped and started).
    w.start();
    w.write('test.child', [22, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(21);
  });

  it('close() is bounded: a worker that cannot commit is terminated and its writes counted lost', async () => {
    const w = writer({ flushMs: 60_000, closeTimeoutMs: 300 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush(); // the worker is up
    const other = openDatabase(file);
    other.exec('BEGIN IMMEDIATE'); // holds the write lock: the worker waits on busy_timeout
    try {
      for (let i = 2; i <= 11; i++) w.write('test.child', [i, 1, i, null]);
      const started = Date.now();
      await w.close();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(w.stats()).toMatchObject({ written: 1, lost: 10, inFlight: 0 });
      expect(errors.some((e) => /10 writes lost at close/.test(e))).toBe(true);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(childCount()).toBe(1);
  });

  it('restarts a crashed worker (once per restartDelayMs), counting the in-flight writes lost', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 200 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    // A crash: the thread ends while a batch is in flight.
    const worker = workerOf(w);
    w.write('test.child', [2, 1, 2, null]);
    const pending = w.flush();
    await worker?.terminate();
    await pending; // settled: the batch either committed before the end or is counted lost
    const { written, lost } = w.stats();
    expect(written + lost).toBe(2);
    await until(() => errors.some((e) => /storage writer worker exited/.test(e)));
    expect(errors.find((e) => /storage writer worker exited/.test(e))).toMatch(
      new RegExp(`: ${lost} writes lost; restarting`),
    );
    // Writes after the crash wait for the restart and are committed by the new worker.
    w.write('test.child', [3, 1, 3, null]);
    await w.flush();
    expect(db.prepare('SELECT count(*) AS n FROM child WHERE id = 3').get()).toEqual({ n: 1 });
    expect(w.stats().restarts).toBe(1);
  });

  it('drops writes beyond maxQueued while the worker is down (and says so, without counting them lost); close() starts a worker for the rest', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 60_000, maxQueued: 10 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    await workerOf(w)?.terminate();
    await until(() => errors.some((e) => /worker exited/.test(e)));
    for (let i = 2; i <= 16; i++) w.write('test.child', [i, 1, i, null]);
    expect(w.stats()).toMatchObject({ queued: 10, dropped: 5, lost: 0 });
    // The first drop is reported at once, the next ones within the minute at close.
    expect(errors.filter((e) => /dropped/.test(e))).toEqual([
      'storage writer: 1 writes dropped at full producer queues (default: 1)',
    ]);
    await w.close();
    expect(errors.filter((e) => /dropped/.test(e))[1]).toMatch(/^storage writer: 4 writes dropped/);
    expect(childCount()).toBe(11);
    expect(w.stats()).toMatchObject({ written: 11, dropped: 5, lost: 0, queued: 0 });
  });

  it('refuses an in-memory database (the worker opens the file)', () => {
    expect(() => new StorageWriter(':memory:')).toThrow('needs a database file');
  });

  it('keeps the API thread free while the worker commits 200k rows', async () => {
    db.exec(
      'CREATE TABLE bulk (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b REAL NOT NULL, c TEXT NOT NULL) STRICT',
    );
    const w = writer({ flushMs: 60_000, maxPending: 5000 });
    w.define('test.bulk', 'INSERT INTO bulk (id, a, b, c) VALUES (?, ?, ?, ?)');
    await w.flush();
    const TOTAL = 200_000;
    // Queue in slices (as pollers do), posting a batch whenever 5000 are queued.
    for (let i = 0; i < TOTAL; i++) w.write('test.bulk', [i, i % 997, i / 7, 'row']);
    // The state that shows where the commit runs: this thread runs while the write lock is held
    // by the writer's transaction. A commit on this thread could never be observed holding it
    // (a transaction here is synchronous, so nothing else on this thread runs inside it).
    const probe = openDatabase(file);
    probe.pragma('busy_timeout = 0');
    let sawLockHeld = 0;
    let settled = false;
    const flushed = w.flush().then(() => void (settled = true));
    for (let turns = 0; !settled && turns < 1_000_000; turns++) {
      try {
        probe.exec('BEGIN IMMEDIATE');
        probe.exec('ROLLBACK');
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
        sawLockHeld++;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await flushed;
    probe.close();
    expect((db.prepare('SELECT count(*) AS n FROM bulk').get() as { n: number }).n).toBe(TOTAL);
    expect(w.stats().flushes).toBeGreaterThanOrEqual(TOTAL / 5000);
    expect(sawLockHeld).toBeGreaterThan(0);
  });
});

const ROW_SQL = 'INSERT INTO rows (producer, n) VALUES (?, ?)';
const FILL_SQL =
  "INSERT INTO bulk (n, pad) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x, 'padding padding padding padding' FROM c";
const rowsOf = (producer: string) =>
  count('SELECT count(*) AS n FROM rows WHERE producer = ?', producer);
const walSize = () => {
  try {
    return fs.statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};
const zero = { received: 0, written: 0, dropped: 0, failed: 0, lost: 0, queued: 0, inFlight: 0 };

describe('StorageWriter producers', () => {
  beforeEach(() => {
    db.exec(`
      CREATE TABLE rows (producer TEXT NOT NULL, n INTEGER NOT NULL) STRICT;
      CREATE TABLE marker (n INTEGER NOT NULL) STRICT;
      CREATE TABLE bulk (n INTEGER NOT NULL, pad TEXT NOT NULL) STRICT;`);
  });

  it('refuses statement names without a namespace and bad producer names; one producer per name on a thread', () => {
    const w = writer();
    for (const name of ['row', '.row', 'test.', 'Test.row', 'test row.x'])
      expect(() => w.define(name, ROW_SQL), name).toThrow('needs a namespace');
    expect(() => w.producer('Flood')).toThrow('bad producer name');
    expect(() => w.connect('a.b')).toThrow('bad producer name');
    expect(w.producer('a')).toBe(w.producer('a', { maxQueued: 1 }));
    const p = w.producer('b');
    expect(() => p.write('test.nothing', [])).toThrow('unknown statement test.nothing');
    expect(() =>
      p.group([
        { statement: 'test.bump', params: [1] },
        { statement: 'test.nothing', params: [] },
      ]),
    ).toThrow('unknown statement test.nothing');
    expect(p.stats()).toEqual(zero);
  });

  it('a flood from one producer drops only its own newest writes: a steady producer loses nothing, and both counters are exact', async () => {
    const w = writer({ flushMs: 60_000, maxPending: 500 });
    w.define('test.row', ROW_SQL);
    const flood = w.producer('flood', { maxQueued: 1000, flushMs: 2 });
    const steady = w.producer('steady', { maxQueued: 1000, flushMs: 2 });
    let n = 0;
    // Synchronously nothing can settle: exactly the first 1000 are accepted, the rest dropped.
    const first = Array.from({ length: 3000 }, () => flood.write('test.row', ['flood', n++]));
    expect(first.slice(0, 1000)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(first.slice(1000).filter((seq) => seq !== 0)).toEqual([]);
    expect(flood.stats()).toMatchObject({
      received: 3000,
      dropped: 2000,
      queued: 0,
      inFlight: 1000,
    });
    let accepted = 1000;
    let refused = 2000;
    let steadyRefused = 0;
    // Then 50 rounds of 2000 flood writes and 5 steady ones, with the writer committing between.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 2000; i++) {
        if (flood.write('test.row', ['flood', n++]) === 0) refused++;
        else accepted++;
      }
      for (let i = 0; i < 5; i++)
        if (steady.write('test.row', ['steady', round * 5 + i]) === 0) steadyRefused++;
      await sleep(5);
    }
    await Promise.all([flood.flush(), steady.flush()]);
    expect(steadyRefused).toBe(0);
    expect(steady.stats()).toEqual({ ...zero, received: 250, written: 250 });
    expect(rowsOf('steady')).toBe(250);
    const f = flood.stats();
    expect(f).toEqual({ ...zero, received: n, written: accepted, dropped: refused });
    expect(f.received).toBe(f.written + f.dropped + f.failed);
    expect(rowsOf('flood')).toBe(accepted);
    expect(w.stats()).toMatchObject({
      written: accepted + 250,
      dropped: refused,
      producers: { flood: f, steady: steady.stats() },
    });
    await w.close();
    // Reported: the first drop at once, the rest at close; the steady producer never.
    expect(errors.filter((e) => /dropped/.test(e))).toEqual([
      'storage writer: 1 writes dropped at full producer queues (flood: 1)',
      `storage writer: ${refused - 1} writes dropped at full producer queues (flood: ${refused - 1})`,
    ]);
  });

  it('batches take from each producer in turn: a backlog of one producer does not hold back another', async () => {
    const w = writer({ flushMs: 60_000, maxPending: 1000 });
    w.define('test.row', ROW_SQL);
    const flood = w.producer('flood');
    const steady = w.producer('steady', { flushMs: 1 });
    steady.write('test.row', ['steady', 0]);
    await w.flush(); // the worker is up
    const TOTAL = 100_000;
    for (let i = 0; i < TOTAL; i++) flood.write('test.row', ['flood', i]);
    // Posted as 100 batches' worth before the steady write; what of it is committed when that one is?
    const floodRowsAtSteadyCommit = new Promise<number>((resolve) =>
      steady.onCommit(() => resolve(rowsOf('flood'))),
    );
    steady.write('test.row', ['steady', 1]);
    const seen = await floodRowsAtSteadyCommit;
    await flood.flush();
    expect(rowsOf('flood')).toBe(TOTAL);
    expect(rowsOf('steady')).toBe(2);
    // First come, first served would commit the steady write after the whole backlog (TOTAL);
    // in turns it goes into one of the next batches (each takes at most 500 flood writes now).
    expect(seen).toBeLessThan(TOTAL / 2);
  });

  it('commit notices say, per batch and producer, what committed by statement and up to which sequence number', async () => {
    const w = writer({ flushMs: 60_000 });
    const a = w.producer('a');
    const b = w.producer('b');
    const notices: Record<'a' | 'b', CommitNotice[]> = { a: [], b: [] };
    a.onCommit((notice) => notices.a.push(notice));
    const stopB = b.onCommit((notice) => notices.b.push(notice));
    const seqs = [
      a.write('test.child', [1, 1, 1, null]),
      a.write('test.child', [2, 1, 2, null]),
      a.write('test.bump', [1]),
      a.write('test.child', [3, 99, 3, null]), // fails: no parent 99
      a.write('test.bump', [2]),
    ];
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect(b.write('test.bump', [10])).toBe(1);
    const before = Date.now();
    await w.flush();
    expect(notices.a).toEqual([
      {
        producer: 'a',
        upTo: 5,
        written: 4,
        failed: 1,
        statements: { 'test.child': 2, 'test.bump': 2 },
        at: expect.any(Number),
      },
    ]);
    expect(notices.b).toEqual([
      {
        producer: 'b',
        upTo: 1,
        written: 1,
        failed: 0,
        statements: { 'test.bump': 1 },
        at: expect.any(Number),
      },
    ]);
    expect(notices.a[0]?.at).toBeGreaterThanOrEqual(before);
    expect(notices.a[0]?.at).toBeLessThanOrEqual(Date.now());
    // Sequence numbers go on; a removed listener hears nothing more.
    stopB();
    expect(a.write('test.child', [4, 1, 4, null])).toBe(6);
    expect(b.write('test.bump', [1])).toBe(2);
    await w.flush();
    expect(notices.a.at(-1)).toMatchObject({
      upTo: 6,
      written: 1,
      failed: 0,
      statements: { 'test.child': 1 },
    });
    expect(notices.b).toHaveLength(1);
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 14 });
  });

  it('an atomic group is never split across batches: one larger than the batch size commits whole, in one batch', async () => {
    const w = writer({ flushMs: 60_000, maxPending: 10 });
    const p = w.producer('p');
    const other = w.producer('other');
    const notices: CommitNotice[] = [];
    p.onCommit((notice) => notices.push(notice));
    for (let i = 1; i <= 7; i++) p.write('test.child', [i, 1, i, null]); // seq 1-7
    const big = p.group(
      Array.from({ length: 25 }, (_, i) => ({
        statement: 'test.child',
        params: [100 + i, 1, i, null],
      })),
    ); // seq 8-32
    const small = p.group([
      { statement: 'test.child', params: [200, 1, 0, null] },
      { statement: 'test.bump', params: [1] },
    ]); // seq 33-34
    for (let i = 1; i <= 5; i++) p.write('test.child', [300 + i, 2, i, null]); // seq 35-39
    for (let i = 1; i <= 30; i++) other.write('test.bump', [1]);
    await w.flush();
    expect(await big).toEqual({ committed: true });
    expect(await small).toEqual({ committed: true });
    expect(childCount()).toBe(7 + 25 + 1 + 5);
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 31 });
    // One notice per batch (one transaction each): the batches of p, as sequence ranges.
    let from = 1;
    const batches = notices.map((notice) => {
      const range = { from, to: notice.upTo, size: notice.upTo - from + 1 };
      from = notice.upTo + 1;
      return range;
    });
    expect(from).toBe(40);
    const holding = (a: number, z: number) => batches.filter((b) => b.from <= z && b.to >= a);
    expect(holding(8, 32)).toHaveLength(1);
    expect(holding(8, 32)[0]).toMatchObject({ from: expect.any(Number), to: expect.any(Number) });
    expect(holding(8, 32)[0]?.from).toBeLessThanOrEqual(8);
    expect(holding(8, 32)[0]?.to).toBeGreaterThanOrEqual(32);
    expect(holding(33, 34)).toHaveLength(1);
    // Every other batch keeps to the batch size.
    for (const b of batches.filter((b) => b.to < 8 || b.from > 32))
      expect(b.size).toBeLessThanOrEqual(10);
    expect(w.stats().flushes).toBeGreaterThanOrEqual(5);
  });

  it('a group with a failing write commits nothing and says so, while the rest of its batch commits', async () => {
    const w = writer({ flushMs: 60_000 });
    const p = w.producer('p');
    const other = w.producer('other');
    const notices: CommitNotice[] = [];
    p.onCommit((notice) => notices.push(notice));
    p.write('test.child', [1, 1, 1, null]);
    const bad = p.group([
      { statement: 'test.child', params: [2, 1, 2, null] },
      { statement: 'test.bump', params: [100] },
      { statement: 'test.child', params: [3, 99, 3, 'secret-param-value'] }, // no parent 99
    ]);
    const good = p.group([
      { statement: 'test.child', params: [4, 1, 4, null] },
      { statement: 'test.bump', params: [1] },
    ]);
    p.write('test.child', [5, 1, 5, null]);
    other.write('test.child', [6, 2, 6, null]);
    await w.flush();
    expect(await bad).toEqual({
      committed: false,
      error: 'test.child: FOREIGN KEY constraint failed',
    });
    expect(await good).toEqual({ committed: true });
    expect(db.prepare('SELECT id FROM child ORDER BY id').pluck().all()).toEqual([1, 4, 5, 6]);
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 1 });
    // All of p's writes were in one batch.
    expect(notices).toEqual([
      expect.objectContaining({
        upTo: 7,
        written: 4,
        failed: 3,
        statements: { 'test.child': 3, 'test.bump': 1 },
      }),
    ]);
    expect(p.stats()).toEqual({ ...zero, received: 7, written: 4, failed: 3 });
    expect(other.stats()).toEqual({ ...zero, received: 1, written: 1 });
    // A group that does not fit in the queue is dropped whole.
    const tiny = w.producer('tiny', { maxQueued: 2 });
    expect(
      await tiny.group([1, 2, 3].map((i) => ({ statement: 'test.bump', params: [i] }))),
    ).toEqual({ committed: false, error: 'dropped: more than 2 writes queued' });
    expect(tiny.stats()).toEqual({ ...zero, received: 3, dropped: 3 });
    await w.close();
    expect(errors.join('\n')).not.toContain('secret-param-value');
  });

  it('a worker killed in the middle of a group leaves none of it; the group says it did not commit, and the next one does', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 100 });
    w.define('test.marker', 'INSERT INTO marker (n) VALUES (?)');
    w.define('test.fill', FILL_SQL);
    const p = w.producer('p', { flushMs: 1 });
    p.write('test.marker', [0]);
    await p.flush(); // the worker is up
    const before = walSize();
    const group = p.group([
      { statement: 'test.marker', params: [1] },
      { statement: 'test.fill', params: [1_000_000] },
      { statement: 'test.marker', params: [2] },
    ]);
    // The fill spills its pages to the WAL long before it commits: the group is under way.
    await until(() => walSize() > before + 4_000_000, 20_000);
    expect(walSize()).toBeGreaterThan(before + 4_000_000);
    await workerOf(w)?.terminate();
    expect(await group).toEqual({ committed: false, error: expect.stringMatching(/^lost: /) });
    expect(count('SELECT count(*) AS n FROM marker WHERE n > 0')).toBe(0);
    expect(count('SELECT count(*) AS n FROM bulk')).toBe(0);
    expect(p.stats()).toEqual({ ...zero, received: 4, written: 1, lost: 3 });
    // The restarted worker commits the next group whole.
    expect(
      await p.group([
        { statement: 'test.marker', params: [3] },
        { statement: 'test.fill', params: [10] },
        { statement: 'test.marker', params: [4] },
      ]),
    ).toEqual({ committed: true });
    expect(db.prepare('SELECT n FROM marker ORDER BY n').pluck().all()).toEqual([0, 3, 4]);
    expect(count('SELECT count(*) AS n FROM bulk')).toBe(10);
  });

  it('a process killed (SIGKILL) in the middle of a group leaves none of it', async () => {
    const before = walSize();
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('./testing/storage-writer-kill.child.mjs', import.meta.url)),
        file,
        '3000000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    try {
      await until(() => out.includes('posted') || child.exitCode !== null, 20_000);
      await until(() => walSize() > before + 4_000_000 || child.exitCode !== null, 20_000);
      expect(err).toBe('');
      expect(walSize()).toBeGreaterThan(before + 4_000_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');
    expect(out).toBe('posted\n'); // no outcome: it was killed before the group ended
    expect(count('SELECT count(*) AS n FROM marker')).toBe(0);
    expect(count('SELECT count(*) AS n FROM bulk')).toBe(0);
    // The killed writer's lock went with it: the file takes writes again.
    db.prepare('INSERT INTO marker (n) VALUES (9)').run();
    expect(count('SELECT count(*) AS n FROM marker')).toBe(1);
  });
});

describe('a producer in another worker thread', () => {
  type Reply = { type: string; [key: string]: unknown };

  function producerThread(w: StorageWriter, name: string, options = {}) {
    const port = w.connect(name, options);
    const thread = new Worker(
      new URL('./testing/storage-writer-producer.worker.mjs', import.meta.url),
      { workerData: { port }, transferList: [port] },
    );
    const ask = (msg: unknown) =>
      new Promise<Reply>((resolve, reject) => {
        thread.once('message', resolve);
        thread.once('error', reject);
        thread.postMessage(msg);
      });
    return { thread, ask };
  }

  it('writes land, commit notices and group outcomes arrive in that thread, and its counters reach the main thread', async () => {
    const w = writer({ flushMs: 60_000 });
    w.start();
    const { thread, ask } = producerThread(w, 'logs', { maxQueued: 1000, flushMs: 5 });
    try {
      expect(
        await ask({
          type: 'write',
          statement: 'test.child',
          rows: [
            [1, 1, 1, null],
            [2, 1, 2, null],
            [3, 99, 3, null], // fails: no parent 99
          ],
        }),
      ).toEqual({ type: 'wrote', seqs: [1, 2, 3] });
      expect(
        await ask({
          type: 'group',
          ops: [
            { statement: 'test.child', params: [4, 2, 4, null] },
            { statement: 'test.bump', params: [7] },
          ],
        }),
      ).toEqual({ type: 'group', result: { committed: true } });
      const flushed = await ask({ type: 'flush' });
      const stats = { ...zero, received: 5, written: 4, failed: 1 };
      expect(flushed.stats).toEqual(stats);
      const notices = flushed.notices as CommitNotice[];
      expect(notices.at(-1)?.upTo).toBe(5);
      const committed: Record<string, number> = {};
      for (const notice of notices) {
        expect(notice.producer).toBe('logs');
        for (const [name, n] of Object.entries(notice.statements))
          committed[name] = (committed[name] ?? 0) + n;
      }
      expect(committed).toEqual({ 'test.child': 3, 'test.bump': 1 });
      expect(db.prepare('SELECT id FROM child ORDER BY id').pluck().all()).toEqual([1, 2, 4]);
      expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 7 });
      // The main thread reads the client's counters synchronously (published with each notice).
      expect(w.stats().producers.logs).toEqual(stats);
      // Its failures are reported on the main thread (within its flushMs), without parameters.
      await until(() => errors.some((e) => /1 writes failed/.test(e)));
      expect(errors).toEqual([
        'storage writer: 1 writes failed and were skipped (first: test.child: FOREIGN KEY constraint failed)',
      ]);
      // A statement defined after connect() reaches the client.
      w.define('test.bump-twice', 'UPDATE counter SET n = n + 2 * ? WHERE id = 1');
      await ask({ type: 'write', statement: 'test.bump-twice', rows: [[1]] });
      await ask({ type: 'flush' });
      expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 9 });
      // Closed, its last counters stay in stats() under its name.
      const closed = await ask({ type: 'close' });
      expect(closed.stats).toEqual({ ...stats, received: 6, written: 5 });
      await until(() => (w as unknown as { lanes: Map<number, unknown> }).lanes.size === 0);
      expect(w.stats().producers.logs).toEqual(closed.stats);
    } finally {
      await thread.terminate();
    }
  });

  it('goes on after the writer restarts its worker: what was in flight is counted lost there, later writes land', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 100 });
    w.start();
    const { thread, ask } = producerThread(w, 'logs', { flushMs: 1 });
    try {
      await ask({ type: 'write', statement: 'test.child', rows: [[1, 1, 1, null]] });
      await ask({ type: 'flush' });
      await workerOf(w)?.terminate();
      // Written before the client hears of the end: posted to the old worker and counted lost when
      // its port closes, or posted to the new one; either way settled by this flush.
      await ask({ type: 'write', statement: 'test.child', rows: [[2, 1, 2, null]] });
      await ask({ type: 'flush' });
      // Written after that: committed by the restarted worker.
      await ask({ type: 'write', statement: 'test.child', rows: [[3, 1, 3, null]] });
      const { stats } = (await ask({ type: 'flush' })) as unknown as { stats: ProducerStats };
      const ids = db.prepare('SELECT id FROM child ORDER BY id').pluck().all();
      expect(ids).toEqual(stats.lost === 1 ? [1, 3] : [1, 2, 3]);
      expect(stats).toEqual({ ...zero, received: 3, written: 3 - stats.lost, lost: stats.lost });
      expect(w.stats().restarts).toBe(1);
    } finally {
      await thread.terminate();
    }
  });
});

describe('the TEMP-trigger guard (change-triggers.ts)', () => {
  beforeEach(() => {
    db.exec(`
      CREATE TABLE watched (id INTEGER PRIMARY KEY, label TEXT, reading INTEGER) STRICT;
      CREATE TABLE feed (id INTEGER PRIMARY KEY, watched_id INTEGER) STRICT;
      CREATE TRIGGER feed_purge AFTER DELETE ON feed BEGIN
        UPDATE watched SET label = NULL WHERE id = old.watched_id;
      END;
      INSERT INTO watched (id, label, reading) VALUES (1, 'a', 0);`);
  });

  it('a statement of the writer never fires the API connection`s TEMP triggers (why the guard exists)', async () => {
    let changes = 0;
    watchTables(db, 'testcache', [{ table: 'watched', updateOf: 'label' }], () => changes++);
    db.prepare("UPDATE watched SET label = 'b' WHERE id = 1").run();
    expect(changes).toBe(1);
    const w = writer({ flushMs: 60_000 }); // a file name: no guard
    w.define('test.label', 'UPDATE watched SET label = ? WHERE id = ?');
    w.write('test.label', ['c', 1]);
    await w.flush();
    expect(db.prepare('SELECT label FROM watched').get()).toEqual({ label: 'c' });
    expect(changes).toBe(1); // the cache would be stale
  });

  it('given the API connection, the writer refuses a statement that writes a watched table or column, and takes the rest', () => {
    watchTables(
      db,
      'testcache',
      [
        { table: 'watched', updateOf: 'label' },
        { table: 'child', ignoreInsert: true },
      ],
      () => {},
    );
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    w.define('test.reading', 'UPDATE watched SET reading = ? WHERE id = ?'); // an unwatched column
    w.define('test.child', CHILD_INSERT); // INSERT ignored
    w.define('test.bump', 'UPDATE counter SET n = n + ? WHERE id = 1'); // an unwatched table
    const refused = /writes a table or column that a cache of the API connection watches/;
    expect(() => w.define('test.label', 'UPDATE watched SET label = ? WHERE id = ?')).toThrow(
      refused,
    );
    expect(() =>
      w.define('test.both', 'UPDATE watched SET reading = ?, label = ? WHERE id = ?'),
    ).toThrow(refused);
    expect(() => w.define('test.add', 'INSERT INTO watched (label) VALUES (?)')).toThrow(refused);
    expect(() =>
      w.define('test.upsert', 'INSERT OR REPLACE INTO watched (id, label) VALUES (?, ?)'),
    ).toThrow(refused);
    expect(() => w.define('test.remove-child', 'DELETE FROM child WHERE id = ?')).toThrow(refused);
    // Through a permanent trigger: deleting a feed row updates a watched column.
    expect(() => w.define('test.remove-feed', 'DELETE FROM feed WHERE id = ?')).toThrow(refused);
    // A refused statement is not registered.
    expect(() => w.write('test.label', ['x', 1])).toThrow('unknown statement test.label');
  });

  it('start() refuses a statement defined before the cache that watches its table was installed', async () => {
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    w.define('test.bump', 'UPDATE counter SET n = n + ? WHERE id = 1');
    watchTables(db, 'later', [{ table: 'counter' }], () => {});
    expect(() => w.start()).toThrow(/test\.bump writes a table or column that a cache/);
    expect(workerOf(w)).toBeNull();
  });
});

describe('StorageWriter and the API connection', () => {
  it('lets the API connection write first: no batch starts while its write transaction runs or waits, for at most a second', async () => {
    const intent = writeIntent(db);
    // database.ts counts the API connection's write transactions while they run.
    db.transaction(() => expect(Atomics.load(intent, 0)).toBe(1))();
    expect(Atomics.load(intent, 0)).toBe(0);
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message), flushMs: 5 });
    writers.push(w);
    w.define('test.child', CHILD_INSERT);
    w.start();
    Atomics.add(intent, 0, 1); // as an API write waiting for the lock does
    const heldAt = Date.now();
    try {
      w.write('test.child', [1, 1, 1, null]);
      await sleep(300);
      expect(childCount()).toBe(0);
      // Held on, the API side cannot stall the writer: the batch goes after the bounded wait.
      await until(() => childCount() === 1, 5000);
      expect(childCount()).toBe(1);
      expect(Date.now() - heldAt).toBeGreaterThanOrEqual(900);
    } finally {
      Atomics.sub(intent, 0, 1);
      Atomics.notify(intent, 0);
    }
    // Released at once: the next write commits without the wait.
    const releasedAt = Date.now();
    w.write('test.child', [2, 1, 2, null]);
    await until(() => childCount() === 2, 5000);
    expect(childCount()).toBe(2);
    expect(Date.now() - releasedAt).toBeLessThan(900);
  });
});
