import { describe, expect, it } from 'vitest';
import type { Identity } from './identity.js';
import { deviceInScope, deviceScopeSql, scopedOrNotFound } from './scoping.js';
import { openDatabase } from '../db/database.js';

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
    expect(() => deviceScopeSql(who([1]), 'd.id; DROP TABLE x')).toThrow();
  });
});
