/**
 * A daemon's variables applied by the restart after `POST /api/daemon/{id}/config`, against the
 * real engines of a real appliance (in the default network mode, dry run, and in apply mode with
 * no root helper reachable: daemons are the appliance's own engines, so their changes apply the
 * same way in both modes and never go to the host):
 * - syslog: a new port (chosen free by the test) receives a datagram that is stored, the old
 *   port is closed, `0` disables the receiver, and a removed variable falls back to the env's;
 * - flows: likewise with a NetFlow v5 packet;
 * - ids-intake (no APPLIANCE_EVE_FILE: idle until configured): a new eve file is followed, and a
 *   second one replaces it;
 * - discovery: a real snmpd on 127.0.0.5 that no credential set answers is found with the
 *   daemon's `snmp_community` (secret) on its `snmp_port`;
 * - alert-delivery: a webhook goes through an HTTP proxy on loopback that the test runs, with
 *   `proxy_password` sent as `Proxy-Authorization: Basic`, an https outlet through a CONNECT
 *   tunnel, a 407 answered without the password, and the password never in an answer or a log.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../harness/appliance.js';
import { havePeer } from '../harness/peers.js';
import { startSnmpd, type Snmpd } from '../harness/snmpd.js';
import { REDACT_PATHS } from '../../appliance-core/src/platform/logging/logger.js';
import {
  bindUdpTcpPair,
  closeTcp,
  closeUdp,
} from '../../appliance-core/src/platform/net/collector-ports.js';
import type { DeliveryEngine } from '../../appliance-core/src/features/alerts/delivery/delivery.engine.js';
import {
  httpReceiver,
  type HttpReceiver,
} from '../../appliance-core/src/features/alerts/delivery/testing/receivers.js';
import type { DiscoveryEngine } from '../../appliance-core/src/features/discovery/discovery.engine.js';
import { v5Packet } from '../../appliance-core/src/features/flows/testing/flow-packets.js';
import { alertLine } from '../../appliance-core/src/features/logs/testing/eve-lines.js';

const PROXY_CANARY = 'canary-proxy-pass-5d1e';
const COMMUNITY_CANARY = 'canary-community-93ab';
const HAVE_SNMP = havePeer('fping', 'fping') && havePeer('snmpd', 'snmpd');

let h: Harness;
let admin: string;
let dir: string;
const logLines: string[] = [];

const configure = (name: string, config: unknown) =>
  h.request('POST', `/api/daemon/${name}/config`, { token: admin, body: { config } });
const engine = <T>(name: string) => h.appliance.engines.find((e) => e.name === name) as T;
const ports = () => h.appliance.ctx.collectorPorts.report();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  for (let i = 0; i < ms / 25 && !check(); i++) await sleep(25);
  expect(check(), what).toBe(true);
}

/** A port free on loopback for UDP and TCP together (bound, then released). */
async function freePort(): Promise<number> {
  const pair = await bindUdpTcpPair('127.0.0.1', 'auto');
  await closeUdp(pair.udp);
  await closeTcp(pair.tcp);
  return pair.port;
}

/** True when UDP `port` on 127.0.0.1 can be bound by someone else (nothing listens there). */
async function udpFree(port: number): Promise<boolean> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind({ address: '127.0.0.1', port, exclusive: true }, () =>
      socket.close(() => resolve(true)),
    );
  });
}

async function tcpFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

async function sendUdp(port: number, payload: string | Uint8Array): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) =>
    socket.send(payload, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
  );
  socket.close();
}

const count = (sql: string, ...args: unknown[]) =>
  h.appliance.db
    .prepare(sql)
    .pluck()
    .get(...args) as number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daemons-apply-'));
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h = await startAppliance(
    {
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_NETFLOW_PORT: 'auto',
      APPLIANCE_OUTLET_ALLOW: '127.0.0.1',
    },
    {
      logger: pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink),
    },
  );
  admin = await h.login();
}, 60_000);
afterAll(async () => {
  await h?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('dry run', () => {
  it('applies daemon changes in the default network mode (dry run protects the host; daemons are the appliance)', async () => {
    expect(h.appliance.ctx.config.networkMode ?? 'dry-run').toBe('dry-run');
    const before = h.appliance.registry.status('captures').startedAt as number;
    h.clock.advance(1000);
    const res = await configure('captures', [{ var: 'max_active', value: '3' }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'Configuration of captures saved and the daemon restarted',
    });
    expect(h.appliance.registry.status('captures').startedAt as number).toBeGreaterThan(before);
  });
});

describe('apply mode', () => {
  it('applies daemon changes the same way, and never through the root helper', async () => {
    // A socket path where no helper listens: a daemon change that went to the host would fail.
    const apply = await startAppliance({
      APPLIANCE_NETWORK_MODE: 'apply',
      APPLIANCE_ROOT_HELPER_SOCKET: path.join(dir, 'no-helper.sock'),
    });
    try {
      const token = await apply.login();
      const before = apply.appliance.registry.status('captures').startedAt as number;
      apply.clock.advance(1000);
      const res = await apply.request('POST', '/api/daemon/captures/config', {
        token,
        body: { config: [{ var: 'idle_seconds', value: '120' }] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        message: 'Configuration of captures saved and the daemon restarted',
      });
      expect(apply.appliance.registry.status('captures').startedAt as number).toBeGreaterThan(
        before,
      );
      expect(fs.existsSync(path.join(dir, 'no-helper.sock'))).toBe(false);
    } finally {
      await apply.close();
    }
  }, 60_000);
});

describe('syslog reads port at each start', () => {
  const stored = (text: string) =>
    count('SELECT count(*) FROM syslog_log WHERE message LIKE ?', `%${text}%`);

  it('moves to the configured port: a datagram there is stored and the old port is closed', async () => {
    const old = ports().syslog!.udp!;
    const port = await freePort();
    const res = await configure('syslog', [{ var: 'port', value: String(port) }]);
    expect(res.status).toBe(200);
    expect(res.body.reload_failed).toBeUndefined();
    expect(ports().syslog).toEqual({ udp: port, tcp: port });
    await sendUdp(port, '<13>Nov 26 10:00:00 host tag: daemon-port-moved');
    await until(() => stored('daemon-port-moved') === 1, 'stored from the new port');
    expect(await udpFree(old)).toBe(true);
    expect(await tcpFree(old)).toBe(true);
  });

  it('port 0 disables the receiver; removing the variable falls back to the env setting', async () => {
    const configured = ports().syslog!.udp!;
    expect((await configure('syslog', [{ var: 'port', value: '0' }])).status).toBe(200);
    expect(ports().syslog).toBeUndefined();
    expect(await udpFree(configured)).toBe(true);
    expect((await configure('syslog', [])).status).toBe(200);
    // APPLIANCE_SYSLOG_PORT=auto again: an ephemeral port that receives.
    const port = ports().syslog!.udp!;
    expect(port).toBeGreaterThan(0);
    await sendUdp(port, '<13>Nov 26 10:00:00 host tag: daemon-port-fallback');
    await until(() => stored('daemon-port-fallback') === 1, 'stored on the env port');
  });
});

describe('flows reads port at each start', () => {
  const packet = (srcPort: number) =>
    v5Packet([
      {
        src: '127.0.0.21',
        dst: '127.0.0.22',
        srcPort,
        dstPort: 443,
        protocol: 6,
        packets: 3,
        bytes: 1200,
        first: 90_000,
        last: 99_000,
      },
    ]);
  const flowsFrom = (srcPort: number) =>
    count('SELECT count(*) FROM flows_latest WHERE src_port = ?', srcPort);

  it('moves to the configured port: a NetFlow packet there is stored and the old port is closed', async () => {
    const old = ports().netflow!.udp!;
    const port = await freePort();
    const res = await configure('flows', [{ var: 'port', value: String(port) }]);
    expect(res.status).toBe(200);
    expect(res.body.reload_failed).toBeUndefined();
    expect(ports().netflow).toEqual({ udp: port });
    await sendUdp(port, packet(40_001));
    await until(() => flowsFrom(40_001) === 1, 'flow stored from the new port');
    expect(await udpFree(old)).toBe(true);
    // The old port no longer collects: a packet sent there is not stored.
    await sendUdp(old, packet(40_002));
    await sleep(300);
    expect(flowsFrom(40_002)).toBe(0);
    expect((await configure('flows', [{ var: 'port', value: '0' }])).status).toBe(200);
    expect(ports().netflow).toBeUndefined();
    expect(await udpFree(port)).toBe(true);
  });
});

describe('ids-intake reads eve_file at each start', () => {
  const signatures = () =>
    h.appliance.db
      .prepare('SELECT signature FROM eve_log_latest ORDER BY id')
      .pluck()
      .all() as string[];
  const idsCounters = async () =>
    (await h.request('GET', '/api/intake/counters', { token: admin })).body.ids as Record<
      string,
      number
    > | null;

  it('is idle without a file, then follows the configured file, then the next one', async () => {
    expect(h.appliance.registry.status('ids-intake').state).toBe('running');
    expect(await idsCounters()).toBeNull();
    const first = path.join(dir, 'first-eve.json');
    const second = path.join(dir, 'second-eve.json');
    fs.writeFileSync(first, `${alertLine({}, { signature: 'daemon eve first' })}\n`);
    fs.writeFileSync(second, `${alertLine({}, { signature: 'daemon eve second' })}\n`);

    expect((await configure('ids-intake', [{ var: 'eve_file', value: first }])).status).toBe(200);
    await until(() => signatures().includes('daemon eve first'), 'first file followed');
    expect(await idsCounters()).toMatchObject({ stored: 1 });

    expect((await configure('ids-intake', [{ var: 'eve_file', value: second }])).status).toBe(200);
    await until(() => signatures().includes('daemon eve second'), 'second file followed');
    // The first file is no longer followed.
    fs.appendFileSync(first, `${alertLine({}, { signature: 'daemon eve late' })}\n`);
    await sleep(600);
    expect(signatures()).toEqual(['daemon eve first', 'daemon eve second']);

    expect((await configure('ids-intake', [])).status).toBe(200);
    expect(await idsCounters()).toBeNull();
  });
});

describe.runIf(HAVE_SNMP)('discovery reads snmp_community and snmp_port at each start', () => {
  let agent: Snmpd;
  let netId: number;

  beforeAll(async () => {
    agent = await startSnmpd({ addresses: ['127.0.0.5'], community: COMMUNITY_CANARY });
    netId = Number(
      h.appliance.db
        .prepare(
          `INSERT INTO local_networks (label, network, broadcast, network_num, broadcast_num, interval, enable_discovery, enable_portscan, created_at, updated_at)
           VALUES ('daemon test', '127.0.0.4', '127.0.0.7', 2130706436, 2130706439, 3600, 0, 0, 0, 0)`,
        )
        .run().lastInsertRowid,
    );
  }, 30_000);
  afterAll(async () => {
    await agent?.stop();
  });

  const pending5 = () =>
    h.appliance.db.prepare(`SELECT * FROM pending_devices WHERE ip_address = '127.0.0.5'`).get() as
      Record<string, unknown> | undefined;

  it('finds an agent no credential set answers with the daemon community on its port', async () => {
    const discovery = engine<DiscoveryEngine>('discovery');
    const without = await discovery.sweep(netId);
    expect(without).toMatchObject({ alive: 2, snmp_responders: 0, error: null });
    h.appliance.db.prepare('DELETE FROM pending_devices').run();

    const res = await configure('discovery', [
      { var: 'snmp_community', value: COMMUNITY_CANARY },
      { var: 'snmp_port', value: String(agent.port) },
    ]);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(COMMUNITY_CANARY);
    const read = await h.request('GET', '/api/daemon/discovery', { token: admin });
    expect(read.text).not.toContain(COMMUNITY_CANARY);

    const found = await discovery.sweep(netId);
    expect(found).toMatchObject({ alive: 2, snmp_responders: 1, error: null });
    const row = pending5();
    expect(row).toMatchObject({ snmp_version: 2, snmp_port: agent.port, enable_snmp: 1 });
    expect(row!.snmp_community).not.toBe(COMMUNITY_CANARY);
    expect(h.appliance.ctx.secrets.open(row!.snmp_community as string)).toBe(COMMUNITY_CANARY);

    // Another community: the restart applies it, and the agent no longer answers.
    h.appliance.db.prepare('DELETE FROM pending_devices').run();
    expect(
      (
        await configure('discovery', [
          { var: 'snmp_community', value: 'not-the-community' },
          { var: 'snmp_port', value: String(agent.port) },
        ])
      ).status,
    ).toBe(200);
    expect(await discovery.sweep(netId)).toMatchObject({ snmp_responders: 0 });
    expect(logLines.join('')).not.toContain(COMMUNITY_CANARY);
  }, 30_000);
});

/** An HTTP proxy on loopback: absolute-form requests and CONNECT tunnels, with what it saw. */
interface TestProxy {
  port: number;
  seen: { method: string; url: string; authorization: string | undefined }[];
  /** Only this Proxy-Authorization value is let through (407 otherwise). */
  expected: string;
  close(): Promise<void>;
}

async function startProxy(expected: string): Promise<TestProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: TestProxy = { port: 0, seen: [], expected, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const authorization = req.headers['proxy-authorization'];
    proxy.seen.push({ method: req.method ?? '', url: req.url ?? '', authorization });
    if (authorization !== proxy.expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
      res.end(`denied ${String(authorization)}`);
      return;
    }
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
    sockets.add(socket);
    const authorization = req.headers['proxy-authorization'];
    proxy.seen.push({ method: 'CONNECT', url: req.url ?? '', authorization });
    if (authorization !== proxy.expected) {
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.close = () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}

describe('alert-delivery reads proxy_url and proxy_password at each start', () => {
  let receiver: HttpReceiver;
  let proxy: TestProxy;
  const basic = (user: string, pass: string) =>
    `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  const outlet = (url: string) => ({
    id: 9001,
    type: 'webhook' as const,
    name: 'through the proxy',
    config: { url },
    rate_limit_per_min: null,
  });

  beforeAll(async () => {
    receiver = await httpReceiver();
    proxy = await startProxy(basic('alerts', PROXY_CANARY));
  });
  afterAll(async () => {
    await receiver?.close();
    await proxy?.close();
  });

  it('sends a webhook directly without a proxy, then through the configured proxy with Proxy-Authorization', async () => {
    const delivery = engine<DeliveryEngine>('alert-delivery');
    expect(await delivery.sendTest(outlet(receiver.url))).toEqual({ ok: true });
    expect(proxy.seen).toHaveLength(0);

    const res = await configure('alert-delivery', [
      { var: 'proxy_url', value: `http://alerts@127.0.0.1:${proxy.port}` },
      { var: 'proxy_password', value: PROXY_CANARY },
    ]);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(PROXY_CANARY);

    expect(await delivery.sendTest(outlet(receiver.url))).toEqual({ ok: true });
    expect(proxy.seen).toEqual([
      { method: 'POST', url: receiver.url, authorization: basic('alerts', PROXY_CANARY) },
    ]);
    expect(receiver.received).toHaveLength(2);
    // The proxy's credentials stop at the proxy.
    expect(receiver.received[1]!.headers['proxy-authorization']).toBeUndefined();
  });

  it('tunnels an https outlet with CONNECT and the same credentials (TLS end to end)', async () => {
    // A TCP listener in place of the outlet: what arrives through the tunnel is a TLS ClientHello.
    let firstByte: number | null = null;
    const tlsTarget = net.createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        firstByte = chunk[0] ?? null;
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => tlsTarget.listen(0, '127.0.0.1', resolve));
    const port = (tlsTarget.address() as net.AddressInfo).port;
    proxy.seen.length = 0;
    const result = await engine<DeliveryEngine>('alert-delivery').sendTest(
      outlet(`https://127.0.0.1:${port}/hook`),
    );
    await new Promise<void>((resolve) => tlsTarget.close(() => resolve()));
    expect(result.ok).toBe(false);
    expect(proxy.seen).toEqual([
      { method: 'CONNECT', url: `127.0.0.1:${port}`, authorization: basic('alerts', PROXY_CANARY) },
    ]);
    expect(firstByte).toBe(0x16); // TLS handshake record
  });

  it('a wrong password is a 407 failure that names no secret; the kept sentinel keeps the password', async () => {
    const delivery = engine<DeliveryEngine>('alert-delivery');
    proxy.expected = basic('alerts', 'another-password');
    const refused = await delivery.sendTest(outlet(receiver.url));
    expect(refused).toEqual({
      ok: false,
      error: 'The proxy refused the credentials (HTTP 407)',
    });
    const tunnel = await delivery.sendTest(outlet('https://127.0.0.1:9/hook'));
    expect(tunnel).toEqual({ ok: false, error: 'The proxy refused the credentials (HTTP 407)' });

    // The sentinel keeps the stored password through a complete replacement.
    proxy.expected = basic('alerts', PROXY_CANARY);
    proxy.seen.length = 0;
    const kept = await configure('alert-delivery', [
      { var: 'proxy_url', value: `http://alerts@127.0.0.1:${proxy.port}` },
      { var: 'proxy_password', value: { __encrypted__: true } },
    ]);
    expect(kept.status).toBe(200);
    expect(await delivery.sendTest(outlet(receiver.url))).toEqual({ ok: true });
    expect(proxy.seen[0]?.authorization).toBe(basic('alerts', PROXY_CANARY));

    // Without the variables, webhooks go direct again.
    expect((await configure('alert-delivery', [])).status).toBe(200);
    proxy.seen.length = 0;
    expect(await delivery.sendTest(outlet(receiver.url))).toEqual({ ok: true });
    expect(proxy.seen).toHaveLength(0);
  });

  it('never logs the proxy password or its Basic credentials', () => {
    const logged = logLines.join('');
    expect(logLines.length).toBeGreaterThan(0);
    expect(logged).not.toContain(PROXY_CANARY);
    expect(logged).not.toContain(Buffer.from(`alerts:${PROXY_CANARY}`).toString('base64'));
  });
});
