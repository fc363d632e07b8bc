/**
 * The storage writer when its worker ends badly, against a real SQLite file: a worker that crashes
 * (its error and the writes it lost in the report, each crash counting only its own), a crash
 * during close(), close() with a worker stuck in SQLite (terminated after closeTimeoutMs; the
 * writes it had not answered and the writes queued meanwhile counted lost, each in its own report),
 * the exit of a worker that close() gave up on arriving after a reopen, a restart pending at
 * close(), clients of one name that go away, and the TEMP-trigger guard's edges. Fast tests,
 * written against the survivors of mutation testing (docs/testing.md).
 *
 * A worker is made to crash with its own error by a malformed control message (a lane without a
 * port): the worker handles control messages in order, so writes of a producer made after that
 * message are never taken, and are lost with the worker, deterministically.
 */
import fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchTables } from './change-triggers.js';
import { openDatabase, type DB } from './database.js';
import {
  CHILD_INSERT,
  closeFixture,
  countChildren,
  openFixture,
  sleep,
  until,
  workerOf,
} from './testing/writer-fixture.js';
import { StorageWriter, StorageWriterClient, type StorageWriterOptions } from './storage-writer.js';

let dir: string;
let file: string;
let db: DB;
const writers: StorageWriter[] = [];
let errors: string[] = [];

beforeEach(() => {
  ({ dir, file, db } = openFixture('storage-writer-shutdown-'));
  errors = [];
});

afterEach(async () => {
  await closeFixture({ dir, db }, writers.splice(0));
});

function writer(options: StorageWriterOptions = {}): StorageWriter {
  const w = new StorageWriter(file, { onError: (err) => errors.push(err.message), ...options });
  w.define('test.child', CHILD_INSERT);
  writers.push(w);
  return w;
}

const childCount = () => countChildren(db);

/** The error a worker throws for a lane message without a port (`lanePort.on` of undefined). */
const NO_PORT = "Cannot read properties of undefined (reading 'on')";
/** ... and for one whose port is a plain object. */
const NOT_A_PORT = 'lanePort.on is not a function';

/**
 * Makes the running worker of `w` crash with its own error: a lane message it cannot handle,
 * followed by a new producer `name` whose `count` writes the worker will never take.
 */
function crashWithWrites(
  w: StorageWriter,
  name: string,
  count: number,
  port?: object,
): ReturnType<StorageWriter['producer']> {
  const worker = workerOf(w);
  if (!worker) throw new Error('no worker');
  worker.postMessage({ type: 'lane', id: 1_000_000, name: 'broken', port });
  const p = w.producer(name);
  for (let i = 0; i < count; i++) p.write('test.child', [1000 + i, 1, i, null]);
  void p.flush(); // posts them
  return p;
}

/** A worker ended by terminate(): its code (0 or 1, as it was idle or not), no error text. */
const TERMINATED = /^storage writer worker exited \(code [01]\): 0 writes lost; restarting in 0 s$/;
const exitReports = () => errors.filter((e) => e.startsWith('storage writer worker exited'));

describe('a worker that crashes', () => {
  it('is reported with its exit code, its error and the writes it lost; each report counts its own crash only', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 0 });
    w.start();
    const first = crashWithWrites(w, 'first', 2);
    await first.flush(); // settled: lost when the worker's ports closed
    // Its exit may not have arrived yet: a write now waits for the restart, which reports the crash.
    expect(first.write('test.child', [1, 1, 1, null])).toBe(3);
    const written = first.flush();
    await until(() => exitReports().length === 1);
    await written;
    expect(childCount()).toBe(1);
    expect(exitReports()).toEqual([
      `storage writer worker exited (code 1: ${NO_PORT}): 2 writes lost; restarting in 0 s`,
    ]);
    await until(() => w.stats().restarts === 1 && workerOf(w) !== null);
    crashWithWrites(w, 'second', 1, {});
    await until(() => exitReports().length === 2);
    // A worker that ends without an error of its own: no error text, not the previous one.
    await until(() => w.stats().restarts === 2 && workerOf(w) !== null);
    await workerOf(w)?.terminate();
    await until(() => exitReports().length === 3);
    expect(exitReports()).toEqual([
      `storage writer worker exited (code 1: ${NO_PORT}): 2 writes lost; restarting in 0 s`,
      `storage writer worker exited (code 1: ${NOT_A_PORT}): 1 writes lost; restarting in 0 s`,
      expect.stringMatching(TERMINATED),
    ]);
    // The producers go on with the restarted worker.
    await until(() => w.stats().restarts === 3 && workerOf(w) !== null);
    expect(first.write('test.child', [2, 1, 2, null])).toBe(4);
    await w.flush();
    expect(childCount()).toBe(2);
    expect(w.stats().producers).toMatchObject({
      first: { received: 4, written: 2, lost: 2 },
      second: { received: 1, written: 0, lost: 1 },
    });
  });

  it('during close(): the writes lost since close began and the worker`s error are reported, once', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 0 });
    w.start();
    // Writes lost before close() are not counted again in its report.
    crashWithWrites(w, 'before', 2);
    await until(() => w.stats().restarts === 1 && workerOf(w) !== null);
    crashWithWrites(w, 'during', 3);
    await w.close();
    expect(errors).toEqual([
      `storage writer worker exited (code 1: ${NO_PORT}): 2 writes lost; restarting in 0 s`,
      `storage writer: 3 writes lost at close (the worker did not finish within 3000 ms: ${NO_PORT})`,
    ]);
    expect(w.stats()).toMatchObject({ lost: 5, queued: 0, inFlight: 0, restarts: 1 });
    // The error went with that report: a later crash without one reports none.
    w.start();
    await workerOf(w)?.terminate();
    await until(() => exitReports().length === 2);
    expect(exitReports()[1]).toMatch(TERMINATED);
  });

  it('a write queued while close() reports its losses (no worker left) is lost as queued, and starts no worker', async () => {
    const late: number[] = [];
    let p: ReturnType<StorageWriter['producer']> | null = null;
    const w = new StorageWriter(file, {
      flushMs: 60_000,
      onError: (err) => {
        errors.push(err.message);
        // Called from close() after the worker is gone and the producers are unlinked.
        if (p && /lost at close \(/.test(err.message)) {
          late.push(p.write('test.child', [50, 1, 50, null]));
          void p.flush();
        }
      },
    });
    w.define('test.child', CHILD_INSERT);
    writers.push(w);
    w.start();
    crashWithWrites(w, 'feed', 1);
    p = w.producer('feed');
    await w.close();
    expect(late).toEqual([2]);
    expect(errors).toEqual([
      `storage writer: 1 writes lost at close (the worker did not finish within 3000 ms: ${NO_PORT})`,
      'storage writer: 1 queued writes lost at close',
    ]);
    expect(workerOf(w)).toBeNull();
    expect(w.stats().producers.feed).toMatchObject({ received: 2, lost: 2, queued: 0 });
    // Again after a reopen: each close counts only its own queued writes.
    w.start();
    crashWithWrites(w, 'other', 1);
    await w.close();
    expect(late).toEqual([2, 3]);
    expect(errors.slice(2)).toEqual([
      `storage writer: 1 writes lost at close (the worker did not finish within 3000 ms: ${NO_PORT})`,
      'storage writer: 1 queued writes lost at close',
    ]);
  });
});

describe('close() with a worker stuck in SQLite', () => {
  it('terminates it after closeTimeoutMs: its unanswered writes and the writes queued meanwhile are lost, each reported', async () => {
    const w = writer({ flushMs: 60_000, closeTimeoutMs: 200 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush(); // the worker is up
    const stuck = workerOf(w) as Worker;
    let stuckExited = false;
    stuck.once('exit', () => (stuckExited = true));
    const other = openDatabase(file);
    other.exec('BEGIN IMMEDIATE'); // holds the write lock: the worker waits on busy_timeout (5 s)
    try {
      for (let i = 2; i <= 3; i++) w.write('test.child', [i, 1, i, null]);
      const group = w
        .producer('default')
        .group([{ statement: 'test.child', params: [4, 1, 4, null] }]);
      const closing = w.close();
      // Queued after close() posted the rest: no worker takes it.
      w.write('test.child', [5, 1, 5, null]);
      w.write('test.child', [6, 1, 6, null]);
      await closing;
      expect(await group).toEqual({
        committed: false,
        error: 'lost: the storage writer worker did not end in time',
      });
      expect(errors).toEqual([
        'storage writer: 3 writes lost at close (the worker did not finish within 200 ms)',
        'storage writer: 2 queued writes lost at close',
      ]);
      expect(w.stats()).toMatchObject({ written: 1, lost: 5, queued: 0, inFlight: 0 });
      // Reopened while the terminated worker is still inside SQLite: that worker's exit, when it
      // comes, is not taken for the new worker's.
      w.start();
      expect(workerOf(w)).not.toBeNull();
      expect(stuckExited).toBe(false);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const current = workerOf(w);
    await until(() => stuckExited); // it leaves SQLite and ends
    expect(stuckExited).toBe(true);
    expect(workerOf(w)).toBe(current);
    w.write('test.child', [7, 1, 7, null]);
    await w.flush();
    await sleep(50);
    expect(exitReports()).toEqual([]);
    expect(w.stats().restarts).toBe(0);
    w.write('test.child', [8, 1, 8, null]);
    await w.flush();
    expect(childCount()).toBe(3);
  });
});

describe('a restart pending at close()', () => {
  it('is cancelled: start() after close() starts a worker at once, and no second one follows', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 400 });
    w.start();
    await workerOf(w)?.terminate();
    await until(() => exitReports().length === 1);
    expect(workerOf(w)).toBeNull();
    await w.close();
    w.start();
    const current = workerOf(w);
    expect(current).not.toBeNull();
    await sleep(600); // past the cancelled restart
    expect(workerOf(w)).toBe(current);
    expect(w.stats().restarts).toBe(0);
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(1);
  });
});

describe('close() and clients in other threads', () => {
  it('lets the worker commit what a client had posted before close(), within closeTimeoutMs', async () => {
    const w = writer({ flushMs: 60_000, maxPending: 100 });
    w.start();
    const client = new StorageWriterClient(w.connect('there', { postEvery: 1_000_000 }));
    for (let i = 1; i <= 20_000; i++) client.write('test.child', [i, 1, i, null]);
    client.post();
    // The worker has the writes (its first batch of 100 is in): close() now.
    await until(() => childCount() > 0);
    await w.close();
    expect(childCount()).toBe(20_000);
  });
});

describe('clients that report problems', () => {
  it('a failure without an error text is reported as unknown', async () => {
    const w = writer({ errorReportMs: 0 });
    const port = w.connect('there');
    port.postMessage({ type: 'problems', failed: 2, error: null, dropped: 0 });
    await until(() => errors.length > 0);
    port.close();
    expect(errors).toEqual(['storage writer: 2 writes failed and were skipped (first: unknown)']);
  });
});

describe('the report window', () => {
  it('a close() with nothing to report does not start a window: the first problem after it is reported at once', async () => {
    const w = writer(); // errorReportMs 60 s
    w.start();
    await w.close();
    w.start();
    const port = w.connect('there');
    port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 3 });
    await until(() => errors.length > 0);
    port.close();
    expect(errors).toEqual(['storage writer: 3 writes dropped at full producer queues (there: 3)']);
  });
});

describe('clients that go away', () => {
  it('the last counters of every client of one name are summed under that name', async () => {
    const w = writer({ flushMs: 60_000 });
    w.start();
    for (const id of [1, 2]) {
      const client = new StorageWriterClient(w.connect('there'));
      client.write('test.child', [id, 1, id, null]);
      await client.close();
    }
    await until(() => (w as unknown as { lanes: Map<number, unknown> }).lanes.size === 0);
    expect(childCount()).toBe(2);
    expect(w.stats().producers.there).toMatchObject({ received: 2, written: 2, lost: 0 });
    await w.close();
    expect(errors).toEqual([]); // nothing lost, nothing to report
  });
});

describe('the TEMP-trigger guard without TEMP triggers', () => {
  it('compiles nothing and opens no second connection when the API connection has no TEMP trigger', () => {
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    // The plain connection the guard compares with would open the file by its name: gone, it
    // cannot. The API connection keeps working on the file it has open.
    fs.renameSync(file, `${file}.away`);
    try {
      expect(() =>
        w.define(
          'test.child',
          'INSERT INTO child (id, parent_id, value, note) VALUES (?, ?, ?, ?)',
        ),
      ).not.toThrow();
      db.exec('CREATE TEMP TRIGGER parent_seen AFTER INSERT ON parent BEGIN SELECT 1; END');
      expect(() => w.define('test.parent', 'INSERT INTO parent (id) VALUES (?)')).toThrow(
        `cannot open database ${file}`,
      );
    } finally {
      fs.renameSync(`${file}.away`, file);
    }
  });

  it('the connection it compiles on is closed again (no file descriptor left open)', () => {
    db.exec('CREATE TEMP TRIGGER parent_seen AFTER INSERT ON parent BEGIN SELECT 1; END');
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    const open = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(file);
        } catch {
          return false; // the directory's own descriptor, already closed
        }
      }).length;
    w.define('test.warm', 'UPDATE child SET note = ? WHERE id = ?'); // files the first compile opens for the API connection stay open
    const before = open();
    for (let i = 0; i < 3; i++)
      w.define(
        `test.child${i}`,
        'INSERT INTO child (id, parent_id, value, note) VALUES (?, ?, ?, ?)',
      );
    expect(open()).toBe(before);
  });

  it('and none when there is no statement to check (start() of a writer without statements)', async () => {
    db.exec('CREATE TEMP TRIGGER parent_seen AFTER INSERT ON parent BEGIN SELECT 1; END');
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    fs.renameSync(file, `${file}.away`);
    try {
      expect(() => w.start()).not.toThrow();
    } finally {
      // Back before the worker thread, which has just been created, gets to open it.
      fs.renameSync(`${file}.away`, file);
    }
    w.define('test.child', CHILD_INSERT);
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    expect(childCount()).toBe(1);
  });
});

describe('the TEMP-trigger guard at its edges', () => {
  beforeEach(() => {
    db.exec(`
      CREATE TABLE watched (id INTEGER PRIMARY KEY, label TEXT) STRICT;
      CREATE TABLE feed (id INTEGER PRIMARY KEY, watched_id INTEGER) STRICT;
      CREATE TRIGGER feed_purge AFTER DELETE ON feed BEGIN
        DELETE FROM watched WHERE id = old.watched_id;
      END;`);
    watchTables(db, 'testcache', [{ table: 'watched' }], () => {});
  });

  function guarded(): StorageWriter {
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    return w;
  }

  it('names the number of TEMP triggers a refused statement would fire (a permanent trigger on both sides)', () => {
    const w = guarded();
    expect(() => w.define('test.purge', 'DELETE FROM feed WHERE id = ?')).toThrow(
      "storage writer: statement test.purge writes a table or column that a cache of the API connection watches (it would fire 1 TEMP trigger(s) there, and none from the writer's connection): write it on the API connection",
    );
  });

  it('compiles statements with 0 to 999 parameters; beyond EXPLAIN_MAX_PARAMS it cannot, and leaves the statement to the worker', () => {
    const w = guarded();
    const refused = /writes a table or column that a cache of the API connection watches/;
    expect(() => w.define('test.clear', 'DELETE FROM watched')).toThrow(refused);
    const params = (n: number) => Array.from({ length: n }, () => '?').join(', ');
    expect(() => w.define('test.many', `DELETE FROM watched WHERE id IN (${params(999)})`)).toThrow(
      refused,
    );
    expect(() =>
      w.define('test.too-many', `DELETE FROM watched WHERE id IN (${params(1000)})`),
    ).not.toThrow();
  });

  it('a statement only the API connection can compile (a TEMP table) is not refused: the worker reports that it does not prepare', async () => {
    db.exec(`
      CREATE TEMP TABLE scratch (v INTEGER);
      CREATE TEMP TRIGGER scratch_seen AFTER INSERT ON scratch BEGIN SELECT 1; END;`);
    const w = guarded();
    expect(() => w.define('test.scratch', 'INSERT INTO scratch (v) VALUES (?)')).not.toThrow();
    w.write('test.scratch', [1]);
    await w.flush();
    await until(() => errors.length >= 2);
    expect(errors.sort()).toEqual([
      'storage writer: 1 writes failed and were skipped (first: test.scratch: statement test.scratch did not prepare: no such table: scratch)',
      'storage writer: statement test.scratch does not prepare: no such table: scratch',
    ]);
  });
});

describe('the event loop', () => {
  const ports = () =>
    process.getActiveResourcesInfo().filter((kind) => kind === 'MessagePort').length;

  it('neither the running worker nor a pending restart keeps the process alive', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 60_000 });
    const before = ports();
    w.start();
    await until(() => workerOf(w)?.threadId !== undefined);
    await sleep(50);
    expect(ports()).toBe(before);
    await workerOf(w)?.terminate();
    await until(() => exitReports().length === 1);
    const timer = (w as unknown as { restartTimer: NodeJS.Timeout | null }).restartTimer;
    expect(timer?.hasRef()).toBe(false);
  });

  it('close() does not wait out closeTimeoutMs when the worker ends', async () => {
    const w = writer({ flushMs: 60_000, closeTimeoutMs: 5000 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    const started = Date.now();
    await w.close();
    expect(Date.now() - started).toBeLessThan(4000);
    expect(childCount()).toBe(1);
  });
});
