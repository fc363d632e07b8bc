/**
 * Flap control of legacy alerts (designed; legacy-flap.rules.ts) on a started appliance: the
 * trackers' own writer (observeAlertState) records state changes of a device-down alert, the
 * engine's tick handles them. Below the threshold every down notifies; from the change that
 * crosses it, occurrences are recorded suppressed; once the alert has been quiet for
 * stable_minutes, the state it settled in is notified once if it is down. Also: each pending
 * firing is judged by its own state (two changes within one tick are two changes), the settings
 * route validates and changes nothing on bad input, and the flapping list is tag filtered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import type { AlertsEngine } from './alerts.engine.js';
import { DEVICE_DOWN_ALERT, ensureLegacyAlert, observeAlertState } from './index.js';
import { recordingDelivery } from './testing/recording-delivery.js';

describe('flap control of legacy alerts', () => {
  let h: Harness;
  let admin: string;
  let engine: AlertsEngine;
  const delivery = recordingDelivery();
  let deviceCount = 0;

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    engine = h.appliance.engines.find((e) => e.name === 'alerts') as AlertsEngine;
    engine.service.connectDelivery(delivery.seam);
    const outlet = await h.request('POST', '/api/outlets', {
      token: admin,
      body: { name: 'ops', type: 'webhook', config: { url: 'https://hooks.example.test/ops' } },
    });
    await h.request('POST', '/api/alert-routing-rules', {
      token: admin,
      body: { label: 'all', outlet_ids: [outlet.body.id] },
    });
  }, 60_000);
  afterAll(() => h?.close());
  beforeEach(() => {
    delivery.queued.length = 0;
  });

  /** A device with a device-down alert whose first reading was "up". */
  async function deviceDownAlert(tags: string[] = []) {
    const db = h.appliance.db;
    deviceCount++;
    const res = await h.request('POST', '/api/device/set', {
      token: admin,
      body: {
        ip_address: `127.0.4.${deviceCount}`,
        label: `flappy-${deviceCount}`,
        profile: 'dash_generic',
        ...(tags.length ? { tags } : {}),
      },
    });
    expect(res.status).toBe(200);
    const deviceId = res.body.device.id as number;
    const trackerId = Number(
      db
        .prepare(
          "INSERT INTO latency_trackers (device_id, label, created_at, updated_at) VALUES (?, 't', 0, 0)",
        )
        .run(deviceId).lastInsertRowid,
    );
    const alert = ensureLegacyAlert(
      db,
      { deviceId, kind: 'latency', trackerId, type: DEVICE_DOWN_ALERT, severity: 2 },
      h.clock.now(),
    );
    observeAlertState(db, alert, 1, 'up', h.clock.now());
    return alert.id;
  }
  /** What the latency poller does on a reading: 0 down, 1 up (a firing when it changed). */
  function see(alertId: number, state: 0 | 1) {
    const db = h.appliance.db;
    const row = db.prepare('SELECT * FROM legacy_alerts WHERE id = ?').get(alertId) as never;
    h.clock.advance(5_000);
    return observeAlertState(
      db,
      row,
      state,
      state ? 'answering again' : 'stopped answering',
      h.clock.now(),
    );
  }
  const occurrences = (alertId: number) =>
    h.appliance.db
      .prepare(
        "SELECT suppressed_by, routes, closed_at IS NULL AS open, message FROM alert_occurrences WHERE source = 'legacy' AND alert_id = ? ORDER BY id",
      )
      .all(alertId) as {
      suppressed_by: string | null;
      routes: number;
      open: number;
      message: string;
    }[];
  const setFlap = (body: Record<string, unknown>) =>
    h.request('PUT', '/api/alert-flap-control', { token: admin, body });

  it('notifies below the threshold, holds while flapping, and notifies the settled down state once', async () => {
    expect(
      (await setFlap({ enabled: true, transitions: 4, window_minutes: 10, stable_minutes: 5 }))
        .status,
    ).toBe(200);
    const id = await deviceDownAlert();
    // Changes 1 and 2 within one tick: two firings, each judged by its own state.
    see(id, 0);
    see(id, 1);
    engine.tick();
    expect(occurrences(id)).toEqual([
      { suppressed_by: null, routes: 1, open: 0, message: 'stopped answering' },
    ]);
    see(id, 0); // change 3: still below 4, notifies
    engine.tick();
    expect(delivery.queued).toHaveLength(2);
    see(id, 1); // change 4: flapping from here
    engine.tick();
    expect((await h.request('GET', '/api/alert-flap-control', { token: admin })).body).toEqual({
      enabled: true,
      transitions: 4,
      window_minutes: 10,
      stable_minutes: 5,
      flapping: [id],
    });
    see(id, 0);
    see(id, 1);
    see(id, 0); // settles down
    engine.tick();
    const held = occurrences(id).slice(2);
    expect(held).toEqual([
      {
        suppressed_by: 'flapping: 5 state changes in 10 min',
        routes: 0,
        open: 0,
        message: 'stopped answering',
      },
      {
        suppressed_by: 'flapping: 7 state changes in 10 min',
        routes: 0,
        open: 1,
        message: 'stopped answering',
      },
    ]);
    expect(delivery.queued).toHaveLength(2);
    // Quiet for less than stable_minutes: still held.
    h.clock.advance(4 * 60_000);
    engine.tick();
    expect(delivery.queued).toHaveLength(2);
    // Quiet for stable_minutes: the state it settled in (down) is notified once.
    h.clock.advance(60_000);
    engine.tick();
    engine.tick();
    expect(delivery.queued).toHaveLength(3);
    expect(delivery.queued[2]!.notification.text).toContain('stable after flapping');
    expect(occurrences(id).at(-1)).toMatchObject({ suppressed_by: null, routes: 1, open: 1 });
    expect(
      (await h.request('GET', '/api/alert-flap-control', { token: admin })).body.flapping,
    ).toEqual([]);
  });

  it('sends nothing when flapping ends in the up state', async () => {
    await setFlap({ enabled: true, transitions: 2, window_minutes: 10, stable_minutes: 1 });
    const id = await deviceDownAlert();
    see(id, 0);
    see(id, 1);
    see(id, 0);
    see(id, 1);
    engine.tick();
    expect(delivery.queued).toHaveLength(1); // the first down, before the second change
    h.clock.advance(2 * 60_000);
    engine.tick();
    expect(delivery.queued).toHaveLength(1);
    expect(occurrences(id).every((o) => o.open === 0)).toBe(true);
  });

  it('off: every down notifies', async () => {
    await setFlap({ enabled: false, transitions: 2, window_minutes: 10, stable_minutes: 1 });
    const id = await deviceDownAlert();
    for (let i = 0; i < 3; i++) {
      see(id, 0);
      see(id, 1);
    }
    engine.tick();
    expect(delivery.queued).toHaveLength(3);
    expect(occurrences(id).map((o) => o.suppressed_by)).toEqual([null, null, null]);
  });

  it('validates the settings (400 {errors}) and changes nothing on bad input', async () => {
    const good = { enabled: true, transitions: 6, window_minutes: 15, stable_minutes: 20 };
    expect((await setFlap(good)).status).toBe(200);
    for (const bad of [
      { ...good, transitions: 1 },
      { ...good, transitions: 101 },
      { ...good, window_minutes: 0 },
      { ...good, stable_minutes: 1441 },
      { ...good, transitions: 2.5 },
      { ...good, enabled: 'yes' },
      { transitions: 3, window_minutes: 3, stable_minutes: 3 },
    ]) {
      const res = await setFlap(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body).toHaveProperty('errors');
    }
    const now = (await h.request('GET', '/api/alert-flap-control', { token: admin })).body;
    expect(now).toMatchObject(good);
    const audit = h.appliance.db
      .prepare("SELECT count(*) FROM audit_log WHERE action = 'alert_flap_control.update'")
      .pluck()
      .get() as number;
    expect(audit).toBeGreaterThanOrEqual(1);
  });

  it('needs the alerts permission; the flapping list holds only alerts the caller may see', async () => {
    const other = await h.userWith([]);
    expect(
      (await h.request('GET', '/api/alert-flap-control', { token: other.token })).body,
    ).toEqual({
      status: false,
      hasError: true,
      message: 'You do not have permission to perform this action.',
    });
    await setFlap({ enabled: true, transitions: 2, window_minutes: 10, stable_minutes: 60 });
    const hidden = await deviceDownAlert(['lab']);
    const visible = await deviceDownAlert(['ops']);
    for (const id of [hidden, visible]) {
      see(id, 0);
      see(id, 1);
    }
    engine.tick();
    const all = (await h.request('GET', '/api/alert-flap-control', { token: admin })).body.flapping;
    expect(all).toEqual(expect.arrayContaining([hidden, visible]));
    const scoped = await h.userWith(['alerts'], { tags: ['ops'] });
    const mine = (await h.request('GET', '/api/alert-flap-control', { token: scoped.token })).body
      .flapping;
    expect(mine).toContain(visible);
    expect(mine).not.toContain(hidden);
  });
});
