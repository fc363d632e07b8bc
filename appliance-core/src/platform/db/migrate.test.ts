import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { loadMigrations, migrate, MigrationError } from './migrate.js';

describe('migrations', () => {
  it('are numbered without gaps and apply once, in one go', () => {
    const migrations = loadMigrations();
    expect(migrations.map((m) => m.id)).toEqual(migrations.map((_, i) => i + 1));
    const db = openDatabase(':memory:');
    expect(migrate(db, 1)).toEqual(migrations.map((m) => m.id));
    expect(migrate(db, 2)).toEqual([]);
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((t) => t.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'users',
        'access_tokens',
        'web_sessions',
        'permissions',
        'devices',
        'profiles',
        'tags',
      ]),
    );
  });

  it('seeds the permission catalogue, the default profiles and device 1', () => {
    const db = openDatabase(':memory:');
    migrate(db, 1);
    const slugs = (db.prepare('SELECT slug FROM permissions').all() as { slug: string }[]).map(
      (p) => p.slug,
    );
    expect(slugs.sort()).toEqual([
      'agentadmin',
      'alerts',
      'api',
      'capture',
      'devices',
      'logs',
      'overwatch',
      'sa',
      'system',
      'tools',
      'urls',
      'users',
      'vne',
      'write_devices',
    ]);
    expect(db.prepare('SELECT id, ip_address FROM devices WHERE id = 1').get()).toEqual({
      id: 1,
      ip_address: '127.0.0.1',
    });
    expect(
      (db.prepare('SELECT count(*) AS n FROM profiles').get() as { n: number }).n,
    ).toBeGreaterThanOrEqual(5);
  });

  it('refuses a database written by a newer release', () => {
    const db = openDatabase(':memory:');
    migrate(db, 1);
    db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (999, ?, 0)').run(
      'future',
    );
    expect(() => migrate(db, 2)).toThrow(MigrationError);
  });

  it('rolls back every migration of a run when one fails', () => {
    const db = openDatabase(':memory:');
    expect(() =>
      migrate(db, 1, [
        { id: 1, name: 'ok', sql: 'CREATE TABLE a (x INTEGER) STRICT;' },
        { id: 2, name: 'broken', sql: 'CREATE TABLE b (x NOPE_TYPE) STRICT;' },
      ]),
    ).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'a'").get()).toBeUndefined();
  });

  it('keeps the STRICT, foreign-key and WAL settings: a file database, every table', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-test-'));
    try {
      const db = openDatabase(path.join(dir, 'appliance.db'));
      migrate(db, 1);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      const tables = (
        db
          .prepare("SELECT name, type, strict FROM pragma_table_list WHERE schema = 'main'")
          .all() as {
          name: string;
          type: string;
          strict: number;
        }[]
      ).filter((t) => t.type === 'table' && !t.name.startsWith('sqlite_'));
      expect(tables.length).toBeGreaterThanOrEqual(40);
      expect(tables.filter((t) => t.strict !== 1).map((t) => t.name)).toEqual([]);
      // A row that breaks a declared foreign key is refused on this connection.
      expect(() =>
        db.prepare('INSERT INTO device_tags (device_id, tag_id) VALUES (999999, 999999)').run(),
      ).toThrow(/FOREIGN KEY/);
      db.close();
      // WAL is a property of the file: a second connection sees it too.
      const again = openDatabase(path.join(dir, 'appliance.db'), { readonly: true });
      expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('statement cache', () => {
  it('hands back the same statement for the same SQL, with result modes reset', () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);');
    const a = db.prepare('SELECT x FROM t ORDER BY x');
    expect(db.prepare('SELECT x FROM t ORDER BY x')).toBe(a);
    expect(a.pluck().all()).toEqual([1, 2]);
    expect(db.prepare('SELECT x FROM t ORDER BY x').all()).toEqual([{ x: 1 }, { x: 2 }]);
  });

  it('never shares a statement that is mid-iteration', () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);');
    const seen: number[] = [];
    for (const row of db.prepare('SELECT x FROM t ORDER BY x').iterate() as Iterable<{
      x: number;
    }>) {
      seen.push(row.x, (db.prepare('SELECT x FROM t ORDER BY x').all() as { x: number }[]).length);
    }
    expect(seen).toEqual([1, 2, 2, 2]);
  });
});
