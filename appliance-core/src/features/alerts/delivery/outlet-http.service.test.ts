/**
 * Outlet requests against real HTTP receivers on loopback (allowlisted through the policy): what
 * is sent, what is refused before any byte leaves, no redirect followed, and a rebinding
 * resolver that cannot move the connection to an address that was not checked.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { outletPolicy } from '../../../platform/net/outbound.js';
import { proxyOfVars } from './delivery.service.js';
import { proxyTargetOf, sendOutletRequest } from './outlet-http.service.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  localAddress: string;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function receiver(
  host: string,
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, res) =>
    res.end('ok'),
  port = 0,
): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        localAddress: req.socket.localAddress ?? '',
      });
      answer(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return { port: (server.address() as AddressInfo).port, received };
}

const post = (url: string) => ({ url, method: 'POST' as const, headers: {}, body: '{"a":1}' });

describe('sendOutletRequest', () => {
  it('sends to an allowlisted receiver, headers and body as given', async () => {
    const r = await receiver('127.0.0.1');
    const result = await sendOutletRequest(
      {
        url: `http://127.0.0.1:${r.port}/hook?x=1`,
        method: 'PUT',
        headers: { 'x-team': 'noc' },
        body: '{"a":1}',
      },
      { policy: outletPolicy(['127.0.0.1']), timeoutMs: 2000 },
    );
    expect(result).toEqual({ ok: true, status: 200, retryable: false });
    expect(r.received).toHaveLength(1);
    expect(r.received[0]).toMatchObject({ method: 'PUT', url: '/hook?x=1', body: '{"a":1}' });
    expect(r.received[0]!.headers['x-team']).toBe('noc');
    expect(r.received[0]!.headers['content-type']).toBe('application/json');
  });

  it('refuses loopback in any spelling before connecting when it is not allowlisted', async () => {
    const r = await receiver('127.0.0.1');
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0177.0.0.1',
      '0x7f.1',
      '[::ffff:127.0.0.1]',
      'localhost',
    ]) {
      const result = await sendOutletRequest(post(`http://${host}:${r.port}/`), {
        policy: outletPolicy([]),
        timeoutMs: 2000,
      });
      expect(result, host).toMatchObject({ ok: false, status: null, retryable: false });
      expect(result.error, host).toMatch(/^Refused: /);
    }
    expect(r.received).toHaveLength(0);
  });

  it('does not follow a redirect to loopback', async () => {
    const target = await receiver('127.0.0.1');
    const redirector = await receiver('127.0.0.1', (_q, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/stolen` });
      res.end();
    });
    const result = await sendOutletRequest(post(`http://127.0.0.1:${redirector.port}/`), {
      policy: outletPolicy(['127.0.0.1']),
      timeoutMs: 2000,
    });
    expect(result).toEqual({
      ok: false,
      status: 302,
      error: 'HTTP 302: redirects are not followed',
      retryable: false,
    });
    expect(redirector.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('a resolver answering an allowed address, then loopback, never moves the connection', async () => {
    // 127.0.0.2 stands for "the public address that was checked" (tests stay on loopback): it
    // is allowlisted, 127.0.0.1 is not.
    // The same port on both addresses: only the address decides which receiver answers.
    let pair: [Awaited<ReturnType<typeof receiver>>, Awaited<ReturnType<typeof receiver>>] | null =
      null;
    for (let attempt = 0; attempt < 5 && !pair; attempt++) {
      const first = await receiver('127.0.0.2');
      const second = await receiver('127.0.0.1', undefined, first.port).catch(() => null);
      if (second) pair = [first, second];
    }
    if (!pair) throw new Error('no port free on both 127.0.0.1 and 127.0.0.2');
    const [checked, loopback] = pair;
    const answers = ['127.0.0.2', '127.0.0.1'];
    const calls: string[] = [];
    const stub: LookupFunction = (hostname, options, callback) => {
      calls.push(hostname);
      const address = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      if ((options as { all?: boolean }).all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    };
    const policy = outletPolicy(['127.0.0.2']);
    const url = `http://hooks.example.test:${checked.port}/`;
    const first = await sendOutletRequest(post(url), { policy, timeoutMs: 2000, lookup: stub });
    expect(first).toMatchObject({ ok: true, status: 200 });
    expect(checked.received.map((r) => r.localAddress)).toEqual(['127.0.0.2']);
    expect(calls).toEqual(['hooks.example.test']); // resolved once, inside the connection
    const second = await sendOutletRequest(post(url), { policy, timeoutMs: 2000, lookup: stub });
    expect(second.ok).toBe(false);
    expect(second.error).toBe(
      'Refused: hooks.example.test resolves to 127.0.0.1, a loopback address',
    );
    expect(calls).toHaveLength(2);
    expect(checked.received).toHaveLength(1);
    expect(loopback.received).toHaveLength(0);
  });

  it('a resolver answering several addresses, one refused, refuses the whole answer', async () => {
    const r = await receiver('127.0.0.2');
    const stub: LookupFunction = (_h, _o, callback) =>
      callback(null, [
        { address: '127.0.0.2', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ]);
    const result = await sendOutletRequest(post(`http://hooks.example.test:${r.port}/`), {
      policy: outletPolicy(['127.0.0.2']),
      timeoutMs: 2000,
      lookup: stub,
    });
    expect(result.error).toMatch(/169\.254\.169\.254, a cloud metadata address$/);
    expect(r.received).toHaveLength(0);
  });

  it('classifies failures: 5xx and timeouts retry, 4xx does not, Retry-After is read', async () => {
    const policy = outletPolicy(['127.0.0.1']);
    const failing = await receiver('127.0.0.1', (_q, res) => {
      res.writeHead(503, { 'retry-after': '7' });
      res.end('busy\nsecond line');
    });
    expect(
      await sendOutletRequest(post(`http://127.0.0.1:${failing.port}/`), {
        policy,
        timeoutMs: 2000,
      }),
    ).toEqual({
      ok: false,
      status: 503,
      error: 'HTTP 503: busy',
      retryable: true,
      retryAfterMs: 7000,
    });
    const refusing = await receiver('127.0.0.1', (_q, res) => {
      res.writeHead(404);
      res.end();
    });
    expect(
      await sendOutletRequest(post(`http://127.0.0.1:${refusing.port}/`), {
        policy,
        timeoutMs: 2000,
      }),
    ).toMatchObject({
      ok: false,
      status: 404,
      retryable: false,
    });
    const silent = await receiver('127.0.0.1', () => undefined);
    const started = Date.now();
    const timedOut = await sendOutletRequest(post(`http://127.0.0.1:${silent.port}/`), {
      policy,
      timeoutMs: 200,
    });
    expect(timedOut).toEqual({
      ok: false,
      status: null,
      error: 'Timed out after 200 ms',
      retryable: true,
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('the delivery proxy (the daemon variables proxy_url and proxy_password)', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

  it('is null without a URL, and carries the password when one is set', () => {
    expect(proxyOfVars({})).toBeNull();
    expect(proxyOfVars({ proxy_password: 'p' })).toBeNull();
    expect(proxyOfVars({ proxy_url: 'http://127.0.0.1:3128' })).toEqual({
      url: 'http://127.0.0.1:3128',
    });
    expect(proxyOfVars({ proxy_url: 'http://127.0.0.1:3128', proxy_password: 'p' })).toEqual({
      url: 'http://127.0.0.1:3128',
      password: 'p',
    });
  });

  it('connects to the proxy host and port, with Basic credentials of the URL user and the password', () => {
    expect(proxyTargetOf({ url: 'http://127.0.0.1:3128' })).toEqual({
      secure: false,
      host: '127.0.0.1',
      port: 3128,
      authorization: null,
    });
    expect(proxyTargetOf({ url: 'http://alerts@proxy.example.test', password: 'pw' })).toEqual({
      secure: false,
      host: 'proxy.example.test',
      port: 80,
      authorization: basic('alerts:pw'),
    });
    expect(proxyTargetOf({ url: 'https://[::1]', password: 'pw' })).toEqual({
      secure: true,
      host: '::1',
      port: 443,
      authorization: basic(':pw'),
    });
    expect(proxyTargetOf({ url: 'ftp://127.0.0.1' })).toBeNull();
    expect(proxyTargetOf({ url: 'not a url' })).toBeNull();
  });
});
