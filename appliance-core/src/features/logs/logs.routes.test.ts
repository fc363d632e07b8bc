/**
 * HTTP-level tests of the log endpoints (spec part 3 "Shared log-feed rules", Syslog, Windows
 * events, IDS events, Syslog access config) and the designed GET /api/intake/counters: every gate,
 * status and message, windows, filters with OR arrays and severity names, saved filters as
 * exclusions, tag scope (0 out-of-scope rows from every list, summary and eve/get), injection
 * strings verbatim, a pathological search within 1 s, and the device hooks. Rows are inserted
 * directly (the intake has its own tests: syslog.engine.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
} from '../../../../test/harness/appliance.js';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { EventLogIntake } from './eventlog-intake.service.js';
import { registerLogWrites } from './logs.writes.js';

const NO_PERMISSION = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const DENIED = 'Filter not found or access denied.';
const INJECTION = `'; DROP TABLE x;--`;
const XSS = '<img src=x onerror=alert(1)>';

let h: Harness;
let admin: string;
let restricted: string;
let noLogs: string;
let inScope: number;
let outOfScope: number;
let now: number;

const call = (method: string, path: string, token: string, options: RequestOptions = {}) =>
  h.request(method, path, { token, ...options });
const q = (params: Record<string, unknown>) =>
  '?' +
  new URLSearchParams(
    Object.entries(params).map(([k, v]): [string, string] => [
      k,
      typeof v === 'string' ? v : JSON.stringify(v),
    ]),
  ).toString();

function syslogRow(row: {
  device: number | null;
  at: number;
  severity: number;
  message: string;
  source?: string;
  facility?: number;
}) {
  h.appliance.db
    .prepare(
      `INSERT INTO syslog_log_latest (device_id, timestamp, facility, severity, source, message, host, sender, reported_at, malformed) VALUES (?, ?, ?, ?, ?, ?, NULL, '127.0.9.9', NULL, 0)`,
    )
    .run(row.device, row.at, row.facility ?? 1, row.severity, row.source ?? 'app', row.message);
  const minute = row.at - (row.at % 60_000);
  h.appliance.db
    .prepare(
      `INSERT INTO syslog_minute_rollup (minute, device_id, severity, count) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1`,
    )
    .run(minute, row.device ?? 0, row.severity);
}

function eveRow(
  src: string,
  dst: string,
  severity: number,
  at: number,
  srcId = 0,
  dstId = 0,
): number {
  const db = h.appliance.db;
  const id = Number(
    db
      .prepare(
        `INSERT INTO eve_log_latest (timestamp, signature_id, signature, severity, proto, src_ip, src_port, dst_ip, dst_port, src_id, dst_id, raw) VALUES (?, 2000001, ?, ?, 'TCP', ?, 1234, ?, 80, ?, ?, '{}')`,
      )
      .run(at, `sig ${XSS}`, severity, src, dst, srcId || null, dstId || null).lastInsertRowid,
  );
  db.prepare(
    `INSERT INTO eve_minute_rollup (minute, src_id, dst_id, severity, count) VALUES (?, ?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1`,
  ).run(at - (at % 60_000), srcId, dstId, severity);
  return id;
}

beforeAll(async () => {
  h = await startAppliance();
  admin = await h.login();
  const device = async (ip: string, tag: string) =>
    (
      await call('POST', '/api/device/set', admin, {
        body: { ip_address: ip, label: `dev-${tag}`, profile: 'dash_generic', tags: [tag] },
      })
    ).body.device.id as number;
  inScope = await device('127.0.5.1', 'logs-a');
  outOfScope = await device('127.0.5.2', 'logs-b');
  restricted = (await h.userWith(['logs', 'write_devices'], { tags: ['logs-a'] })).token;
  noLogs = (await h.userWith(['devices'])).token;
  now = h.clock.now();
  const minuteAgo = now - 60_000;
  syslogRow({ device: inScope, at: minuteAgo, severity: 3, message: `in scope ${INJECTION}` });
  syslogRow({ device: inScope, at: minuteAgo + 1, severity: 6, message: XSS, source: 'web' });
  syslogRow({ device: outOfScope, at: minuteAgo + 2, severity: 2, message: 'secret out of scope' });
  syslogRow({ device: null, at: minuteAgo + 3, severity: 4, message: 'unknown sender' });
  syslogRow({ device: inScope, at: now - 3 * 3_600_000, severity: 0, message: 'three hours ago' });
}, 60_000);
afterAll(() => h.close());

describe('gates', () => {
  it('answers 401 legacy without the logs permission on every list, summary and filter route', async () => {
    for (const path of [
      '/api/syslog/list',
      '/api/syslog/sevSum',
      '/api/syslog/filters',
      '/api/eventlog/list',
      '/api/eventlog/sevSum',
      '/api/eve/list',
      '/api/eve/sevSum',
      '/api/eve/get/1',
      '/api/eve/filters',
    ]) {
      const res = await call('GET', path, noLogs);
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 401,
        body: NO_PERMISSION,
      });
    }
  });

  it('needs write_devices for queries, trackers and syslog config, and system for the counters', async () => {
    const logsOnly = (await h.userWith(['logs'])).token;
    for (const [method, path] of [
      ['GET', '/api/eventlog/queries'],
      ['GET', `/api/eventlog/trackers?device_id=${inScope}`],
      ['POST', '/api/eventlog/trackers'],
      ['DELETE', '/api/eventlog/trackers/1'],
      ['GET', `/api/syslog/config/${inScope}`],
      ['POST', `/api/syslog/config/${inScope}`],
      ['GET', '/api/intake/counters'],
    ] as const) {
      const res = await call(method, path, logsOnly, method === 'POST' ? { body: {} } : {});
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
    }
  });
});

describe('syslog list', () => {
  it('lists the last 24 hours newest first with the window echoed and the page shape', async () => {
    const res = await call('GET', '/api/syslog/list', admin);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'current_page',
        'data',
        'endTime',
        'partial',
        'per_page',
        'startTime',
        'total',
        'total_capped',
      ].sort(),
    );
    expect(res.body).toMatchObject({ current_page: 1, per_page: 1000, total: 5, partial: false });
    expect(res.body.data.map((r: any) => r.message)).toEqual([
      'unknown sender',
      'secret out of scope',
      XSS,
      `in scope ${INJECTION}`,
      'three hours ago',
    ]);
    expect(Date.parse(res.body.endTime) - Date.parse(res.body.startTime)).toBe(24 * 3_600_000);
    expect(res.body.data[0]).toMatchObject({ device_id: null, severity: 4, facility: 1 });
  });

  it('returns injection and markup strings verbatim', async () => {
    const res = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { message: 'DROP TABLE' } }),
      admin,
    );
    expect(res.body.data.map((r: any) => r.message)).toEqual([`in scope ${INJECTION}`]);
    const xss = await call('GET', '/api/syslog/list' + q({ filters: { source: 'web' } }), admin);
    expect(xss.body.data[0].message).toBe(XSS);
  });

  it('windows by hours and by startTime/endTime; 400 {status: false, message} for a bad time', async () => {
    const hour = await call('GET', '/api/syslog/list?hours=1', admin);
    expect(hour.body.total).toBe(4);
    const start = new Date(now - 4 * 3_600_000).toISOString();
    const end = new Date(now - 2 * 3_600_000).toISOString();
    const ranged = await call(
      'GET',
      '/api/syslog/list' + q({ startTime: start, endTime: end }),
      admin,
    );
    expect(ranged.body.data.map((r: any) => r.message)).toEqual(['three hours ago']);
    expect(ranged.body.startTime).toBe(start);
    expect(ranged.body.endTime).toBe(end);
    const bad = await call('GET', '/api/syslog/list?startTime=yesterday', admin);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      status: false,
      message: expect.stringMatching(/^Invalid startTime/),
    });
    const reversed = await call(
      'GET',
      '/api/syslog/list' + q({ startTime: end, endTime: start }),
      admin,
    );
    expect(reversed.body).toEqual({ status: false, message: 'startTime must precede endTime' });
    expect((await call('GET', '/api/syslog/list?limit=5001', admin)).status).toBe(400);
  });

  it('filters with OR arrays and severity names; 400 on an unknown key or bad JSON', async () => {
    const names = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { severity: ['error', 'informational'] } }),
      admin,
    );
    expect(names.body.data.map((r: any) => r.severity)).toEqual([6, 3]);
    const numbers = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { severity: [3, 6] } }),
      admin,
    );
    expect(numbers.body.total).toBe(2);
    const bad = await call('GET', '/api/syslog/list' + q({ filters: { nope: 1 } }), admin);
    expect(bad).toMatchObject({
      status: 400,
      body: { status: false, message: 'Invalid filter key: nope' },
    });
    const notJson = await call('GET', '/api/syslog/list?filters=%7Bnot', admin);
    expect(notJson.status).toBe(400);
    const wildcard = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { message: '%' } }),
      admin,
    );
    expect(wildcard.body.total).toBe(0);
  });

  it('pages with limit and page', async () => {
    const second = await call('GET', '/api/syslog/list?limit=2&page=2', admin);
    expect(second.body).toMatchObject({ current_page: 2, per_page: 2, total: 5 });
    expect(second.body.data.map((r: any) => r.message)).toEqual([XSS, `in scope ${INJECTION}`]);
  });

  it('answers a pathological search input within 1 s (a substring, never a regex)', async () => {
    const started = Date.now();
    const res = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { message: '(a+)+$' + 'a'.repeat(500) } }),
      admin,
    );
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('tag scope', () => {
  it('gives a restricted user 0 out-of-scope rows from every list and summary', async () => {
    const list = await call('GET', '/api/syslog/list', restricted);
    expect(list.body.data.map((r: any) => r.device_id)).toEqual([inScope, inScope, inScope]);
    const sum = await call('GET', '/api/syslog/sevSum', restricted);
    expect(sum.body.severityCounts).toEqual({ 0: 1, 1: 0, 2: 0, 3: 1, 4: 0, 5: 0, 6: 1, 7: 0 });
    const filtered = await call(
      'GET',
      '/api/syslog/list' + q({ filters: { device_id: outOfScope } }),
      restricted,
    );
    expect(filtered.body.total).toBe(0);
  });

  it('scopes IDS events by either endpoint, in list, summary and eve/get (400 for invisible)', async () => {
    const visible = eveRow('127.0.5.1', '10.9.9.9', 1, now - 30_000, inScope, 0);
    const viaDst = eveRow('10.9.9.8', '127.0.5.1', 2, now - 29_000, 0, inScope);
    const hidden = eveRow('127.0.5.2', '10.9.9.9', 3, now - 28_000, outOfScope, 0);
    const list = await call('GET', '/api/eve/list', restricted);
    expect(list.body.data.map((r: any) => r.id).sort()).toEqual([visible, viaDst].sort());
    expect((await call('GET', '/api/eve/list', admin)).body.total).toBe(3);
    const sum = await call('GET', '/api/eve/sevSum', restricted);
    expect(sum.body.severityCounts).toEqual({ 1: 1, 2: 1, 3: 0 });
    const ok = await call('GET', `/api/eve/get/${visible}`, restricted);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: visible, signature: `sig ${XSS}`, src_ip: '127.0.5.1' });
    for (const id of [hidden, 999_999, 'abc']) {
      const res = await call('GET', `/api/eve/get/${id}`, restricted);
      expect(res).toMatchObject({
        status: 400,
        body: { status: false, message: 'Event ID does not exist.' },
      });
    }
    const byDevice = await call(
      'GET',
      '/api/eve/list' + q({ filters: { device_id: inScope } }),
      admin,
    );
    expect(byDevice.body.total).toBe(2);
    const byPort = await call(
      'GET',
      '/api/eve/list' + q({ filters: { port: 1234, severity: 'high' } }),
      admin,
    );
    expect(byPort.body.data.map((r: any) => r.id)).toEqual([visible]);
  });
});

describe('sevSum', () => {
  it('zero-fills every syslog level and counts whole minutes and edges', async () => {
    const res = await call('GET', '/api/syslog/sevSum', admin);
    expect(res.status).toBe(200);
    expect(res.body.severityCounts).toEqual({ 0: 1, 1: 0, 2: 1, 3: 1, 4: 1, 5: 0, 6: 1, 7: 0 });
    expect(res.body).toHaveProperty('startTime');
    const eventlog = await call('GET', '/api/eventlog/sevSum', admin);
    expect(eventlog.body.severityCounts).toEqual({
      0: 0,
      1: 0,
      2: 0,
      3: 0,
      4: 0,
      5: 0,
      6: 0,
      7: 0,
    });
  });
});

describe('saved filters', () => {
  it('validates with the spec messages', async () => {
    const post = (body: unknown) => call('POST', '/api/syslog/filters', admin, { body });
    expect(await post({ filter: '{"severity":1}' })).toMatchObject({
      status: 422,
      body: { label: ['The label field is required.'] },
    });
    expect((await post({ label: 'x'.repeat(256), filter: '{"severity":1}' })).body).toHaveProperty(
      'label',
    );
    expect((await post({ label: 'a' })).body).toEqual({ error: 'Filter cannot be empty.' });
    expect((await post({ label: 'a', filter: '{}' })).body).toEqual({
      error: 'Filter cannot be empty.',
    });
    expect((await post({ label: 'a', filter: '{"bogus":1}' })).body).toEqual({
      error: 'Filter contains invalid criteria: bogus',
    });
    expect((await post({ label: 'a', filter: '{"timestamp":"2026-01-01"}' })).body).toEqual({
      error: 'Filter contains invalid criteria: timestamp',
    });
    const blank = await post({ label: 'a', filter: '{"severity":""}' });
    expect(blank.status).toBe(422);
    expect(blank.body.error).toEqual(expect.any(String));
  });

  it('creates (201), updates own (200), refuses foreign ids (403), toggles (201) and deletes', async () => {
    const created = await call('POST', '/api/syslog/filters', admin, {
      body: { label: 'hide errors', filter: JSON.stringify({ severity: 'error' }) },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      message: expect.any(String),
      filter: { label: 'hide errors', filter: { severity: 'error' }, enabled: true },
    });
    const id = created.body.filter.id;
    // An enabled exclusion hides matching rows from the owner's list and summary (from rows).
    const list = await call('GET', '/api/syslog/list', admin);
    expect(list.body.data.map((r: any) => r.severity)).not.toContain(3);
    const sum = await call('GET', '/api/syslog/sevSum', admin);
    expect(sum.body.severityCounts['3']).toBe(0);
    expect(sum.body.severityCounts['6']).toBe(1);
    // Another user's view is untouched.
    expect((await call('GET', '/api/syslog/sevSum', restricted)).body.severityCounts['3']).toBe(1);

    const updated = await call('POST', '/api/syslog/filters', admin, {
      body: { id, label: 'renamed', filter: '{"severity":[3,4]}' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.filter).toMatchObject({ id, label: 'renamed' });
    const foreign = await call('POST', '/api/syslog/filters', restricted, {
      body: { id, label: 'steal', filter: '{"severity":1}' },
    });
    expect(foreign).toMatchObject({ status: 403, body: { message: DENIED } });

    const toggled = await call('POST', `/api/syslog/filters/toggle/${id}`, admin);
    expect(toggled.status).toBe(201);
    expect(toggled.body.filters).toEqual([expect.objectContaining({ id, enabled: false })]);
    expect((await call('GET', '/api/syslog/list', admin)).body.total).toBe(5);
    expect(await call('POST', `/api/syslog/filters/toggle/${id}`, restricted)).toMatchObject({
      status: 404,
      body: { error: DENIED },
    });
    // Filters are per feed: the syslog filter is not an eve filter.
    expect((await call('POST', `/api/eve/filters/toggle/${id}`, admin)).status).toBe(404);
    expect((await call('GET', '/api/syslog/filters', admin)).body.filters).toHaveLength(1);
    expect(await call('DELETE', `/api/syslog/filters/${id}`, restricted)).toMatchObject({
      status: 404,
      body: { message: DENIED },
    });
    expect(await call('DELETE', `/api/syslog/filters/${id}`, admin)).toMatchObject({ status: 200 });
    expect((await call('DELETE', `/api/syslog/filters/${id}`, admin)).status).toBe(404);
  });
});

describe('syslog access config', () => {
  it('creates the enabled default, saves, stores -1 when disabled, 422 and 404', async () => {
    const got = await call('GET', `/api/syslog/config/${inScope}`, admin);
    expect(got.body).toEqual({
      status: true,
      config: { enabled: true, min_severity: 7, device_id: inScope },
    });
    const saved = await call('POST', `/api/syslog/config/${inScope}`, admin, {
      body: { enabled: false, min_severity: 4 },
    });
    expect(saved.body).toMatchObject({
      status: true,
      config: { enabled: false, min_severity: -1, device_id: inScope },
    });
    const device = await call('GET', `/api/device/${inScope}`, admin);
    expect(device.body.syslogconfig ?? device.body.device?.syslogconfig).toEqual({ severity: -1 });
    const invalid = await call('POST', `/api/syslog/config/${inScope}`, admin, {
      body: { min_severity: 9 },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ status: false, message: expect.any(String) });
    expect(Object.keys(invalid.body.errors).sort()).toEqual(['enabled', 'min_severity']);
    for (const id of [outOfScope, 999_999, 'x']) {
      expect(await call('GET', `/api/syslog/config/${id}`, restricted)).toMatchObject({
        status: 404,
        body: { error: 'Device not found' },
      });
    }
  });
});

describe('event-log queries and trackers', () => {
  it('lists the seeded queries as a bare array', async () => {
    const res = await call('GET', '/api/eventlog/queries', admin);
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(res.body[0]).sort()).toEqual(['id', 'label']);
  });

  it('creates (201), returns the existing pair (200), lists, 422, 404 and 403 on delete', async () => {
    expect(await call('GET', '/api/eventlog/trackers', admin)).toMatchObject({
      status: 422,
      body: { error: 'device_id required' },
    });
    expect(
      await call('GET', `/api/eventlog/trackers?device_id=${outOfScope}`, restricted),
    ).toMatchObject({
      status: 404,
      body: { error: 'Device not found' },
    });
    const body = { device_id: outOfScope, query_id: 1 };
    const created = await call('POST', '/api/eventlog/trackers', admin, { body });
    expect(created).toMatchObject({ status: 201, body: { device_id: outOfScope, query_id: 1 } });
    const again = await call('POST', '/api/eventlog/trackers', admin, { body });
    expect(again).toMatchObject({ status: 200, body: { id: created.body.id } });
    const invalid = await call('POST', '/api/eventlog/trackers', admin, {
      body: { query_id: 999 },
    });
    expect(invalid.status).toBe(422);
    expect(Object.keys(invalid.body.errors).sort()).toEqual(['device_id', 'query_id']);
    expect((await call('POST', '/api/eventlog/trackers', restricted, { body })).status).toBe(404);
    const list = await call('GET', `/api/eventlog/trackers?device_id=${outOfScope}`, admin);
    expect(list.body).toEqual([expect.objectContaining({ id: created.body.id, query_id: 1 })]);
    expect(
      await call('DELETE', `/api/eventlog/trackers/${created.body.id}`, restricted),
    ).toMatchObject({
      status: 403,
      body: { error: 'Forbidden' },
    });
    expect(await call('DELETE', `/api/eventlog/trackers/${created.body.id}`, admin)).toMatchObject({
      status: 200,
      body: { status: true },
    });
    expect(await call('DELETE', `/api/eventlog/trackers/${created.body.id}`, admin)).toMatchObject({
      status: 404,
      body: { error: 'Tracker not found' },
    });
  });
});

describe('Windows events ingestion (in process)', () => {
  it('plans one day of backfill at first poll, stores once, and lists with message as a substring of data', async () => {
    // The agents feature calls the intake in process; here a second writer on the same file.
    const writer = new StorageWriter(h.appliance.db);
    registerLogWrites(writer);
    writer.start();
    const logs = { eventLogIntake: new EventLogIntake(h.appliance.db, writer.producer('windows')) };
    const tracker = await call('POST', '/api/eventlog/trackers', admin, {
      body: { device_id: inScope, query_id: 4 },
    });
    const t = h.clock.now();
    const plan = logs.eventLogIntake.plan(tracker.body.id, t)!;
    expect(plan).toMatchObject({
      backfill: true,
      channel: 'Security',
      event_ids: [4625],
      since: t - 86_400_000,
    });
    const events = [
      {
        record_id: 10,
        time_created: t - 90_000_000,
        event_id: 4625,
        source: 'Sec',
        level: 0,
        message: 'too old',
      },
      {
        record_id: 11,
        time_created: t - 60_000,
        event_id: 4625,
        source: 'Sec',
        level: 'warning',
        message: `failed ${XSS}`,
      },
      {
        record_id: 12,
        time_created: new Date(t - 30_000).toISOString(),
        event_id: 4625,
        source: 'Sec',
        level: 2,
        message: 'second',
      },
      {
        record_id: 13,
        time_created: 'garbage',
        event_id: 1,
        source: 'x',
        level: 2,
        message: 'bad',
      },
    ];
    const first = await logs.eventLogIntake.ingest(tracker.body.id, events, t);
    expect(first).toMatchObject({ tracker: 'ok', stored: 2, duplicates: 1, invalid: 1 });
    const second = await logs.eventLogIntake.ingest(tracker.body.id, events.slice(1, 3), t + 1000);
    expect(second).toMatchObject({ stored: 0, duplicates: 2 });
    expect(logs.eventLogIntake.plan(tracker.body.id, t + 2000)).toMatchObject({
      backfill: false,
      after_record_id: 12,
    });
    const list = await call(
      'GET',
      '/api/eventlog/list' + q({ filters: { message: 'FAILED' } }),
      restricted,
    );
    expect(list.body.data).toEqual([
      expect.objectContaining({
        event_id: 4625,
        severity: 3,
        data: `failed ${XSS}`,
        log: 'Security',
      }),
    ]);
    const sum = await call('GET', '/api/eventlog/sevSum', admin);
    expect(sum.body.severityCounts).toMatchObject({ 2: 1, 3: 1, 6: 0, 7: 0 });
    expect(logs.eventLogIntake.counters).toMatchObject({
      received: 6,
      stored: 2,
      duplicates: 3,
      invalid: 1,
    });
    await writer.close();
    const counters = await call('GET', '/api/intake/counters', admin);
    expect(counters.status).toBe(200);
    expect(counters.body.windows).toMatchObject({ received: 0, stored: 0, dropped: 0 });
    expect(counters.body).toHaveProperty('ids', null);
  });
});

describe('device hooks', () => {
  it('reports log rows in the device stats and keeps rows when the device is deleted', async () => {
    const stats = await call('GET', `/api/device/${inScope}/stats`, admin);
    expect(JSON.stringify(stats.body)).toContain('syslog_log');
    const doomed = (
      await call('POST', '/api/device/set', admin, {
        body: { ip_address: '127.0.5.9', label: 'doomed', profile: 'dash_generic' },
      })
    ).body.device.id as number;
    syslogRow({ device: doomed, at: h.clock.now() - 1000, severity: 1, message: 'doomed row' });
    await call('GET', `/api/syslog/config/${doomed}`, admin);
    await call('POST', '/api/eventlog/trackers', admin, {
      body: { device_id: doomed, query_id: 1 },
    });
    const del = await call('DELETE', `/api/device/${doomed}`, admin);
    expect(del.status).toBe(200);
    const db = h.appliance.db;
    expect(
      db.prepare('SELECT count(*) FROM syslog_config WHERE device_id = ?').pluck().get(doomed),
    ).toBe(0);
    expect(
      db.prepare('SELECT count(*) FROM eventlog_trackers WHERE device_id = ?').pluck().get(doomed),
    ).toBe(0);
    expect(
      db.prepare('SELECT count(*) FROM syslog_log WHERE device_id = ?').pluck().get(doomed),
    ).toBe(1);
  });
});
