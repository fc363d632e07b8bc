/**
 * HTTP-level tests of the agent endpoints (spec part 2 "Agent installer", "Agent probes", "Agent
 * administration"; docs/agent-protocol.md): a real appliance on loopback, agents played by a
 * protocol peer (testing/agent-peer.ts) from their own 127.0.0.0/8 addresses.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { rawPublicKey } from './agent-protocol.rules.js';
import { AgentPeer, freeUdpPort } from '../../../../test/harness/agent-peer.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

let h: Harness;
let admin: string;
let udpPort: number;
let hostCounter = 10;
const peers: AgentPeer[] = [];
const logLines: string[] = [];

const nextAddress = () =>
  `127.0.${Math.floor(hostCounter / 250) + 40}.${(hostCounter++ % 250) + 2}`;
const peer = (uuid = `agent-${crypto.randomBytes(6).toString('hex')}`) => {
  const p = new AgentPeer(h.url, nextAddress(), uuid);
  peers.push(p);
  return p;
};
let tagDevice = 2;
/** Creates a device tag (a device carrying it: tags exist through their devices). */
const ensureTag = async (slug: string) => {
  const res = await h.request('POST', '/api/device/set', {
    token: admin,
    body: {
      ip_address: `127.0.30.${tagDevice++}`,
      label: `tag-${slug}`,
      profile: 'dash_generic',
      tags: [slug],
    },
  });
  expect(res.body.status, res.text).toBe(200);
};
const newToken = async (body: Record<string, unknown> = {}) => {
  const res = await h.request('POST', '/api/agent-tokens', { token: admin, body });
  expect(res.status).toBe(201);
  return res.body as { id: number; token: string };
};

beforeAll(async () => {
  udpPort = await freeUdpPort();
  const { Writable } = await import('node:stream');
  const pino = (await import('pino')).default;
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const { REDACT_PATHS } = await import('../../platform/logging/logger.js');
  h = await startAppliance(
    { APPLIANCE_AGENT_UDP_PORT: String(udpPort), APPLIANCE_BIND: '127.0.0.1' },
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

describe('enrollment tokens', () => {
  it('creates a token (201 row plus plaintext), stores only its hash, lists active rows newest first', async () => {
    const a = await newToken({ label: 'first', tags: ['lab'], ttl_seconds: 600 });
    const b = await newToken({ label: 'second' });
    expect(a).toMatchObject({
      label: 'first',
      tags: ['lab'],
      ttl_seconds: 600,
      single_use: true,
      consumed_at: null,
      revoked_at: null,
    });
    expect(a.token.length).toBeGreaterThanOrEqual(32);
    expect((b as any).ttl_seconds).toBe(86400);
    const stored = h.appliance.db
      .prepare('SELECT * FROM agent_enrollment_tokens WHERE id = ?')
      .get(a.id) as any;
    expect(JSON.stringify(stored)).not.toContain(a.token);
    expect(Buffer.from(stored.token_hash).toString('hex')).toBe(
      crypto.createHash('sha256').update(a.token).digest('hex'),
    );
    const list = await h.request('GET', '/api/agent-tokens', { token: admin });
    expect(list.status).toBe(200);
    const ids = (list.body as any[]).map((r) => r.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect(list.text).not.toContain(a.token);
    const one = await h.request('GET', `/api/agent-tokens/${a.id}`, { token: admin });
    expect(one.body).toMatchObject({ id: a.id, label: 'first' });
    expect(one.body.token).toBeUndefined();
  });

  it('validates every field with 400 {errors} and creates nothing', async () => {
    const before = (
      h.appliance.db.prepare('SELECT count(*) n FROM agent_enrollment_tokens').get() as any
    ).n;
    for (const body of [
      { label: 'x'.repeat(256) },
      { tags: ['y'.repeat(65)] },
      { ttl_seconds: 59 },
      { ttl_seconds: 2592001 },
      { single_use: 'yes' },
      { tags: 'lab' },
    ]) {
      const res = await h.request('POST', '/api/agent-tokens', { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors, JSON.stringify(body)).toBeTypeOf('object');
    }
    const after = (
      h.appliance.db.prepare('SELECT count(*) n FROM agent_enrollment_tokens').get() as any
    ).n;
    expect(after).toBe(before);
  });

  it('revokes once (200 {revoked: true}), then 409, keeps the row; 404 for a missing id; expired rows leave the list', async () => {
    const t = await newToken();
    const r1 = await h.request('DELETE', `/api/agent-tokens/${t.id}`, { token: admin });
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({ revoked: true });
    const r2 = await h.request('DELETE', `/api/agent-tokens/${t.id}`, { token: admin });
    expect(r2.status).toBe(409);
    expect(r2.body).toEqual({ error: 'Token already revoked' });
    const kept = await h.request('GET', `/api/agent-tokens/${t.id}`, { token: admin });
    expect(kept.body.revoked_at).not.toBeNull();
    const missing = await h.request('GET', '/api/agent-tokens/999999', { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Token not found' });
    expect((await h.request('DELETE', '/api/agent-tokens/999999', { token: admin })).status).toBe(
      404,
    );
    const list = await h.request('GET', '/api/agent-tokens', { token: admin });
    expect((list.body as any[]).some((r) => r.id === t.id)).toBe(false);
  });

  it('needs agentadmin; a tag-restricted admin keeps only slugs of their scope', async () => {
    const reader = await h.userWith(['devices']);
    const denied = await h.request('GET', '/api/agent-tokens', { token: reader.token });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(DENIED);
    await ensureTag('scope-a');
    const restricted = await h.userWith(['agentadmin'], { tags: ['scope-a'] });
    const res = await h.request('POST', '/api/agent-tokens', {
      token: restricted.token,
      body: { tags: ['scope-a', 'scope-b'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.tags).toEqual(['scope-a']);
  });
});

describe('enroll', () => {
  it('enrolls with a token: key bundle without update, a device with the token tags; single use refused after', async () => {
    const t = await newToken({ tags: ['enrolled'] });
    const p = peer();
    const res = await p.enroll(t.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      server_url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
      allowed_source_ips: ['127.0.0.1'],
      device_id: expect.any(Number),
    });
    expect(res.body.update).toBeUndefined();
    expect(res.body.server_id).toBe(
      crypto
        .createHash('sha256')
        .update(Buffer.from(res.body.public_key, 'base64url'))
        .digest('hex')
        .slice(0, 32),
    );
    const device = h.appliance.db
      .prepare('SELECT * FROM devices WHERE id = ?')
      .get(res.body.device_id) as any;
    expect(device).toMatchObject({
      ip_address: p.address,
      agent_uuid: p.agentUuid,
      enable_agent: 1,
    });
    const again = await peer().enroll(t.token);
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'Token already consumed' });
  });

  it('refuses unknown, revoked and expired tokens with their 401 messages', async () => {
    const unknown = await peer().enroll('x'.repeat(40));
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'Invalid token' });
    const revoked = await newToken();
    await h.request('DELETE', `/api/agent-tokens/${revoked.id}`, { token: admin });
    expect((await peer().enroll(revoked.token)).body).toEqual({ error: 'Token revoked' });
    const expired = await newToken({ ttl_seconds: 60 });
    h.clock.advance(61_000);
    const res = await peer().enroll(expired.token, {});
    h.clock.advance(-61_000);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Token expired' });
  });

  it('validates the body (400 {errors})', async () => {
    const t = await newToken({ single_use: false });
    for (const extra of [
      { token: 'short' },
      { token: 'x'.repeat(129) },
      { agent_uuid: 'short' },
      { agent_uuid: 'bad uuid with spaces' },
      { hostname: '<script>' },
      { hostname: 'x'.repeat(256) },
      { agent_version: 'v'.repeat(65) },
      { os_version: 'o'.repeat(129) },
      { arch: 'mips' },
    ]) {
      const res = await peer().enroll(t.token, extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.errors, JSON.stringify(extra)).toBeTypeOf('object');
    }
  });

  it('answers 409 when the source address is held by another device', async () => {
    const p = peer();
    await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: p.address, label: 'held', profile: 'dash_generic' },
    });
    const t = await newToken();
    const res = await p.enroll(t.token);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'IP address is held by another device' });
    // The token was not consumed by the refused enrollment.
    expect(
      (await h.request('GET', `/api/agent-tokens/${t.id}`, { token: admin })).body.consumed_at,
    ).toBeNull();
  });
});

describe('check-in signatures', () => {
  it('refuses a tampered body, a replayed nonce, an old timestamp, missing headers and another key for a known uuid', async () => {
    const p = peer();
    expect((await p.checkin()).status).toBe(202);
    const tampered = await p.post(
      '/api/agent/checkin',
      { agent_uuid: p.agentUuid, hostname: p.hostname },
      { tamper: (_h, body) => body.replace(p.hostname, 'other-host') },
    );
    expect(tampered.status).toBe(401);
    expect(tampered.body).toEqual({ error: 'Invalid signature' });
    // Replay: the exact same request twice.
    const body = JSON.stringify({ agent_uuid: p.agentUuid, hostname: p.hostname });
    let captured: Record<string, string> = {};
    const first = await p.post('/api/agent/checkin', body, {
      tamper: (headers, b) => {
        captured = { ...headers };
        return b;
      },
    });
    expect(first.status).toBe(202);
    const replay = await p.send('/api/agent/checkin', body, captured);
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({ error: 'Invalid signature' });
    const old = await p.post('/api/agent/checkin', body, { now: Date.now() - 121_000 });
    expect(old.status).toBe(401);
    const missing = await p.send('/api/agent/checkin', body, {
      'content-type': 'application/json',
    });
    expect(missing.status).toBe(401);
    const other = crypto.generateKeyPairSync('ed25519');
    const stolen = await p.post('/api/agent/checkin', body, {
      signer: { privateKey: other.privateKey, publicKey: rawPublicKey(other.publicKey) },
    });
    expect(stolen.status).toBe(401);
    expect(stolen.body).toEqual({ error: 'Invalid signature' });
  });
});

describe('check-in', () => {
  it('records a pending row (202), reappears after removal, stays hidden when hidden; import adopts it', async () => {
    const p = peer();
    const res = await p.checkin({ agent_version: '1.2.3', os_version: 'Windows Server 2022' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'pending', message: expect.any(String) });
    const row = () =>
      h.appliance.db
        .prepare('SELECT * FROM pending_devices WHERE agent_uuid = ?')
        .get(p.agentUuid) as any;
    expect(row()).toMatchObject({
      ip_address: p.address,
      source: 'agent',
      agent_version: '1.2.3',
      os_version: 'Windows Server 2022',
      profile: 'dash_windows_wmi',
      last_checkin_at: expect.any(Number),
    });
    await h.request('POST', '/api/removePendingDevice', { token: admin, body: { id: row().id } });
    expect(row()).toBeUndefined();
    expect((await p.checkin()).status).toBe(202);
    expect(row()).toBeDefined();
    await h.request('POST', '/api/hidePendingDevice', { token: admin, body: { id: row().id } });
    expect((await p.checkin()).status).toBe(202);
    expect(row().hidden).toBe(1);
    const imported = await h.request('POST', '/api/importPending', {
      token: admin,
      body: { id: row().id },
    });
    expect(imported.status).toBe(201);
    const adopted = await p.checkin();
    expect(adopted.status).toBe(200);
    expect(adopted.body.device_id).toBeTypeOf('number');
  });

  it('an unadopted agent on a held address: 409, then the override writes its pending row (import then fails on the duplicate)', async () => {
    const p = peer();
    await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: p.address, label: 'holder', profile: 'dash_generic' },
    });
    const conflict = await p.checkin();
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'IP address is held by another device' });
    expect(
      h.appliance.db.prepare('SELECT 1 FROM pending_devices WHERE agent_uuid = ?').get(p.agentUuid),
    ).toBeUndefined();
    const override = await p.checkin({ override: true });
    expect(override.status).toBe(202);
    const row = h.appliance.db
      .prepare('SELECT * FROM pending_devices WHERE agent_uuid = ?')
      .get(p.agentUuid) as any;
    expect(row.ip_address).toBe(p.address);
    const imported = await h.request('POST', '/api/importPending', {
      token: admin,
      body: { id: row.id },
    });
    expect(imported.body.status).toBe(false);
  });

  it('fast-tracks with a valid token; an adopted agent moves its device to its new address', async () => {
    const t = await newToken({ tags: ['fast'] });
    const p = peer();
    const res = await p.checkin({ token: t.token });
    expect(res.status, res.text).toBe(200);
    const deviceId = res.body.device_id;
    // The same agent (same key and uuid) now checks in from another address.
    const moved = new AgentPeer(h.url, nextAddress(), p.agentUuid, p.hostname);
    peers.push(moved);
    (moved as any).privateKey = p.privateKey;
    (moved as any).publicKey = p.publicKey;
    const again = await moved.checkin();
    expect(again.status).toBe(200);
    expect(again.body.device_id).toBe(deviceId);
    const ip = (
      h.appliance.db.prepare('SELECT ip_address FROM devices WHERE id = ?').get(deviceId) as any
    ).ip_address;
    expect(ip).toBe(moved.address);
  });

  it('answers 409 when another device holds the address, and accepts the override retry without moving anything', async () => {
    const t = await newToken();
    const p = peer();
    const enrolled = await p.enroll(t.token);
    const deviceId = enrolled.body.device_id;
    const mover = new AgentPeer(h.url, nextAddress(), p.agentUuid, p.hostname);
    peers.push(mover);
    (mover as any).privateKey = p.privateKey;
    (mover as any).publicKey = p.publicKey;
    await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: mover.address, label: 'squatter', profile: 'dash_generic' },
    });
    const conflict = await mover.checkin();
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'IP address is held by another device' });
    const override = await mover.checkin({ override: true });
    expect(override.status).toBe(200);
    expect(override.body.device_id).toBe(deviceId);
    const ip = (
      h.appliance.db.prepare('SELECT ip_address FROM devices WHERE id = ?').get(deviceId) as any
    ).ip_address;
    expect(ip).toBe(p.address);
    const audits = h.appliance.db
      .prepare("SELECT count(*) n FROM audit_log WHERE action = 'agent.ip_conflict'")
      .get() as any;
    expect(audits.n).toBeGreaterThanOrEqual(1);
    // A fast-track onto a held address stays 409 even with override.
    const stranger = new AgentPeer(
      h.url,
      mover.address,
      `agent-${crypto.randomBytes(6).toString('hex')}`,
    );
    peers.push(stranger);
    const t2 = await newToken();
    const refused = await stranger.checkin({ token: t2.token, override: true });
    expect(refused.status).toBe(409);
  });
});

describe('probes and results through the agent channel', () => {
  let p: AgentPeer;
  let deviceId: number;
  beforeAll(async () => {
    const t = await newToken({ tags: ['probed'] });
    p = peer();
    const res = await p.enroll(t.token);
    p.bundle = res.body;
    deviceId = res.body.device_id;
    await p.listen(udpPort);
  });

  it('returns the processes the agent posts, signed and verified end to end', async () => {
    const processes = [
      {
        pid: 1,
        ppid: 0,
        name: 'init',
        user: 'root',
        state: 'S',
        cpu_percent: 0.1,
        memory_bytes: 1024,
        command: '/sbin/init',
      },
    ];
    p.answer = (op) =>
      op === 'processes' ? { ok: true, data: processes } : { ok: false, error: 'no' };
    const res = await h.request('POST', '/api/getDeviceProcesses', {
      token: admin,
      body: { device_id: deviceId },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: 201, message: processes });
    expect(p.seen.at(-1)?.op).toBe('processes');
  });

  it('answers the failure shapes of each route when the agent reports an error', async () => {
    p.answer = () => ({ ok: false, error: 'services unavailable: no systemd' });
    const services = await h.request('POST', '/api/getDeviceServices', {
      token: admin,
      body: { device_id: deviceId },
    });
    expect(services.status).toBe(400);
    expect(services.body).toEqual({ message: 'services unavailable: no systemd' });
    const detail = await h.request('POST', '/api/getDetailedDiskUsage', {
      token: admin,
      body: { deviceid: deviceId },
    });
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({ status: false, message: 'services unavailable: no systemd' });
  });

  it('passes paths literally and audits deletions', async () => {
    p.answer = (op, args) => ({ ok: true, data: { deleted: args.path, op } });
    for (const weird of ['/tmp/;id', '/tmp/$(id)', '/tmp/-rf']) {
      const res = await h.request('POST', '/api/tryDeleteFile', {
        token: admin,
        body: { deviceid: deviceId, path: weird },
      });
      expect(res.body).toEqual({ status: 201, message: `Deleted ${weird}` });
      expect(p.seen.at(-1)).toMatchObject({ op: 'file.delete', args: { path: weird } });
    }
    const relative = await h.request('POST', '/api/tryDeleteFolder', {
      token: admin,
      body: { deviceid: deviceId, path: 'tmp/x' },
    });
    expect(relative.body).toEqual({ status: false, message: 'The path must be absolute' });
    const nul = await h.request('POST', '/api/getFolderUsageFromPath', {
      token: admin,
      body: { deviceid: deviceId, path: '/tmp/\u0000x' },
    });
    expect(nul.body).toEqual({ status: false, message: 'The path must be absolute' });
    const audits = h.appliance.db
      .prepare("SELECT count(*) n FROM audit_log WHERE action = 'agent.delete_file'")
      .get() as any;
    expect(audits.n).toBe(3);
  });

  it('getAgentID: exactly one of device_id or ip_address; 404 for a missing device', async () => {
    p.answer = () => ({ ok: true, data: { agent_uuid: p.agentUuid } });
    const byId = await h.request('POST', '/api/getAgentID', {
      token: admin,
      body: { device_id: deviceId },
    });
    expect(byId.body).toEqual({ status: 200, message: p.agentUuid });
    const byIp = await h.request('POST', '/api/getAgentID', {
      token: admin,
      body: { ip_address: p.address },
    });
    expect(byIp.body).toEqual({ status: 200, message: p.agentUuid });
    for (const body of [{}, { device_id: deviceId, ip_address: p.address }]) {
      const res = await h.request('POST', '/api/getAgentID', { token: admin, body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Either device ID or IP address is required' });
    }
    const missing = await h.request('POST', '/api/getAgentID', {
      token: admin,
      body: { device_id: 999999 },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Device not found' });
  });

  it('a tag-restricted user gets 404 on every probe and deletion route for an out-of-scope device', async () => {
    await ensureTag('elsewhere');
    const user = await h.userWith(['devices', 'write_devices', 'agentadmin'], {
      tags: ['elsewhere'],
    });
    const routes: [string, Record<string, unknown>][] = [
      ['/api/getDeviceProcesses', { device_id: deviceId }],
      ['/api/getDeviceServices', { device_id: deviceId }],
      ['/api/getAgentID', { device_id: deviceId }],
      ['/api/getAgentID', { ip_address: p.address }],
      ['/api/generateDiskUsage', { deviceid: deviceId }],
      ['/api/getDetailedDiskUsage', { deviceid: deviceId }],
      ['/api/getFolderUsageFromPath', { deviceid: deviceId, path: '/tmp' }],
      ['/api/tryDeleteFile', { deviceid: deviceId, path: '/tmp/x' }],
      ['/api/tryDeleteFolder', { deviceid: deviceId, path: '/tmp/x' }],
    ];
    const before = p.seen.length;
    for (const [url, body] of routes) {
      const res = await h.request('POST', url, { token: user.token, body });
      expect(res.status, url).toBe(404);
    }
    expect(p.seen.length).toBe(before);
  });

  it('refuses a result for an unknown request (404) and from another key (401)', async () => {
    const unknown = await p.post('/api/agent/results', {
      agent_uuid: p.agentUuid,
      request_id: 'nope',
      ok: true,
      data: 1,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Unknown request' });
    const other = crypto.generateKeyPairSync('ed25519');
    const forged = await p.post(
      '/api/agent/results',
      { agent_uuid: p.agentUuid, request_id: 'nope', ok: true, data: 1 },
      { signer: { privateKey: other.privateKey, publicKey: rawPublicKey(other.publicKey) } },
    );
    expect(forged.status).toBe(401);
  });

  it('results: 400 {errors} for the body shape, 413 past 8 MiB', async () => {
    for (const body of [
      { agent_uuid: p.agentUuid, ok: true },
      { agent_uuid: p.agentUuid, request_id: 'r', ok: 'yes' },
      { agent_uuid: 'bad', request_id: 'r', ok: true },
      { agent_uuid: p.agentUuid, request_id: 'r', ok: false, error: 'e'.repeat(1001) },
    ]) {
      const res = await p.post('/api/agent/results', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors).toBeTypeOf('object');
    }
    const huge = await p.post('/api/agent/results', {
      agent_uuid: p.agentUuid,
      request_id: 'r',
      ok: true,
      data: 'x'.repeat(8 * 1024 * 1024 + 10),
    });
    expect(huge.status).toBe(413);
  });

  it('check-in: 400 {errors} for each field rule, nothing written', async () => {
    const q = peer();
    for (const extra of [
      { agent_uuid: 'a b c d e f g' },
      { hostname: 'has>bracket' },
      { hostname: 'tab\there' },
      { arch: 'x86' },
      { token: 'short-token' },
      { override: 'yes' },
    ]) {
      const res = await q.checkin(extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.errors, JSON.stringify(extra)).toBeTypeOf('object');
    }
    expect(
      h.appliance.db.prepare('SELECT 1 FROM agents WHERE agent_uuid = ?').get(q.agentUuid),
    ).toBeUndefined();
  });
});
