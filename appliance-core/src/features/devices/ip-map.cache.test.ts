/**
 * The IP -> device map on a real SQLite file: lookups by any IP form, invalidation by exactly the
 * watched writes (insert, ip/label/profile update, tag links, delete), versioned snapshots pushed
 * to subscribers (coalesced, structured-clone friendly), and no uncommitted rows kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { DeviceIpMap, ipKey, type DeviceIpSnapshot } from './ip-map.cache.js';

let dir: string;
let db: DB;
let map: DeviceIpMap;
let received: DeviceIpSnapshot[];

const COALESCE_MS = 30;
const settle = () => new Promise((resolve) => setTimeout(resolve, COALESCE_MS * 3));

const insertDevice = (ip: string, label = `dev ${ip}`) =>
  Number(
    db
      .prepare(
        `INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES (?, ?, 'dash_generic', 0, 0)`,
      )
      .run(label, ip).lastInsertRowid,
  );
const insertTag = (slug: string) =>
  Number(
    db.prepare(`INSERT INTO tags (slug, name, type) VALUES (?, ?, 'device')`).run(slug, slug)
      .lastInsertRowid,
  );

/** The newest delivered snapshot, after the coalescing window. */
async function latest(): Promise<DeviceIpSnapshot> {
  await settle();
  const last = received.at(-1);
  if (!last) throw new Error('nothing delivered');
  return last;
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'device-ip-map-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, Date.now());
  map = new DeviceIpMap(db, { coalesceMs: COALESCE_MS });
  received = [];
  map.subscribe((snapshot) => received.push(snapshot));
});

afterEach(() => {
  map.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('device IP map', () => {
  it('canonicalises keys: IPv6 forms and IPv4-mapped addresses', () => {
    expect(ipKey(' 10.0.0.1 ')).toBe('10.0.0.1');
    expect(ipKey('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(ipKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(ipKey('::FFFF:a00:1')).toBe('10.0.0.1');
    expect(ipKey('example.test')).toBeNull();
  });

  it('finds a device by any form of its address, with label, profile and tag ids', () => {
    const v4 = insertDevice('10.0.0.1', 'router');
    const v6 = insertDevice('2001:db8::1', 'server');
    const east = insertTag('east');
    const core = insertTag('core');
    db.prepare('INSERT INTO device_tags (device_id, tag_id) VALUES (?, ?), (?, ?)').run(
      v4,
      core,
      v4,
      east,
    );
    expect(map.byIp('::ffff:10.0.0.1')).toEqual({
      id: v4,
      ip: '10.0.0.1',
      label: 'router',
      profile: 'dash_generic',
      tagIds: [east, core].sort((a, b) => a - b),
    });
    expect(map.byIp('2001:DB8:0::1')?.id).toBe(v6);
    expect(map.byId(v6)?.ip).toBe('2001:db8::1');
    expect(map.byIp('10.0.0.99')).toBeUndefined();
    expect(map.byIp('not an ip')).toBeUndefined();
  });

  it('pushes a snapshot with a higher version after each watched write, and none after others', async () => {
    const first = received.at(-1) as DeviceIpSnapshot;
    expect(first.entries.map((e) => e.ip)).toEqual(['127.0.0.1']);

    const id = insertDevice('10.0.0.2', 'switch');
    let snapshot = await latest();
    expect(snapshot.version).toBeGreaterThan(first.version);
    expect(snapshot.entries.find((e) => e.id === id)?.label).toBe('switch');

    const steps: [string, () => void, (s: DeviceIpSnapshot) => void][] = [
      [
        'ip update',
        () => db.prepare(`UPDATE devices SET ip_address = '10.0.0.3' WHERE id = ?`).run(id),
        (s) => expect(s.entries.find((e) => e.id === id)?.ip).toBe('10.0.0.3'),
      ],
      [
        'label update',
        () => db.prepare(`UPDATE devices SET label = 'core switch' WHERE id = ?`).run(id),
        (s) => expect(s.entries.find((e) => e.id === id)?.label).toBe('core switch'),
      ],
      [
        'profile update',
        () => db.prepare(`UPDATE devices SET profile = 'dash_network_snmp' WHERE id = ?`).run(id),
        (s) => expect(s.entries.find((e) => e.id === id)?.profile).toBe('dash_network_snmp'),
      ],
      [
        'tag link',
        () =>
          db
            .prepare('INSERT INTO device_tags (device_id, tag_id) VALUES (?, ?)')
            .run(id, insertTag('lab')),
        (s) => expect(s.entries.find((e) => e.id === id)?.tagIds).toHaveLength(1),
      ],
      [
        'tag unlink',
        () => db.prepare('DELETE FROM device_tags WHERE device_id = ?').run(id),
        (s) => expect(s.entries.find((e) => e.id === id)?.tagIds).toEqual([]),
      ],
      [
        'delete',
        () => db.prepare('DELETE FROM devices WHERE id = ?').run(id),
        (s) => expect(s.entries.some((e) => e.id === id)).toBe(false),
      ],
    ];
    for (const [name, write, check] of steps) {
      const before = snapshot.version;
      write();
      snapshot = await latest();
      expect(snapshot.version, name).toBeGreaterThan(before);
      check(snapshot);
    }

    // Columns the map does not hold: no invalidation, no delivery.
    const count = received.length;
    const version = map.version;
    db.prepare(
      `UPDATE devices SET reachability = 'up', reachability_at = 1, enable_snmp = 1, agent_uuid = 'x', updated_at = 5 WHERE id = 1`,
    ).run();
    await settle();
    expect(map.version).toBe(version);
    expect(received).toHaveLength(count);
  });

  it('coalesces a burst of writes into one delivery', async () => {
    await settle();
    const count = received.length;
    db.transaction(() => {
      for (let i = 1; i <= 50; i++) insertDevice(`10.1.0.${i}`);
    })();
    for (let i = 51; i <= 60; i++) insertDevice(`10.1.0.${i}`);
    const snapshot = await latest();
    expect(received.length - count).toBeLessThanOrEqual(2);
    expect(snapshot.entries).toHaveLength(61);
    expect(snapshot.version).toBe(map.version);
  });

  it('never keeps rows of a transaction that rolls back', () => {
    expect(() =>
      db.transaction(() => {
        insertDevice('10.2.0.1');
        expect(map.byIp('10.2.0.1')).toBeDefined(); // the writer sees its own row
        throw new Error('rollback');
      })(),
    ).toThrow('rollback');
    expect(map.byIp('10.2.0.1')).toBeUndefined();
  });

  it('delivers snapshots that survive a structured clone (a MessagePort to a worker)', async () => {
    insertDevice('10.3.0.1', 'cloned');
    const snapshot = await latest();
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(snapshot);
    const message = receiveMessageOnPort(port2)?.message as DeviceIpSnapshot;
    port1.close();
    expect(message).toEqual(snapshot);
    expect(message.entries.find((e) => e.ip === '10.3.0.1')?.label).toBe('cloned');
  });
});
