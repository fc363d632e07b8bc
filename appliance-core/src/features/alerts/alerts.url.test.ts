/**
 * The URL tracker's legacy alert (`url_down`): created through POST /api/legacy-alerts, shown in
 * the tracker's `alerts` (null before), fired by the URL checks against a real HTTP server on
 * loopback that starts failing, routed once with the `legacy_url_down` class and the URL in its
 * variables, closed without a notification when the check passes again.
 */
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import type { AlertsEngine } from './alerts.engine.js';
import { recordingDelivery } from './testing/recording-delivery.js';

let h: Harness;
let admin: string;
let engine: AlertsEngine;
let server: http.Server;
let url: string;
let healthy = true;
const delivery = recordingDelivery();

interface UrlEngine {
  check(id: number): Promise<void>;
}

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    res.statusCode = healthy ? 200 : 503;
    res.end(healthy ? 'all systems operational' : 'maintenance');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
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
afterAll(async () => {
  await h?.close();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  delivery.queued.length = 0;
});

describe('URL tracker alerts', () => {
  it('attaches url_down, fires when the check fails, routes once with the URL, closes when it passes', async () => {
    const saved = await h.request('POST', '/api/saveUrl', {
      token: admin,
      body: { newtracker: { url, pattern: 'operational' } },
    });
    const trackerId = saved.body.message.id as number;
    const alertsOfTracker = async () =>
      ((await h.request('GET', '/api/getUrls', { token: admin })).body.data as any[]).find(
        (t) => t.id === trackerId,
      ).alerts;
    expect(await alertsOfTracker()).toBeNull();

    const created = await h.request('POST', '/api/legacy-alerts', {
      token: admin,
      body: { tracker_kind: 'url', tracker_id: trackerId, alert_type: 'url_down', severity: 2 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tracker_kind: 'url', device_id: null, type: 'url_down' });
    const again = await h.request('POST', '/api/legacy-alerts', {
      token: admin,
      body: { tracker_kind: 'url', tracker_id: trackerId, alert_type: 'url_down' },
    });
    expect(again).toMatchObject({ status: 200, body: { id: created.body.id } });
    expect(await alertsOfTracker()).toEqual([
      expect.objectContaining({ id: created.body.id, type: 'url_down', active: true }),
    ]);

    const urls = h.appliance.engines.find((e) => e.name === 'url-monitors') as unknown as UrlEngine;
    const occurrences = () =>
      h.appliance.db
        .prepare("SELECT * FROM alert_occurrences WHERE source = 'legacy' AND alert_id = ?")
        .all(created.body.id) as Record<string, any>[];
    await urls.check(trackerId); // passes: the first state, nothing fires
    engine.tick();
    expect(occurrences()).toHaveLength(0);

    healthy = false;
    await urls.check(trackerId);
    await urls.check(trackerId); // still down: no second firing
    engine.tick();
    const opened = occurrences();
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({
      alert_class: 'legacy_url_down',
      alert_label: `URL down: ${url}`,
      closed_at: null,
      device_id: null,
    });
    expect(delivery.queued).toHaveLength(1);
    const note = delivery.queued[0]!.notification;
    expect(note.variables).toMatchObject({ url, state: 'down' });
    expect(note.text).toContain(url);

    healthy = true;
    await urls.check(trackerId);
    engine.tick();
    expect(occurrences()[0]!.closed_at).not.toBeNull();
    expect(delivery.queued).toHaveLength(1);
    expect((await alertsOfTracker())[0]).toMatchObject({ last_state: 1, fired_count: 2 });
  });

  it('refuses a kind and type that do not go together, and an unknown URL tracker', async () => {
    const mismatch = await h.request('POST', '/api/legacy-alerts', {
      token: admin,
      body: { tracker_kind: 'url', tracker_id: 1, alert_type: 'device_down' },
    });
    expect(mismatch).toMatchObject({
      status: 400,
      body: { errors: { alert_type: ['A URL tracker holds the url_down alert.'] } },
    });
    const latencyMismatch = await h.request('POST', '/api/legacy-alerts', {
      token: admin,
      body: { tracker_kind: 'latency', tracker_id: 1, alert_type: 'url_down' },
    });
    expect(latencyMismatch.body.errors.alert_type).toEqual([
      'A latency tracker holds the device_down alert.',
    ]);
    const unknown = await h.request('POST', '/api/legacy-alerts', {
      token: admin,
      body: { tracker_kind: 'url', tracker_id: 999_999, alert_type: 'url_down' },
    });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Tracker not found' } });
    const count = h.appliance.db.prepare('SELECT count(*) FROM legacy_alerts').pluck().get();
    expect(count).toBe(1);
  });
});
