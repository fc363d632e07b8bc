/**
 * The evaluation engine against real syslog: bsdutils `logger` sends to an appliance started by
 * the test; the engine reads what the writer committed, opens an occurrence at occurrences_min,
 * notifies once through the routing rules (recorded by the delivery seam), writes the history,
 * suppresses inside a maintenance window, ignores out-of-scope devices, closes below the
 * threshold, fires invert alerts on absence, and routes legacy device-down firings (with the
 * dependency suppression of a child behind a down parent).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { observeAlertState, ensureLegacyAlert, DEVICE_DOWN_ALERT } from './index.js';
import type { AlertsEngine } from './alerts.engine.js';
import { recordingDelivery } from './testing/recording-delivery.js';

const HAVE_LOGGER = havePeer('logger', 'bsdutils');

describe.runIf(HAVE_LOGGER)('alert evaluation on real syslog', () => {
  let h: Harness;
  let admin: string;
  let port: number;
  let engine: AlertsEngine;
  let outletId: number;
  let ruleId: number;
  const delivery = recordingDelivery();
  let tag = 0;

  const logger = (text: string, priority = 'local0.err') =>
    execFileSync(
      'logger',
      ['-n', '127.0.0.1', '-P', String(port), '-d', '-t', 'app', '-p', priority, text],
      {
        timeout: 5000,
      },
    );
  const stored = () =>
    h.appliance.db.prepare('SELECT count(*) FROM syslog_log').pluck().get() as number;
  async function send(texts: string[], priority?: string) {
    const before = stored();
    for (const t of texts) logger(t, priority);
    for (let i = 0; i < 100 && stored() < before + texts.length; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(stored()).toBe(before + texts.length);
    engine.tick();
  }
  const occurrences = (alertId: number) =>
    h.appliance.db
      .prepare(
        "SELECT * FROM alert_occurrences WHERE source = 'modern' AND alert_id = ? ORDER BY id",
      )
      .all(alertId) as Record<string, any>[];
  const createAlert = async (body: Record<string, unknown>) => {
    const res = await h.request('POST', '/api/alerts', {
      token: admin,
      body: { label: `alert ${++tag}`, class: 'syslog_log', severity: 2, ...body },
    });
    expect(res.status).toBe(201);
    return res.body as { id: number; label: string };
  };

  beforeAll(async () => {
    h = await startAppliance({ APPLIANCE_SYSLOG_PORT: 'auto' });
    admin = await h.login();
    port = h.appliance.ctx.collectorPorts.report().syslog!.udp!;
    engine = h.appliance.engines.find((e) => e.name === 'alerts') as AlertsEngine;
    engine.service.connectDelivery(delivery.seam);
    const outlet = await h.request('POST', '/api/outlets', {
      token: admin,
      body: { name: 'ops', type: 'webhook', config: { url: 'https://hooks.example.test/ops' } },
    });
    outletId = outlet.body.id;
    const rule = await h.request('POST', '/api/alert-routing-rules', {
      token: admin,
      body: { label: 'all', outlet_ids: [outletId] },
    });
    ruleId = rule.body.id;
  }, 60_000);
  afterAll(() => h?.close());
  beforeEach(() => {
    delivery.queued.length = 0;
    // The receiver stamps rows with the real time: each test starts with the clock on it.
    h.clock.advance(Date.now() - h.clock.now());
  });

  it('opens one occurrence at occurrences_min, notifies once (renotify_minutes changes nothing), records evaluation', async () => {
    const alert = await createAlert({
      parameters: { contains: ['disk', 'failure'], combine_op: 'AND', occurrences_min: 2 },
      renotify_minutes: 1,
    });
    await send(['disk sda ok', 'disk sda failure {$alert_label} ${process.env}']);
    expect(occurrences(alert.id)).toHaveLength(0);
    await send(['DISK sdb FAILURE']);
    const opened = occurrences(alert.id);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({
      device_id: 1,
      match_count: 2,
      closed_at: null,
      suppressed_by: null,
      routes: 1,
    });
    expect(delivery.queued).toHaveLength(1);
    const n = delivery.queued[0]!;
    expect(n.outlet.id).toBe(outletId);
    expect(n.notification.occurrenceId).toBe(opened[0]!.id);
    expect(n.notification.variables.count).toBe('2');
    // The matched message is data: its template-like text is passed through literally.
    expect(n.notification.text).toContain('disk sda failure {$alert_label} ${process.env}');
    expect(n.suppressedBy).toBeUndefined();
    // More matches, and a minute later (renotify_minutes: 1): still one notification.
    h.clock.advance(61_000);
    await send(['disk failure again', 'disk failure more']);
    expect(delivery.queued).toHaveLength(1);
    expect(occurrences(alert.id)).toHaveLength(1);
    const row = (await h.request('GET', `/api/alerts/${alert.id}`, { token: admin })).body;
    expect(row.last_result_count).toBeGreaterThanOrEqual(2);
    expect(row.last_evaluated_at).toEqual(expect.any(String));
    // Past the lookback the count falls below occurrences_min: the occurrence closes.
    h.clock.advance(6 * 60_000);
    engine.tick();
    expect(occurrences(alert.id)[0]!.closed_at).toEqual(expect.any(Number));
    const history = (
      await h.request('GET', `/api/alerts/history?alert_id=${alert.id}`, { token: admin })
    ).body;
    expect(history[0]).toMatchObject({
      alert_label: alert.label,
      notifications: [{ outlet_id: outletId, outlet_name: 'ops', delivery_id: expect.any(Number) }],
    });
    await h.request('POST', `/api/alerts/${alert.id}/toggle`, { token: admin });
  });

  it('out of scope: no occurrence, no history row, no route consulted', async () => {
    const other = await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: '127.0.3.1', label: 'elsewhere', profile: 'dash_generic' },
    });
    const scoped = await createAlert({
      parameters: { contains: ['scopecheck'] },
      scope: 'device',
      scope_id: other.body.device.id,
    });
    const tagged = await createAlert({
      parameters: { contains: ['scopecheck'] },
      tag_filters: ['nowhere'],
    });
    await send(['scopecheck from device 1']);
    expect(occurrences(scoped.id)).toEqual([]);
    expect(occurrences(tagged.id)).toEqual([]);
    expect(delivery.queued).toEqual([]);
    for (const a of [scoped, tagged])
      await h.request('POST', `/api/alerts/${a.id}/toggle`, { token: admin });
  });

  it('severity ceiling and facility are applied before counting', async () => {
    const alert = await createAlert({
      parameters: { contains: ['ceiling'], severity_ceiling: 3, facility: 16 },
    });
    await send(['ceiling warning'], 'local0.warning');
    await send(['ceiling on user facility'], 'user.err');
    expect(occurrences(alert.id)).toEqual([]);
    await send(['ceiling error'], 'local0.err');
    expect(occurrences(alert.id)).toHaveLength(1);
    await h.request('POST', `/api/alerts/${alert.id}/toggle`, { token: admin });
  });

  it('inside a maintenance window the notification is queued suppressed and the history says so', async () => {
    const now = new Date(h.clock.now());
    const win = await h.request('POST', '/api/alerts/maintenance-windows', {
      token: admin,
      body: {
        label: 'now-ish',
        recurrence_unit: 'day',
        maintenance_duration: 180,
        schedule_hour: (now.getUTCHours() + 23) % 24,
      },
    });
    await h.request('PUT', `/api/alert-routing-rules/${ruleId}`, {
      token: admin,
      body: { label: 'all', outlet_ids: [outletId], maintenance_window_ids: [win.body.id] },
    });
    const alert = await createAlert({ parameters: { contains: ['windowed'] } });
    await send(['windowed event']);
    expect(delivery.queued).toHaveLength(1);
    expect(delivery.queued[0]!.suppressedBy).toBe('now-ish');
    expect(occurrences(alert.id)[0]!.suppressed_by).toBe('maintenance window: now-ish');
    await h.request('PUT', `/api/alert-routing-rules/${ruleId}`, {
      token: admin,
      body: { label: 'all', outlet_ids: [outletId] },
    });
    await h.request('POST', `/api/alerts/${alert.id}/toggle`, { token: admin });
  });

  it('invert fires on absence after a whole lookback, and closes when matches return', async () => {
    const alert = await createAlert({
      parameters: { contains: ['heartbeat'], invert: true, lookback_minutes: 1 },
    });
    engine.tick();
    expect(occurrences(alert.id)).toEqual([]);
    h.clock.advance(61_000);
    engine.tick();
    expect(occurrences(alert.id)).toHaveLength(1);
    expect(delivery.queued).toHaveLength(1);
    // The receiver stamps rows with the real time: bring the test clock back to it.
    h.clock.advance(Date.now() - h.clock.now());
    await send(['heartbeat ok']);
    expect(occurrences(alert.id)[0]!.closed_at).toEqual(expect.any(Number));
    await h.request('POST', `/api/alerts/${alert.id}/toggle`, { token: admin });
  });

  it('legacy device down notifies with legacy_device_down; a child behind a down parent opens no incident', async () => {
    const db = h.appliance.db;
    const mk = async (ip: string, label: string) =>
      (
        await h.request('POST', '/api/device/set', {
          token: admin,
          body: { ip_address: ip, label, profile: 'dash_generic' },
        })
      ).body.device.id as number;
    const parent = await mk('127.0.3.10', 'core-switch');
    const child = await mk('127.0.3.11', 'access-switch');
    await h.request('POST', `/api/alert-dependencies/${child}`, {
      token: admin,
      body: { parent_id: parent },
    });
    const tracker = (id: number) =>
      (db.prepare('SELECT id FROM latency_trackers WHERE device_id = ?').pluck().get(id) as
        number | undefined) ??
      Number(
        db
          .prepare(
            "INSERT INTO latency_trackers (device_id, label, created_at, updated_at) VALUES (?, 't', 0, 0)",
          )
          .run(id).lastInsertRowid,
      );
    const now = h.clock.now();
    const alerts = [parent, child].map((d) =>
      ensureLegacyAlert(
        db,
        {
          deviceId: d,
          kind: 'latency',
          trackerId: tracker(d),
          type: DEVICE_DOWN_ALERT,
          severity: 1,
        },
        now,
      ),
    );
    // The trackers engine records what fping saw: up first, then down.
    for (const a of alerts) observeAlertState(db, a, 1, 'up', now);
    const fresh = alerts.map(
      (a) => db.prepare('SELECT * FROM legacy_alerts WHERE id = ?').get(a.id) as typeof a,
    );
    observeAlertState(db, fresh[0]!, 0, 'Device stopped answering', now);
    engine.tick();
    observeAlertState(db, fresh[1]!, 0, 'Device stopped answering', now);
    engine.tick();
    const legacy = db
      .prepare(
        "SELECT alert_class, device_id, suppressed_by, routes FROM alert_occurrences WHERE source = 'legacy' ORDER BY id",
      )
      .all();
    expect(legacy).toEqual([
      { alert_class: 'legacy_device_down', device_id: parent, suppressed_by: null, routes: 1 },
      {
        alert_class: 'legacy_device_down',
        device_id: child,
        suppressed_by: 'dependency: core-switch is down',
        routes: 0,
      },
    ]);
    expect(delivery.queued).toHaveLength(1);
    expect(delivery.queued[0]!.notification.text).toContain('core-switch');
    expect(delivery.queued[0]!.notification.variables.state).toBe('down');
  });
});
