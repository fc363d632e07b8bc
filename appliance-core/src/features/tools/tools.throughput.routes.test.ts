/**
 * HTTP-level tests of the speed test, the iperf3 client and server, and the throughput history
 * (spec part 2 > Network tools; Other records > Throughput history row; States: Throughput
 * server). The speed test runs against a local HTTP server (APPLIANCE_SPEEDTEST_URL): the public
 * default is never called. iperf3 runs against its own server on a free loopback port.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import {
  isProcessRunning,
  onToolSpawn,
  type LiveToolProcess,
} from '../../platform/process/spawn.js';
import { HISTORY_NOT_FOUND, INVALID_HOST } from './tools.routes.js';
import { RETENTION_JOB_ID, type ToolsEngine } from './index.js';

const HAVE_IPERF = havePeer('iperf3', 'iperf3');
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const DAY = 86_400_000;

// --- a local speed-test server --------------------------------------------------------------------

type SpeedMode = 'ok' | 'unavailable' | 'short' | 'chatty';
let speedMode: SpeedMode = 'ok';
const speedRequests: string[] = [];
/** Requests the speed server is still answering (a transfer under way). */
let speedOpen = 0;
const ZEROES = Buffer.alloc(256 * 1024);
const speedServer = http.createServer((request, response) => {
  speedRequests.push(`${request.method} ${request.url}`);
  speedOpen++;
  response.on('close', () => speedOpen--);
  const url = new URL(request.url ?? '/', 'http://x');
  if (speedMode === 'unavailable') {
    response.writeHead(503).end('busy');
    return;
  }
  if (request.method === 'GET' && url.pathname === '/__down') {
    const asked = Number(url.searchParams.get('bytes'));
    if (speedMode === 'chatty') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
      return;
    }
    let left = speedMode === 'short' && asked > 0 ? Math.floor(asked / 2) : asked;
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(left),
    });
    const pump = () => {
      while (left > 0) {
        const chunk = ZEROES.subarray(0, Math.min(left, ZEROES.length));
        left -= chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end();
    };
    pump();
    return;
  }
  if (request.method === 'POST' && url.pathname === '/__up') {
    request.on('data', () => {});
    request.on('end', () => response.writeHead(200).end());
    return;
  }
  response.writeHead(404).end();
});

const listen = (server: net.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );

async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise((r) => server.close(r));
  return port;
}

async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return condition();
}

let h: Harness;
let engine: ToolsEngine;
let token: string;
let outsider: string;
let speedBase: string;
let iperfPort: number;
let spawned: LiveToolProcess[] = [];
let stopSpying: () => void;
const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-tools-'));

beforeAll(async () => {
  speedBase = `http://127.0.0.1:${await listen(speedServer)}`;
  iperfPort = await freePort();
  h = await startAppliance({ APPLIANCE_SPEEDTEST_URL: `${speedBase}/` });
  engine = h.appliance.engines.find((e) => e.name === 'tools') as ToolsEngine;
  engine.service.configure({
    reverseDns: null,
    iperfServerPort: iperfPort,
    iperfServerBind: '127.0.0.1',
    speedtest: {
      durationMs: 400,
      streams: 2,
      downloadChunkBytes: 1_000_000,
      uploadChunkBytes: 1_000_000,
      latencySamples: 3,
      requestTimeoutMs: 5_000,
    },
  });
  token = (await h.userWith(['tools'])).token;
  outsider = (await h.userWith(['devices', 'system'])).token;
  // The appliance's own latency poller (device 1's tracker) runs fping in the background; the
  // tools never do, so only the tools' processes are recorded.
  stopSpying = onToolSpawn((p) => {
    if (p.program !== 'fping') spawned.push(p);
  });
});

afterAll(async () => {
  stopSpying();
  await h.close();
  speedServer.close();
});

afterEach(() => {
  spawned = [];
  speedMode = 'ok';
  engine.service.configure({ searchPath: undefined });
});

/** Sends a request and destroys it once `ready` holds, as a client that gives up would. */
async function abandon(urlPath: string, body: unknown, ready: () => boolean): Promise<void> {
  const request = https.request({
    host: '127.0.0.1',
    port: Number(new URL(h.url).port),
    path: urlPath,
    method: 'POST',
    rejectUnauthorized: false,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  const failed = new Promise<boolean>((resolve) => {
    request.on('error', () => resolve(true));
    request.on('response', () => resolve(false));
  });
  request.end(JSON.stringify(body));
  expect(await waitUntil(ready, 10_000)).toBe(true);
  request.destroy();
  expect(await failed).toBe(true);
}

const SPEED_KEYS = [
  'bytes_received',
  'bytes_sent',
  'download',
  'jitter',
  'ping',
  'server',
  'timestamp',
  'upload',
];
const IPERF_KEYS = [
  'bits_per_second',
  'bytes',
  'direction',
  'duration',
  'host',
  'jitter_ms',
  'lost_packets',
  'lost_percent',
  'port',
  'protocol',
  'retransmits',
  'sent_bits_per_second',
  'sent_bytes',
  'timestamp',
];

const historyCount = () =>
  (h.appliance.db.prepare('SELECT count(*) AS n FROM throughput_history').get() as { n: number }).n;

// --- speed test -----------------------------------------------------------------------------------

describe('POST /api/getSpeedTestInfo', () => {
  it('measures against the configured server and records the result', async () => {
    speedRequests.length = 0;
    const before = historyCount();
    const res = await h.request('POST', '/api/getSpeedTestInfo', { token });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['message']);
    const result = res.body.message;
    expect(Object.keys(result).sort()).toEqual(SPEED_KEYS);
    expect(result.server).toBe(speedBase);
    expect(result.ping).toBeGreaterThan(0);
    expect(result.jitter).toBeGreaterThanOrEqual(0);
    expect(result.download).toBeGreaterThan(0);
    expect(result.upload).toBeGreaterThan(0);
    expect(result.bytes_received).toBeGreaterThan(0);
    expect(result.bytes_sent).toBeGreaterThan(0);
    expect(result.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Latency: 1 warm-up + 3 samples; then downloads and uploads, all to the configured server.
    expect(speedRequests.filter((r) => r === 'GET /__down?bytes=0')).toHaveLength(4);
    expect(speedRequests.some((r) => r === 'GET /__down?bytes=1000000')).toBe(true);
    expect(speedRequests.some((r) => r === 'POST /__up')).toBe(true);
    expect(historyCount()).toBe(before + 1);
    const history = await h.request('GET', '/api/getSpeedTestHistory', { token });
    expect(history.body.data[0]).toEqual({
      id: expect.any(Number),
      timestamp: expect.any(String),
      kind: 'speedtest',
      target: null,
      result,
    });
  });

  it('answers 500 {message} when the server refuses, and records nothing', async () => {
    speedMode = 'unavailable';
    const before = historyCount();
    const res = await h.request('POST', '/api/getSpeedTestInfo', { token });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ message: 'Speed test server answered HTTP 503 (latency)' });
    expect(historyCount()).toBe(before);
  });

  it('answers 500 {message} when the server cannot be reached', async () => {
    const closed = await freePort();
    engine.service.configure({ speedtest: { url: `http://127.0.0.1:${closed}` } });
    try {
      const res = await h.request('POST', '/api/getSpeedTestInfo', { token });
      expect(res.status).toBe(500);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(res.body.message).toMatch(/^Speed test server unreachable \(latency\): ECONNREFUSED/);
    } finally {
      engine.service.configure({ speedtest: { url: speedBase } });
    }
  });

  it.each([
    [
      'short',
      'Speed test server sent 500000 bytes where 1000000 were asked for: not a speed test server',
    ],
    ['chatty', 'Speed test server sent 18 bytes for a 0-byte request: not a speed test server'],
  ] as const)(
    'answers 500 {status: false, message} when the server does not speak the protocol (%s)',
    async (mode, message) => {
      speedMode = mode;
      const before = historyCount();
      const res = await h.request('POST', '/api/getSpeedTestInfo', { token });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ status: false, message });
      expect(historyCount()).toBe(before);
    },
  );

  it('stops measuring when the client goes away, records nothing, and frees the slot', async () => {
    engine.service.configure({ speedtest: { durationMs: 20_000 } });
    try {
      speedRequests.length = 0;
      const before = historyCount();
      await abandon('/api/getSpeedTestInfo', {}, () =>
        speedRequests.some((r) => r === 'GET /__down?bytes=1000000'),
      );
      const abandonedAt = speedRequests.length;
      // The run ends long before its 20 s: its transfers are closed and its slot is free.
      expect(
        await waitUntil(() => speedOpen === 0 && engine.service.runs.count() === 0, 5000),
      ).toBe(true);
      // At most the transfers that were in flight (two streams) were answered; none started after.
      expect(speedRequests.length - abandonedAt).toBeLessThanOrEqual(2);
      expect(historyCount()).toBe(before);
      engine.service.configure({ speedtest: { durationMs: 400 } });
      // Nothing is still measuring: a new test is not refused as busy (409), and only it is recorded.
      const next = await h.request('POST', '/api/getSpeedTestInfo', { token });
      expect(next.status).toBe(201);
      expect(historyCount()).toBe(before + 1);
    } finally {
      engine.service.configure({ speedtest: { durationMs: 400 } });
    }
  });

  it('refuses callers without the tools permission', async () => {
    const res = await h.request('POST', '/api/getSpeedTestInfo', { token: outsider });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
  });
});

// --- history --------------------------------------------------------------------------------------

describe('throughput history', () => {
  it('lists newest first, honours limit, and validates it', async () => {
    const insert = h.appliance.db.prepare(
      "INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, 'iperf_client', '192.0.2.7', ?)",
    );
    const now = h.clock.now();
    const older = Number(
      insert.run(
        now - 5000,
        JSON.stringify({
          host: '192.0.2.7',
          port: 5201,
          protocol: 'tcp',
          direction: 'upload',
          duration: 1,
          bytes: 10,
          bits_per_second: 80,
          sent_bytes: 10,
          sent_bits_per_second: 80,
          retransmits: 0,
          jitter_ms: null,
          lost_packets: null,
          lost_percent: null,
          timestamp: new Date(now - 5000).toISOString(),
        }),
      ).lastInsertRowid,
    );
    const res = await h.request('GET', '/api/getSpeedTestHistory', { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const times = res.body.data.map((row: any) => Date.parse(row.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const row = res.body.data.find((r: any) => r.id === older);
    expect(row).toEqual({
      id: older,
      timestamp: new Date(now - 5000).toISOString(),
      kind: 'iperf_client',
      target: '192.0.2.7',
      result: expect.objectContaining({ host: '192.0.2.7', bits_per_second: 80 }),
    });

    const odd = Number(
      h.appliance.db
        .prepare(
          "INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, 'speedtest', NULL, '{\"legacy\":1}')",
        )
        .run(now - 6000).lastInsertRowid,
    );
    const withOdd = await h.request('GET', '/api/getSpeedTestHistory', { token });
    expect(withOdd.body.data.find((r: any) => r.id === odd)).toEqual({
      id: odd,
      timestamp: new Date(now - 6000).toISOString(),
      kind: 'speedtest',
      target: null,
      result: { legacy: 1 },
    });

    const one = await h.request('GET', '/api/getSpeedTestHistory?limit=1', { token });
    expect(one.body.data).toHaveLength(1);
    for (const [query, message] of [
      ['limit=0', 'The limit field must be at least 1.'],
      ['limit=1001', 'The limit field must not be greater than 1000.'],
      ['limit=x', 'The limit field must be an integer.'],
    ]) {
      const bad = await h.request('GET', `/api/getSpeedTestHistory?${query}`, { token });
      expect(bad.status, query).toBe(422);
      expect(bad.body).toEqual({ message });
    }
  });

  it('DELETE /api/speedtest-history/{id} removes a row; unknown and malformed ids are refused', async () => {
    const id = Number(
      h.appliance.db
        .prepare(
          "INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, 'speedtest', NULL, '{}')",
        )
        .run(h.clock.now()).lastInsertRowid,
    );
    const res = await h.request('DELETE', `/api/speedtest-history/${id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 200 });
    expect(
      h.appliance.db.prepare('SELECT count(*) AS n FROM throughput_history WHERE id = ?').get(id),
    ).toEqual({ n: 0 });
    const again = await h.request('DELETE', `/api/speedtest-history/${id}`, { token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ status: false, message: HISTORY_NOT_FOUND });
    const bad = await h.request('DELETE', '/api/speedtest-history/abc', { token });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ status: false, message: 'The id field must be an integer.' });
    const denied = await h.request('DELETE', `/api/speedtest-history/${id}`, { token: outsider });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(DENIED);
  });

  it('keeps rows twelve weeks: the retention job prunes older ones', async () => {
    const db = h.appliance.db;
    const now = h.clock.now();
    const insert = db.prepare(
      "INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, 'speedtest', NULL, '{}')",
    );
    const old = Number(insert.run(now - 84 * DAY - 60_000).lastInsertRowid);
    const young = Number(insert.run(now - 84 * DAY + 3_600_000).lastInsertRowid);
    db.prepare(
      "INSERT INTO geoip_cache (ip, result, fetched_at) VALUES ('203.0.113.250', '{}', ?)",
    ).run(now - 31 * DAY);
    engine.scheduler.runSoon(RETENTION_JOB_ID);
    const exists = (id: number) =>
      (
        db.prepare('SELECT count(*) AS n FROM throughput_history WHERE id = ?').get(id) as {
          n: number;
        }
      ).n === 1;
    expect(await waitUntil(() => !exists(old), 5000)).toBe(true);
    expect(exists(young)).toBe(true);
    expect(
      db.prepare("SELECT count(*) AS n FROM geoip_cache WHERE ip = '203.0.113.250'").get(),
    ).toEqual({ n: 0 });
  });

  it('serves the history list and the prune from the index', () => {
    const plan = (sql: string) =>
      (h.appliance.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
    const list = plan(
      'SELECT id, created_at, kind, target, result FROM throughput_history ORDER BY created_at DESC, id DESC LIMIT 100',
    );
    expect(list).toMatch(/USING INDEX throughput_history_by_time/);
    expect(list).not.toMatch(/TEMP B-TREE/);
    expect(plan('DELETE FROM throughput_history WHERE created_at < 5')).toMatch(
      /USING (COVERING )?INDEX throughput_history_by_time/,
    );
    expect(plan('SELECT result FROM geoip_cache WHERE ip = 1 AND fetched_at >= 2')).toMatch(
      /USING INDEX sqlite_autoindex_geoip_cache_1/,
    );
    expect(plan('DELETE FROM geoip_cache WHERE fetched_at < 5')).toMatch(
      /USING (COVERING )?INDEX geoip_cache_by_time/,
    );
  });
});

// --- iperf3 ---------------------------------------------------------------------------------------

describe('iperf3 server and client: refusals (iperf3 is never started)', () => {
  it.each([
    [{}, 'The host field is required.'],
    [{ host: 42 }, 'The host field must be a string.'],
    [{ host: 'h'.repeat(256) }, 'The host field must not be greater than 255 characters.'],
    [{ host: '127.0.0.1', port: 0 }, 'The port field must be at least 1.'],
    [{ host: '127.0.0.1', port: 65536 }, 'The port field must not be greater than 65535.'],
    [{ host: '127.0.0.1', port: '5201' }, 'The port field must be an integer.'],
    [{ host: '127.0.0.1', duration: 0 }, 'The duration field must be at least 1.'],
    [{ host: '127.0.0.1', duration: 61 }, 'The duration field must not be greater than 60.'],
    [{ host: '127.0.0.1', protocol: 'sctp' }, 'The selected protocol is invalid.'],
    [{ host: '127.0.0.1', direction: 'both' }, 'The selected direction is invalid.'],
    [{ host: '' }, INVALID_HOST],
    [{ host: '-oX /tmp/appliance-injection-probe' }, INVALID_HOST],
    [{ host: '127.0.0.1;id' }, INVALID_HOST],
    [{ host: '$(id)' }, INVALID_HOST],
    [{ host: '--help' }, INVALID_HOST],
  ])('validates %j with 422 and starts nothing', async (body, message) => {
    const res = await h.request('POST', '/api/iperf/client/run', { token, body });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ status: false, message });
    expect(spawned).toEqual([]);
    expect(fs.existsSync('/tmp/appliance-injection-probe')).toBe(false);
  });

  it('names the missing program (500)', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const run = await h.request('POST', '/api/iperf/client/run', {
      token,
      body: { host: '127.0.0.1' },
    });
    expect(run.status).toBe(500);
    expect(run.body).toEqual({
      status: false,
      message: 'iperf3 is not installed (Debian package iperf3)',
    });
    const start = await h.request('POST', '/api/iperf/server/start', { token });
    expect(start.status).toBe(500);
    expect(start.body).toEqual({
      status: false,
      message: 'iperf3 is not installed (Debian package iperf3)',
    });
    expect(spawned).toEqual([]);
    await h.request('POST', '/api/iperf/server/stop', { token });
  });

  it.each([
    ['POST', '/api/iperf/client/run'],
    ['POST', '/api/iperf/server/start'],
    ['POST', '/api/iperf/server/stop'],
    ['GET', '/api/iperf/server/status'],
    ['GET', '/api/getSpeedTestHistory'],
  ])('%s %s needs the tools permission', async (method, url) => {
    const res = await h.request(method, url, {
      token: outsider,
      ...(method === 'POST' ? { body: { host: '127.0.0.1' } } : {}),
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
    expect(spawned).toEqual([]);
  });
});

describe.runIf(HAVE_IPERF)('iperf3 server and client: runs iperf3', () => {
  it('starts, reports, runs a client against it, and stops (both idempotent)', async () => {
    const initial = await h.request('GET', '/api/iperf/server/status', { token });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      active: false,
      state: 'inactive',
      port: iperfPort,
      connectHost: '127.0.0.1',
    });

    const started = await h.request('POST', '/api/iperf/server/start', { token });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      active: true,
      state: 'active',
      port: iperfPort,
      connectHost: '127.0.0.1',
    });
    const server = spawned.find((p) => p.program === 'iperf3')!;
    expect(server.args).toEqual(['-s', '-p', String(iperfPort), '--forceflush', '-B', '127.0.0.1']);
    const again = await h.request('POST', '/api/iperf/server/start', { token });
    expect(again.body).toEqual(started.body);
    expect(spawned.filter((p) => p.program === 'iperf3')).toHaveLength(1);
    expect((await h.request('GET', '/api/iperf/server/status', { token })).body).toEqual(
      started.body,
    );

    const before = historyCount();
    const run = await h.request('POST', '/api/iperf/client/run', {
      token,
      body: { host: '127.0.0.1', port: iperfPort, duration: 1 },
    });
    expect(run.status).toBe(201);
    expect(Object.keys(run.body)).toEqual(['message']);
    const result = run.body.message;
    expect(Object.keys(result).sort()).toEqual(IPERF_KEYS);
    expect(result).toMatchObject({
      host: '127.0.0.1',
      port: iperfPort,
      protocol: 'tcp',
      direction: 'download',
      jitter_ms: null,
      lost_packets: null,
      lost_percent: null,
    });
    expect(result.bits_per_second).toBeGreaterThan(0);
    expect(result.bytes).toBeGreaterThan(0);
    expect(result.duration).toBeGreaterThan(0.5);
    expect(Number.isInteger(result.retransmits)).toBe(true);
    const client = spawned.filter((p) => p.program === 'iperf3')[1]!;
    expect(client.args).toEqual([
      '-c',
      '127.0.0.1',
      '-p',
      String(iperfPort),
      '-t',
      '1',
      '--json',
      '--connect-timeout',
      '5000',
      '-R',
    ]);
    expect(historyCount()).toBe(before + 1);
    const history = await h.request('GET', '/api/getSpeedTestHistory?limit=1', { token });
    expect(history.body.data[0]).toEqual({
      id: expect.any(Number),
      timestamp: expect.any(String),
      kind: 'iperf_client',
      target: '127.0.0.1',
      result,
    });

    const udp = await h.request('POST', '/api/iperf/client/run', {
      token,
      body: {
        host: '127.0.0.1',
        port: iperfPort,
        duration: 1,
        protocol: 'udp',
        direction: 'upload',
      },
    });
    expect(udp.status).toBe(201);
    expect(udp.body.message).toMatchObject({
      protocol: 'udp',
      direction: 'upload',
      retransmits: null,
      jitter_ms: expect.any(Number),
      lost_packets: expect.any(Number),
      lost_percent: expect.any(Number),
    });
    expect(spawned.at(-1)!.args).toEqual([
      '-c',
      '127.0.0.1',
      '-p',
      String(iperfPort),
      '-t',
      '1',
      '--json',
      '--connect-timeout',
      '5000',
      '-u',
    ]);

    const stopped = await h.request('POST', '/api/iperf/server/stop', { token });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toEqual({
      active: false,
      state: 'inactive',
      port: iperfPort,
      connectHost: '127.0.0.1',
    });
    expect(await waitUntil(() => !isProcessRunning(server.pid), 1000)).toBe(true);
    const stoppedAgain = await h.request('POST', '/api/iperf/server/stop', { token });
    expect(stoppedAgain.status).toBe(200);
    expect(stoppedAgain.body).toEqual(stopped.body);
  }, 30_000);

  it('reports the host the caller used as connectHost, without the port', async () => {
    const byName = await h.request('GET', '/api/iperf/server/status', {
      token,
      headers: { host: 'appliance.example.test:8443' },
    });
    expect(byName.body.connectHost).toBe('appliance.example.test');
    const byV6 = await h.request('GET', '/api/iperf/server/status', {
      token,
      headers: { host: '[2001:db8::5]:8443' },
    });
    expect(byV6.body.connectHost).toBe('2001:db8::5');
  });

  it('answers 500 {status: false, message} when the server cannot start, and reports failed', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(iperfPort, '127.0.0.1', resolve));
    try {
      const res = await h.request('POST', '/api/iperf/server/start', { token });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        status: false,
        message:
          'iperf3 server could not start: error - unable to start listener for connections: Address already in use',
      });
      const status = await h.request('GET', '/api/iperf/server/status', { token });
      expect(status.body).toEqual({
        active: false,
        state: 'failed',
        port: iperfPort,
        connectHost: '127.0.0.1',
      });
    } finally {
      await new Promise((r) => squatter.close(r));
    }
    const stopped = await h.request('POST', '/api/iperf/server/stop', { token });
    expect(stopped.body.state).toBe('inactive');
  });

  it('reports failed when the server ends by itself', async () => {
    const started = await h.request('POST', '/api/iperf/server/start', { token });
    expect(started.body.state).toBe('active');
    const server = spawned.filter((p) => p.program === 'iperf3').at(-1)!;
    process.kill(server.pid, 'SIGKILL');
    expect(
      await waitUntil(() => engine.service.iperfServer.status().state === 'failed', 2000),
    ).toBe(true);
    expect((await h.request('GET', '/api/iperf/server/status', { token })).body).toMatchObject({
      active: false,
      state: 'failed',
    });
    await h.request('POST', '/api/iperf/server/stop', { token });
  });

  it('ends the client process within a second when the caller goes away', async () => {
    await h.request('POST', '/api/iperf/server/start', { token });
    try {
      const before = historyCount();
      await abandon(
        '/api/iperf/client/run',
        { host: '127.0.0.1', port: iperfPort, duration: 30 },
        () => spawned.some((p) => p.args.includes('-c')),
      );
      const client = spawned.find((p) => p.args.includes('-c'))!;
      const abandonedAt = Date.now();
      expect(await waitUntil(() => !isProcessRunning(client.pid), 1000)).toBe(true);
      expect(Date.now() - abandonedAt).toBeLessThan(1000);
      expect(historyCount()).toBe(before);
    } finally {
      await h.request('POST', '/api/iperf/server/stop', { token });
    }
  });

  it('answers 502 when the client run fails', async () => {
    const closed = await freePort();
    const before = historyCount();
    const res = await h.request('POST', '/api/iperf/client/run', {
      token,
      body: { host: '127.0.0.1', port: closed, duration: 1 },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      status: false,
      message: 'iperf3: unable to connect to server: Connection refused',
    });
    expect(historyCount()).toBe(before);
  });

  it('runs one throughput test at a time: 409 while another runs', async () => {
    await h.request('POST', '/api/iperf/server/start', { token });
    try {
      const long = h.request('POST', '/api/iperf/client/run', {
        token,
        body: { host: '127.0.0.1', port: iperfPort, duration: 3 },
      });
      expect(await waitUntil(() => spawned.some((p) => p.args.includes('-c')), 5000)).toBe(true);
      const iperf = await h.request('POST', '/api/iperf/client/run', {
        token,
        body: { host: '127.0.0.1', port: iperfPort, duration: 1 },
      });
      expect(iperf.status).toBe(409);
      expect(iperf.body).toEqual({
        status: false,
        message: 'Another throughput test is running; try again when it has finished',
      });
      const speed = await h.request('POST', '/api/getSpeedTestInfo', { token });
      expect(speed.status).toBe(409);
      expect(speed.body).toEqual({
        message: 'Another throughput test is running; try again when it has finished',
      });
      expect((await long).status).toBe(201);
    } finally {
      await h.request('POST', '/api/iperf/server/stop', { token });
    }
  }, 30_000);
});
