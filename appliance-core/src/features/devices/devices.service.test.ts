/**
 * The devices service on a real SQLite file: the delete cascade and its registry (one
 * transaction, rollback on failure), the extension points, the walks_log housekeeping, and the
 * small pure helpers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CoreContext } from '../../platform/context.js';
import { openDatabase, type DB } from '../../platform/db/database.js';
import type { Identity } from '../../platform/http/identity.js';
import { migrate } from '../../platform/db/migrate.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { SecretBox } from '../../platform/security/secret-box.js';
import { DAY_MS, systemClock } from '../../platform/time/time.js';
import { partitionedTable } from '../../platform/db/partitions.js';
import { canonicalIp, DevicesService, formatBytes } from './devices.service.js';

let dir: string;
let db: DB;
let devices: DevicesService;

const insertDevice = (ip: string) =>
  Number(
    db
      .prepare(
        `INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES ('d', ?, 'dash_generic', 0, 0)`,
      )
      .run(ip).lastInsertRowid,
  );

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devices-service-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, Date.now());
  const ctx = {
    db,
    clock: systemClock,
    secrets: new SecretBox(Buffer.alloc(32, 1)),
    log: pino({ level: 'silent' }),
    hostname: () => 'test',
  } as unknown as CoreContext;
  devices = new DevicesService(ctx, new Scheduler(systemClock));
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('device delete cascade', () => {
  it('runs every registered clean-up and the delete in one transaction, then the after-commit hooks', () => {
    db.exec('CREATE TABLE feature_rows (device_id INTEGER NOT NULL, x TEXT) STRICT');
    const id = insertDevice('127.0.9.1');
    db.prepare(`INSERT INTO feature_rows VALUES (?, 'a'), (?, 'b')`).run(id, id);
    const released: number[] = [];
    devices.registerDeviceCleanup(
      'feature',
      (deviceId) => void db.prepare('DELETE FROM feature_rows WHERE device_id = ?').run(deviceId),
      (deviceId) => released.push(deviceId),
    );
    expect(devices.deviceCleanupNames()).toEqual([
      'walks',
      'snmp-config',
      'pending-duplicates',
      'tags',
      'feature',
    ]);
    expect(devices.delete(id)).toBe('deleted');
    expect(db.prepare('SELECT count(*) AS n FROM feature_rows').get()).toEqual({ n: 0 });
    expect(released).toEqual([id]);
    expect(devices.delete(id)).toBe('missing');
    expect(released).toEqual([id]);
  });

  it('deletes nothing when a clean-up fails (the device and every earlier clean-up are rolled back)', () => {
    const id = insertDevice('127.0.9.2');
    const now = Date.now();
    db.prepare(
      `INSERT INTO interface_trackers (device_id, interface, name, last_seen_at, created_at, updated_at) VALUES (?, 1, 'eth0', ?, ?, ?)`,
    ).run(id, now, now, now);
    devices.registerDeviceCleanup('broken', () => {
      throw new Error('disk full');
    });
    expect(() => devices.delete(id)).toThrow('disk full');
    expect(db.prepare('SELECT 1 FROM devices WHERE id = ?').get(id)).toBeDefined();
    expect(
      db.prepare('SELECT count(*) AS n FROM interface_trackers WHERE device_id = ?').get(id),
    ).toEqual({ n: 1 });
  });

  it('never deletes device 1 and refuses a clean-up name twice', () => {
    expect(devices.delete(1)).toBe('protected');
    expect(db.prepare('SELECT 1 FROM devices WHERE id = 1').get()).toBeDefined();
    expect(() => devices.registerDeviceCleanup('walks', () => {})).toThrow(/already registered/);
  });
});

describe('extension points', () => {
  it('a feature provides a relation, a section and a log category once each', () => {
    const id = insertDevice('127.0.9.3');
    const identity = { tagIds: null } as never;
    devices.provideDeviceRelation('ping', (ids) => new Map(ids.map((d) => [d, { latency: 1.5 }])));
    expect(() => devices.provideDeviceRelation('ping', () => new Map())).toThrow(
      /already provided/,
    );
    expect(devices.list(identity, { ping: 'true' }).find((d) => d.id === id)).toMatchObject({
      ping: { latency: 1.5 },
    });
    devices.provideDeviceSection('syslogconfig', () => ({ severity: 7 }));
    expect(() => devices.provideDeviceSection('syslogconfig', () => null)).toThrow(
      /already provided/,
    );
    const row = db.prepare('SELECT * FROM devices WHERE id = ?').get(id) as never;
    expect(devices.detail(row, { start: 0, end: 1 })).toMatchObject({
      syslogconfig: { severity: 7 },
      netflow: { bytes: 0, count: 0, top_partners: [] },
    });
    devices.registerDeviceLogStats('syslog_log', () => ({ rows: 3, bytes: 3000 }));
    expect(() => devices.registerDeviceLogStats('Total', () => ({ rows: 0, bytes: 0 }))).toThrow();
    expect(devices.stats(id)).toEqual([
      { log_name: 'walks_log', total_rows: 0, size: 0, formatted: '0 B' },
      { log_name: 'syslog_log', total_rows: 3, size: 3000, formatted: '2.93 KB' },
      { log_name: 'Total', total_rows: 3, size: 3000, formatted: '2.93 KB' },
    ]);
  });
});

describe('list scope resolver', () => {
  it('answers the devices and addresses carrying any of the tags, fresh after a tag link changes', () => {
    const tag = (slug: string) =>
      Number(
        db.prepare(`INSERT INTO tags (slug, name, type) VALUES (?, ?, 'device')`).run(slug, slug)
          .lastInsertRowid,
      );
    const east = tag('east');
    const west = tag('west');
    const a = insertDevice('10.9.0.1');
    const b = insertDevice('10.9.0.2');
    const link = db.prepare('INSERT INTO device_tags (device_id, tag_id) VALUES (?, ?)');
    link.run(a, east);
    link.run(b, west);
    const first = devices.scopeResolver([east]);
    expect([...first.deviceIds]).toEqual([a]);
    expect([...first.ips]).toEqual(['10.9.0.1']);
    expect(devices.scopeResolver([east])).toBe(first); // kept while nothing changed
    expect([...devices.scopeResolver([west, east]).deviceIds].sort()).toEqual([a, b].sort());
    link.run(b, east);
    expect([...devices.scopeResolver([east]).deviceIds].sort()).toEqual([a, b].sort());
    expect(devices.scopeOfIdentity({ tagIds: null } as never)).toBeNull();
  });
});

// The unfiltered GET /api/devices answer, cached per tag scope (devices.routes.ts serves it).
describe('unfiltered list cache', () => {
  it('serialises the list once per tag scope and answers repeats from memory until a listed column changes', () => {
    const asList = (tagIds: number[] | null) => ({ tagIds }) as unknown as Identity;
    let serialised = 0;
    const serialize = (list: unknown[]) => {
      serialised++;
      return JSON.stringify(list);
    };
    const ids = (json: Buffer | null) =>
      (JSON.parse(String(json)) as { id: number }[]).map((d) => d.id).sort((x, y) => x - y);
    const a = insertDevice('10.8.0.1');
    const first = devices.cachedListJson(asList(null), {}, serialize);
    expect(serialised).toBe(1);
    expect(ids(first)).toEqual([1, a]);
    // Hits: the same encoded answer, no new serialisation.
    for (let i = 0; i < 3; i++)
      expect(devices.cachedListJson(asList(null), {}, serialize)).toBe(first);
    expect(serialised).toBe(1);

    // Another tag scope is its own entry, then a hit too.
    const tag = Number(
      db.prepare(`INSERT INTO tags (slug, name, type) VALUES ('lab', 'lab', 'device')`).run()
        .lastInsertRowid,
    );
    db.prepare('INSERT INTO device_tags (device_id, tag_id) VALUES (?, ?)').run(a, tag);
    const scoped = devices.cachedListJson(asList([tag]), {}, serialize);
    expect(ids(scoped)).toEqual([a]);
    expect(devices.cachedListJson(asList([tag]), {}, serialize)).toBe(scoped);
    expect(serialised).toBe(2);
    // The tag link invalidated the unrestricted entry too (its tags changed): one rebuild, then hits.
    expect(devices.cachedListJson(asList(null), {}, serialize)).not.toBe(first);
    expect(devices.cachedListJson(asList(null), {}, serialize)).toBe(
      devices.cachedListJson(asList(null), {}, serialize),
    );
    expect(serialised).toBe(3);

    // A column the list does not show (reachability) keeps the entries; a listed one drops them.
    db.prepare(`UPDATE devices SET reachability = 'up', reachability_at = 5 WHERE id = ?`).run(a);
    expect(devices.cachedListJson(asList([tag]), {}, serialize)).toBe(scoped);
    expect(serialised).toBe(3);
    const b = insertDevice('10.8.0.2');
    expect(ids(devices.cachedListJson(asList(null), {}, serialize))).toEqual([1, a, b]);
    expect(serialised).toBe(4);

    // A filtered query is never cached.
    expect(devices.cachedListJson(asList(null), { search: '10.8' }, serialize)).toBeNull();
    expect(serialised).toBe(4);
  });
});

describe('walks_log partitions', () => {
  it('is registered for maintenance (listed, weekly rotation, 84 days); a deleted device keeps its walks until pruning', () => {
    const table = partitionedTable(db, 'walks_log');
    expect(table).toBe(devices.walks.table);
    expect(table?.maintenance).toEqual({
      listed: true,
      rotationCron: '0 0 * * 1',
      retentionDays: 84,
    });
    expect(table?.settings()).toMatchObject({ cronSchedule: '0 0 * * 1', retentionDays: 84 });
    const id = insertDevice('127.0.9.4');
    const t0 = Date.UTC(2026, 0, 1);
    devices.walks.insert({
      deviceId: id,
      timestamp: t0,
      kind: 'crawl',
      varbinds: [],
      durationMs: 1,
      truncated: false,
    });
    expect(table?.rotate(t0 + 7 * DAY_MS)).toBe('walks_log_p20260108');
    devices.walks.insert({
      deviceId: id,
      timestamp: t0 + 8 * DAY_MS,
      kind: 'live',
      varbinds: [{ oid: '1.3.6.1.2.1.1.5.0', type: 'OctetString', value: 'x' }],
      durationMs: 1,
      truncated: false,
    });
    expect(devices.walks.latest(id)).toMatchObject({ kind: 'live', oid_count: 1 });
    expect(devices.delete(id)).toBe('deleted');
    // Partitioned tables shed data only by pruning: both walks remain, in both partitions.
    expect(devices.walks.statsOf(id).rows).toBe(2);
    expect(table?.dropOlderThan(t0 + 85 * DAY_MS)).toEqual(['walks_log_p20260108']);
    expect(devices.walks.statsOf(id).rows).toBe(1);
  });
});

describe('helpers', () => {
  it('canonicalizes IP literals and refuses everything else', () => {
    expect(canonicalIp(' 10.1.2.3 ')).toBe('10.1.2.3');
    expect(canonicalIp('FD00:0:0:0:0:0:0:1')).toBe('fd00::1');
    expect(canonicalIp('::ffff:127.0.0.1')).toBe('::ffff:7f00:1');
    for (const bad of ['localhost', '10.1.2', '-1.2.3.4', '1.2.3.4/32', ''])
      expect(canonicalIp(bad), bad).toBeNull();
  });

  it('formats sizes', () => {
    expect([
      formatBytes(0),
      formatBytes(1023),
      formatBytes(1024),
      formatBytes(15 * 1024 * 1024),
      formatBytes(300 * 1024 ** 3),
    ]).toEqual(['0 B', '1023 B', '1.00 KB', '15.0 MB', '300 GB']);
  });
});
