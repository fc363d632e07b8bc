/**
 * The storage writer's life cycle and its side of the client protocol, against a real SQLite
 * file: the options producers get, define() again and after a producer exists, start() while
 * running, while a restart is pending and while close() is under way, reopening after close()
 * (this thread's producers and clients in other threads), the problems a client reports, and a
 * client that goes away. Fast tests (no bulk writes), so that mutation testing can run them per
 * mutant (docs/testing.md); storage-writer.test.ts has the batching, crash and group behaviour.
 */
import path from 'node:path';
import type { MessagePort, Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchTables } from './change-triggers.js';
import type { DB } from './database.js';
import {
  CHILD_INSERT,
  closeFixture,
  countChildren,
  openFixture,
  sleep,
  until,
  workerOf,
} from './testing/writer-fixture.js';
import { StorageWriter, type StorageWriterOptions } from './storage-writer.js';

let dir: string;
let file: string;
let db: DB;
const writers: StorageWriter[] = [];
let ports: MessagePort[] = [];
let errors: string[] = [];

beforeEach(() => {
  ({ dir, file, db } = openFixture('storage-writer-lifecycle-'));
  errors = [];
});

afterEach(async () => {
  for (const port of ports) port.close();
  ports = [];
  await closeFixture({ dir, db }, writers.splice(0));
});

function writer(options: StorageWriterOptions = {}): StorageWriter {
  const w = new StorageWriter(file, { onError: (err) => errors.push(err.message), ...options });
  w.define('test.child', CHILD_INSERT);
  writers.push(w);
  return w;
}

const childCount = () => countChildren(db);

const lanesOf = (w: StorageWriter) => (w as unknown as { lanes: Map<number, unknown> }).lanes;

interface ControlMessage {
  type: string;
  name?: string;
  options?: unknown;
  port?: MessagePort;
}

/** The client end of `connect(name)`, recording what the writer tells it (as a client would). */
function client(w: StorageWriter, name: string, options = {}) {
  const port = w.connect(name, options);
  ports.push(port);
  const messages: ControlMessage[] = [];
  port.on('message', (msg: ControlMessage) => {
    messages.push(msg);
    if (msg.port) ports.push(msg.port);
  });
  return { port, messages, types: () => messages.map((m) => m.type) };
}

describe('StorageWriter options and definitions', () => {
  it('refuses an empty file name (an unnamed temporary database)', () => {
    expect(() => new StorageWriter('')).toThrow('needs a database file');
  });

  it('gives producers its defaults (flushMs 1000, maxPending 5000, maxQueued 200,000), its own options, or theirs', async () => {
    const defaults = client(writer(), 'a');
    const own = client(writer({ flushMs: 7, maxPending: 9, maxQueued: 11 }), 'b');
    const theirs = client(writer({ flushMs: 7 }), 'c', { flushMs: 3, postEvery: 4, maxQueued: 5 });
    await until(() => [defaults, own, theirs].every((c) => c.messages.length > 0));
    expect(defaults.messages[0]).toMatchObject({
      type: 'hello',
      name: 'a',
      options: { maxQueued: 200_000, flushMs: 1000, postEvery: 5000 },
      statements: [['test.child', 0]],
      closed: false,
    });
    expect(own.messages[0]?.options).toEqual({ maxQueued: 11, flushMs: 7, postEvery: 9 });
    expect(theirs.messages[0]?.options).toEqual({ maxQueued: 5, flushMs: 3, postEvery: 4 });
  });

  it('statement names: lower-case <namespace>.<name>, more dots allowed, nothing after', () => {
    const w = writer();
    expect(() => w.define('test.sub.name', 'INSERT INTO parent (id) VALUES (?)')).not.toThrow();
    for (const name of ['test.aB', 'test.a b', 'test.a!', 'test', 'Test.a', 'test.'])
      expect(() => w.define(name, 'INSERT INTO parent (id) VALUES (?)')).toThrow(
        `storage writer: statement name ${name} needs a namespace`,
      );
  });

  it('caps the worker heap: 256 MB by default, or workerHeapMb', () => {
    const w = writer();
    w.start();
    expect(workerOf(w)?.resourceLimits?.maxOldGenerationSizeMb).toBe(256);
    const small = writer({ workerHeapMb: 64 });
    small.start();
    expect(workerOf(small)?.resourceLimits?.maxOldGenerationSizeMb).toBe(64);
  });

  it('define(): the same SQL again is a no-op, other SQL under the name is refused', () => {
    const w = writer();
    expect(() =>
      w.define('test.child', 'INSERT INTO child (id, parent_id, value, note) VALUES (?, ?, ?, ?)'),
    ).not.toThrow();
    expect(() => w.define('test.child', 'DELETE FROM child')).toThrow(
      'statement test.child is already defined with other SQL',
    );
  });

  it('a statement defined while running, after producers exist here and in another thread, reaches the worker and both', async () => {
    const w = writer({ flushMs: 60_000 });
    w.start();
    const p = w.producer('here');
    const c = client(w, 'there');
    w.define('test.parent', 'INSERT INTO parent (id) VALUES (?)');
    await until(() => c.types().includes('define'));
    expect(c.messages.find((m) => m.type === 'define')).toEqual({
      type: 'define',
      id: 1,
      name: 'test.parent',
    });
    expect(p.write('test.parent', [5])).toBe(1);
    await p.flush();
    expect(db.prepare('SELECT id FROM parent WHERE id = 5').get()).toEqual({ id: 5 });
  });
});

describe('StorageWriter start() and close()', () => {
  it('start() on a running writer does nothing: the same worker, no new check of the statements', () => {
    const w = new StorageWriter(db, { onError: (err) => errors.push(err.message) });
    writers.push(w);
    w.define('test.child', CHILD_INSERT);
    w.start();
    const first = workerOf(w);
    expect(first).not.toBeNull();
    // A cache installed after the start would make start() refuse the statement (see
    // storage-writer.test.ts); on a running writer start() neither checks nor spawns again.
    watchTables(db, 'later', [{ table: 'child' }], () => {});
    expect(() => w.start()).not.toThrow();
    expect(workerOf(w)).toBe(first);
  });

  it('start() while a restart is pending does not cut the restart delay short', async () => {
    const w = writer({ flushMs: 60_000, restartDelayMs: 60_000 });
    w.write('test.child', [1, 1, 1, null]);
    await w.flush();
    await workerOf(w)?.terminate();
    await until(() => errors.some((e) => /worker exited/.test(e)));
    expect(workerOf(w)).toBeNull();
    // The delay counts from the worker's start: about a minute (less the test's own time).
    expect(errors.find((e) => /worker exited/.test(e))).toMatch(
      /^storage writer worker exited \(code 1\): 0 writes lost; restarting in (59|60) s$/,
    );
    w.start();
    expect(workerOf(w)).toBeNull();
  });

  it('start() while close() is under way does not start a worker that outlives it', async () => {
    const w = writer({ flushMs: 60_000 });
    w.start();
    const worker = workerOf(w) as Worker;
    let startedDuringClose: Worker | null | undefined;
    // The writer's own exit handler runs first (registered at spawn): the worker is gone, the
    // close is not over.
    worker.once('exit', () => {
      w.start();
      startedDuringClose = workerOf(w);
    });
    await w.close();
    expect(startedDuringClose).toBeNull();
    expect(workerOf(w)).toBeNull();
  });

  it('after close(), a new producer counts its writes lost (no worker starts) until start() reopens', async () => {
    const w = writer({ flushMs: 60_000 });
    w.start();
    await w.close();
    const late = w.producer('late');
    expect(late.write('test.child', [1, 1, 1, null])).toBe(0);
    expect(late.stats()).toMatchObject({ received: 1, lost: 1, queued: 0 });
    expect(workerOf(w)).toBeNull();
    w.start();
    expect(late.write('test.child', [2, 1, 2, null])).toBe(1);
    // A producer made after the reopen is open too.
    const later = w.producer('later');
    expect(later.write('test.child', [3, 1, 3, null])).toBe(1);
    await w.flush();
    expect(childCount()).toBe(2);
    expect(w.stats().producers).toMatchObject({
      late: { received: 2, written: 1, lost: 1 },
      later: { received: 1, written: 1, lost: 0 },
    });
  });

  it('tells a client in another thread: attach at start, closed at close, open and attach again at start', async () => {
    const w = writer({ flushMs: 60_000 });
    const c = client(w, 'there');
    w.start();
    await w.close();
    w.start();
    // Port messages arrive in order: once the define is in, everything before it is too.
    w.define('test.marker', 'INSERT INTO parent (id) VALUES (?)');
    await until(() => c.types().includes('define'));
    expect(c.types()).toEqual(['hello', 'attach', 'closed', 'open', 'attach', 'define']);
  });

  it('queued and inFlight read the totals of stats()', async () => {
    const w = writer({ flushMs: 60_000 });
    w.write('test.child', [1, 1, 1, null]);
    w.write('test.child', [2, 1, 2, null]);
    expect(w.queued).toBe(2);
    expect(w.inFlight).toBe(0);
    await w.flush();
    expect(w.queued).toBe(0);
    expect(w.inFlight).toBe(0);
    expect(w.stats()).toMatchObject({ written: 2, queued: 0, inFlight: 0 });
  });
});

describe('StorageWriter clients in other threads', () => {
  it('reports the writes a client dropped at once (the first report of the window), and nothing for a count of 0', async () => {
    const w = writer(); // errorReportMs 60 s: the first report goes out at once, later ones wait
    const c = client(w, 'there');
    c.port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 3 });
    await until(() => errors.length > 0);
    expect(errors).toEqual(['storage writer: 3 writes dropped at full producer queues (there: 3)']);
  });

  it('reports the writes a client could not write, and each kind only when there are some', async () => {
    const w = writer({ errorReportMs: 0 });
    const c = client(w, 'there');
    c.port.postMessage({
      type: 'problems',
      failed: 2,
      error: 'CHECK constraint failed',
      dropped: 0,
    });
    c.port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 1 });
    await until(() => errors.length >= 2);
    await sleep(20);
    expect(errors).toEqual([
      'storage writer: 2 writes failed and were skipped (first: CHECK constraint failed)',
      'storage writer: 1 writes dropped at full producer queues (there: 1)',
    ]);
  });

  it('drops within the report window are summed by producer and reported at close', async () => {
    const w = writer();
    const a = client(w, 'alpha');
    const b = client(w, 'beta');
    a.port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 1 });
    await until(() => errors.length > 0);
    a.port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 2 });
    b.port.postMessage({ type: 'problems', failed: 0, error: null, dropped: 3 });
    await sleep(50);
    expect(errors).toHaveLength(1);
    await w.close();
    expect(errors).toEqual([
      'storage writer: 1 writes dropped at full producer queues (alpha: 1)',
      'storage writer: 5 writes dropped at full producer queues (alpha: 2, beta: 3)',
    ]);
  });

  it('a client that goes away leaves no lane behind; its last counters stay under its name', async () => {
    const w = writer();
    const c = client(w, 'there');
    expect(lanesOf(w).size).toBe(1);
    c.port.close();
    await until(() => lanesOf(w).size === 0);
    expect(lanesOf(w).size).toBe(0);
    expect(w.stats().producers).toEqual({
      there: { received: 0, written: 0, dropped: 0, failed: 0, lost: 0, queued: 0, inFlight: 0 },
    });
  });
});

describe('StorageWriter reports', () => {
  it('a commit listener that throws is reported with its producer, and the writer goes on', async () => {
    const w = writer({ flushMs: 60_000 });
    const p = w.producer('feed');
    p.onCommit(() => {
      throw new Error('listener broke');
    });
    const q = w.producer('other');
    q.onCommit(() => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a careless listener does
      throw 'a string';
    });
    p.write('test.child', [1, 1, 1, null]);
    q.write('test.child', [2, 1, 2, null]);
    await w.flush();
    await until(() => errors.length >= 2);
    expect(errors.sort()).toEqual([
      'storage writer: a commit listener of feed threw: listener broke',
      'storage writer: a commit listener of other threw: a string',
    ]);
    expect(childCount()).toBe(2);
  });
});

describe('StorageWriter tablespaces', () => {
  it('the worker attaches the tablespaces (ts_<name>) of the API connection, and no other schema', async () => {
    const longest = `ts_a${'b'.repeat(30)}`; // ts_ and 31 characters: the longest name
    const attached = ['ts_archive', longest];
    const others = ['other', 'xts_a', 'ts_1a', `${longest}c`];
    for (const [i, schema] of [...attached, ...others].entries()) {
      db.prepare(`ATTACH DATABASE ? AS "${schema}"`).run(path.join(dir, `space-${i}.db`));
      db.exec(`CREATE TABLE "${schema}".rows (v INTEGER) STRICT`);
    }
    const w = new StorageWriter(db, {
      flushMs: 60_000,
      onError: (err) => errors.push(err.message),
    });
    writers.push(w);
    for (const [i, schema] of [...attached, ...others].entries())
      w.define(`test.s${i}`, `INSERT INTO "${schema}".rows (v) VALUES (?)`);
    for (let i = 0; i < attached.length; i++) w.write(`test.s${i}`, [i]);
    await w.flush();
    for (const [i, schema] of attached.entries())
      expect(db.prepare(`SELECT v FROM "${schema}".rows`).all()).toEqual([{ v: i }]);
    await until(() => errors.length >= others.length);
    expect(errors.sort()).toEqual(
      others
        .map(
          (schema, i) =>
            `storage writer: statement test.s${attached.length + i} does not prepare: no such table: ${schema}.rows`,
        )
        .sort(),
    );
  });
});
