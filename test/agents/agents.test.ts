/**
 * End to end: the real agent (agent/dist/cli.js, a separate process) and a real appliance (HTTPS
 * on loopback, real SQLite) speaking docs/agent-protocol.md. Each agent runs unprivileged on the
 * same ephemeral UDP port (the appliance's APPLIANCE_AGENT_UDP_PORT) bound to its own 127.0.91.x
 * address, which is also its check-ins' source address.
 */
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createHash, generateKeyPairSync, sign as sign_, type KeyObject } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freeUdpPort } from '../harness/agent-peer.js';
import { startAppliance, type Harness } from '../harness/appliance.js';
import {
  AGENT_FIXTURES,
  buildAgent,
  certificateFingerprint,
  startAgent,
  startRelay,
  type AgentProcess,
} from './agent-process.js';

let h: Harness;
let admin: string;
let pin: string;
let udpPort: number;
const work = mkdtempSync(path.join(tmpdir(), 'agents-e2e-'));
const running: AgentProcess[] = [];

const address = (n: number) => `127.0.91.${n}`;

function agent(
  bind: string,
  options: { stateDir?: string; args?: string[]; env?: Record<string, string> } = {},
) {
  const stateDir = options.stateDir ?? mkdtempSync(path.join(work, 'state-'));
  const a = startAgent({
    server: h.url,
    stateDir,
    bind,
    udpPort,
    pin,
    ...(options.args ? { args: options.args } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  running.push(a);
  return Object.assign(a, { stateDir });
}

async function newToken(body: Record<string, unknown> = {}) {
  const res = await h.request('POST', '/api/agent-tokens', { token: admin, body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; token: string };
}

const deviceRow = (id: number) =>
  h.appliance.db.prepare('SELECT id, ip_address, label FROM devices WHERE id = ?').get(id) as
    { id: number; ip_address: string; label: string } | undefined;

async function until<T>(
  read: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  buildAgent();
  udpPort = await freeUdpPort();
  h = await startAppliance({
    APPLIANCE_AGENT_UDP_PORT: String(udpPort),
    APPLIANCE_BIND: '127.0.0.1',
  });
  admin = await h.login();
  pin = await certificateFingerprint(h.url);
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((a) => a.stop()));
  await h?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('enrollment', () => {
  let enrolled: ReturnType<typeof agent>;
  let deviceId: number;

  it('enrolls with a token and checks in adopted; a second use of the single-use token is refused', async () => {
    const { token } = await newToken({ label: 'e2e' });
    enrolled = agent(address(11), { args: ['--enroll', token] });
    const ok = await enrolled.waitFor('enroll.ok');
    deviceId = ok.device_id as number;
    expect(deviceRow(deviceId)?.ip_address).toBe(address(11));
    await enrolled.waitFor('checkin.adopted');
    expect(existsSync(path.join(enrolled.stateDir, 'bundle.json'))).toBe(true);

    const again = agent(address(12), { args: ['--enroll', token] });
    expect(await again.exited).toBe(2);
    expect(again.lines.find((l) => l.event === 'enroll.refused')).toMatchObject({
      error: 'Token already consumed',
    });
    // The token is in no log line of either agent.
    expect(enrolled.stderr() + again.stderr()).not.toContain(token);
  });

  it('refuses a revoked and an expired token with their messages', async () => {
    const revoked = await newToken();
    expect(
      (await h.request('DELETE', `/api/agent-tokens/${revoked.id}`, { token: admin })).status,
    ).toBe(200);
    const a = agent(address(13), { args: ['--enroll', revoked.token] });
    expect(await a.exited).toBe(2);
    expect(a.lines.find((l) => l.event === 'enroll.refused')).toMatchObject({
      error: 'Token revoked',
    });

    const expiring = await newToken({ ttl_seconds: 60 });
    h.clock.advance(61_000);
    try {
      const b = agent(address(13), { args: ['--enroll', expiring.token] });
      expect(await b.exited).toBe(2);
      expect(b.lines.find((l) => l.event === 'enroll.refused')).toMatchObject({
        error: 'Token expired',
      });
    } finally {
      h.clock.advance(-61_000);
    }
  });

  it('an adopted agent checking in from a second address moves its device there', async () => {
    await enrolled.stop();
    const moved = agent(address(21), { stateDir: enrolled.stateDir });
    await moved.waitFor('checkin.adopted');
    expect(deviceRow(deviceId)?.ip_address).toBe(address(21));
    await moved.stop();
  });

  it('answers 409 for an address held by another device; the override retry is accepted without moving anything', async () => {
    const squatter = await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: address(22), label: 'squatter', profile: 'dash_generic' },
    });
    expect(squatter.body.status, squatter.text).toBe(200);
    const conflicted = agent(address(22), { stateDir: enrolled.stateDir });
    const conflict = await conflicted.waitFor('checkin.conflict');
    expect(conflict.error).toBe('IP address is held by another device');
    await conflicted.waitFor('checkin.adopted');
    // Exactly one retry, with override, per check-in: the conflict line precedes each adopted one.
    const events = conflicted.lines.map((l) => l.event).filter((e) => e.startsWith('checkin.'));
    expect(events.slice(0, 2)).toEqual(['checkin.conflict', 'checkin.adopted']);
    expect(deviceRow(deviceId)?.ip_address).toBe(address(21));
    expect(deviceRow(squatter.body.device.id)?.ip_address).toBe(address(22));
    await conflicted.stop();
  });
});

describe('pending check-in and import', () => {
  it('an agent without a token is pending until an operator imports it, then adopted', async () => {
    const a = agent(address(14));
    await a.waitFor('checkin.pending');
    const uuid = (await a.waitFor('agent.start')).agent_uuid as string;
    const row = h.appliance.db
      .prepare('SELECT * FROM pending_devices WHERE agent_uuid = ?')
      .get(uuid) as Record<string, unknown>;
    expect(row).toMatchObject({ ip_address: address(14), source: 'agent', agent_version: '1.0.0' });
    expect(row.last_checkin_at).toEqual(expect.any(Number));
    const imported = await h.request('POST', '/api/importPending', {
      token: admin,
      body: { id: row.id },
    });
    expect(imported.status, imported.text).toBe(201);
    const adopted = await a.waitFor('checkin.adopted');
    expect(deviceRow(adopted.device_id as number)?.ip_address).toBe(address(14));
    await a.stop();
  });
});

describe('adoption by key', () => {
  const adopt = (ip: string, token: string) =>
    h.request('POST', '/api/agent/adopt-by-token', {
      token: admin,
      body: { ip_address: ip, token },
    });
  let deviceId: number;
  let adopted: ReturnType<typeof agent>;

  it('adopts an agent holding the key: enrolled, then it checks in adopted', async () => {
    const key = 'Adopt_e2e-0123456789';
    adopted = agent(address(31), { args: ['--adoption-key', key] });
    await adopted.waitFor('udp.listening');
    const res = await adopt(address(31), key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ enrolled: true, device_id: expect.any(Number) });
    deviceId = res.body.device_id;
    expect(res.body.agent_uuid).toBe((await adopted.waitFor('agent.start')).agent_uuid);
    await adopted.waitFor('adoption.adopted');
    await adopted.waitFor('checkin.adopted');
    expect(existsSync(path.join(adopted.stateDir, 'adoption-key'))).toBe(false);
    expect(adopted.stderr()).not.toContain(key);
  }, 60_000);

  it('answers enrolled=false when the bundle push is lost, and the retry with the same key completes', async () => {
    const key = 'Adopt_lossy-0123456789';
    const target = agent(address(33), { args: ['--adoption-key', key] });
    await target.waitFor('udp.listening');
    let losePushes = true;
    const relay = await startRelay(
      address(32),
      udpPort,
      address(33),
      (kind) => losePushes && kind === 4,
    );
    try {
      const first = await adopt(address(32), key);
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({ enrolled: false });
      expect(relay.dropped.filter((k) => k === 4).length).toBe(3);
      losePushes = false;
      const retry = await adopt(address(32), key);
      expect(retry.status, retry.text).toBe(200);
      expect(retry.body).toEqual({ ...first.body, enrolled: true });
      await target.waitFor('adoption.adopted');
    } finally {
      await relay.close();
    }
  }, 60_000);

  it('a lost ack is answered again when the appliance repeats the push: enrolled=true', async () => {
    const key = 'Adopt_ack-0123456789';
    const target = agent(address(36), { args: ['--adoption-key', key] });
    await target.waitFor('udp.listening');
    let acks = 0; // the first ack is lost
    const relay = await startRelay(address(35), udpPort, address(36), () => false, {
      dropAnswer: (kind) => kind === 5 && acks++ === 0,
    });
    try {
      const res = await adopt(address(35), key);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ enrolled: true });
      expect(acks).toBe(2);
      expect(relay.seen.filter((d) => d[5] === 4).length).toBe(2);
      expect(target.lines.filter((l) => l.event === 'adoption.adopted').length).toBe(1);
    } finally {
      await relay.close();
    }
  }, 60_000);

  it('answers the one 404 for a wrong key', async () => {
    const target = agent(address(34), { args: ['--adoption-key', 'Right_key-0123456789'] });
    await target.waitFor('udp.listening');
    const res = await adopt(address(34), 'Wrong_key-0123456789');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Agent not reachable or adoption key not accepted' });
    await target.waitFor('adoption.dropped', (l) => l.reason === 'hmac');
  }, 60_000);

  it('probes: real processes, exact folder usage, literal deletion, the agent id', async () => {
    const pid = adopted.child.pid;
    const processes = await h.request('POST', '/api/getDeviceProcesses', {
      token: admin,
      body: { device_id: deviceId },
    });
    expect(processes.status, processes.text).toBe(200);
    expect(processes.body.status).toBe(201);
    expect(processes.body.message.find((p: { pid: number }) => p.pid === pid)).toMatchObject({
      command: expect.stringContaining('agent/dist/cli.js'),
    });

    const tree = path.join(work, 'tree $(id);x');
    mkdirSync(path.join(tree, '-sub'), { recursive: true });
    writeFileSync(path.join(tree, 'a.bin'), Buffer.alloc(4096));
    writeFileSync(path.join(tree, '-sub', ';id'), Buffer.alloc(100));
    const usage = await h.request('POST', '/api/getFolderUsageFromPath', {
      token: admin,
      body: { deviceid: deviceId, path: tree },
    });
    expect(usage.body, usage.text).toMatchObject({
      status: 201,
      message: { path: tree, size: 4196, children: [{ size: 4096 }, { size: 100 }] },
    });

    const victim = path.join(tree, '-sub', ';id');
    const deleted = await h.request('POST', '/api/tryDeleteFile', {
      token: admin,
      body: { deviceid: deviceId, path: victim },
    });
    expect(deleted.body).toEqual({ status: 201, message: `Deleted ${victim}` });
    expect(existsSync(victim)).toBe(false);
    expect(existsSync(path.join(tree, 'a.bin'))).toBe(true);

    const generate = await h.request('POST', '/api/generateDiskUsage', {
      token: admin,
      body: { deviceid: deviceId },
    });
    expect(generate.body.status, generate.text).toBe(201);

    const id = await h.request('POST', '/api/getAgentID', {
      token: admin,
      body: { device_id: deviceId },
    });
    expect(id.body).toEqual({
      status: 200,
      message: (await adopted.waitFor('agent.start')).agent_uuid,
    });

    // No systemd runs here: the agent says so, and the route passes it on.
    const services = await h.request('POST', '/api/getDeviceServices', {
      token: admin,
      body: { device_id: deviceId },
    });
    if (!existsSync('/run/systemd/system'))
      expect(services.body).toEqual({ message: 'services unavailable: no systemd' });
    // Its disk scan runs in the background: stop it rather than let it walk the machine.
    await adopted.stop();
  }, 60_000);
});

const journalRemote = [
  '/usr/lib/systemd/systemd-journal-remote',
  '/lib/systemd/systemd-journal-remote',
].find(existsSync);
describe.runIf(journalRemote !== undefined || process.env.REQUIRE_PEERS === '1')(
  'trackers filled through the agent',
  () => {
    it('a service tracker and an event-log tracker get their readings and events from the agent', async () => {
      if (!journalRemote)
        throw new Error(
          'REQUIRE_PEERS=1: systemd-journal-remote is not installed (Debian package: systemd-journal-remote; run npm run setup:debian)',
        );
      // A journal with one entry per priority from ten minutes ago (within the first poll's day).
      const base = (Date.now() - 600_000) * 1000;
      const exportText = Array.from({ length: 8 }, (_, p) =>
        [
          `__REALTIME_TIMESTAMP=${base + p * 1_000_000}`,
          `__MONOTONIC_TIMESTAMP=${1_000_000 + p * 1_000_000}`,
          '_BOOT_ID=0123456789abcdef0123456789abcdef',
          `PRIORITY=${p}`,
          'SYSLOG_IDENTIFIER=e2e',
          '_SYSTEMD_UNIT=e2e.service',
          `MESSAGE=e2e priority ${p}`,
          '',
          '',
        ].join('\n'),
      ).join('');
      const exportFile = path.join(work, 'journal.export');
      writeFileSync(exportFile, exportText);
      const journal = path.join(work, 'e2e.journal');
      execFileSync(journalRemote, [`--output=${journal}`, exportFile], { stdio: 'ignore' });
      // No systemd runs here: systemd's run folder is the test's, systemctl a stand-in (fixtures/bin).
      const systemdDir = mkdtempSync(path.join(work, 'systemd-'));
      const { token } = await newToken();
      const a = agent(address(41), {
        args: ['--enroll', token, '--journal-file', journal],
        env: {
          NETMON_AGENT_SYSTEMD_DIR: systemdDir,
          PATH: `${path.join(AGENT_FIXTURES, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
        },
      });
      const deviceId = (await a.waitFor('enroll.ok')).device_id as number;

      const cron = await h.request('POST', '/api/service/set', {
        token: admin,
        body: { name: 'cron', deviceId },
      });
      const nginx = await h.request('POST', '/api/service/set', {
        token: admin,
        body: { name: 'nginx', deviceId },
      });
      expect(cron.status, cron.text).toBe(201);
      const queries = await h.request('GET', '/api/eventlog/queries', { token: admin });
      const query = (queries.body as { id: number; label: string }[]).find(
        (q) => q.label === 'System: critical and errors',
      );
      const tracker = await h.request('POST', '/api/eventlog/trackers', {
        token: admin,
        body: { device_id: deviceId, query_id: query?.id },
      });
      expect(tracker.status, tracker.text).toBe(201);

      const value = (id: number) =>
        (
          h.appliance.db.prepare('SELECT value FROM oid_trackers WHERE id = ?').get(id) as {
            value: string | null;
          }
        ).value ?? undefined;
      expect(await until(() => value(cron.body.id), 30_000)).toBe('Running');
      expect(await until(() => value(nginx.body.id), 30_000)).toBe('Failed');

      // The query selects critical and error (Windows levels 1 and 2): journal emerg, alert and crit
      // arrive as critical (1), err as error (2); warning, notice, info and debug are not selected.
      const rows = await until(async () => {
        const list = await h.request(
          'GET',
          '/api/eventlog/list?' +
            new URLSearchParams({ filters: JSON.stringify({ device_id: deviceId }) }).toString(),
          { token: admin },
        );
        const data = (list.body?.data ?? []) as { data: string; severity: number }[];
        return data.length >= 4 ? data : undefined;
      }, 30_000);
      expect(
        rows
          .map((r) => [r.data, r.severity])
          .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      ).toEqual([
        ['e2e priority 0', 1],
        ['e2e priority 1', 1],
        ['e2e priority 2', 1],
        ['e2e priority 3', 2],
      ]);
    }, 90_000);
  },
);

describe('updates staged on the appliance', () => {
  it('refuses a bad signature and a wrong sha256, applies a good one (downloaded through the signed URL)', async () => {
    const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
    const release = generateKeyPairSync('ed25519');
    const releaseKey = (release.publicKey.export({ format: 'jwk' }).x as string) ?? '';
    const src = mkdtempSync(path.join(work, 'bundle-'));
    writeFileSync(
      path.join(src, 'manifest.json'),
      JSON.stringify({ name: 'netmon-agent', version: '1.1.0', arch }),
    );
    mkdirSync(path.join(src, 'dist'));
    writeFileSync(path.join(src, 'dist', 'cli.js'), "console.log('1.1.0');\n");
    const staged = path.join(h.dataDir, 'agent-installers', arch);
    mkdirSync(staged, { recursive: true });
    const tarball = path.join(staged, 'agent.tar.gz');
    execFileSync('tar', ['-czf', tarball, '-C', src, 'manifest.json', 'dist']);
    const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    const sign = (key: KeyObject, digest: string) =>
      sign_(null, Buffer.from(`NETMON-AGENT-UPDATE-1\n1.1.0\n${arch}\n${digest}`), key).toString(
        'base64url',
      );
    const stage = (digest: string, signature: string) =>
      writeFileSync(
        path.join(staged, 'agent.json'),
        JSON.stringify({ version: '1.1.0', arch, sha256: digest, signature }),
      );
    try {
      // Signed by a key that is not the release key (the appliance's or anyone's).
      stage(sha256, sign(generateKeyPairSync('ed25519').privateKey, sha256));
      const { token } = await newToken();
      const a = agent(address(51), { args: ['--enroll', token, '--release-key', releaseKey] });
      expect((await a.waitFor('update.refused')).reason).toBe('bad signature');
      // Signed correctly, but for other bytes than the staged file.
      const other = createHash('sha256').update('other bytes').digest('hex');
      stage(other, sign(release.privateKey, other));
      expect((await a.waitFor('update.refused', (l) => l.reason !== 'bad signature')).reason).toBe(
        'sha256 mismatch',
      );
      expect(existsSync(path.join(a.stateDir, 'current'))).toBe(false);
      stage(sha256, sign(release.privateKey, sha256));
      await a.waitFor('update.applied');
      expect(await a.exited).toBe(75);
      expect(readlinkSync(path.join(a.stateDir, 'current'))).toBe(path.join('versions', '1.1.0'));
      expect(readFileSync(path.join(a.stateDir, 'current', 'dist', 'cli.js'), 'utf8')).toContain(
        '1.1.0',
      );
    } finally {
      rmSync(staged, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the agent verifies the appliance's requests", () => {
  it('drops a replayed request, a flipped byte, a wrong source, another key and one past its window', async () => {
    const key = 'Adopt_verify-0123456789';
    // One check-in at start (pending), then none: the device stays at the relay's address, so
    // the appliance's requests pass the relay, which records them.
    const a = agent(address(63), { args: ['--adoption-key', key, '--interval', '86400'] });
    await a.waitFor('checkin.pending');
    const relay = await startRelay(address(62), udpPort, address(63), () => false);
    const sendToAgent = async (bytes: Buffer, from = '127.0.0.1') => {
      const socket = createSocket('udp4');
      await new Promise<void>((resolve) => socket.bind(0, from, resolve));
      await new Promise<void>((resolve, reject) =>
        socket.send(bytes, udpPort, address(63), (error) => (error ? reject(error) : resolve())),
      );
      socket.close();
    };
    const dropped = (reason: string) =>
      a.waitFor('request.dropped', (l) => l.reason === reason, 5000);
    try {
      const adopted = await h.request('POST', '/api/agent/adopt-by-token', {
        token: admin,
        body: { ip_address: address(62), token: key },
      });
      expect(adopted.body, adopted.text).toMatchObject({ enrolled: true });
      const deviceId = adopted.body.device_id;
      const uuid = (await a.waitFor('agent.start')).agent_uuid;
      const probe = () =>
        h.request('POST', '/api/getAgentID', { token: admin, body: { device_id: deviceId } });
      expect((await probe()).body).toEqual({ status: 200, message: uuid });
      const request = relay.seen.find((d) => d[5] === 1);
      expect(request).toBeDefined();
      const captured = request as Buffer;

      await sendToAgent(captured);
      await dropped('replay');
      // One bit flipped in the payload (still valid JSON: "identify" becomes "identifx"), then
      // one in the signature.
      const inPayload = Buffer.from(captured);
      const at = inPayload.indexOf('identify') + 7;
      inPayload[at] = (inPayload[at] ?? 0) ^ 1;
      await sendToAgent(inPayload);
      await dropped('signature');
      const inSignature = Buffer.from(captured);
      inSignature[inSignature.length - 1] = (inSignature[inSignature.length - 1] ?? 0) ^ 1;
      await sendToAgent(inSignature);
      await until(() =>
        a.lines.filter((l) => l.event === 'request.dropped' && l.reason === 'signature').length ===
        2
          ? true
          : undefined,
      );
      await sendToAgent(captured, '127.0.0.9');
      await dropped('source not allowed');
      // Signed by another appliance's key, naming this appliance's server_id.
      const bundle = JSON.parse(readFileSync(path.join(a.stateDir, 'bundle.json'), 'utf8'));
      const other = generateKeyPairSync('ed25519');
      const n = captured.readUInt16BE(6);
      const payload = JSON.parse(captured.subarray(8, 8 + n).toString('utf8'));
      expect(payload.server_id).toBe(bundle.server_id);
      const forged = Buffer.concat([
        captured.subarray(0, 4),
        Buffer.from([1, 1, 0, 0]),
        Buffer.from(JSON.stringify({ ...payload, request_id: 'AAAAAAAAAAAAAAAAAAAAAA' })),
      ]);
      forged.writeUInt16BE(forged.length - 8, 6);
      await sendToAgent(Buffer.concat([forged, sign_(null, forged, other.privateKey)]));
      await until(() =>
        a.lines.filter((l) => l.event === 'request.dropped' && l.reason === 'signature').length ===
        3
          ? true
          : undefined,
      );
      // Nothing of these reached an operation: one answered request only.
      expect(a.lines.filter((l) => l.event === 'request.answered').length).toBe(1);

      // The appliance's clock 70 s behind: its request expired before it left (exp = iat + 30 s).
      h.clock.advance(-70_000);
      try {
        expect((await probe()).body).toEqual({ message: 'Agent did not answer' });
        await dropped('window');
      } finally {
        h.clock.advance(70_000);
      }
      expect((await probe()).body).toEqual({ status: 200, message: uuid });
    } finally {
      await relay.close();
    }
  }, 90_000);
});
