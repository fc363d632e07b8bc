/**
 * The polling engine against real targets on loopback only: fping to 127.0.x.x, TCP connects to
 * a listening and a closed port on 127.0.0.1, and a real snmpd (disks, interfaces and custom OIDs
 * from the device crawl), driven by its own scheduler on the system clock.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { startSnmpd, type Snmpd } from '../../../../test/harness/snmpd.js';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { registerDeviceWrites } from '../devices/index.js';
import { systemClock } from '../../platform/time/time.js';
import { rateOf } from './snmp.poller.js';
import { checkPort } from './tcp.poller.js';
import { TrackersEngine } from './trackers.engine.js';
import { toggleAlert } from '../alerts/index.js';
import { TrackersService } from './trackers.service.js';
import { registerTrackerWrites } from './trackers.writes.js';

const waitFor = async <T>(
  what: string,
  probe: () => T | undefined | null | false,
  timeoutMs = 15_000,
): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (let i = 0; i < 1000 && Date.now() < until; i++) {
    const value = probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('pollers (units)', () => {
  it('turns octet counters into bit rates and handles a wrap', () => {
    expect(rateOf(1000n, 2000n, 32, 10)).toBe(800);
    expect(rateOf(4_294_967_000n, 704n, 32, 1)).toBe(1000 * 8);
    expect(rateOf(18_446_744_073_709_551_000n, 384n, 64, 1)).toBe(1000 * 8);
  });

  it('checks TCP ports: open with a latency, closed as -1', async () => {
    const server = net.createServer((s) => s.destroy()).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const open = (server.address() as net.AddressInfo).port;
    const closedServer = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => closedServer.once('listening', r));
    const closed = (closedServer.address() as net.AddressInfo).port;
    await new Promise((r) => closedServer.close(r));
    try {
      const up = await checkPort('127.0.0.1', open, 2000);
      expect(up.state).toBe('open');
      expect(up.latency).toBeGreaterThanOrEqual(0);
      expect(await checkPort('127.0.0.1', closed, 2000)).toEqual({
        latency: -1,
        state: 'closed',
        reason: 'ECONNREFUSED',
      });
    } finally {
      server.close();
    }
  });
});

describe.runIf(havePeer('snmpd', 'snmpd') && havePeer('fping', 'fping'))(
  'polling engine against real loopback targets',
  () => {
    let h: Harness;
    let snmpd: Snmpd;
    let admin: string;
    let deviceId: number;
    let scheduler: Scheduler;
    let engine: TrackersEngine;
    let service: TrackersService;
    let storage: StorageWriter;
    let server: net.Server;
    let openPort: number;
    let closedPort: number;
    const db = () => h.appliance.db;

    beforeAll(async () => {
      snmpd = await startSnmpd({ addresses: ['127.0.6.1'], sysName: 'poll-peer' });
      h = await startAppliance();
      admin = await h.login();
      const res = await h.request('POST', '/api/device/set', {
        token: admin,
        body: {
          ip_address: '127.0.6.1',
          label: 'snmp peer',
          profile: 'dash_generic',
          enable_snmp: true,
          snmpconfig: { snmp_version: 2, snmp_port: snmpd.port, snmp_community: snmpd.community },
        },
      });
      if (res.status !== 200) throw new Error(res.text);
      deviceId = res.body.device.id;
      // The device crawl (the devices feature) creates interface and disk trackers.
      await waitFor(
        'crawl',
        () =>
          (
            db()
              .prepare('SELECT count(*) AS n FROM disk_trackers WHERE device_id = ?')
              .get(deviceId) as { n: number }
          ).n > 0,
      );
      db().prepare('UPDATE disk_trackers SET interval = 1 WHERE device_id = ?').run(deviceId);
      db()
        .prepare(
          'UPDATE interface_trackers SET interval = 1, enable_logging = 1 WHERE device_id = ?',
        )
        .run(deviceId);

      server = net.createServer((s) => s.destroy()).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      openPort = (server.address() as net.AddressInfo).port;
      const closedServer = net.createServer().listen(0, '127.0.0.1');
      await new Promise((r) => closedServer.once('listening', r));
      closedPort = (closedServer.address() as net.AddressInfo).port;
      await new Promise((r) => closedServer.close(r));

      const now = Date.now();
      db().prepare('UPDATE latency_trackers SET interval = 1 WHERE device_id = 1').run();
      db()
        .prepare(
          "INSERT INTO latency_trackers (device_id, label, interval, timeout, lossout, created_at, updated_at) VALUES (?, 'peer', 1, 500, 100, ?, ?)",
        )
        .run(deviceId, now, now);
      db()
        .prepare(
          "INSERT INTO port_trackers (device_id, port, label, interval, created_at, updated_at) VALUES (1, ?, 'open', 1, ?, ?), (1, ?, 'closed', 1, ?, ?)",
        )
        .run(openPort, now, now, closedPort, now, now);
      db()
        .prepare(
          "INSERT INTO oid_trackers (device_id, kind, oid, label, datatype, interval, created_at, updated_at) VALUES (?, 'oid', '1.3.6.1.2.1.1.5.0', 'sysName', 'S', 1, ?, ?), (?, 'oid', '1.3.6.1.2.1.1.3.0', 'uptime', 'I', 1, ?, ?)",
        )
        .run(deviceId, now, now, deviceId, now, now);
      // A link-state alert that last saw lo "down": the next poll sees it up and fires.
      const lo = db()
        .prepare(
          'SELECT id FROM interface_trackers WHERE device_id = ? AND oper_status = 1 ORDER BY interface LIMIT 1',
        )
        .get(deviceId) as { id: number };
      toggleAlert(db(), deviceId, 'interface', lo.id, 'linkstate', 2, now);

      scheduler = new Scheduler(systemClock);
      storage = new StorageWriter(db());
      registerDeviceWrites(storage);
      registerTrackerWrites(storage);
      storage.start();
      service = new TrackersService(db(), storage);
      engine = new TrackersEngine({ ...h.appliance.ctx, clock: systemClock }, service, scheduler, {
        resyncMs: 500,
      });
      await engine.start();
      await scheduler.start();
    }, 60_000);

    afterAll(async () => {
      await scheduler?.stop();
      await engine?.stop();
      await storage?.close();
      server?.close();
      await h?.close();
      await snmpd?.stop();
    });

    it('latency: samples, the tracker reading and device reachability (status=up)', async () => {
      const row = await waitFor(
        'latency reading',
        () =>
          db()
            .prepare(
              'SELECT latency, loss FROM latency_trackers WHERE device_id = ? AND latency IS NOT NULL',
            )
            .get(deviceId) as { latency: number; loss: number } | undefined,
      );
      expect(row.latency).toBeGreaterThanOrEqual(0);
      expect(row.loss).toBe(0);
      expect(db().prepare('SELECT reachability FROM devices WHERE id = ?').get(deviceId)).toEqual({
        reachability: 'up',
      });
      const up = await h.request('GET', '/api/devices?status=up', { token: admin });
      expect(up.body.devices.map((d: { id: number }) => d.id)).toContain(deviceId);
      const down = await h.request('GET', '/api/devices?status=down', { token: admin });
      expect(down.body.devices.map((d: { id: number }) => d.id)).not.toContain(deviceId);
      expect(engine.counters.pingBatches).toBeGreaterThan(0);
    });

    it('TCP: open port latency >= 0, closed port -1 and state closed', async () => {
      const open = await waitFor(
        'open port',
        () =>
          db()
            .prepare(
              "SELECT state, latency FROM port_trackers WHERE label = 'open' AND state IS NOT NULL",
            )
            .get() as { state: string; latency: number } | undefined,
      );
      expect(open.state).toBe('open');
      expect(open.latency).toBeGreaterThanOrEqual(0);
      const closed = await waitFor(
        'closed port',
        () =>
          db()
            .prepare(
              "SELECT state, latency FROM port_trackers WHERE label = 'closed' AND state IS NOT NULL",
            )
            .get() as { state: string; latency: number } | undefined,
      );
      expect(closed).toEqual({ state: 'closed', latency: -1 });
      await waitFor(
        'port samples',
        () =>
          (
            db().prepare('SELECT count(*) AS n FROM port_samples WHERE latency = -1').get() as {
              n: number;
            }
          ).n > 0,
      );
    });

    it('SNMP: disks in bytes, interface rates after two polls, OID values', async () => {
      const disk = await waitFor(
        'disk sample',
        () =>
          db()
            .prepare(
              'SELECT s.available, s.total FROM disk_samples s JOIN disk_trackers t ON t.id = s.tracker_id WHERE t.device_id = ? LIMIT 1',
            )
            .get(deviceId) as { available: number; total: number } | undefined,
      );
      expect(disk.total).toBeGreaterThan(0);
      expect(disk.available).toBeLessThanOrEqual(disk.total);
      // Loopback carries this very SNMP traffic, so its octet counters move between two polls:
      // the rate of the second poll is positive (a rate forced to 0 fails here).
      const lo = db()
        .prepare("SELECT id FROM interface_trackers WHERE device_id = ? AND name = 'lo'")
        .get(deviceId) as { id: number };
      const rate = await waitFor(
        'a positive loopback rate',
        () =>
          db()
            .prepare(
              'SELECT in_bps, out_bps FROM interface_samples WHERE tracker_id = ? AND in_bps > 0 AND out_bps > 0 LIMIT 1',
            )
            .get(lo.id) as { in_bps: number; out_bps: number } | undefined,
      );
      expect(rate.in_bps).toBeGreaterThan(0);
      expect(rate.out_bps).toBeGreaterThan(0);
      const name = await waitFor(
        'sysName',
        () =>
          db()
            .prepare("SELECT value FROM oid_trackers WHERE label = 'sysName' AND value IS NOT NULL")
            .get() as { value: string } | undefined,
      );
      expect(name.value).toBe('poll-peer');
      const uptime = await waitFor(
        'uptime sample',
        () =>
          db()
            .prepare(
              "SELECT s.value FROM oid_samples s JOIN oid_trackers t ON t.id = s.tracker_id WHERE t.label = 'uptime'",
            )
            .get() as { value: string } | undefined,
      );
      expect(Number(uptime.value)).toBeGreaterThan(0);
      expect(engine.counters.snmpFailures).toBe(0);
    });

    it('fires the interface link-state alert when oper status changes', async () => {
      const event = await waitFor(
        'alert event',
        () =>
          db()
            .prepare(
              'SELECT e.message FROM legacy_alert_events e JOIN legacy_alerts a ON a.id = e.alert_id WHERE a.device_id = ?',
            )
            .get(deviceId) as { message: string } | undefined,
      );
      expect(event.message).toMatch(/^Interface .+ \(ifIndex \d+\) is up$/);
      expect(
        db()
          .prepare('SELECT last_state, fired_count FROM legacy_alerts WHERE device_id = ?')
          .get(deviceId),
      ).toEqual({ last_state: 1, fired_count: 1 });
    });

    it('API changes reach the running engine through the tracker routes, without a restart', async () => {
      // The appliance's own engine (its scheduler runs on the harness's manual clock, so nothing
      // polls; the job list is what is checked).
      const live = h.appliance.engines.find((e) => e instanceof TrackersEngine) as TrackersEngine;
      const created = await h.request('POST', '/api/port/set', {
        token: admin,
        body: { deviceId: 1, port: 9, interval: 30, label: 'late' },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      expect(live.scheduledInterval('port', id)).toBe(30);
      const updated = await h.request('POST', '/api/port/set', {
        token: admin,
        body: { id, interval: 45 },
      });
      expect(updated.status).toBe(200);
      expect(live.scheduledInterval('port', id)).toBe(45);
      const deleted = await h.request('POST', '/api/port/delete', { token: admin, body: { id } });
      expect(deleted.status).toBe(200);
      expect(live.scheduledInterval('port', id)).toBeUndefined();
    });

    it('rows written outside the API (the crawl) reach the scheduler at the next resync', async () => {
      const now = Date.now();
      const id = Number(
        db()
          .prepare(
            "INSERT INTO port_trackers (device_id, port, label, interval, created_at, updated_at) VALUES (1, 10, 'crawled', 1, ?, ?)",
          )
          .run(now, now).lastInsertRowid,
      );
      await waitFor('resync', () => scheduler.has(`port:${id}`));
      db().prepare('DELETE FROM port_trackers WHERE id = ?').run(id);
      await waitFor('resync after delete', () => !scheduler.has(`port:${id}`));
      expect(scheduler.stats().lateness.p99).toBeLessThan(1000);
    });

    it('writes every reading through the storage writer: none failed or lost', async () => {
      // Stop polling first: a reading taken after the flush would otherwise be counted as queued.
      await scheduler.stop();
      await service.writer.flush();
      const { writer } = engine.report();
      expect(writer.written).toBeGreaterThan(0);
      expect(writer.received).toBe(writer.written);
      expect(writer).toMatchObject({ dropped: 0, failed: 0, lost: 0, queued: 0, inFlight: 0 });
      expect(storage.stats().flushes).toBeGreaterThan(0);
    });
  },
);
