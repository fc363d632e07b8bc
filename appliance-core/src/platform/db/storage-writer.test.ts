/**
 * The storage writer against real SQLite files: a worker thread with its own connection, batches
 * in one transaction, failing ops skipped, flush/close semantics, crash restart, and the API
 * thread kept free while the worker commits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './database.js';
import { StorageWriter, type StorageWriterOptions } from './storage-writer.js';

let dir: string;
let file: string;
let db: DB;
let writers: StorageWriter[] = [];
let errors: string[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-writer-test-'));
  file = path.join(dir, 'test.db');
  db = openDatabase(file);
  db.exec(`
    CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT;
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent (id), value INTEGER NOT NULL CHECK (value >= 0), note TEXT) STRICT;
    CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL) STRICT;
    INSERT INTO parent (id) VALUES (1), (2);
    INSERT INTO counter (id, n) VALUES (1, 0);`);
  errors = [];
});

afterEach(async () => {
  for (const w of writers) await w.close();
  writers = [];
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function writer(options: StorageWriterOptions = {}): StorageWriter {
  const w = new StorageWriter(file, { onError: (err) => errors.push(err.message), ...options });
  w.define('child', 'INSERT INTO child (id, parent_id, value, note) VALUES (?, ?, ?, ?)');
  w.define('bump', 'UPDATE counter SET n = n + ? WHERE id = 1');
  writers.push(w);
  return w;
}

const childCount = () => (db.prepare('SELECT count(*) AS n FROM child').get() as { n: number }).n;

describe('StorageWriter', () => {
  it('commits a batch in one transaction, visible to another connection after flush()', async () => {
    const w = writer({ flushMs: 60_000 });
    for (let i = 1; i <= 10; i++) w.write('child', [i, 1, i, null]);
    w.write('bump', [5]);
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
    for (let i = 1; i <= 250; i++) w.write('child', [i, 1, i, null]);
    expect(w.queued).toBe(50); // two batches of 100 were posted as they filled
    const first = w.flush();
    w.write('bump', [1]);
    await first;
    expect(childCount()).toBe(250);
    expect(w.stats()).toMatchObject({ flushes: 3, written: 250, queued: 1 });
    await w.flush();
    expect(db.prepare('SELECT n FROM counter').get()).toEqual({ n: 1 });
  });

  it('posts on its own every flushMs', async () => {
    const w = writer({ flushMs: 50 });
    w.write('child', [1, 1, 1, null]);
    const until = Date.now() + 5000;
    while (childCount() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(childCount()).toBe(1);
  });

  it('skips a failing op (FOREIGN KEY, CHECK) and commits the rest of its batch; reports without parameters, rate-limited', async () => {
    const w = writer({ flushMs: 60_000 });
    for (let i = 1; i <= 100; i++)
      w.write('child', [i, i === 50 ? 99 : 1, i === 70 ? -1 : i, 'secret-param-value']);
    await w.flush();
    expect(childCount()).toBe(98);
    expect(db.prepare('SELECT count(*) AS n FROM child WHERE id IN (50, 70)').get()).toEqual({
      n: 0,
    });
    expect(w.stats()).toMatchObject({ written: 98, failed: 2, flushes: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /2 writes failed and were skipped \(first: child: FOREIGN KEY constraint failed\)/,
    );
    // Another failure within the minute is counted, and reported at close.
    w.write('child', [1, 1, 1, 'secret-param-value']); // duplicate primary key
    w.write('child', [200, 2, 1, null]);
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
    w.define('broken', 'INSERT INTO nowhere (x) VALUES (?)');
    w.write('broken', [1]);
    w.write('child', [1, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(1);
    expect(w.stats()).toMatchObject({ written: 1, failed: 1 });
    expect(errors[0]).toMatch(/statement broken does not prepare: no such table: nowhere/);
    expect(() => w.write('unknown', [])).toThrow('unknown statement unknown');
    expect(() => w.define('child', 'DELETE FROM child')).toThrow('already defined');
  });

  it('binds integers, reals, text, bigint and null', async () => {
    db.exec('CREATE TABLE mixed (i INTEGER, r REAL, t TEXT, b INTEGER, z ANY) STRICT');
    const w = writer({ flushMs: 60_000 });
    w.define('mixed', 'INSERT INTO mixed (i, r, t, b, z) VALUES (?, ?, ?, ?, ?)');
    w.write('mixed', [1, 2.5, 'x', 2n ** 60n, null]);
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
    for (let i = 1; i <= 20; i++) w.write('child', [i, 1, i, null]);
    await w.close();
    expect(childCount()).toBe(20);
    w.write('child', [21, 1, 1, null]);
    await w.flush();
    expect(w.stats()).toMatchObject({ written: 20, lost: 1, queued: 0 });
    expect(childCount()).toBe(20);
    // It can be started again (an engine stopped and started).
    w.start();
    w.write('child', [22, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(21);
  });

  it('close() is bounded: a worker that cannot commit is terminated and its writes counted lost', async () => {
    const w = writer({ flushMs: 60_000, closeTimeoutMs: 300 });
    w.write('child', [1, 1, 1, null]);
    await w.flush(); // the worker is up
    const other = openDatabase(file);
    other.exec('BEGIN IMMEDIATE'); // holds the write lock: the worker waits on busy_timeout
    try {
      for (let i = 2; i <= 11; i++) w.write('child', [i, 1, i, null]);
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
    w.write('child', [1, 1, 1, null]);
    await w.flush();
    // A crash: the thread ends while a batch is in flight.
    const worker = (w as unknown as { worker: { terminate(): Promise<number> } }).worker;
    w.write('child', [2, 1, 2, null]);
    const pending = w.flush();
    await worker.terminate();
    await pending; // settled: the batch either committed before the end or is counted lost
    const { written, lost } = w.stats();
    expect(written + lost).toBe(2);
    expect(errors.some((e) => /storage writer worker exited/.test(e))).toBe(true);
    // Writes after the crash wait for the restart and are committed by the new worker.
    w.write('child', [3, 1, 3, null]);
    await w.flush();
    expect(db.prepare('SELECT count(*) AS n FROM child WHERE id = 3').get()).toEqual({ n: 1 });
    expect(w.stats().restarts).toBe(1);
  });

  it('drops writes beyond maxQueued while the worker is down (and says so); close() starts a worker for the rest', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 60_000, maxQueued: 10 });
    w.write('child', [1, 1, 1, null]);
    await w.flush();
    await (w as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const until = Date.now() + 5000;
    while (!errors.some((e) => /worker exited/.test(e)) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    for (let i = 2; i <= 16; i++) w.write('child', [i, 1, i, null]);
    expect(w.stats()).toMatchObject({ queued: 10, lost: 5 });
    // The first drop is reported at once, the next ones within the minute at close.
    expect(errors.filter((e) => /dropped/.test(e))).toEqual([
      'storage writer: 1 writes dropped (more than 10 queued while the worker was down)',
    ]);
    await w.close();
    expect(errors.filter((e) => /dropped/.test(e))[1]).toMatch(/^storage writer: 4 writes dropped/);
    expect(childCount()).toBe(11);
    expect(w.stats()).toMatchObject({ written: 11, lost: 5, queued: 0 });
  });

  it('refuses an in-memory database (the worker opens the file)', () => {
    expect(() => new StorageWriter(':memory:')).toThrow('needs a database file');
  });

  it('keeps the API thread free while the worker commits 200k rows', async () => {
    db.exec(
      'CREATE TABLE bulk (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b REAL NOT NULL, c TEXT NOT NULL) STRICT',
    );
    const w = writer({ flushMs: 60_000, maxPending: 5000 });
    w.define('bulk', 'INSERT INTO bulk (id, a, b, c) VALUES (?, ?, ?, ?)');
    await w.flush();
    const TOTAL = 200_000;
    // Queue in slices (as pollers do), posting a batch whenever 5000 are queued.
    for (let i = 0; i < TOTAL; i++) w.write('bulk', [i, i % 997, i / 7, 'row']);
    let ticks = 0;
    let maxGap = 0;
    let last = performance.now();
    const interval = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    await w.flush();
    const elapsed = performance.now() - started;
    clearInterval(interval);
    expect((db.prepare('SELECT count(*) AS n FROM bulk').get() as { n: number }).n).toBe(TOTAL);
    expect(w.stats().flushes).toBeGreaterThanOrEqual(TOTAL / 5000);
    // The commit took many tick periods and the main thread's timer kept firing throughout: had the
    // commit run on this thread, one gap would be as long as the whole commit.
    expect(elapsed).toBeGreaterThan(50);
    expect(ticks).toBeGreaterThan(elapsed / 5 / 4);
    expect(maxGap).toBeLessThan(elapsed / 4);
  });
});
