/**
 * HTTP-level tests of the tracker endpoints (spec part 2 > Trackers; getLatencyTracker and
 * getTCPTracker of Dashboards): every status and message, permissions (write_devices for reads
 * too) and tag scoping (out of scope answers like missing). Samples are written through the
 * samples repository (the pollers are tested against real targets in trackers.engine.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { HOUR_MS, DAY_MS } from '../../platform/time/time.js';
import { SamplesRepository } from './samples.repository.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };

describe('tracker endpoints (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let viewer: string; // `devices` only: may use the dashboard helpers, not the tracker routes
  let scopedUser: string; // write_devices restricted to tag "east"
  let ipCounter = 10;
  let eastDevice: number;
  let westDevice: number;
  let samples: SamplesRepository;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const db = () => h.appliance.db;
  const count = (table: string) =>
    (db().prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const createDevice = async (tags: string[]) => {
    const res = await req('POST', '/api/device/set', {
      token: admin,
      body: {
        ip_address: `127.0.5.${ipCounter++}`,
        label: `dev-${ipCounter}`,
        profile: 'dash_generic',
        tags,
      },
    });
    if (res.status !== 200) throw new Error(res.text);
    return res.body.device.id as number;
  };
  const addInterface = (deviceId: number, index: number, name: string, oper = 1) =>
    Number(
      db()
        .prepare(
          `INSERT INTO interface_trackers (device_id, interface, name, description, interval, enable_logging, oper_status, last_seen_at, created_at, updated_at)
           VALUES (?, ?, ?, ?, 300, 1, ?, 0, 0, 0)`,
        )
        .run(deviceId, index, name, `${name} desc`, oper).lastInsertRowid,
    );
  const write = (fn: () => void) => db().transaction(fn)();

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    eastDevice = await createDevice(['east']);
    westDevice = await createDevice(['west']);
    viewer = (await h.userWith(['devices'])).token;
    scopedUser = (await h.userWith(['write_devices', 'devices'], { tags: ['east'] })).token;
    samples = new SamplesRepository(db());
  });
  afterAll(() => h?.close());

  describe('permissions', () => {
    it('answers 401 without a token and 401 (denied) without write_devices, reads included', async () => {
      expect((await req('GET', '/api/latency/all')).body).toEqual(UNAUTHENTICATED);
      for (const [method, path] of [
        ['GET', '/api/latency/all'],
        ['GET', '/api/disk/all'],
        ['GET', '/api/interfaces/all'],
        ['GET', '/api/port/all'],
        ['GET', `/api/device/${eastDevice}/disks`],
        ['POST', '/api/port/set'],
      ] as const) {
        const res = await req(method, path, {
          token: viewer,
          body: method === 'POST' ? {} : undefined,
        });
        expect(res.status, path).toBe(401);
        expect(res.body).toEqual(DENIED);
      }
    });
  });

  describe('device 1 and latency trackers', () => {
    it('device 1 has a latency tracker from the first start with the spec defaults', async () => {
      const res = await req('GET', '/api/device/1/latency', { token: admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        dev_id: 1,
        interval: 60,
        timeout: 60,
        lossout: 100,
        dev_label: expect.any(String),
        alerts: [],
      });
      expect(res.body.icmping_id).toBe(res.body.id);
    });

    it('POST /api/latency/set creates (201), refuses a second (409), updates (200) and validates (400)', async () => {
      const created = await req('POST', '/api/latency/set', {
        token: admin,
        body: { label: 'east ping', deviceId: eastDevice },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number) });
      const again = await req('POST', '/api/latency/set', {
        token: admin,
        body: { label: 'again', deviceId: eastDevice },
      });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        error: 'ICMP ping configuration already exists for this device',
      });
      const updated = await req('POST', '/api/latency/set', {
        token: admin,
        body: { id: created.body.id, interval: 10, timeout: 500, lossout: 50 },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id: created.body.id });
      const row = db()
        .prepare('SELECT interval, timeout, lossout, label FROM latency_trackers WHERE id = ?')
        .get(created.body.id);
      expect(row).toEqual({ interval: 10, timeout: 500, lossout: 50, label: 'east ping' });

      const missingLabel = await req('POST', '/api/latency/set', {
        token: admin,
        body: { deviceId: westDevice },
      });
      expect(missingLabel.status).toBe(400);
      expect(missingLabel.body).toEqual({ errors: { label: ['The label field is required.'] } });
      const unknownDevice = await req('POST', '/api/latency/set', {
        token: admin,
        body: { label: 'x', deviceId: 999_999 },
      });
      expect(unknownDevice.body).toEqual({
        errors: { deviceId: ['The selected device id is invalid.'] },
      });
      const badTimeout = await req('POST', '/api/latency/set', {
        token: admin,
        body: { label: 'x', deviceId: westDevice, timeout: 0 },
      });
      expect(badTimeout.status).toBe(400);
      expect(badTimeout.body).toEqual({
        errors: { timeout: ['The timeout field must be at least 1.'] },
      });
      const unknownId = await req('POST', '/api/latency/set', {
        token: admin,
        body: { id: 999_999, interval: 5 },
      });
      expect(unknownId.body).toEqual({ errors: { id: ['The selected id is invalid.'] } });
      expect(count('latency_trackers')).toBe(2);
    });

    it('GET /api/latency/get/{id} windows logs by hours; scoped and missing both 404', async () => {
      const id = (
        db().prepare('SELECT id FROM latency_trackers WHERE device_id = ?').get(eastDevice) as {
          id: number;
        }
      ).id;
      const now = h.clock.now();
      write(() => {
        samples.write({ kind: 'latency', trackerId: id, ts: now - 5 * HOUR_MS, a: 1, b: 0 });
        samples.write({ kind: 'latency', trackerId: id, ts: now - 60_000, a: 0.5, b: 0 });
        samples.write({
          kind: 'latency',
          trackerId: id,
          ts: now - 30_000,
          a: -1,
          b: 100,
          answered: false,
        });
      });
      const res = await req('GET', `/api/latency/get/${id}`, { token: scopedUser });
      expect(res.status).toBe(200);
      expect(res.body.logs).toEqual([
        {
          icmping_id: id,
          latency: 0.5,
          loss: 0,
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        },
        { icmping_id: id, latency: -1, loss: 100, timestamp: expect.any(String) },
      ]);
      expect(
        (await req('GET', `/api/latency/get/${id}?hours=6`, { token: admin })).body.logs,
      ).toHaveLength(3);
      const other = await req('GET', '/api/latency/get/1', { token: scopedUser });
      expect(other.status).toBe(404);
      expect(other.body).toEqual({ error: 'ICMP ping configuration not found' });
      expect((await req('GET', '/api/latency/get/999999', { token: admin })).body).toEqual({
        error: 'ICMP ping configuration not found',
      });
      expect(
        (await req('GET', `/api/device/${westDevice}/latency`, { token: admin })).body,
      ).toEqual({ error: 'No ICMP ping configuration found for this device' });
      expect((await req('GET', '/api/device/1/latency', { token: scopedUser })).status).toBe(404);

      const all = await req('GET', '/api/latency/all', { token: scopedUser });
      expect(all.body).toEqual([
        { dev_id: eastDevice, dev_label: expect.any(String), id, label: 'east ping' },
      ]);
      expect((await req('GET', '/api/latency/all', { token: admin })).body).toHaveLength(2);

      const stats = await req('GET', `/api/latency/stats/${id}`, { token: admin });
      expect(stats.body).toEqual({ rows: 3, size: expect.stringMatching(/ B$| KB$/) });
      expect((await req('GET', '/api/latency/stats/1', { token: scopedUser })).body).toEqual({
        error: 'No stats found',
      });
    });

    it('POST /api/latency/stats answers in-body statuses and the spec fields', async () => {
      const id = (
        db().prepare('SELECT id FROM latency_trackers WHERE device_id = ?').get(eastDevice) as {
          id: number;
        }
      ).id;
      expect((await req('POST', '/api/latency/stats', { token: admin, body: {} })).body).toEqual({
        status: 204,
        hasError: false,
        message: 'The icmpingId field is required.',
      });
      // An id no tracker has (device 1's own tracker may be polled by now on a slow machine).
      expect(
        (await req('POST', '/api/latency/stats', { token: admin, body: { icmpingId: 999_999 } }))
          .body,
      ).toEqual({
        status: 200,
        hasError: false,
        message: 'No logs found for this ICMP ping configuration',
      });
      const res = await req('POST', '/api/latency/stats', {
        token: admin,
        body: { icmpingId: id },
      });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      expect(res.body.data).toEqual({
        dayAvgLatency: 0.75,
        weekAvgLatency: 0.75,
        dayAvgLoss: 33.333,
        dayUptime: 66.667,
        weekUptime: 66.667,
        allTimeUptime: 66.667,
        currentLatency: null,
        currentLoss: null,
        monitoringDuration: expect.any(Number),
      });
      // Out of scope reads like missing.
      expect(
        (await req('POST', '/api/latency/stats', { token: scopedUser, body: { icmpingId: 1 } }))
          .body.message,
      ).toBe('No logs found for this ICMP ping configuration');
    });

    it('getLatencyTracker answers the widget body, or status 204 without a probe', async () => {
      const res = await req('POST', '/api/getLatencyTracker', {
        token: viewer,
        body: { deviceId: eastDevice, hours: 1 },
      });
      expect(res.body).toMatchObject({
        status: 200,
        hasError: false,
        message: { dev_label: expect.any(String), dev_ip: expect.stringMatching(/^127\.0\.5\./) },
      });
      expect(res.body.message.logs).toHaveLength(2);
      expect(
        (
          await req('POST', '/api/getLatencyTracker', {
            token: viewer,
            body: { deviceId: westDevice },
          })
        ).body,
      ).toEqual({ status: 204, hasError: false, message: {} });
      expect(
        (await req('POST', '/api/getLatencyTracker', { token: scopedUser, body: { deviceId: 1 } }))
          .body,
      ).toEqual({ status: 204, hasError: false, message: {} });
      const bad = await req('POST', '/api/getLatencyTracker', { token: viewer, body: {} });
      expect(bad.status).toBe(200);
      expect(bad.body).toEqual({
        status: false,
        hasError: true,
        message: 'The deviceId field is required.',
      });
    });

    it('GET /api/devices?ping=true eager-loads the latency tracker (null without one)', async () => {
      const list = await req('GET', '/api/devices?ping=true', { token: admin });
      expect(list.status).toBe(200);
      const devices = list.body.devices as { id: number; ping: unknown }[];
      const east = devices.find((d) => d.id === eastDevice);
      expect(east?.ping).toMatchObject({ dev_id: eastDevice, label: 'east ping' });
      expect(devices.find((d) => d.id === westDevice)?.ping).toBeNull();
    });

    it('GET /api/devices/status answers the status columns the ?ping=true list carries', async () => {
      db()
        .prepare('UPDATE latency_trackers SET latency = 1.25, loss = 20 WHERE device_id = ?')
        .run(eastDevice);
      db().prepare("UPDATE devices SET reachability = 'down' WHERE id = ?").run(westDevice);
      const [status, list] = await Promise.all([
        req('GET', '/api/devices/status', { token: admin }),
        req('GET', '/api/devices?ping=true', { token: admin }),
      ]);
      expect(status.status).toBe(200);
      const columns = status.body.devices as Record<
        'id' | 'reachability' | 'icmping_id' | 'latency' | 'loss',
        unknown[]
      >;
      const rows = list.body.devices as {
        id: number;
        ping: { icmping_id: number; latency: number | null; loss: number | null } | null;
      }[];
      expect(columns.id).toEqual(rows.map((d) => d.id));
      expect(columns.icmping_id).toEqual(rows.map((d) => d.ping?.icmping_id ?? null));
      // Device 1's tracker is polled live (its reading may change between the two answers); the
      // readings set above are compared.
      for (const id of [eastDevice, westDevice]) {
        const ping = rows.find((d) => d.id === id)?.ping ?? null;
        const i = columns.id.indexOf(id);
        expect([columns.latency[i], columns.loss[i]]).toEqual([
          ping?.latency ?? null,
          ping?.loss ?? null,
        ]);
      }
      const east = columns.id.indexOf(eastDevice);
      const west = columns.id.indexOf(westDevice);
      expect([columns.latency[east], columns.loss[east], columns.icmping_id[west]]).toEqual([
        1.25,
        20,
        null,
      ]);
      expect(columns.reachability[west]).toBe('down');
      // The list filters apply.
      const down = await req('GET', '/api/devices/status?status=down', { token: admin });
      expect(down.body.devices.id).toEqual([westDevice]);
      expect(
        (await req('GET', '/api/devices/status?status=sideways', { token: admin })).status,
      ).toBe(422);
      db().prepare('UPDATE devices SET reachability = NULL WHERE id = ?').run(westDevice);
    });

    it('POST /api/latency/delete removes the tracker and its history', async () => {
      const id = (
        db().prepare('SELECT id FROM latency_trackers WHERE device_id = ?').get(eastDevice) as {
          id: number;
        }
      ).id;
      expect(
        (await req('POST', '/api/latency/delete', { token: scopedUser, body: { id: 1 } })).body,
      ).toEqual({ error: 'ICMP ping configuration not found' });
      const res = await req('POST', '/api/latency/delete', { token: scopedUser, body: { id } });
      expect(res.body).toEqual({ message: 'ICMP ping configuration deleted' });
      expect(
        db().prepare('SELECT count(*) AS n FROM latency_samples WHERE tracker_id = ?').get(id),
      ).toEqual({ n: 0 });
      expect(
        db()
          .prepare(
            "SELECT count(*) AS n FROM sample_rollups WHERE kind = 'latency' AND tracker_id = ?",
          )
          .get(id),
      ).toEqual({ n: 0 });
      expect((await req('POST', '/api/latency/delete', { token: admin, body: {} })).body).toEqual({
        errors: { id: ['The id field is required.'] },
      });
    });
  });

  describe('disks', () => {
    let diskId: number;
    it('POST /api/disk/set creates (201) from a free-space OID, updates (200), validates (400)', async () => {
      const created = await req('POST', '/api/disk/set', {
        token: admin,
        body: { path: '1.3.6.1.2.1.25.2.3.1.6.31', name: '/data', deviceId: eastDevice },
      });
      expect(created.status).toBe(201);
      diskId = created.body.id;
      expect(
        db()
          .prepare(
            'SELECT storage_index, interval, enable_logging, source FROM disk_trackers WHERE id = ?',
          )
          .get(diskId),
      ).toEqual({ storage_index: 31, interval: 600, enable_logging: 1, source: 'manual' });
      const dup = await req('POST', '/api/disk/set', {
        token: admin,
        body: { path: '1.3.6.1.2.1.25.2.3.1.6.31', name: 'again', deviceId: eastDevice },
      });
      expect(dup.body).toEqual({
        errors: { path: ['A disk tracker with this index already exists on the device.'] },
      });
      expect(
        (
          await req('POST', '/api/disk/set', {
            token: admin,
            body: { id: diskId, interval: 120, enable_logging: false },
          })
        ).body,
      ).toEqual({ id: diskId });
      expect(
        db().prepare('SELECT interval, enable_logging FROM disk_trackers WHERE id = ?').get(diskId),
      ).toEqual({ interval: 120, enable_logging: 0 });
      expect(
        (
          await req('POST', '/api/disk/set', {
            token: admin,
            body: { name: 'x', deviceId: eastDevice },
          })
        ).body,
      ).toEqual({ errors: { path: ['The path field is required.'] } });
      const badPath = await req('POST', '/api/disk/set', {
        token: admin,
        body: { path: '-1; rm', name: 'x', deviceId: eastDevice },
      });
      expect(badPath.status).toBe(400);
      expect(badPath.body).toEqual({ errors: { path: ['The path field format is invalid.'] } });
      expect(
        (
          await req('POST', '/api/disk/set', {
            token: scopedUser,
            body: { path: '1.3.6.1.2.1.25.2.3.1.6.2', name: 'x', deviceId: westDevice },
          })
        ).body,
      ).toEqual({
        errors: { deviceId: ['The selected device id is invalid.'] },
      });
    });

    it('GET disk routes: get, list sorted by name, all, stats; scoped 404s', async () => {
      const now = h.clock.now();
      write(() => {
        samples.write({
          kind: 'disk',
          trackerId: diskId,
          ts: now - 8 * DAY_MS,
          a: 900 * 1024,
          b: 1000 * 1024,
        });
        samples.write({
          kind: 'disk',
          trackerId: diskId,
          ts: now - DAY_MS + 60_000,
          a: 800 * 1024,
          b: 1000 * 1024,
        });
        samples.write({
          kind: 'disk',
          trackerId: diskId,
          ts: now - 1000,
          a: 600 * 1024,
          b: 1000 * 1024,
        });
      });
      const got = await req('GET', `/api/disk/get/${diskId}`, { token: scopedUser });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        id: diskId,
        name: '/data',
        index: 31,
        dev_label: expect.any(String),
        dev_ip: expect.any(String),
        dev_profile: 'dash_generic',
        alerts: [],
      });
      expect(got.body.logs).toEqual([
        { timestamp: expect.any(String), available: 600 * 1024, total: 1000 * 1024 },
      ]);
      expect(
        (await req('GET', `/api/disk/get/${diskId}`, { token: admin, body: undefined })).status,
      ).toBe(200);
      const west = await req('POST', '/api/disk/set', {
        token: admin,
        body: { path: '1.3.6.1.2.1.25.2.3.1.6.2', name: 'C:', deviceId: westDevice },
      });
      expect(
        (await req('GET', `/api/disk/get/${west.body.id}`, { token: scopedUser })).body,
      ).toEqual({ error: 'Disk not found' });
      await req('POST', '/api/disk/set', {
        token: admin,
        body: { path: '1.3.6.1.2.1.25.2.3.1.6.1', name: '/', deviceId: eastDevice },
      });
      const list = await req('GET', `/api/device/${eastDevice}/disks`, { token: admin });
      expect(list.body.map((d: { name: string }) => d.name)).toEqual(['/', '/data']);
      expect(list.body[0].alerts).toEqual([]);
      expect(
        (await req('GET', `/api/device/${westDevice}/disks`, { token: scopedUser })).body,
      ).toEqual({ error: 'Device not found' });
      expect((await req('GET', '/api/disk/all', { token: scopedUser })).body).toEqual([
        { dev_id: eastDevice, dev_label: expect.any(String), id: expect.any(Number), name: '/' },
        { dev_id: eastDevice, dev_label: expect.any(String), id: diskId, name: '/data' },
      ]);
      expect((await req('GET', `/api/disk/stats/${diskId}`, { token: admin })).body).toEqual({
        rows: 3,
        size: expect.any(String),
      });
      expect((await req('GET', `/api/disk/stats/${west.body.id}`, { token: admin })).body).toEqual({
        error: 'No stats found',
      });
    });

    it('POST /api/disk/stats: growth per window and the fill time from the 7-day slope', async () => {
      expect((await req('POST', '/api/disk/stats', { token: admin, body: {} })).body).toEqual({
        status: 204,
        hasError: false,
        message: 'The diskId field is required.',
      });
      expect(
        (await req('POST', '/api/disk/stats', { token: admin, body: { diskId: 999_999 } })).body,
      ).toEqual({ status: 200, hasError: false, message: 'No logs found for this disk' });
      const res = await req('POST', '/api/disk/stats', { token: admin, body: { diskId } });
      expect(res.body.status).toBe(200);
      expect(res.body.hasError).toBe(false);
      // Used: 100 KB eight days ago, 200 KB a day ago, 400 KB now.
      expect(res.body.data).toMatchObject({
        oneDayGrowthKB: 200,
        oneWeekGrowthKB: 200,
        oneMonthGrowthKB: 300,
        allTimeGrowthKB: 300,
      });
      // 200 KB in ~1 day since the first sample within 7 days: 600 KB free fills in ~3 days.
      const fill = Date.parse(`${res.body.data.estimatedFillTime.replace(' ', 'T')}Z`);
      expect(fill - h.clock.now()).toBeGreaterThan(2.9 * DAY_MS);
      expect(fill - h.clock.now()).toBeLessThan(3.1 * DAY_MS);
    });

    it('POST /api/disk/delete removes the tracker and its history; unknown is 400', async () => {
      expect(
        (await req('POST', '/api/disk/delete', { token: admin, body: { id: 999_999 } })).body,
      ).toEqual({ errors: { id: ['The selected id is invalid.'] } });
      expect(
        (await req('POST', '/api/disk/delete', { token: admin, body: { id: diskId } })).body,
      ).toEqual({ message: 'Disk deleted' });
      expect(
        db().prepare('SELECT count(*) AS n FROM disk_samples WHERE tracker_id = ?').get(diskId),
      ).toEqual({ n: 0 });
    });
  });

  describe('interfaces', () => {
    let eth0: number;
    let eth1: number;
    beforeAll(() => {
      eth1 = addInterface(eastDevice, 3, 'eth1');
      eth0 = addInterface(eastDevice, 2, 'eth0');
      db().prepare('UPDATE interface_trackers SET enable_logging = 0 WHERE id = ?').run(eth1);
    });

    it('lists by index with alerts and connected; all lists logging ones only', async () => {
      const list = await req('GET', `/api/device/${eastDevice}/interfaces`, { token: admin });
      expect(list.body.map((i: { name: string }) => i.name)).toEqual(['eth0', 'eth1']);
      expect(list.body[0]).toMatchObject({ interface: 2, alerts: [], connected: [] });
      expect((await req('GET', '/api/interfaces/all', { token: scopedUser })).body).toEqual([
        {
          dev_id: eastDevice,
          dev_label: expect.any(String),
          id: eth0,
          description: 'eth0 desc',
          name: 'eth0',
          interface: 2,
        },
      ]);
      expect(
        (await req('GET', `/api/device/${eastDevice}/interfaces/connections`, { token: admin }))
          .body,
      ).toEqual({});
      expect(
        (
          await req('GET', `/api/device/${westDevice}/interfaces/connections`, {
            token: scopedUser,
          })
        ).body,
      ).toEqual({ error: 'Device not found' });
    });

    it('get, set and the link-state alert (created, then flipped)', async () => {
      const got = await req('GET', `/api/interfaces/get/${eth0}`, { token: scopedUser });
      expect(got.body).toMatchObject({
        id: eth0,
        name: 'eth0',
        logs: [],
        alerts: [],
        connected: [],
      });
      expect(
        (
          await req('POST', '/api/interfaces/set', {
            token: admin,
            body: { id: eth0, description: 'uplink', interval: 60 },
          })
        ).body,
      ).toEqual({ id: eth0 });
      expect(
        db().prepare('SELECT description, interval FROM interface_trackers WHERE id = ?').get(eth0),
      ).toEqual({ description: 'uplink', interval: 60 });
      expect((await req('POST', '/api/interfaces/set', { token: admin, body: {} })).body).toEqual({
        errors: { id: ['The id field is required.'] },
      });
      expect(
        (await req('POST', '/api/interfaces/set', { token: admin, body: { id: 999_999 } })).body,
      ).toEqual({ errors: { id: ['The selected id is invalid.'] } });
      expect(
        (
          await req('POST', '/api/interfaces/set', {
            token: admin,
            body: { id: eth0, interval: 0 },
          })
        ).body,
      ).toEqual({ errors: { interval: ['The interval field must be at least 1.'] } });
      expect(
        (
          await req('POST', '/api/interfaces/set', {
            token: admin,
            body: { id: eth0, enable_logging: 'maybe' },
          })
        ).body,
      ).toEqual({ errors: { enable_logging: ['The selected enable logging is invalid.'] } });
      const badHours = await req('GET', `/api/interfaces/get/${eth0}?hours=0`, { token: admin });
      expect(badHours.status).toBe(400);
      expect(badHours.body).toEqual({ errors: { hours: ['The hours field must be at least 1.'] } });

      const first = await req('POST', '/api/interfaces/toggleupdown', {
        token: admin,
        body: { id: eth0 },
      });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: eth0,
        alert: expect.objectContaining({ type: 'linkstate', active: true, last_state: 1 }),
        message: 'Alert created successfully',
      });
      const second = await req('POST', '/api/interfaces/toggleupdown', {
        token: admin,
        body: { id: eth0 },
      });
      expect(second.body).toEqual({
        id: eth0,
        alert: expect.objectContaining({ active: false }),
        message: 'Alert updated successfully',
      });
      expect(
        (await req('GET', `/api/interfaces/get/${eth0}`, { token: admin })).body.alerts,
      ).toEqual([expect.objectContaining({ type: 'linkstate', active: false })]);
      expect(
        (await req('POST', '/api/interfaces/toggleupdown', { token: admin, body: { id: 999_999 } }))
          .body,
      ).toEqual({ error: 'Interface not found' });
      expect((await req('GET', '/api/interfaces/get/999999', { token: admin })).body).toEqual({
        error: 'Interface not found',
      });
      expect((await req('GET', `/api/interfaces/stats/${eth0}`, { token: admin })).body).toEqual({
        error: 'No stats found',
      });
    });

    it('delete removes the interface and its alert', async () => {
      const west = addInterface(westDevice, 1, 'wan');
      expect(
        (await req('POST', '/api/interfaces/delete', { token: scopedUser, body: { id: west } }))
          .body,
      ).toEqual({ error: 'Interface not found' });
      expect(
        (await req('POST', '/api/interfaces/delete', { token: admin, body: { id: eth0 } })).body,
      ).toEqual({ message: 'Interface deleted' });
      expect(
        db()
          .prepare(
            "SELECT count(*) AS n FROM legacy_alerts WHERE tracker_kind = 'interface' AND tracker_id = ?",
          )
          .get(eth0),
      ).toEqual({ n: 0 });
    });
  });

  describe('custom OIDs and services', () => {
    it('OID set (201/200/400), get with a synthetic point, delete', async () => {
      const created = await req('POST', '/api/oid/set', {
        token: admin,
        body: { oid: '.1.3.6.1.2.1.1.3.0', deviceId: eastDevice, datatype: 'I' },
      });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect(
        db()
          .prepare('SELECT oid, label, interval, enable_logging FROM oid_trackers WHERE id = ?')
          .get(id),
      ).toEqual({
        oid: '1.3.6.1.2.1.1.3.0',
        label: '1.3.6.1.2.1.1.3.0',
        interval: 180,
        enable_logging: 1,
      });
      expect(
        (
          await req('POST', '/api/oid/set', {
            token: admin,
            body: { id, label: 'uptime', enable_logging: 'false' },
          })
        ).body,
      ).toEqual({ id });
      expect(
        (
          await req('POST', '/api/oid/set', {
            token: admin,
            body: { oid: '1.3.6.1', deviceId: eastDevice },
          })
        ).body,
      ).toEqual({ errors: { datatype: ['The datatype field is required.'] } });
      expect(
        (
          await req('POST', '/api/oid/set', {
            token: admin,
            body: { oid: '1.3.6.1', deviceId: eastDevice, datatype: 'X' },
          })
        ).status,
      ).toBe(400);
      expect(
        (
          await req('POST', '/api/oid/set', {
            token: admin,
            body: { oid: 'sysUpTime', deviceId: eastDevice, datatype: 'S' },
          })
        ).body,
      ).toEqual({ errors: { oid: ['The oid field format is invalid.'] } });

      db()
        .prepare('UPDATE oid_trackers SET value = ?, last_polled_at = ? WHERE id = ?')
        .run('12345', h.clock.now() - 10 * HOUR_MS, id);
      const got = await req('GET', `/api/oid/get/${id}`, { token: admin });
      expect(got.body).toMatchObject({
        id,
        label: 'uptime',
        datatype: 'I',
        enable_logging: false,
        alerts: [],
      });
      expect(got.body.logs).toEqual([{ timestamp: expect.any(String), value: '12345' }]);
      expect((await req('GET', `/api/oid/get/${id}`, { token: scopedUser })).status).toBe(200);
      expect((await req('GET', '/api/oid/get/999999', { token: admin })).body).toEqual({
        error: 'OID not found',
      });

      expect(
        (await req('POST', '/api/oid/delete', { token: admin, body: { id: 999_999 } })).body,
      ).toEqual({ error: 'Error deleting oid' });
      expect((await req('POST', '/api/oid/delete', { token: admin, body: { id } })).body).toEqual({
        success: 'OID deleted',
      });
    });

    it('service set generates the oid and label, getAll sorts by label, delete', async () => {
      const a = await req('POST', '/api/service/set', {
        token: admin,
        body: { name: 'W32Time', deviceId: eastDevice },
      });
      expect(a.status).toBe(201);
      const b = await req('POST', '/api/service/set', {
        token: admin,
        body: { name: 'Dhcp', deviceId: eastDevice, interval: 30 },
      });
      expect(
        db()
          .prepare('SELECT oid, label, datatype, interval, kind FROM oid_trackers WHERE id = ?')
          .get(a.body.id),
      ).toEqual({
        oid: 'Win32_Service::State.0.#Name!W32Time',
        label: 'W32Time',
        datatype: 'S',
        interval: 180,
        kind: 'service',
      });
      expect(
        (
          await req('POST', '/api/service/set', {
            token: admin,
            body: { id: b.body.id, label: 'DHCP client' },
          })
        ).body,
      ).toEqual({ id: b.body.id });
      const all = await req('GET', `/api/service/getAll/${eastDevice}`, { token: scopedUser });
      expect(all.body.map((s: { label: string; name: string }) => [s.label, s.name])).toEqual([
        ['DHCP client', 'Dhcp'],
        ['W32Time', 'W32Time'],
      ]);
      expect(all.body[0].alerts).toEqual([]);
      expect(
        (await req('GET', `/api/service/getAll/${westDevice}`, { token: scopedUser })).body,
      ).toEqual({ error: 'Device not found' });
      expect(
        (await req('GET', `/api/service/get/${a.body.id}`, { token: admin })).body,
      ).toMatchObject({ id: a.body.id, name: 'W32Time', logs: [] });
      expect((await req('GET', '/api/service/get/999999', { token: admin })).body).toEqual({
        error: 'Service not found',
      });
      expect(
        (await req('GET', `/api/service/statsOf/${a.body.id}`, { token: admin })).body,
      ).toEqual({ error: 'No stats found' });
      expect(
        (await req('POST', '/api/service/set', { token: admin, body: { deviceId: eastDevice } }))
          .body,
      ).toEqual({ errors: { name: ['The name field is required.'] } });
      const gone = await req('POST', '/api/service/delete', {
        token: admin,
        body: { id: 999_999 },
      });
      expect(gone.status).toBe(500);
      expect(gone.body).toEqual({ error: 'Error deleting service' });
      expect(
        (await req('POST', '/api/service/delete', { token: admin, body: { id: a.body.id } })).body,
      ).toEqual({ success: 'Service deleted' });
    });
  });

  describe('TCP ports', () => {
    it('set keys on (deviceId, port), lists, gets, deletes; getTCPTracker', async () => {
      const created = await req('POST', '/api/port/set', {
        token: admin,
        body: { deviceId: eastDevice, port: 443, name: 'https', interval: 30 },
      });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const same = await req('POST', '/api/port/set', {
        token: admin,
        body: { deviceId: eastDevice, port: 443, label: 'tls' },
      });
      expect(same.status).toBe(200);
      expect(same.body).toEqual({ id });
      expect(
        db().prepare('SELECT label, interval FROM port_trackers WHERE id = ?').get(id),
      ).toEqual({ label: 'tls', interval: 30 });
      expect(
        (
          await req('POST', '/api/port/set', {
            token: admin,
            body: { deviceId: eastDevice, port: 70000 },
          })
        ).body,
      ).toEqual({ errors: { port: ['The port field must not be greater than 65535.'] } });
      expect(
        (
          await req('POST', '/api/port/set', {
            token: admin,
            body: { deviceId: eastDevice, port: 22, interval: 0 },
          })
        ).body,
      ).toEqual({ errors: { interval: ['The interval field must be at least 1.'] } });
      expect(
        (await req('POST', '/api/port/set', { token: admin, body: { deviceId: eastDevice } })).body,
      ).toEqual({ errors: { port: ['The port field is required.'] } });
      await req('POST', '/api/port/set', {
        token: admin,
        body: { deviceId: eastDevice, port: 22 },
      });

      const now = h.clock.now();
      write(() => {
        samples.write({ kind: 'port', trackerId: id, ts: now - 20_000, a: 0.4, b: 0 });
        samples.write({
          kind: 'port',
          trackerId: id,
          ts: now - 10_000,
          a: -1,
          b: 1,
          answered: false,
        });
      });
      const got = await req('GET', `/api/port/get/${id}`, { token: scopedUser });
      expect(got.body).toMatchObject({
        id,
        dev_id: eastDevice,
        dev_label: expect.any(String),
        port: 443,
        interval: 30,
        state: null,
      });
      expect(got.body.logs).toEqual([
        { port_id: id, latency: 0.4, timestamp: expect.any(String) },
        { port_id: id, latency: -1, timestamp: expect.any(String) },
      ]);
      expect((await req('GET', '/api/port/get/999999', { token: admin })).body).toEqual({
        error: 'Port not found',
      });
      expect(
        (await req('GET', `/api/device/${eastDevice}/port`, { token: admin })).body.map(
          (p: { port: number }) => p.port,
        ),
      ).toEqual([22, 443]);
      expect(
        (await req('GET', `/api/device/${westDevice}/port`, { token: scopedUser })).body,
      ).toEqual({ error: 'Device not found' });
      expect((await req('GET', '/api/port/all', { token: scopedUser })).body).toHaveLength(2);
      expect((await req('GET', `/api/port/stats/${id}`, { token: admin })).body).toEqual({
        rows: 2,
        size: expect.any(String),
      });

      const widget = await req('POST', '/api/getTCPTracker', {
        token: viewer,
        body: { deviceId: eastDevice, id },
      });
      expect(widget.body).toEqual({
        status: 200,
        hasError: false,
        message: { dev_label: expect.any(String), port: 443, logs: got.body.logs },
      });
      expect(
        (
          await req('POST', '/api/getTCPTracker', {
            token: viewer,
            body: { deviceId: westDevice, id },
          })
        ).body,
      ).toEqual({ status: 204, hasError: false, message: {} });
      expect(
        (await req('POST', '/api/getTCPTracker', { token: viewer, body: { deviceId: eastDevice } }))
          .body,
      ).toEqual({ status: 204, hasError: false, message: {} });

      expect(
        (await req('POST', '/api/port/delete', { token: admin, body: { id: 999_999 } })).body,
      ).toEqual({ error: 'Port not found' });
      expect((await req('POST', '/api/port/delete', { token: admin, body: { id } })).body).toEqual({
        message: 'Port deleted',
      });
      expect(
        db().prepare('SELECT count(*) AS n FROM port_samples WHERE tracker_id = ?').get(id),
      ).toEqual({ n: 0 });
    });
  });

  describe('device integration', () => {
    it('GET /api/device/{device} carries ping, ports, disks and interfaces series; widgets list trackers', async () => {
      const device = await createDevice(['east']);
      const latency = await req('POST', '/api/latency/set', {
        token: admin,
        body: { label: 'p', deviceId: device },
      });
      const port = await req('POST', '/api/port/set', {
        token: admin,
        body: { deviceId: device, port: 80 },
      });
      const now = h.clock.now();
      write(() => {
        for (let i = 0; i < 10; i++)
          samples.write({
            kind: 'latency',
            trackerId: latency.body.id,
            ts: now - i * 3 * DAY_MS,
            a: 1,
            b: 0,
          });
      });
      const res = await req('GET', `/api/device/${device}?hours=720`, { token: admin });
      expect(res.status).toBe(200);
      const body = res.body.device ?? res.body.data ?? res.body;
      // A 30-day window is read from hourly rollups: one point per hour bucket.
      expect(body.ping).toHaveLength(10);
      expect(body.ports).toEqual([
        expect.objectContaining({ id: port.body.id, port: 80, logs: [] }),
      ]);
      const start = new Date(now - 4 * DAY_MS).toISOString();
      const end = new Date(now + 1000).toISOString();
      const windowed = await req(
        'GET',
        `/api/device/${device}?start_time=${encodeURIComponent(start)}&end_time=${encodeURIComponent(end)}`,
        { token: admin },
      );
      expect(windowed.status).toBe(200);
      expect((windowed.body.device ?? windowed.body.data ?? windowed.body).ping).toHaveLength(2);
      const widgets = await req('GET', `/api/getDeviceTrackers?deviceId=${device}`, {
        token: viewer,
      });
      expect(widgets.body.trackers.map((t: { trackerTable: string }) => t.trackerTable)).toEqual([
        'latency',
        'ports',
      ]);

      const stats = await req('GET', `/api/device/${device}/stats`, { token: admin });
      expect(JSON.stringify(stats.body)).toContain('latency_samples');

      const deleted = await req('DELETE', `/api/device/${device}`, { token: admin });
      expect(deleted.status).toBe(200);
      expect(
        db().prepare('SELECT count(*) AS n FROM latency_trackers WHERE device_id = ?').get(device),
      ).toEqual({ n: 0 });
      expect(
        db()
          .prepare('SELECT count(*) AS n FROM latency_samples WHERE tracker_id = ?')
          .get(latency.body.id),
      ).toEqual({ n: 0 });
      expect(
        db().prepare('SELECT count(*) AS n FROM port_trackers WHERE device_id = ?').get(device),
      ).toEqual({ n: 0 });
    });

    it('sample window queries use the primary key (EXPLAIN QUERY PLAN)', () => {
      for (const kind of ['latency', 'port', 'disk', 'interface', 'oid'] as const)
        expect(samples.windowPlan(kind)).toMatch(
          /SEARCH .* USING PRIMARY KEY \(tracker_id=\? AND ts>\? AND ts<\?\)/,
        );
      expect(samples.rollupPlan()).toMatch(
        /SEARCH sample_rollups USING PRIMARY KEY \(kind=\? AND tracker_id=\? AND resolution=\? AND ts>\? AND ts<\?\)/,
      );
    });
  });
});
