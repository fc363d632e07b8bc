/**
 * URL monitoring against local servers only: an HTTP server and HTTPS servers with self-signed
 * certificates of known expiry (one expired) on 127.0.0.1, a server that never answers (timeout),
 * a closed port (connect), a TLS handshake failure, and a `.invalid` name resolved by a stub
 * resolver (DNS failure without querying DNS). Then the endpoints through a real appliance.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { createSelfSigned } from '../../platform/security/certificate.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../platform/db/database.js';
import { loadMigrations, migrate } from '../../platform/db/migrate.js';
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
  let expiredNotAfter: number;
  const issuedAt = Date.now();

  beforeAll(async () => {
    const handler: http.RequestListener = (req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end('moved');
        return;
      }
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
    // Issued 900 days ago for 825 days: expired 75 days ago, to the second.
    expiredNotAfter = Math.floor((issuedAt - 75 * DAY_MS) / 1000) * 1000;
    // The certificate itself says the same (read by node's X.509 parser, not the checker).
    expect(Date.parse(new crypto.X509Certificate(expired.cert).validTo)).toBe(expiredNotAfter);
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
    expect(result.sslExpiresAt).toBe(expiredNotAfter);
    expect(result.message).toBe(
      `TLS certificate expired on ${new Date(expiredNotAfter).toISOString()}`,
    );
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

  describe('outbound rule at each check (resolved address, one lookup, no redirects)', () => {
    /** A resolver answering from `answers` in turn (the last one repeats), counting its calls. */
    const scripted = (answers: string[]) => {
      let calls = 0;
      const lookup: LookupFunction = (_hostname, options, callback) => {
        const address = answers[Math.min(calls, answers.length - 1)] as string;
        calls++;
        const family = address.includes(':') ? 6 : 4;
        const cb = callback as (err: null, address: unknown, family?: number) => void;
        if ((options as { all?: boolean }).all) cb(null, [{ address, family }]);
        else cb(null, address, family);
      };
      return { lookup, calls: () => calls };
    };
    const ON = { allowPrivate: true };

    it('a name resolving to the metadata address is refused; the check names it', async () => {
      const { lookup, calls } = scripted(['169.254.169.254']);
      expect(
        await checkUrl(`http://status.test:${httpPort}/`, 'x', {
          timeoutMs: 2000,
          lookup,
          policy: ON,
        }),
      ).toEqual({
        ok: false,
        latency: -1,
        status: null,
        sslExpiresAt: null,
        message: 'Refused: status.test resolves to 169.254.169.254, a cloud metadata address',
      });
      expect(calls()).toBe(1);
    });

    it('resolves once per check and connects to that address (a rebinding name gains nothing)', async () => {
      const { lookup, calls } = scripted(['127.0.0.1', '169.254.169.254']);
      const url = `http://status.test:${httpPort}/`;
      const first = await checkUrl(url, 'operational', { timeoutMs: 2000, lookup, policy: ON });
      expect(first).toMatchObject({ ok: true, status: 200 });
      expect(calls()).toBe(1);
      const second = await checkUrl(url, 'operational', { timeoutMs: 2000, lookup, policy: ON });
      expect(second.message).toBe(
        'Refused: status.test resolves to 169.254.169.254, a cloud metadata address',
      );
      expect(calls()).toBe(2);
    });

    it('literal hosts and metadata names are refused before any lookup or connection', async () => {
      const { lookup, calls } = scripted(['127.0.0.1']);
      for (const [url, text] of [
        ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a cloud metadata address'],
        ['http://2852039166/', '169.254.169.254 is a cloud metadata address'],
        ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
        ['http://metadata.google.internal/', 'metadata.google.internal is a cloud metadata name'],
      ] as const) {
        expect(
          (await checkUrl(url, 'x', { timeoutMs: 2000, lookup, policy: ON })).message,
          url,
        ).toBe(`Refused: ${text}`);
      }
      expect(calls()).toBe(0);
      const off = await checkUrl(`http://127.0.0.1:${httpPort}/`, 'operational', {
        timeoutMs: 2000,
        policy: { allowPrivate: false },
      });
      expect(off.message).toBe('Refused: 127.0.0.1 is a loopback address');
    });

    it('a redirect is the answer checked, never followed', async () => {
      const result = await checkUrl(`http://127.0.0.1:${httpPort}/redirect`, 'meta-data', {
        timeoutMs: 2000,
        policy: ON,
      });
      expect(result).toMatchObject({
        ok: false,
        status: 302,
        message: 'Pattern not found in the response (HTTP 302)',
      });
    });
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
          'The interval must be a whole number of seconds from 30 to 2592000',
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

    const count = () =>
      (h.appliance.db.prepare('SELECT count(*) AS n FROM url_trackers').get() as { n: number }).n;

    it('saveUrl refuses link-local and metadata hosts in every spelling; nothing is stored', async () => {
      const before = count();
      for (const [url, reason] of [
        ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
        ['http://2852039166/', '169.254.169.254 is a cloud metadata address'],
        ['http://0251.0376.0251.0376/', '169.254.169.254 is a cloud metadata address'],
        ['http://0xA9.0xFE.0xA9.0xFE/', '169.254.169.254 is a cloud metadata address'],
        ['http://0xa9fea9fe/', '169.254.169.254 is a cloud metadata address'],
        ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a cloud metadata address'],
        ['https://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
        ['http://169.254.10.1:8080/', '169.254.10.1 is a link-local address'],
        ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
        ['http://metadata.google.internal/', 'metadata.google.internal is a cloud metadata name'],
        ['http://Metadata.Google.Internal./', 'metadata.google.internal is a cloud metadata name'],
        ['http://0/', "0.0.0.0 is not a single host's address"],
      ] as const) {
        const res = await h.request('POST', '/api/saveUrl', {
          token: admin,
          body: { newtracker: { url, pattern: 'x' } },
        });
        expect(res.status, url).toBe(200);
        expect(res.body, url).toEqual(FAIL(`This URL cannot be monitored: ${reason}`));
      }
      expect(count()).toBe(before);
      // Internal hosts stay allowed (spec: "internal hosts allowed").
      for (const url of ['http://127.0.0.1:8080/', 'http://10.0.0.1/', 'http://[::1]/']) {
        const res = await h.request('POST', '/api/saveUrl', {
          token: admin,
          body: { newtracker: { url, pattern: 'x' } },
        });
        expect(res.body.status, url).toBe(201);
        await h.request('POST', '/api/deleteUrl', {
          token: admin,
          body: { id: res.body.message.id },
        });
      }
      // An update to a refused host is refused too and leaves the tracker as it was.
      const kept = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { url: 'http://127.0.0.1/', pattern: 'x' } },
      });
      const id = kept.body.message.id;
      expect(
        (
          await h.request('POST', '/api/saveUrl', {
            token: admin,
            body: { newtracker: { id, url: 'http://169.254.169.254/', pattern: 'x' } },
          })
        ).body,
      ).toEqual(FAIL('This URL cannot be monitored: 169.254.169.254 is a cloud metadata address'));
      expect(
        (
          h.appliance.db.prepare('SELECT url FROM url_trackers WHERE id = ?').get(id) as {
            url: string;
          }
        ).url,
      ).toBe('http://127.0.0.1/');
      await h.request('POST', '/api/deleteUrl', { token: admin, body: { id } });
    });

    it('the interval is 30 seconds at least', async () => {
      for (const interval of [1, 29, '29']) {
        expect(
          (
            await h.request('POST', '/api/saveUrl', {
              token: admin,
              body: { newtracker: { url: 'http://127.0.0.1/', pattern: 'x', interval } },
            })
          ).body,
        ).toEqual(FAIL('The interval must be a whole number of seconds from 30 to 2592000'));
      }
      const ok = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { url: 'http://127.0.0.1/', pattern: 'x', interval: 30 } },
      });
      expect(ok.body.message.interval).toBe(30);
      await h.request('POST', '/api/deleteUrl', { token: admin, body: { id: ok.body.message.id } });
    });

    it('at most 1000 URL trackers; an update at the limit still works', async () => {
      const now = Date.now();
      const insert = h.appliance.db.prepare(
        'INSERT INTO url_trackers (url, pattern, interval, created_at, updated_at) VALUES (?, ?, 300, ?, ?)',
      );
      h.appliance.db.transaction(() => {
        for (let i = count(); i < 999; i++) insert.run(`http://127.0.0.1/${i}`, 'x', now, now);
      })();
      const last = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { url: 'http://127.0.0.1/last', pattern: 'x' } },
      });
      expect(last.body.status).toBe(201);
      expect(count()).toBe(1000);
      const over = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { url: 'http://127.0.0.1/over', pattern: 'x' } },
      });
      expect(over.status).toBe(200);
      expect(over.body).toEqual(
        FAIL('At most 1000 URL trackers can be kept; delete one before adding another'),
      );
      expect(count()).toBe(1000);
      const updated = await h.request('POST', '/api/saveUrl', {
        token: admin,
        body: { newtracker: { id: last.body.message.id, url: 'http://127.0.0.1/x', pattern: 'y' } },
      });
      expect(updated.body.status).toBe(201);
      h.appliance.db.prepare('DELETE FROM url_trackers').run();
    });
  });

  describe('APPLIANCE_URL_ALLOW_PRIVATE=off', () => {
    let h: Harness;
    let admin: string;
    beforeAll(async () => {
      h = await startAppliance({ APPLIANCE_URL_ALLOW_PRIVATE: 'off' });
      admin = await h.login();
    });
    afterAll(() => h?.close());

    it('saveUrl refuses loopback and private hosts; a stored one is refused at its next check', async () => {
      for (const [url, reason] of [
        ['http://127.0.0.1/', '127.0.0.1 is a loopback address'],
        ['http://127.1/', '127.0.0.1 is a loopback address'],
        ['http://[::1]/', '::1 is a loopback address'],
        ['http://10.1.2.3/', '10.1.2.3 is a private address'],
        ['http://172.16.5.4/', '172.16.5.4 is a private address'],
        ['http://192.168.0.1/', '192.168.0.1 is a private address'],
        ['http://100.64.0.1/', '100.64.0.1 is a private address'],
        ['http://[fd12::1]/', 'fd12::1 is a private address'],
      ] as const) {
        expect(
          (
            await h.request('POST', '/api/saveUrl', {
              token: admin,
              body: { newtracker: { url, pattern: 'x' } },
            })
          ).body,
          url,
        ).toEqual({
          status: false,
          hasError: true,
          message: `This URL cannot be monitored: ${reason}`,
        });
      }
      // A tracker stored while private addresses were allowed: refused at its next check.
      const now = Date.now();
      const id = Number(
        h.appliance.db
          .prepare(
            'INSERT INTO url_trackers (url, pattern, interval, created_at, updated_at) VALUES (?, ?, 300, ?, ?)',
          )
          .run(`http://127.0.0.1:${httpPort}/`, 'operational', now, now).lastInsertRowid,
      );
      const engine = new UrlMonitorEngine(
        { ...h.appliance.ctx, clock: systemClock },
        new Scheduler(systemClock),
        { timeoutMs: 2000 },
      );
      await engine.check(id);
      expect(
        h.appliance.db
          .prepare('SELECT ok, message, latency FROM url_trackers WHERE id = ?')
          .get(id),
      ).toEqual({ ok: 0, message: 'Refused: 127.0.0.1 is a loopback address', latency: -1 });
    });
  });
});

describe('the interval floor migration', () => {
  it('raises stored intervals below 30 s to 30 and leaves the others', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'url-floor-'));
    const db = openDatabase(path.join(dir, 'appliance.db'));
    try {
      const all = loadMigrations();
      const floor = all.find((m) => m.name === 'url_interval_floor');
      expect(floor).toBeDefined();
      migrate(
        db,
        0,
        all.filter((m) => m.id < (floor as { id: number }).id),
      );
      const insert = db.prepare(
        'INSERT INTO url_trackers (url, pattern, interval, created_at, updated_at) VALUES (?, ?, ?, 0, 0)',
      );
      for (const interval of [1, 29, 30, 300]) insert.run('http://127.0.0.1/', 'x', interval);
      migrate(db, 0, all);
      expect(
        (
          db.prepare('SELECT interval FROM url_trackers ORDER BY id').all() as {
            interval: number;
          }[]
        ).map((r) => r.interval),
      ).toEqual([30, 30, 30, 300]);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
