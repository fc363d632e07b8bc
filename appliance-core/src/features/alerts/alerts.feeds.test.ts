/**
 * The evaluation engine on the two other feeds, through their real intake paths: IDS events
 * followed from an eve.json file by the appliance's own IDS intake (APPLIANCE_EVE_FILE, lines as
 * Suricata 7 writes them), and Windows events handed to the logs' ingestion interface
 * (`EventLogIntake#ingest`, what the agents feature calls) for a device's event-log tracker. Each
 * class's own filters (signature ids and protocol; channel, provider and event ids) apply before
 * counting, and a matching event opens one occurrence routed once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { EventLogIntake, registerLogWrites } from '../logs/index.js';
import type { AlertsEngine } from './alerts.engine.js';
import { recordingDelivery } from './testing/recording-delivery.js';

let h: Harness;
let admin: string;
let engine: AlertsEngine;
let eveDir: string;
let eveFile: string;
let writer: StorageWriter;
let intake: EventLogIntake;
let deviceId: number;
let tag = 0;
const delivery = recordingDelivery();

/** An alert line in the shape Suricata 7 writes (see features/logs/testing/eve-lines.ts). */
function alertLine(top: Record<string, unknown>, alert: Record<string, unknown> = {}): string {
  return JSON.stringify({
    timestamp: '2026-11-26T10:00:00.006000+0000',
    flow_id: 1,
    event_type: 'alert',
    src_ip: '127.0.0.1',
    src_port: 40000,
    dest_ip: '127.0.0.2',
    dest_port: 8080,
    proto: 'TCP',
    alert: {
      action: 'allowed',
      gid: 1,
      signature_id: 1000001,
      rev: 1,
      signature: 'test EVIL-ONE',
      category: 'Misc activity',
      severity: 1,
      ...alert,
    },
    ...top,
  });
}

const count = (table: string) =>
  h.appliance.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
const occurrences = (alertId: number) =>
  h.appliance.db
    .prepare("SELECT * FROM alert_occurrences WHERE source = 'modern' AND alert_id = ? ORDER BY id")
    .all(alertId) as Record<string, any>[];
async function waitFor(check: () => boolean, what: string) {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check(), what).toBe(true);
}
async function createAlert(cls: string, parameters: Record<string, unknown>) {
  const res = await h.request('POST', '/api/alerts', {
    token: admin,
    body: { label: `feed alert ${++tag}`, class: cls, severity: 2, parameters },
  });
  expect(res.status).toBe(201);
  return res.body as { id: number; label: string };
}

beforeAll(async () => {
  eveDir = fs.mkdtempSync(path.join(os.tmpdir(), 'alerts-eve-'));
  eveFile = path.join(eveDir, 'eve.json');
  fs.writeFileSync(eveFile, '');
  h = await startAppliance({ APPLIANCE_EVE_FILE: eveFile });
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
  deviceId = (
    await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: '127.0.6.1', label: 'win-host', profile: 'dash_generic' },
    })
  ).body.device.id;
  // The agents feature calls the intake in process; here a second writer on the same file.
  writer = new StorageWriter(h.appliance.db);
  registerLogWrites(writer);
  writer.start();
  intake = new EventLogIntake(h.appliance.db, writer.producer('windows'));
}, 60_000);
afterAll(async () => {
  await writer?.close();
  await h?.close();
  fs.rmSync(eveDir, { recursive: true, force: true });
});
beforeEach(() => {
  delivery.queued.length = 0;
  h.clock.advance(Date.now() - h.clock.now());
});

describe('IDS events (eve_log) through the eve.json intake', () => {
  it('opens on a matching signature id and text, ignores other signatures and protocols, notifies once', async () => {
    const alert = await createAlert('eve_log', {
      signature_ids: [1000001],
      proto: 'TCP',
      contains: ['EVIL'],
    });
    engine.tick();
    const now = new Date().toISOString().replace('Z', '+0000');
    const append = async (lines: string[]) => {
      const before = count('eve_log');
      fs.appendFileSync(eveFile, lines.map((l) => `${l}\n`).join(''));
      await waitFor(() => count('eve_log') === before + lines.length, 'eve lines stored');
      engine.tick();
    };
    // Another signature and another protocol: stored, not counted.
    await append([
      alertLine({ timestamp: now, flow_id: 11 }, { signature_id: 1000002 }),
      alertLine({ timestamp: now, flow_id: 12, proto: 'UDP' }),
    ]);
    expect(occurrences(alert.id)).toHaveLength(0);
    // The matching one opens the occurrence; a second match adds to it and notifies nothing more.
    await append([alertLine({ timestamp: now, flow_id: 13 })]);
    await append([alertLine({ timestamp: now, flow_id: 14 })]);
    const opened = occurrences(alert.id);
    expect(opened).toHaveLength(1);
    expect(opened[0]!.message).toContain('EVIL-ONE');
    expect(delivery.queued.filter((q) => q.notification.alertLabel === alert.label)).toHaveLength(
      1,
    );
  });
});

describe('Windows events (event_log) through the ingestion interface', () => {
  it('applies channel, provider and event ids before counting; occurrences_min 2 opens on the second event', async () => {
    const tracker = await h.request('POST', '/api/eventlog/trackers', {
      token: admin,
      body: { device_id: deviceId, query_id: 4 },
    });
    expect(tracker.status).toBe(201);
    const alert = await createAlert('event_log', {
      log: 'security',
      event_ids: [4625],
      contains: ['failed'],
      occurrences_min: 2,
    });
    engine.tick();
    const t = h.clock.now();
    const event = (recordId: number, eventId: number, message: string) => ({
      record_id: recordId,
      time_created: t - 1000,
      event_id: eventId,
      source: 'Microsoft-Windows-Security-Auditing',
      level: 0,
      message,
    });
    const ingest = async (events: ReturnType<typeof event>[]) => {
      const before = count('eventlog_log');
      const result = await intake.ingest(tracker.body.id, events, h.clock.now());
      expect(result).toMatchObject({ stored: events.length });
      await waitFor(() => count('eventlog_log') === before + events.length, 'events stored');
      engine.tick();
    };
    // Wrong event id, and the right id without the text: not counted.
    await ingest([event(1, 4624, 'An account failed to log on'), event(2, 4625, 'logon ok')]);
    await ingest([event(3, 4625, 'An account FAILED to log on')]);
    expect(occurrences(alert.id)).toHaveLength(0);
    await ingest([event(4, 4625, 'An account failed to log on')]);
    const opened = occurrences(alert.id);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ device_id: deviceId, device_label: 'win-host' });
    expect(delivery.queued.filter((q) => q.notification.alertLabel === alert.label)).toHaveLength(
      1,
    );
  });
});
