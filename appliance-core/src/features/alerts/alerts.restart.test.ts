/**
 * The engine across restarts: syslog committed while the alerts engine is stopped (a restart
 * through the engine registry, as the settings' service controls and a licence activation do) is
 * evaluated when it starts again, and the high-water marks survive a process restart on the
 * same data directory (saved in the settings table), so nothing committed before the stop is
 * lost and nothing evaluated before it is counted twice.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import type { AlertsEngine } from './alerts.engine.js';
import { recordingDelivery } from './testing/recording-delivery.js';

const HAVE_LOGGER = havePeer('logger', 'bsdutils');

describe.runIf(HAVE_LOGGER)('alert engine restart', () => {
  let h: Harness | null = null;
  let dataDir = '';
  afterAll(async () => {
    await h?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function boot(env: Record<string, string> = {}) {
    const harness = await startAppliance({ APPLIANCE_SYSLOG_PORT: 'auto', ...env });
    const engine = harness.appliance.engines.find((e) => e.name === 'alerts') as AlertsEngine;
    const delivery = recordingDelivery();
    engine.service.connectDelivery(delivery.seam);
    return { harness, engine, delivery };
  }
  async function send(harness: Harness, text: string) {
    const db = harness.appliance.db;
    const port = harness.appliance.ctx.collectorPorts.report().syslog!.udp!;
    const count = () => db.prepare('SELECT count(*) FROM syslog_log').pluck().get() as number;
    const before = count();
    execFileSync('logger', ['-n', '127.0.0.1', '-P', String(port), '-d', '-t', 'app', text], {
      timeout: 5000,
    });
    for (let i = 0; i < 100 && count() === before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(count()).toBe(before + 1);
  }
  const occurrences = (harness: Harness, alertId: number) =>
    harness.appliance.db
      .prepare("SELECT count(*) FROM alert_occurrences WHERE source = 'modern' AND alert_id = ?")
      .pluck()
      .get(alertId) as number;

  it('evaluates what was committed while it was stopped, in process and across a process restart', async () => {
    // The data directory outlives the first appliance (the harness removes only its own).
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'alerts-restart-'));
    const first = await boot({ APPLIANCE_DATA_DIR: dataDir });
    h = first.harness;
    const admin = await h.login();
    h.clock.advance(Date.now() - h.clock.now());
    const outlet = await h.request('POST', '/api/outlets', {
      token: admin,
      body: { name: 'ops', type: 'webhook', config: { url: 'https://hooks.example.test/ops' } },
    });
    await h.request('POST', '/api/alert-routing-rules', {
      token: admin,
      body: { label: 'all', outlet_ids: [outlet.body.id] },
    });
    const created = await h.request('POST', '/api/alerts', {
      token: admin,
      body: {
        label: 'probe',
        class: 'syslog_log',
        severity: 2,
        parameters: { contains: ['restart-probe'], occurrences_min: 1, lookback_minutes: 60 },
      },
    });
    expect(created.status).toBe(201);
    const alertId = created.body.id as number;

    // In process: stopped through the registry, a matching line arrives, then it starts again.
    await h.appliance.registry.stop('alerts');
    await send(h, 'restart-probe while stopped');
    first.engine.tick(); // a stopped engine evaluates nothing
    expect(occurrences(h, alertId)).toBe(0);
    await h.appliance.registry.start('alerts');
    first.engine.tick();
    expect(occurrences(h, alertId)).toBe(1);
    expect(first.delivery.queued).toHaveLength(1);

    // Across a process restart: stopped again (it saves its marks), a line is committed, the
    // appliance closes; the next boot on the same data directory evaluates that line.
    await h.appliance.registry.stop('alerts');
    await send(h, 'restart-probe committed before the process restart');
    await h.close();
    h = null;
    const second = await boot({ APPLIANCE_DATA_DIR: dataDir });
    h = second.harness;
    second.engine.tick();
    // The row committed before the engine started is evaluated: it counts (the occurrence left
    // open by the first run stays open, so it is not notified a second time).
    const state = h.appliance.db
      .prepare(
        "SELECT match_count, closed_at FROM alert_occurrences WHERE source = 'modern' AND alert_id = ? ORDER BY id",
      )
      .all(alertId) as { match_count: number; closed_at: number | null }[];
    expect(state).toHaveLength(1);
    expect(second.engine.counters.matches).toBe(1);
    expect(second.delivery.queued).toHaveLength(0);
  });
});
