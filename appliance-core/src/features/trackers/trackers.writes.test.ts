/**
 * The pollers' writes through the storage writer, against a real appliance database: the same
 * rows as the main connection writes, nothing orphaned when a tracker is deleted while its
 * readings are queued, and no statement of the worker touching what the main connection's TEMP
 * triggers watch (writes through another connection do not fire them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { FIVE_MINUTES, ONE_HOUR } from './samples.repository.js';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { registerDeviceWrites } from '../devices/index.js';
import { registerTrackerWrites } from './trackers.writes.js';
import { TrackersService } from './trackers.service.js';

let h: Harness;
let storage: StorageWriter;
let service: TrackersService;
const errors: string[] = [];
const db = () => h.appliance.db;

beforeAll(async () => {
  h = await startAppliance();
  storage = new StorageWriter(db(), { onError: (err) => errors.push(err.message) });
  registerDeviceWrites(storage);
  registerTrackerWrites(storage);
  storage.start();
  service = new TrackersService(db(), storage);
});

afterAll(async () => {
  await storage?.close();
  await h?.close();
});

function portTracker(port: number): number {
  const now = Date.now();
  return Number(
    db()
      .prepare(
        "INSERT INTO port_trackers (device_id, port, label, interval, created_at, updated_at) VALUES (1, ?, 'w', 60, ?, ?)",
      )
      .run(port, now, now).lastInsertRowid,
  );
}

const count = (sql: string, ...params: unknown[]) =>
  (
    db()
      .prepare(sql)
      .get(...params) as { n: number }
  ).n;

describe('tracker writes through the storage writer', () => {
  it('writes the same samples and rollups as the main connection', async () => {
    const viaWorker = portTracker(1001);
    const direct = portTracker(1002);
    const t0 = Date.UTC(2026, 0, 1, 10, 0, 0);
    const readings = [
      { ts: t0, a: 0.5, b: 0, answered: true },
      { ts: t0 + 60_000, a: -1, b: 1, answered: false },
      { ts: t0 + 120_000, a: 1.5, b: 0, answered: true },
      { ts: t0 + 3_600_000, a: 2, b: 0, answered: true },
    ];
    for (const r of readings) {
      service.writes.sample({ kind: 'port', trackerId: viaWorker, ...r });
      service.samples.write({ kind: 'port', trackerId: direct, ...r });
    }
    service.writes.portReading(viaWorker, 'open', 2, t0 + 3_600_000);
    await service.writer.flush();
    const rows = (id: number) => ({
      raw: db()
        .prepare('SELECT ts, latency FROM port_samples WHERE tracker_id = ? ORDER BY ts')
        .all(id),
      rollups: db()
        .prepare(
          "SELECT resolution, ts, n, sum_a, n_a, sum_b FROM sample_rollups WHERE kind = 'port' AND tracker_id = ? ORDER BY resolution, ts",
        )
        .all(id),
    });
    expect(rows(viaWorker)).toEqual(rows(direct));
    expect(rows(viaWorker).rollups).toEqual([
      { resolution: FIVE_MINUTES, ts: t0, n: 3, sum_a: 2, n_a: 2, sum_b: 1 },
      { resolution: FIVE_MINUTES, ts: t0 + 3_600_000, n: 1, sum_a: 2, n_a: 1, sum_b: 0 },
      { resolution: ONE_HOUR, ts: t0, n: 3, sum_a: 2, n_a: 2, sum_b: 1 },
      { resolution: ONE_HOUR, ts: t0 + 3_600_000, n: 1, sum_a: 2, n_a: 1, sum_b: 0 },
    ]);
    expect(
      db()
        .prepare('SELECT state, latency, last_polled_at FROM port_trackers WHERE id = ?')
        .get(viaWorker),
    ).toEqual({ state: 'open', latency: 2, last_polled_at: t0 + 3_600_000 });
    // Device reachability (a devices-feature statement) and the latency reading with first_sample_at.
    const latency = db().prepare('SELECT id FROM latency_trackers WHERE device_id = 1').get() as {
      id: number;
    };
    db().prepare('UPDATE latency_trackers SET first_sample_at = NULL WHERE id = ?').run(latency.id);
    service.writes.latencyReading(latency.id, -1, 100, t0);
    service.writes.latencyReading(latency.id, 0.2, 0, t0 + 1000);
    service.writes.deviceReachability(1, -1, t0);
    await service.writer.flush();
    expect(
      db()
        .prepare(
          'SELECT latency, loss, last_polled_at, first_sample_at FROM latency_trackers WHERE id = ?',
        )
        .get(latency.id),
    ).toEqual({
      latency: 0.2,
      loss: 0,
      last_polled_at: t0 + 1000,
      first_sample_at: t0,
    });
    expect(
      db().prepare('SELECT reachability, reachability_at FROM devices WHERE id = 1').get(),
    ).toEqual({ reachability: 'down', reachability_at: t0 });
    expect(service.writer.stats()).toMatchObject({ failed: 0, lost: 0 });
  });

  it('a tracker deleted while its readings are queued: nothing orphaned, nothing failed, the writer goes on', async () => {
    const id = portTracker(1003);
    const before = service.writer.stats();
    const now = Date.now();
    for (let i = 0; i < 5; i++)
      service.writes.sample({ kind: 'port', trackerId: id, ts: now + i, a: 1, b: 0 });
    service.writes.portReading(id, 'open', 1, now);
    // Deleted on the main connection (its purge trigger runs) before the queued writes are committed.
    db().prepare('DELETE FROM port_trackers WHERE id = ?').run(id);
    await service.writer.flush();
    expect(count('SELECT count(*) AS n FROM port_samples WHERE tracker_id = ?', id)).toBe(0);
    expect(
      count("SELECT count(*) AS n FROM sample_rollups WHERE kind = 'port' AND tracker_id = ?", id),
    ).toBe(0);
    const after = service.writer.stats();
    expect(after.failed).toBe(before.failed);
    expect(after.written - before.written).toBe(11);
    const next = portTracker(1004);
    service.writes.sample({ kind: 'port', trackerId: next, ts: now, a: 1, b: 0 });
    await service.writer.flush();
    expect(count('SELECT count(*) AS n FROM port_samples WHERE tracker_id = ?', next)).toBe(1);
    expect(errors).toEqual([]);
  });

  it('writes no table or column that a TEMP trigger of the main connection watches', () => {
    const triggers = (
      db().prepare("SELECT sql FROM sqlite_temp_master WHERE type = 'trigger'").all() as {
        sql: string;
      }[]
    ).map(({ sql }) => {
      const m =
        /AFTER\s+(INSERT|DELETE|UPDATE)(?:\s+OF\s+([\w\s,]+?))?\s+ON\s+(?:main\.)?(\w+)/i.exec(sql);
      if (!m) throw new Error(`unexpected trigger: ${sql}`);
      return {
        event: (m[1] as string).toUpperCase(),
        columns: m[2]?.split(',').map((c) => c.trim()) ?? null,
        table: m[3] as string,
      };
    });
    // The caches this guards are installed: the identity resolver and the device list.
    expect(triggers.some((t) => t.table === 'devices')).toBe(true);
    expect(triggers.some((t) => t.table === 'users')).toBe(true);

    // Every statement the pollers define on their writer: theirs and the devices feature's.
    const defined: Record<string, string> = {};
    const recorder = {
      define: (name: string, sql: string) => void (defined[name] = sql),
    } as unknown as StorageWriter;
    registerTrackerWrites(recorder);
    registerDeviceWrites(recorder);
    expect(Object.keys(defined)).toContain('devices.reachability');
    const statements = Object.entries(defined);
    expect(statements.length).toBeGreaterThan(10);
    for (const [name, sql] of statements) {
      const insert = /^INSERT(?:\s+OR\s+\w+)?\s+INTO\s+(\w+)/i.exec(sql);
      const update = /^UPDATE\s+(\w+)\s+SET\s+(.+?)\s+WHERE/is.exec(sql);
      const table = insert?.[1] ?? update?.[1];
      if (!table) throw new Error(`${name}: cannot tell what it writes`);
      const setColumns = [
        ...(update?.[2] ?? /DO UPDATE SET\s+(.+)$/is.exec(sql)?.[1] ?? '').matchAll(/(\w+)\s*=/g),
      ].map((m) => m[1] as string);
      for (const trigger of triggers.filter((t) => t.table === table)) {
        // An INSERT (or REPLACE) fires every trigger kind on its table; an UPDATE only UPDATE triggers on its columns.
        const fires =
          insert !== null ||
          (trigger.event === 'UPDATE' &&
            (trigger.columns === null || trigger.columns.some((c) => setColumns.includes(c))));
        expect(
          fires,
          `${name} writes ${table} (${setColumns.join(', ')}), watched by a TEMP trigger (${trigger.event} ${trigger.columns?.join(', ') ?? ''})`,
        ).toBe(false);
      }
    }
  });
});
