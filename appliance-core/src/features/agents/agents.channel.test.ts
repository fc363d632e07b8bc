/**
 * The agent channel end to end with a protocol peer (test/harness/agent-peer.ts) on loopback:
 * adoption by key over UDP (docs/agent-protocol.md §6), the signed download URL and staged
 * installers (§7, §8), trackers fed through the agent, rate limits and the source address, and
 * the canaries (secrets never in an answer, /openapi.json or the log).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPeer, freeUdpPort } from '../../../../test/harness/agent-peer.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { REDACT_PATHS } from '../../platform/logging/logger.js';
import { downloadSignature } from './agent-protocol.rules.js';
import { AgentKeys } from './agent-keys.service.js';
import type { AgentTrackersEngine } from './agent-trackers.engine.js';

let h: Harness;
let admin: string;
let udpPort: number;
let hostCounter = 2;
const peers: AgentPeer[] = [];
const logLines: string[] = [];
const secrets: string[] = [];

const nextAddress = () =>
  `127.0.${60 + Math.floor(hostCounter / 250)}.${(hostCounter++ % 250) + 2}`;
const peer = () => {
  const p = new AgentPeer(h.url, nextAddress(), `agent-${crypto.randomBytes(6).toString('hex')}`);
  peers.push(p);
  return p;
};
const newToken = async (body: Record<string, unknown> = {}) => {
  const res = await h.request('POST', '/api/agent-tokens', { token: admin, body });
  expect(res.status).toBe(201);
  secrets.push(res.body.token);
  return res.body as { id: number; token: string };
};
const enrolled = async () => {
  const p = peer();
  const res = await p.enroll((await newToken()).token);
  expect(res.status, res.text).toBe(200);
  p.bundle = res.body;
  await p.listen(udpPort);
  return { p, deviceId: res.body.device_id as number };
};
const stage = (arch: string, version = '2.0.0') => {
  const dir = path.join(h.appliance.ctx.config.agentInstallers as string, arch);
  fs.mkdirSync(dir, { recursive: true });
  const bytes = crypto.randomBytes(4096);
  fs.writeFileSync(path.join(dir, 'agent.tar.gz'), bytes);
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  fs.writeFileSync(
    path.join(dir, 'agent.json'),
    JSON.stringify({ version, arch, sha256, signature: 'c2ln' }),
  );
  return { bytes, sha256 };
};
const download = (query: string, token?: string) =>
  h.request('GET', `/api/agent/download${query}`, token ? { token } : {});

beforeAll(async () => {
  udpPort = await freeUdpPort();
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h = await startAppliance(
    { APPLIANCE_AGENT_UDP_PORT: String(udpPort) },
    {
      logger: pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink),
    },
  );
  admin = await h.login();
});
afterAll(async () => {
  for (const p of peers) await p.close();
  await h?.close();
});

describe('adopt-by-token (UDP exchange)', () => {
  it('adopts a host: device created with the reported hostname, key registered, enrolled=true after the ack', async () => {
    const p = peer();
    p.adoptionKey = 'adopt-key-0123456789';
    secrets.push(p.adoptionKey);
    await p.listen(udpPort);
    const res = await h.request('POST', '/api/agent/adopt-by-token', {
      token: admin,
      body: { ip_address: p.address, token: p.adoptionKey, tags: ['adopted'] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      device_id: expect.any(Number),
      agent_uuid: p.agentUuid,
      enrolled: true,
    });
    const device = h.appliance.db
      .prepare('SELECT * FROM devices WHERE id = ?')
      .get(res.body.device_id) as any;
    expect(device).toMatchObject({
      label: p.hostname,
      ip_address: p.address,
      profile: 'dash_windows_wmi',
      agent_uuid: p.agentUuid,
    });
    expect(p.bundle).toMatchObject({
      device_id: res.body.device_id,
      allowed_source_ips: ['127.0.0.1'],
    });
    // The adopted agent now answers probes and checks in with its key.
    p.answer = () => ({ ok: true, data: [] });
    const probe = await h.request('POST', '/api/getDeviceServices', {
      token: admin,
      body: { device_id: res.body.device_id },
    });
    expect(probe.body).toEqual({ status: 201, message: [] });
    expect((await p.checkin()).status).toBe(200);
  });

  it("drops a tag-restricted caller's out-of-scope tag slugs silently", async () => {
    await h.request('POST', '/api/device/set', {
      token: admin,
      body: {
        ip_address: '127.0.59.2',
        label: 'tag holder',
        profile: 'dash_generic',
        tags: ['team-x'],
      },
    });
    const user = await h.userWith(['devices', 'write_devices'], { tags: ['team-x'] });
    const p = peer();
    p.adoptionKey = 'restricted-key-123456';
    await p.listen(udpPort);
    const res = await h.request('POST', '/api/agent/adopt-by-token', {
      token: user.token,
      body: { ip_address: p.address, token: p.adoptionKey, tags: ['team-x', 'team-y'] },
    });
    expect(res.status, res.text).toBe(200);
    const slugs = h.appliance.db
      .prepare(
        'SELECT t.slug FROM device_tags dt JOIN tags t ON t.id = dt.tag_id WHERE dt.device_id = ?',
      )
      .all(res.body.device_id)
      .map((r: any) => r.slug);
    expect(slugs).toEqual(['team-x']);
    expect(
      h.appliance.db.prepare("SELECT 1 FROM tags WHERE slug = 'team-y'").get(),
    ).toBeUndefined();
  });

  it('answers enrolled=false when the push is not acknowledged; the retry with the same key finds the device', async () => {
    const p = peer();
    p.adoptionKey = 'second_key-abcdefgh';
    p.ack = false;
    await p.listen(udpPort);
    const body = { ip_address: p.address, token: p.adoptionKey, label: 'my label' };
    const first = await h.request('POST', '/api/agent/adopt-by-token', { token: admin, body });
    expect(first.status).toBe(200);
    expect(first.body.enrolled).toBe(false);
    expect(p.pushes).toBe(3);
    p.ack = true;
    const retry = await h.request('POST', '/api/agent/adopt-by-token', { token: admin, body });
    expect(retry.body).toEqual({
      device_id: first.body.device_id,
      agent_uuid: p.agentUuid,
      enrolled: true,
    });
    const label = (
      h.appliance.db
        .prepare('SELECT label FROM devices WHERE id = ?')
        .get(first.body.device_id) as any
    ).label;
    expect(label).toBe('my label');
  }, 20_000);

  it('answers one identical 404 for a wrong key and for a silent host', async () => {
    const p = peer();
    p.adoptionKey = 'right-key-1234567890';
    await p.listen(udpPort);
    const wrong = await h.request('POST', '/api/agent/adopt-by-token', {
      token: admin,
      body: { ip_address: p.address, token: 'wrong-key-1234567890' },
    });
    const silent = await h.request('POST', '/api/agent/adopt-by-token', {
      token: admin,
      body: { ip_address: nextAddress(), token: 'right-key-1234567890' },
    });
    expect(wrong.status).toBe(404);
    expect(wrong.body).toEqual({ error: 'Agent not reachable or adoption key not accepted' });
    expect(silent.status).toBe(404);
    expect(silent.text).toBe(wrong.text);
  }, 20_000);

  it('validates the body (400 {errors}); needs devices and write_devices; the 16th request of a minute gets 429', async () => {
    for (const body of [
      {},
      { ip_address: '127.0.0.9' },
      { ip_address: 'not-an-ip', token: 'abcdefghij' },
      { ip_address: '127.0.0.9', token: 'short' },
      { ip_address: '127.0.0.9', token: 'has spaces in it' },
      { ip_address: '127.0.0.9', token: 'k'.repeat(65) },
      { ip_address: '127.0.0.9', token: 'abcdefghij', profile: 'no_such_profile' },
    ]) {
      const res = await h.request('POST', '/api/agent/adopt-by-token', { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors, JSON.stringify(body)).toBeTypeOf('object');
    }
    const reader = await h.userWith(['devices']);
    const denied = await h.request('POST', '/api/agent/adopt-by-token', {
      token: reader.token,
      body: {},
    });
    expect(denied.status).toBe(401);
    const user = await h.userWith(['devices', 'write_devices']);
    for (let i = 0; i < 15; i++) {
      const res = await h.request('POST', '/api/agent/adopt-by-token', {
        token: user.token,
        body: {},
      });
      expect(res.status).toBe(400);
    }
    const limited = await h.request('POST', '/api/agent/adopt-by-token', {
      token: user.token,
      body: {},
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('download (bearer or signed URL) and staged installers', () => {
  it('answers 404 when nothing is staged and 400 for an unsupported arch', async () => {
    const none = await download('?arch=arm64', admin);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ status: false, message: 'No agent installer is staged for arm64' });
    const bad = await download('?arch=mips', admin);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      status: false,
      message: 'Unsupported architecture: use amd64 or arm64',
    });
  });

  it('offers the staged installer in an adopted check-in; its signed URL downloads it; tampered, expired and other-arch URLs are refused', async () => {
    const { bytes, sha256 } = stage('amd64');
    const { p } = await enrolled();
    const res = await p.checkin({ arch: 'amd64' });
    expect(res.status).toBe(200);
    expect(res.body.update).toMatchObject({ version: '2.0.0', sha256, signature: 'c2ln' });
    const url = new URL(res.body.update.url);
    expect(url.pathname).toBe('/api/agent/download');
    const ok = await request(`${h.url}/api/agent/download${url.search}`, {
      dispatcher: p.dispatcher,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.from(await ok.body.arrayBuffer()).equals(bytes)).toBe(true);
    const refused = { status: false, message: 'Invalid or expired download signature' };
    const sig = url.searchParams.get('sig') as string;
    const flipped = sig.slice(0, -2) + (sig.at(-2) === 'A' ? 'B' : 'A') + sig.at(-1);
    const tampered = await download(url.search.replace(sig, flipped));
    expect(tampered.status).toBe(401);
    expect(tampered.body).toEqual(refused);
    const otherArch = await download(url.search.replace('arch=amd64', 'arch=arm64'));
    expect(otherArch.status).toBe(401);
    h.clock.advance(3_601_000);
    const expired = await download(url.search);
    h.clock.advance(-3_601_000);
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual(refused);
    // An arm64 agent gets no update while only amd64 is staged; enroll never carries one.
    expect((await p.checkin({ arch: 'arm64' })).body.update).toBeUndefined();
    const fresh = peer();
    expect((await fresh.enroll((await newToken()).token)).body.update).toBeUndefined();
    // A bearer of any user downloads too; nothing at all is 401.
    const anyone = await h.userWith([]);
    expect((await download('', anyone.token)).status).toBe(200);
    expect((await download('')).status).toBe(401);
    // A signature made with another secret is refused.
    const forged = downloadSignature(crypto.randomBytes(32), 'amd64', Date.now() + 60_000);
    expect(
      (await download(`?arch=amd64&expires=${Date.now() + 60_000}&sig=${forged}`)).status,
    ).toBe(401);
  });
});

describe('trackers fed through the agent channel', () => {
  it('polls a service tracker and an event-log tracker (one day of backfill, journal priorities mapped)', async () => {
    const { p, deviceId } = await enrolled();
    const now = Date.now();
    p.answer = (op, args) => {
      if (op === 'services')
        return { ok: true, data: [{ Name: 'sshd', State: 'Running', DisplayName: 'OpenSSH' }] };
      if (op === 'eventlog.read')
        return {
          ok: true,
          data: [
            {
              record_id: 1,
              timestamp: now - 2 * 86_400_000,
              event_id: 0,
              log: 'old.service',
              source: 'old',
              severity: 1,
              data: 'too old',
            },
            {
              record_id: 2,
              timestamp: now - 3_600_000,
              event_id: 0,
              log: 'sshd.service',
              source: 'sshd',
              severity: 2,
              data: 'error line',
            },
            {
              record_id: 3,
              timestamp: now - 60_000,
              event_id: 0,
              log: 'cron.service',
              source: 'cron',
              severity: 0,
              data: 'info line',
            },
          ],
        };
      return { ok: false, error: `unexpected ${op} ${JSON.stringify(args)}` };
    };
    const service = await h.request('POST', '/api/service/set', {
      token: admin,
      body: { deviceId, name: 'sshd', enable_logging: true },
    });
    expect(service.status, service.text).toBeLessThan(300);
    // Query 1: 'System: critical and errors' (Windows levels 1 and 2).
    const tracker = await h.request('POST', '/api/eventlog/trackers', {
      token: admin,
      body: { device_id: deviceId, query_id: 1 },
    });
    expect(tracker.status, tracker.text).toBe(201);
    const engine = h.appliance.engines.find(
      (e) => e.name === 'agent-trackers',
    ) as unknown as AgentTrackersEngine;
    await engine.pollDue();
    const read = p.seen.find((s) => s.op === 'eventlog.read');
    expect(read?.args.since).toBeGreaterThanOrEqual(now - 86_400_000 - 5_000);
    expect(read?.args.since).toBeLessThanOrEqual(now - 86_400_000 + 60_000);
    const deadline = Date.now() + 10_000;
    let value: string | null = null;
    while (Date.now() < deadline) {
      value =
        (
          h.appliance.db
            .prepare('SELECT value FROM oid_trackers WHERE device_id = ?')
            .get(deviceId) as any
        )?.value ?? null;
      if (value !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(value).toBe('Running');
    // The cursor commits with the rows: record 2 stored (error, within the day); record 1 older than
    // the day of backfill, record 3 an info row the query's levels do not select.
    let cursor: any = null;
    while (Date.now() < deadline + 5_000) {
      cursor = h.appliance.db
        .prepare('SELECT * FROM eventlog_trackers WHERE id = ?')
        .get(tracker.body.id);
      if (cursor?.last_polled_at !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(cursor).toMatchObject({ last_record_id: 2, last_event_at: now - 3_600_000 });
    expect(p.seen.filter((s) => s.op === 'eventlog.read').length).toBe(1);
    // Not due again at once.
    await engine.pollDue();
    expect(p.seen.filter((s) => s.op === 'eventlog.read').length).toBe(1);
  }, 30_000);
});

describe('rate limits and the source address', () => {
  it('the 61st check-in of a minute gets 429 with Retry-After; X-Forwarded-For changes neither the key nor the source address', async () => {
    const p = peer();
    for (let i = 0; i < 60; i++) {
      const res = await p.post(
        '/api/agent/checkin',
        { agent_uuid: p.agentUuid, hostname: p.hostname },
        { headers: { 'x-forwarded-for': `127.0.99.${i + 1}` } },
      );
      expect(res.status, res.text).toBe(202);
    }
    const limited = await p.post(
      '/api/agent/checkin',
      { agent_uuid: p.agentUuid, hostname: p.hostname },
      { headers: { 'x-forwarded-for': '127.0.98.1' } },
    );
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const row = h.appliance.db
      .prepare('SELECT ip_address FROM pending_devices WHERE agent_uuid = ?')
      .get(p.agentUuid) as any;
    expect(row.ip_address).toBe(p.address);
    // Another address has its own bucket.
    expect((await peer().checkin()).status).toBe(202);
  });

  it('the 121st result of a minute gets 429', async () => {
    const { p } = await enrolled();
    const body = { agent_uuid: p.agentUuid, request_id: 'none', ok: true, data: null };
    for (let i = 0; i < 120; i++)
      expect((await p.post('/api/agent/results', body)).status).toBe(404);
    const limited = await p.post('/api/agent/results', body);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the 31st enroll of a minute gets 429 with Retry-After', async () => {
    const p = peer();
    for (let i = 0; i < 30; i++) expect((await p.enroll('z'.repeat(40))).status).toBe(401);
    const limited = await p.enroll('z'.repeat(40));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('an agent that does not answer', () => {
  it('the probe waits at most 15 s, then answers its failure shape with Agent did not answer', async () => {
    const { p, deviceId } = await enrolled();
    p.answer = () => null;
    const started = Date.now();
    const res = await h.request('POST', '/api/getDeviceProcesses', {
      token: admin,
      body: { device_id: deviceId },
    });
    const took = Date.now() - started;
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Agent did not answer' });
    expect(took).toBeGreaterThanOrEqual(14_500);
    expect(took).toBeLessThan(17_000);
    expect(p.seen.at(-1)?.op).toBe('processes');
    const metrics = await h.request('GET', '/metrics', { token: admin });
    expect(metrics.text).toMatch(/appliance_agent_requests_total\{outcome="unanswered"\} [1-9]/);
    expect(metrics.text).toMatch(/appliance_agent_datagrams_total\{outcome="sent"\} [1-9]/);
  }, 25_000);
});

describe('the appliance key', () => {
  it('is created once, sealed at rest, and the same after the feature is built again (a restart)', async () => {
    const rows = h.appliance.db.prepare('SELECT * FROM agent_secrets ORDER BY name').all() as any[];
    expect(rows.map((r) => r.name)).toEqual(['appliance_key', 'download_secret']);
    for (const r of rows) {
      expect(r.sealed).toMatch(/^v1:/);
      expect(r.sealed).not.toContain('PRIVATE KEY');
    }
    const again = new AgentKeys(h.appliance.db, h.appliance.ctx.secrets, Date.now());
    const t = await newToken();
    const res = await peer().enroll(t.token);
    expect(res.body.public_key).toBe(again.publicKey);
    expect(res.body.server_id).toBe(again.serverId);
    expect(JSON.stringify(again)).not.toContain('PRIVATE');
    expect((h.appliance.db.prepare('SELECT count(*) n FROM agent_secrets').get() as any).n).toBe(2);
  });
});

describe('canaries', () => {
  it('never shows enrollment tokens, adoption keys or the appliance private key in answers, /openapi.json or the log', async () => {
    const sealed = h.appliance.db
      .prepare("SELECT sealed FROM agent_secrets WHERE name = 'appliance_key'")
      .get() as any;
    const pem = h.appliance.ctx.secrets.open(sealed.sealed);
    const der = crypto.createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
    const jwk = crypto.createPrivateKey(pem).export({ format: 'jwk' });
    const dl = h.appliance.ctx.secrets.open(
      (
        h.appliance.db
          .prepare("SELECT sealed FROM agent_secrets WHERE name = 'download_secret'")
          .get() as any
      ).sealed,
    );
    const canaries = [
      ...secrets,
      jwk.d as string,
      der.toString('base64'),
      der.toString('base64url'),
      dl,
    ];
    const openapi = await h.request('GET', '/openapi.json');
    const list = await h.request('GET', '/api/agent-tokens', { token: admin });
    const audit = await h.request('GET', '/api/audit', { token: admin });
    const haystack = [openapi.text, list.text, audit.text, logLines.join('\n')].join('\n');
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    for (const c of canaries) expect(haystack.includes(c), c.slice(0, 6)).toBe(false);
  });
});
