/**
 * HTTP-level tests of packet capture (spec part 3 > Packet capture) on the loopback interface
 * with the real dumpcap engine (CI runs as root): a capture of pings and a TCP exchange made
 * here, read back by capinfos and tshark (tools no one here wrote) with the same packet count;
 * the chunk stream after pcapng_shb byte-identical to the download; byte cap, deadline,
 * ephemeral expiry, concurrency cap, idempotent stop, delete while active and after; path
 * traversal on chunks and download; other users' ids; validation and injection.
 *
 * The appliance's clock is a ManualClock (real time plus an offset), so deadline and idle expiry
 * are reached by advancing it; the service checks them on every tick (100 ms).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const NOT_FOUND = { status: 'error', message: 'not found' };
let h: Harness;
let admin: string;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
let tmp: string;

async function waitFor<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = 8000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

const get = (token: string, id: number) => h.request('GET', `/api/captures/${id}`, { token });
const start = (token: string, body: Record<string, unknown>) =>
  h.request('POST', '/api/captures', { token, body });
const stop = (token: string, id: number) =>
  h.request('POST', `/api/captures/${id}/stop`, { token });

/** A TCP exchange on loopback: connect, send, echo, close. */
async function tcpExchange(): Promise<number> {
  const server = net.createServer((socket) => socket.pipe(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve, reject) => {
    const client = net.connect(port, '127.0.0.1', () => client.write('hello capture'));
    client.on('data', () => client.end());
    client.on('close', () => resolve());
    client.on('error', reject);
  });
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** UDP datagrams to a loopback port nobody listens on (bounded). */
async function udpBurst(port: number, count: number, size: number): Promise<void> {
  const socket = dgram.createSocket('udp4');
  const payload = Buffer.alloc(size, 0x61);
  for (let i = 0; i < count; i++)
    await new Promise<void>((r) => socket.send(payload, port, '127.0.0.1', () => r()));
  socket.close();
}

/** Every chunk from since=0 on, following last_seq, until the capture ended and nothing is new. */
async function allChunks(token: string, id: number): Promise<{ shb: Buffer; data: Buffer[] }> {
  const first = await h.request('GET', `/api/captures/${id}/chunks?since=0`, { token });
  expect(first.status).toBe(200);
  const shb = Buffer.from(first.body.pcapng_shb, 'base64');
  const data: Buffer[] = first.body.chunks.map((c: { data: string }) =>
    Buffer.from(c.data, 'base64'),
  );
  let since = first.body.last_seq as number;
  for (let i = 0; i < 1000; i++) {
    const next = await h.request('GET', `/api/captures/${id}/chunks?since=${since}`, { token });
    expect(next.body).not.toHaveProperty('pcapng_shb');
    if (next.body.chunks.length === 0) break;
    for (const [j, c] of next.body.chunks.entries()) {
      expect(c.seq).toBe(since + j + 1);
      data.push(Buffer.from(c.data, 'base64'));
    }
    since = next.body.last_seq;
  }
  return { shb, data };
}

function capinfosCount(file: string): number {
  const out = execFileSync('capinfos', ['-M', '-c', file], { encoding: 'utf8' });
  return Number(/Number of packets:\s+(\d+)/.exec(out)![1]);
}

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_CAPTURE_MAX: '3' });
  admin = await h.login();
  alice = await h.userWith(['capture']);
  bob = await h.userWith(['capture']);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'captures-test-'));
}, 60_000);

afterAll(async () => {
  await h?.close();
  fs.rmSync(tmp ?? '/nonexistent', { recursive: true, force: true });
});

describe('a capture on loopback', () => {
  it('captures pings and a TCP exchange; capinfos and tshark read the download with the same count; chunks tile it', async () => {
    const created = await start(alice.token, {
      label: 'loopback ping/tcp',
      filter: { hosts: ['127.0.0.1'], protocols: ['icmp', 'tcp'], ifaces: ['lo'] },
    });
    expect(created.status).toBe(201);
    const capture = created.body.capture;
    expect(capture).toMatchObject({
      status: 'running',
      user_id: alice.id,
      label: 'loopback ping/tcp',
      engine: 'dumpcap',
      ifaces: ['lo'],
      byte_cap: 10485760,
      deadline_s: 600,
      ephemeral: false,
    });
    execFileSync('ping', ['-c', '3', '-i', '0.2', '127.0.0.1'], { stdio: 'ignore' });
    await tcpExchange();
    const running = await waitFor(
      () => get(alice.token, capture.id),
      (r) => r.body.capture.packets >= 6 + 6,
    );
    expect(running.body.capture.status).toBe('running');
    expect(running.body.capture.bytes).toBeGreaterThan(0);

    const stopped = await stop(alice.token, capture.id);
    expect(stopped.status).toBe(200);
    expect(stopped.body.capture).toMatchObject({ status: 'stopped', reason: 'stopped', drops: 0 });
    expect(stopped.body.capture.ended_at).not.toBeNull();
    const packets = stopped.body.capture.packets as number;
    expect(packets).toBeGreaterThanOrEqual(12);

    const download = await h.request('GET', `/api/captures/${capture.id}/download.pcapng`, {
      token: alice.token,
    });
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/vnd.tcpdump.pcap');
    expect(download.headers['content-disposition']).toContain(
      'attachment; filename="loopback_ping_tcp.pcapng"',
    );
    // undici's text() would mangle binary: read the file again through a raw request.
    const raw = await fetchBytes(`/api/captures/${capture.id}/download.pcapng`, alice.token);
    const file = path.join(tmp, 'download.pcapng');
    fs.writeFileSync(file, raw);
    expect(raw.length).toBe(stopped.body.capture.bytes);
    expect(capinfosCount(file)).toBe(packets);
    const tshark = spawnSync('tshark', ['-r', file, '-T', 'fields', '-e', 'frame.number'], {
      encoding: 'utf8',
    });
    expect(tshark.status).toBe(0);
    // tshark's only remark: it runs as root (CI); no read error, no "cut short" warning.
    expect(tshark.stderr.replace(/^Running as user .*\n/m, '')).toBe('');
    expect(tshark.stdout.trim().split('\n')).toHaveLength(packets);
    const icmp = spawnSync(
      'tshark',
      ['-r', file, '-Y', 'icmp.type == 8', '-T', 'fields', '-e', 'frame.number'],
      {
        encoding: 'utf8',
      },
    );
    expect(icmp.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    const tcp = spawnSync(
      'tshark',
      ['-r', file, '-Y', 'tcp.payload', '-T', 'fields', '-e', 'tcp.payload'],
      {
        encoding: 'utf8',
      },
    );
    expect(tcp.stdout).toContain(Buffer.from('hello capture').toString('hex'));

    const { shb, data } = await allChunks(alice.token, capture.id);
    expect(Buffer.concat([shb, ...data]).equals(raw)).toBe(true);
    // One chunk per flush, not one per packet.
    expect(data.length).toBeLessThan(packets);
  }, 30_000);

  it('stop is idempotent on stopped, expired and failed captures', async () => {
    const created = await start(alice.token, { filter: { ifaces: ['lo'], ports: [9] } });
    const id = created.body.capture.id;
    const first = await stop(alice.token, id);
    const second = await stop(alice.token, id);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    // The stop that ended it is audited, once; the repeated one changed nothing.
    const audits = h.appliance.db
      .prepare(
        "SELECT actor_user_id AS actor, detail FROM audit_log WHERE action = 'capture.stop' AND target_id = ?",
      )
      .all(String(id)) as { actor: number; detail: string }[];
    expect(audits).toHaveLength(1);
    expect(audits[0]!.actor).toBe(alice.id);
    expect(JSON.parse(audits[0]!.detail)).toMatchObject({ status: 'stopped' });
  });

  it('reaching byte_cap stops the capture (reason byte-cap)', async () => {
    const port = 40000 + Math.floor(Math.random() * 20000);
    const created = await start(alice.token, {
      byte_cap: 65536,
      filter: { ifaces: ['lo'], ports: [port], protocols: ['udp'] },
    });
    expect(created.status).toBe(201);
    await udpBurst(port, 120, 1000);
    const done = await waitFor(
      () => get(alice.token, created.body.capture.id),
      (r) => r.body.capture.status !== 'running',
    );
    expect(done.body.capture).toMatchObject({ status: 'stopped', reason: 'byte-cap' });
    expect(done.body.capture.bytes).toBeGreaterThanOrEqual(60_000);
    expect(done.body.capture.bytes).toBeLessThan(65536 + 64 * 1024);
  }, 20_000);

  it('reaching deadline_s expires the capture (reason deadline)', async () => {
    const created = await start(alice.token, {
      deadline_s: 10,
      filter: { ifaces: ['lo'], ports: [9] },
    });
    const id = created.body.capture.id;
    h.clock.advance(9_000);
    await new Promise((r) => setTimeout(r, 400));
    expect((await get(alice.token, id)).body.capture.status).toBe('running');
    h.clock.advance(1_500);
    const done = await waitFor(
      () => get(alice.token, id),
      (r) => r.body.capture.status !== 'running',
    );
    expect(done.body.capture).toMatchObject({ status: 'expired', reason: 'deadline' });
  });

  it('an ephemeral capture expires when not polled; polling keeps it alive', async () => {
    const created = await start(alice.token, {
      ephemeral: true,
      filter: { ifaces: ['lo'], ports: [9] },
    });
    const id = created.body.capture.id;
    h.clock.advance(45_000);
    expect(
      (await h.request('GET', `/api/captures/${id}/chunks?since=0`, { token: alice.token })).status,
    ).toBe(200);
    h.clock.advance(45_000);
    await new Promise((r) => setTimeout(r, 400));
    expect((await get(alice.token, id)).body.capture.status).toBe('running');
    h.clock.advance(20_000);
    const done = await waitFor(
      () => get(alice.token, id),
      (r) => r.body.capture.status !== 'running',
    );
    expect(done.body.capture).toMatchObject({ status: 'expired', reason: 'idle' });
  });

  it('past APPLIANCE_CAPTURE_MAX answers 503 too-many and creates no row', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await start(alice.token, { filter: { ifaces: ['lo'], ports: [9] } });
      expect(r.status).toBe(201);
      ids.push(r.body.capture.id);
    }
    const before = (await h.request('GET', '/api/captures', { token: admin })).body.captures.length;
    const refused = await start(bob.token, { filter: { ifaces: ['lo'], ports: [9] } });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      status: 'error',
      reason: 'too-many',
      message: 'The appliance runs at most 3 captures at once; stop one and try again.',
    });
    expect((await h.request('GET', '/api/captures', { token: admin })).body.captures.length).toBe(
      before,
    );
    for (const id of ids) await stop(alice.token, id);
  });

  it('delete: 409 still-active while running; after stop 200, file and chunks gone, then 404', async () => {
    const created = await start(alice.token, { filter: { ifaces: ['lo'] } });
    const id = created.body.capture.id;
    const busy = await h.request('DELETE', `/api/captures/${id}`, { token: alice.token });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ status: 'error', reason: 'still-active' });
    expect(typeof busy.body.message).toBe('string');
    const file = path.join(h.dataDir, 'captures', `capture-${id}.pcapng`);
    expect(fs.existsSync(file)).toBe(true);
    await stop(alice.token, id);
    const deleted = await h.request('DELETE', `/api/captures/${id}`, { token: alice.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok' });
    expect(fs.existsSync(file)).toBe(false);
    const chunkRows = h.appliance.db
      .prepare('SELECT count(*) AS n FROM capture_chunks WHERE capture_id = ?')
      .get(id) as { n: number };
    expect(chunkRows.n).toBe(0);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/stop'],
      ['DELETE', ''],
      ['GET', '/chunks'],
      ['GET', '/download.pcapng'],
    ] as const) {
      const r = await h.request(method, `/api/captures/${id}${suffix}`, { token: alice.token });
      expect(r.status).toBe(404);
      expect(r.body).toEqual(NOT_FOUND);
    }
  });
});

/** A GET with the path sent exactly as written (no client-side normalisation of dot segments). */
async function rawGet(rawPath: string, token: string): Promise<{ status: number; text: string }> {
  const url = new URL(h.url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: url.hostname,
        port: Number(url.port),
        path: rawPath,
        method: 'GET',
        rejectUnauthorized: false,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('latin1');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The raw bytes of a GET (binary safe). */
async function fetchBytes(urlPath: string, token: string): Promise<Buffer> {
  const { request, Agent } = await import('undici');
  const res = await request(`${h.url}${urlPath}`, {
    headers: { authorization: `Bearer ${token}` },
    dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
  });
  return Buffer.from(await res.body.arrayBuffer());
}

describe('who sees what', () => {
  it("another user's capture is the same 404 as a missing one on every route; sa sees all", async () => {
    const created = await start(alice.token, {
      label: 'alice',
      filter: { ifaces: ['lo'], ports: [9] },
    });
    const id = created.body.capture.id;
    await stop(alice.token, id);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/stop'],
      ['DELETE', ''],
      ['GET', '/chunks'],
      ['GET', '/download.pcapng'],
    ] as const) {
      const theirs = await h.request(method, `/api/captures/${id}${suffix}`, { token: bob.token });
      const missing = await h.request(method, `/api/captures/99999999${suffix}`, {
        token: bob.token,
      });
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual(NOT_FOUND);
      expect(missing.body).toEqual(theirs.body);
    }
    const bobList = (await h.request('GET', '/api/captures', { token: bob.token })).body.captures;
    expect(bobList.every((c: { user_id: number }) => c.user_id === bob.id)).toBe(true);
    const all = (await h.request('GET', '/api/captures', { token: admin })).body.captures;
    expect(all.some((c: { id: number }) => c.id === id)).toBe(true);
    const ids = all.map((c: { id: number }) => c.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect((await get(admin, id)).status).toBe(200);
  });

  it('without the capture permission: refused', async () => {
    const plain = await h.userWith(['devices']);
    const r = await h.request('GET', '/api/captures', { token: plain.token });
    expect([401, 403]).toContain(r.status);
  });

  it('a tag-restricted caller must name an in-scope device_id', async () => {
    const device = async (ip: string, tag: string) =>
      (
        await h.request('POST', '/api/device/set', {
          token: admin,
          body: { ip_address: ip, label: `dev-${tag}`, profile: 'dash_generic', tags: [tag] },
        })
      ).body.device.id as number;
    const inScope = await device('127.0.6.1', 'cap-a');
    const outOfScope = await device('127.0.6.2', 'cap-b');
    const tagged = await h.userWith(['capture'], { tags: ['cap-a'] });
    const r = await start(tagged.token, { filter: { ifaces: ['lo'] } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty('device_id');
    const missing = await start(tagged.token, { device_id: 999999, filter: { ifaces: ['lo'] } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.device_id).toEqual(['The selected device id is invalid.']);
    const outside = await start(tagged.token, {
      device_id: outOfScope,
      filter: { ifaces: ['lo'] },
    });
    expect(outside.status).toBe(422);
    expect(outside.body).toEqual(missing.body);
    const own = await start(tagged.token, { device_id: inScope, filter: { ifaces: ['lo'] } });
    expect(own.status).toBe(201);
    expect(own.body.capture.device_id).toBe(inScope);
    const bpf = h.appliance.db
      .prepare('SELECT bpf FROM captures WHERE id = ?')
      .get(own.body.capture.id) as { bpf: string };
    expect(bpf.bpf).toBe('host 127.0.6.1');
    await stop(tagged.token, own.body.capture.id);
  });
});

describe('device deletion', () => {
  it("keeps the device's captures (device_id cleared) and stops the running ones", async () => {
    const created = await h.request('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: '127.0.7.1', label: 'dev-doomed', profile: 'dash_generic' },
    });
    const deviceId = created.body.device.id as number;
    const ended = await start(alice.token, { device_id: deviceId, filter: { ifaces: ['lo'] } });
    await stop(alice.token, ended.body.capture.id);
    const running = await start(alice.token, { device_id: deviceId, filter: { ifaces: ['lo'] } });
    expect(running.body.capture).toMatchObject({ status: 'running', device_id: deviceId });
    const deleted = await h.request('DELETE', `/api/device/${deviceId}`, { token: admin });
    expect(deleted.status).toBe(200);
    const after = await waitFor(
      () => get(alice.token, running.body.capture.id),
      (r) => r.body.capture.status !== 'running',
    );
    expect(after.body.capture).toMatchObject({
      status: 'stopped',
      reason: 'device-deleted',
      device_id: null,
    });
    const kept = await get(alice.token, ended.body.capture.id);
    expect(kept.body.capture).toMatchObject({ status: 'stopped', device_id: null });
    const download = await h.request(
      'GET',
      `/api/captures/${ended.body.capture.id}/download.pcapng`,
      { token: alice.token },
    );
    expect(download.status).toBe(200);
  });
});

describe('path traversal on chunks and download', () => {
  it('never answers a byte from outside the data root', async () => {
    const created = await start(alice.token, { filter: { ifaces: ['lo'], ports: [9] } });
    const id = created.body.capture.id;
    await stop(alice.token, id);
    const ids = [
      '..%2f..%2f..%2fetc%2fpasswd',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '%2e%2e/%2e%2e/etc/passwd',
      '....//....//etc/passwd',
      '%2fetc%2fpasswd',
      `${id}%2f..%2f..%2f..%2fetc%2fpasswd`,
      `${id}%00`,
      '9'.repeat(400),
      'x'.repeat(3000),
      `0${id}`,
      '-1',
    ];
    for (const bad of ids) {
      for (const suffix of ['/chunks', '/download.pcapng']) {
        // Sent verbatim: a URL parser would resolve `%2e%2e/` before the appliance sees it.
        const r = await rawGet(`/api/captures/${bad}${suffix}`, alice.token);
        expect([400, 404], `${bad}${suffix}`).toContain(r.status);
        expect(r.text).not.toMatch(/root:|daemon:/);
      }
    }
  });

  it('a symlink planted in the capture directory is not followed', async () => {
    const created = await start(alice.token, { filter: { ifaces: ['lo'], ports: [9] } });
    const id = created.body.capture.id;
    await stop(alice.token, id);
    const file = path.join(h.dataDir, 'captures', `capture-${id}.pcapng`);
    fs.rmSync(file);
    fs.symlinkSync('/etc/passwd', file);
    const download = await h.request('GET', `/api/captures/${id}/download.pcapng`, {
      token: alice.token,
    });
    expect(download.status).toBe(404);
    expect(download.body).toEqual(NOT_FOUND);
    const chunks = await h.request('GET', `/api/captures/${id}/chunks?since=0`, {
      token: alice.token,
    });
    expect(chunks.text).not.toContain(Buffer.from('root:').toString('base64').slice(0, 6));
    expect(chunks.body.pcapng_shb).toBe('');
    // A symlink planted where the next capture will write is removed, not written through.
    const target = path.join(tmp, 'victim');
    fs.writeFileSync(target, 'keep');
    const next = id + 1;
    fs.symlinkSync(target, path.join(h.dataDir, 'captures', `capture-${next}.pcapng`));
    const started = await start(alice.token, { filter: { ifaces: ['lo'], ports: [9] } });
    expect(started.body.capture.id).toBe(next);
    await stop(alice.token, next);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep');
  });
});

describe('validation', () => {
  it('422 {message, errors} for bad fields and injection attempts; nothing runs', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'filter'],
      [{ filter: { hosts: ['1.2.3.4 or port 22'] } }, 'filter.hosts.0'],
      [{ filter: { hosts: [';id'] } }, 'filter.hosts.0'],
      [{ filter: { hosts: ['$(id)'] } }, 'filter.hosts.0'],
      [{ filter: { ifaces: ['-w/tmp/x'] } }, 'filter.ifaces.0'],
      [{ filter: { ifaces: ['lo;id'] } }, 'filter.ifaces.0'],
      [{ filter: { ports: [0] } }, 'filter.ports.0'],
      [{ filter: { vlans: [4096] } }, 'filter.vlans.0'],
      [{ filter: { protocols: ['sctp'] } }, 'filter.protocols.0'],
      [{ filter: {}, byte_cap: 1000 }, 'byte_cap'],
      [{ filter: {}, deadline_s: 5 }, 'deadline_s'],
      [{ filter: {}, label: 'x'.repeat(256) }, 'label'],
    ];
    const before = (await h.request('GET', '/api/captures', { token: admin })).body.captures.length;
    for (const [body, field] of cases) {
      const r = await start(alice.token, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(typeof r.body.message).toBe('string');
      expect(Object.keys(r.body.errors).join(' '), JSON.stringify(body)).toContain(
        field.split('.')[0],
      );
    }
    expect((await h.request('GET', '/api/captures', { token: admin })).body.captures.length).toBe(
      before,
    );
  });

  it('an interface that does not exist: 422 {status: error, reason: bad-interface, message}', async () => {
    const r = await start(alice.token, { filter: { ifaces: ['nosuch0'] } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      status: 'error',
      reason: 'bad-interface',
      message: 'No such interface to capture on: nosuch0.',
    });
  });

  it('GET /api/captures/interfaces lists the kernel interfaces and any', async () => {
    const r = await h.request('GET', '/api/captures/interfaces', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.interfaces).toContain('lo');
    expect(r.body.interfaces).toContain('any');
  });
});
