/**
 * URL monitoring against local servers only: an HTTP server and HTTPS servers with self-signed
 * certificates of known expiry (one expired) on 127.0.0.1, a server that never answers (timeout),
 * a closed port (connect), a TLS handshake failure, and a `.invalid` name resolved by a stub
 * resolver (DNS failure without querying DNS). Then the endpoints through a real appliance.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { createSelfSigned } from '../../platform/security/certificate.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { DAY_MS, systemClock, toSqlDateTime } from '../../platform/time/time.js';
import { checkUrl } from './url.checker.js';
import { UrlMonitorEngine } from './url.engine.js';

const listen = async (server: net.Server) => {
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return (server.address() as net.AddressInfo).port;
};
/** A resolver that knows no names: what a `.invalid` name gets from DNS, without asking DNS. */
const noSuchName: LookupFunction = (hostname, _options, callback) => {
  const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    hostname,
  });
  (callback as (err: NodeJS.ErrnoException) => void)(err);
};

describe('URL checks against local servers', () => {
  const servers: net.Server[] = [];
  let httpPort: number;
  let httpsPort: number;
  let expiredPort: number;
  let silentPort: number;
  let closedPort: number;
  let plainTcpPort: number;
  let notAfter: number;
  const issuedAt = Date.now();

  beforeAll(async () => {
    const handler: http.RequestListener = (req, res) => {
      if (req.url === '/error') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><body>Welcome to the status page: all systems operational</body></html>');
    };
    const fresh = await createSelfSigned({ hostname: 'localhost', bind: '127.0.0.1' }, issuedAt);
    // createSelfSigned issues for 825 days; X.509 keeps whole seconds.
    notAfter = Math.floor((issuedAt + 825 * DAY_MS) / 1000) * 1000;
    const expired = await createSelfSigned(
      { hostname: 'localhost', bind: '127.0.0.1' },
      issuedAt - 900 * DAY_MS,
    );
    const h1 = http.createServer(handler);
    const h2 = https.createServer({ key: fresh.key, cert: fresh.cert }, handler);
    const h3 = https.createServer({ key: expired.key, cert: expired.cert }, handler);
    const silent = net.createServer(() => {}); // accepts and never answers
    const plain = net.createServer((s) => s.end('not tls\r\n\r\n'));
    servers.push(h1, h2, h3, silent, plain);
    httpPort = await listen(h1);
    httpsPort = await listen(h2);
    expiredPort = await listen(h3);
    silentPort = await listen(silent);
    plainTcpPort = await listen(plain);
    const closed = net.createServer();
    closedPort = await listen(closed);
    await new Promise((r) => closed.close(r));
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  it('HTTP: latency, status and the pattern found', async () => {
    const result = await checkUrl(`http://127.0.0.1:${httpPort}/`, 'all systems operational', {
      timeoutMs: 5000,
    });
    expect(result).toEqual({
      ok: true,
      latency: expect.any(Number),
      status: 200,
      sslExpiresAt: null,
      message: 'OK (HTTP 200)',
    });
    expect(result.latency).toBeGreaterThanOrEqual(0);
  });

  it('pattern not found, and an HTTP error status', async () => {
    expect(
      await checkUrl(`http://127.0.0.1:${httpPort}/`, 'degraded', { timeoutMs: 5000 }),
    ).toMatchObject({
      ok: false,
      status: 200,
      message: 'Pattern not found in the response (HTTP 200)',
    });
    expect(
      await checkUrl(`http://127.0.0.1:${httpPort}/error`, 'maintenance', { timeoutMs: 5000 }),
    ).toMatchObject({ ok: false, status: 503, message: 'HTTP 503 Service Unavailable' });
  });

  it('HTTPS: the certificate expiry date (ssldate) of a self-signed certificate', async () => {
    const result = await checkUrl(`https://127.0.0.1:${httpsPort}/`, 'Welcome', {
      timeoutMs: 5000,
    });
    expect(result.ok).toBe(true);
    expect(result.status).toBe(200);
    expect(result.sslExpiresAt).toBe(notAfter);
    expect(result.message).toMatch(/^OK \(HTTP 200\); certificate not trusted: /);
  });

  it('an expired certificate fails with its date', async () => {
    const result = await checkUrl(`https://127.0.0.1:${expiredPort}/`, 'Welcome', {
      timeoutMs: 5000,
    });
    expect(result.ok).toBe(false);
    expect(result.message).toBe(
      `TLS certificate expired on ${new Date(result.sslExpiresAt as number).toISOString()}`,
    );
    expect(result.sslExpiresAt).toBeLessThan(Date.now());
  });

  it('names what failed: timeout, connect, TLS and DNS', async () => {
    expect(await checkUrl(`http://127.0.0.1:${silentPort}/`, 'x', { timeoutMs: 300 })).toEqual({
      ok: false,
      latency: -1,
      status: null,
      sslExpiresAt: null,
      message: `Timed out after 300 ms waiting for 127.0.0.1:${silentPort}`,
    });
    expect(
      (await checkUrl(`http://127.0.0.1:${closedPort}/`, 'x', { timeoutMs: 2000 })).message,
    ).toBe(`Connection refused by 127.0.0.1:${closedPort}`);
    expect(
      (await checkUrl(`https://127.0.0.1:${plainTcpPort}/`, 'x', { timeoutMs: 2000 })).message,
    ).toMatch(new RegExp(`^TLS handshake with 127\\.0\\.0\\.1:${plainTcpPort} failed: `));
    expect(
      (
        await checkUrl('http://status.example.invalid/', 'x', {
          timeoutMs: 2000,
          lookup: noSuchName,
        })
      ).message,
    ).toBe('DNS lookup failed for status.example.invalid (ENOTFOUND)');
    expect((await checkUrl('ftp://127.0.0.1/', 'x', { timeoutMs: 2000 })).message).toBe(
      'The URL scheme must be http or https',
    );
  });

  describe('endpoints (shared appliance)', () => {
    let h: Harness;
    let admin: string;
    let noUrls: string;
    const FAIL = (message: string) => ({ status: false, hasError: true, message });

    beforeAll(async () => {
      h = await startAppliance();
      admin = await h.login();
      noUrls = (await h.userWith(['devices'])).token;
    });
    afterAll(() => h?.close());

    it('saveUrl creates and updates; every failure is HTTP 200 with the legacy body', async () => {
      const created = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { url: `http://127.0.0.1:${httpPort}/`, pattern: 'operational' } },
      });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        status: 201,
        message: {
          id: expect.any(Number),
          url: `http://127.0.0.1:${httpPort}/`,
          pattern: 'operational',
          interval: 300,
        },
      });
      const id = created.body.message.id;
      const updated = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: {
          newtracker: {
            id,
            url: `https://127.0.0.1:${httpsPort}/`,
            pattern: 'Welcome',
            interval: 60,
          },
        },
      });
      expect(updated.body).toEqual({
        status: 201,
        message: { id, url: `https://127.0.0.1:${httpsPort}/`, pattern: 'Welcome', interval: 60 },
      });

      for (const [body, message] of [
        [{}, 'Pattern and URL required'],
        [{ newtracker: { url: 'http://127.0.0.1/' } }, 'Pattern and URL required'],
        [{ newtracker: { pattern: 'x' } }, 'Pattern and URL required'],
        [
          { newtracker: { url: 'ftp://127.0.0.1/', pattern: 'x' } },
          'The URL scheme must be http or https',
        ],
        [{ newtracker: { url: 'not a url', pattern: 'x' } }, 'The URL is not valid'],
        [
          { newtracker: { url: 'http://127.0.0.1/', pattern: 'x', interval: 0 } },
          'The interval must be a whole number of seconds from 1 to 2592000',
        ],
        [
          { newtracker: { id: 999_999, url: 'http://127.0.0.1/', pattern: 'x' } },
          'URL tracker not found',
        ],
      ] as const) {
        const res = await h.request('POST', '/api/saveUrl', { token: admin, body });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(FAIL(message));
      }
      expect(
        (h.appliance.db.prepare('SELECT count(*) AS n FROM url_trackers').get() as { n: number }).n,
      ).toBe(1);
      const denied = await h.request('GET', '/api/getUrls', { token: noUrls });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual(FAIL('You do not have permission to perform this action.'));
    });

    it('a check through the engine stores latency, status, message and ssldate; lists and the report show them', async () => {
      const { id } = h.appliance.db.prepare('SELECT id FROM url_trackers').get() as { id: number };
      const engine = new UrlMonitorEngine(
        { ...h.appliance.ctx, clock: systemClock },
        new Scheduler(systemClock),
        { timeoutMs: 5000 },
      );
      await engine.check(id);
      const list = await h.request('GET', '/api/getUrls', { token: admin });
      expect(list.body).toEqual({
        status: 201,
        data: [
          {
            id,
            url: `https://127.0.0.1:${httpsPort}/`,
            interval: 60,
            pattern: 'Welcome',
            timestamp: expect.any(Number),
            latency: expect.any(Number),
            message: expect.stringMatching(/^OK \(HTTP 200\)/),
            status: 200,
            ssldate: toSqlDateTime(notAfter),
            alerts: null,
          },
        ],
      });
      const all = await h.request('GET', '/api/getAllUrls', { token: admin });
      expect(all.body).toEqual({ status: 201, hasError: false, message: { data: list.body.data } });

      const report = await h.request('GET', '/api/urlTracker?hours=24', { token: admin });
      expect(report.status).toBe(200);
      expect(report.body).toMatchObject({
        status: 200,
        hasError: false,
        window: { start_time: expect.any(String), end_time: expect.any(String) },
      });
      expect(report.body.data).toEqual([
        expect.objectContaining({
          id,
          checks: 1,
          failures: 0,
          availability: 100,
          latency: {
            avg: expect.any(Number),
            p50: expect.any(Number),
            p95: expect.any(Number),
            p99: expect.any(Number),
          },
          last_status: 200,
          ssldate: toSqlDateTime(notAfter),
          ssl_days_left: 824,
        }),
      ]);
      expect((await h.request('GET', '/api/urlTracker?hours=0', { token: admin })).body).toEqual(
        FAIL('The hours field must be at least 1.'),
      );
    });

    it('deleteUrl removes the tracker and its history; missing or unknown ids fail', async () => {
      const { id } = h.appliance.db.prepare('SELECT id FROM url_trackers').get() as { id: number };
      expect((await h.request('POST', '/api/deleteUrl', { token: admin, body: {} })).body).toEqual(
        FAIL('The id field is required'),
      );
      expect(
        (await h.request('POST', '/api/deleteUrl', { token: admin, body: { id: 999_999 } })).body,
      ).toEqual(FAIL('URL tracker not found'));
      expect(
        (await h.request('POST', '/api/deleteUrl', { token: admin, body: { id } })).body,
      ).toEqual({ status: 200, message: 'URL tracker deleted' });
      expect(
        (h.appliance.db.prepare('SELECT count(*) AS n FROM url_samples').get() as { n: number }).n,
      ).toBe(0);
      expect((await h.request('GET', '/api/getUrls', { token: admin })).body).toEqual({
        status: 201,
        data: [],
      });
    });
  });
});
