import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function twoConnections() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-test-'));
  dirs.push(dir);
  const file = path.join(dir, 'x.db');
  const a = openDatabase(file);
  a.exec('CREATE TABLE t (x INTEGER) STRICT');
  const b = openDatabase(file);
  b.pragma('busy_timeout = 0');
  return { a, b };
}

describe('openDatabase transactions', () => {
  it('take the write lock when they begin (IMMEDIATE), so a read-then-write transaction cannot fail on a stale snapshot', () => {
    const { a, b } = twoConnections();
    let other: string | null = null;
    a.transaction(() => {
      a.prepare('SELECT count(*) FROM t').get();
      // Another connection (the storage writer's) cannot write in between: it waits for the lock.
      try {
        b.prepare('INSERT INTO t VALUES (1)').run();
      } catch (err) {
        other = (err as { code?: string }).code ?? 'error';
      }
      a.prepare('INSERT INTO t VALUES (2)').run();
    })();
    expect(other).toBe('SQLITE_BUSY');
    expect(b.prepare('SELECT x FROM t').all()).toEqual([{ x: 2 }]);
    a.close();
    b.close();
  });

  it('still offer the deferred form, and nest as savepoints', () => {
    const { a, b } = twoConnections();
    a.transaction(() => {
      a.prepare('SELECT count(*) FROM t').get();
      b.prepare('INSERT INTO t VALUES (1)').run(); // no lock held yet: the other connection writes
    }).deferred();
    const outer = a.transaction(() => {
      a.prepare('INSERT INTO t VALUES (2)').run();
      expect(() =>
        a.transaction(() => {
          a.prepare('INSERT INTO t VALUES (3)').run();
          throw new Error('inner fails');
        })(),
      ).toThrow('inner fails');
    });
    outer();
    expect(a.prepare('SELECT x FROM t ORDER BY x').all()).toEqual([{ x: 1 }, { x: 2 }]);
    a.close();
    b.close();
  });
});
