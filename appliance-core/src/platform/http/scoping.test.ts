import { describe, expect, it } from 'vitest';
import type { Identity } from './identity.js';
import {
  deviceInScope,
  deviceScopeSql,
  scopedOrNotFound,
  scopeOf,
  scopeSql,
  type DeviceScope,
  type DeviceScopeResolver,
} from './scoping.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';

const who = (tagIds: number[] | null): Identity => ({
  user: {
    id: 2,
    username: 'x',
    email: 'x@example.test',
    first_name: '',
    last_name: '',
    auth_source: 'local',
    created_at: 0,
    updated_at: 0,
  },
  tokenId: 1,
  sessionId: null,
  scopes: [],
  permissions: new Set(),
  tagIds,
  tagSlugs: [],
});

describe('tag scoping', () => {
  it('lets an unrestricted caller see everything and a restricted one only tagged devices', () => {
    expect(deviceInScope(who(null), [])).toBe(true);
    expect(deviceInScope(who([1, 2]), [2, 5])).toBe(true);
    expect(deviceInScope(who([1, 2]), [3])).toBe(false);
    expect(deviceInScope(who([1]), [])).toBe(false);
  });

  it('answers out-of-scope exactly like missing', () => {
    const notFound = () => new Error('Device not found');
    const tagsOf = (d: { tags: number[] }) => d.tags;
    expect(() => scopedOrNotFound(who([1]), null, tagsOf, notFound)).toThrow('Device not found');
    // A missing record is never handed to tagsOf (which could fail on it with another error).
    expect(() =>
      scopedOrNotFound<{ tags: number[] }>(who([1]), undefined, tagsOf, notFound),
    ).toThrow('Device not found');
    expect(() => scopedOrNotFound(who([1]), { tags: [9] }, tagsOf, notFound)).toThrow(
      'Device not found',
    );
    expect(scopedOrNotFound(who([1]), { tags: [1] }, tagsOf, notFound)).toEqual({ tags: [1] });
  });

  it('builds a list condition served by the device_tags index', () => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE devices (id INTEGER PRIMARY KEY);
             CREATE TABLE device_tags (device_id INTEGER, tag_id INTEGER, PRIMARY KEY (device_id, tag_id)) WITHOUT ROWID;
             INSERT INTO devices VALUES (1), (2), (3); INSERT INTO device_tags VALUES (1, 10), (2, 20);`);
    const ids = (identity: Identity) => {
      const scope = deviceScopeSql(identity, 'd.id');
      return (
        db
          .prepare(`SELECT d.id FROM devices d WHERE ${scope.sql} ORDER BY d.id`)
          .all(...scope.params) as { id: number }[]
      ).map((r) => r.id);
    };
    expect(ids(who(null))).toEqual([1, 2, 3]);
    expect(ids(who([20]))).toEqual([2]);
    expect(ids(who([]))).toEqual([]);
    expect(() => deviceScopeSql(who([1]), 'd.id; DROP TABLE x')).toThrow(
      'bad column name d.id; DROP TABLE x',
    );
  });

  it('is answered from the device_tags primary key on the real schema (no scan of device_tags)', () => {
    const db = openDatabase(':memory:');
    migrate(db, 1);
    const scope = deviceScopeSql(who([20]), 'd.id');
    const plan = (
      db
        .prepare(`EXPLAIN QUERY PLAN SELECT d.id FROM devices d WHERE ${scope.sql}`)
        .all(...scope.params) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('\n');
    expect(plan).toMatch(/SEARCH st (EXISTS )?USING PRIMARY KEY \(device_id=\? AND tag_id=\?\)/);
    expect(plan).not.toMatch(/SCAN st/);
  });
});

describe('list scoping resolved once per request', () => {
  /** A resolver over a tiny device table: device n carries tag n % 3 (what devices supplies). */
  const devices = Array.from({ length: 30 }, (_, i) => ({
    id: i + 1,
    ip: `10.0.0.${i + 1}`,
    tag: (i + 1) % 3,
  }));
  let calls = 0;
  const resolve: DeviceScopeResolver = (tagIds) => {
    calls++;
    const mine = devices.filter((d) => tagIds.includes(d.tag));
    return { deviceIds: new Set(mine.map((d) => d.id)), ips: new Set(mine.map((d) => d.ip)) };
  };

  it('resolves a restricted caller once per request, an unrestricted one never', () => {
    calls = 0;
    const request = { identity: who([1]) };
    const first = scopeOf(request, resolve) as DeviceScope;
    expect(scopeOf(request, resolve)).toBe(first);
    expect(calls).toBe(1);
    expect([...first.deviceIds]).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    expect(first.ips.has('10.0.0.4')).toBe(true);
    scopeOf({ identity: who([1]) }, resolve);
    expect(calls).toBe(2); // another request resolves again
    expect(scopeOf({ identity: who(null) }, resolve)).toBeNull();
    expect(calls).toBe(2);
    expect(() => scopeOf({ identity: null }, resolve)).toThrow(/without authentication/);
  });

  const rowsDb = () => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE log_rows (id INTEGER PRIMARY KEY, device_id INTEGER, src_ip TEXT, ts INTEGER);
             CREATE INDEX log_rows_device ON log_rows (device_id, ts);
             CREATE INDEX log_rows_src ON log_rows (src_ip);`);
    const insert = db.prepare('INSERT INTO log_rows (device_id, src_ip, ts) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 20_000; i++) {
        const device = (i % 30) + 1;
        insert.run(device, `10.0.0.${device}`, i);
      }
    })();
    db.exec('ANALYZE');
    return db;
  };

  it('binds the scope as one json_each parameter served by the device_id index, not a scan', () => {
    const db = rowsDb();
    const scope = scopeOf({ identity: who([2]) }, resolve);
    for (const [column, on] of [
      ['device_id', 'deviceIds'],
      ['src_ip', 'ips'],
    ] as const) {
      const where = scopeSql(scope, column, on);
      expect(where.params).toHaveLength(1);
      const plan = (
        db
          .prepare(`EXPLAIN QUERY PLAN SELECT id FROM log_rows WHERE ${where.sql}`)
          .all(...where.params) as { detail: string }[]
      )
        .map((r) => r.detail)
        .join('; ');
      expect(plan, column).toMatch(/SEARCH log_rows USING (COVERING )?INDEX log_rows_(device|src)/);
      expect(plan, column).not.toMatch(/SCAN log_rows/);
    }
  });

  it('keeps only the rows of in-scope devices (and every row for an unrestricted caller)', () => {
    const db = rowsDb();
    const count = (scope: DeviceScope | null, column = 'device_id', on = 'deviceIds' as const) => {
      const where = scopeSql(scope, column, on);
      return db
        .prepare(
          `SELECT device_id, count(*) AS n FROM log_rows WHERE ${where.sql} GROUP BY device_id`,
        )
        .all(...where.params) as { device_id: number; n: number }[];
    };
    const scoped = count(scopeOf({ identity: who([0]) }, resolve));
    expect(scoped.map((r) => r.device_id)).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    expect(scoped.reduce((n, r) => n + r.n, 0)).toBeGreaterThan(6000);
    const byIp = count(scopeOf({ identity: who([0]) }, resolve), 'src_ip', 'ips' as never);
    expect(byIp).toEqual(scoped);
    expect(count(scopeOf({ identity: who([]) }, resolve))).toEqual([]);
    expect(count(null)).toHaveLength(30);
    expect(() => scopeSql(null, 'device_id; DROP TABLE log_rows')).toThrow(
      'bad column name device_id; DROP TABLE log_rows',
    );
    // Without `on`, the scope's device ids are the parameter.
    const byDefault = scopeSql({ deviceIds: new Set([3, 6]), ips: new Set(['127.0.0.3']) }, 'd.id');
    expect(byDefault).toEqual({
      sql: 'd.id IN (SELECT value FROM json_each(?))',
      params: ['[3,6]'],
    });
  });
});
