/**
 * The syslog collector against real senders (spec part 3 "Syslog"; issue 14 "Intake"):
 * bsdutils `logger` over UDP and TCP (newline framing and RFC 6587 octet counting) in RFC 3164
 * and RFC 5424, hand-made malformed datagrams (stored raw with the sender as source, never
 * dropped), the device attribution by sender address (unknown senders get device_id null),
 * the per-device access config applied at intake, the rollup agreeing with the rows, the
 * counters, and a busy port failing the start with one line.
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';

const INJECTION = `'; DROP TABLE x;--`;
const XSS = '<img src=x onerror=alert(1)>';
const HAVE_LOGGER = havePeer('logger', 'bsdutils');

let h: Harness;
let admin: string;
let port: number;

function logger(args: string[]): void {
  execFileSync('logger', ['-n', '127.0.0.1', '-P', String(port), ...args], { timeout: 5000 });
}

async function sendFrom(address: string, payloads: (string | Buffer)[]): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind({ address, port: 0 }, () => resolve()));
  for (const payload of payloads)
    await new Promise<void>((resolve, reject) =>
      socket.send(payload, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  socket.close();
}

const stored = () =>
  h.appliance.db.prepare('SELECT count(*) FROM syslog_log').pluck().get() as number;

async function waitForRows(count: number): Promise<void> {
  for (let i = 0; i < 100 && stored() < count; i++) await new Promise((r) => setTimeout(r, 50));
  expect(stored()).toBe(count);
}

const byMessage = async (text: string) => {
  const res = await h.request(
    'GET',
    `/api/syslog/list?filters=${encodeURIComponent(JSON.stringify({ message: text }))}`,
    { token: admin },
  );
  expect(res.status).toBe(200);
  return res.body.data as Record<string, unknown>[];
};

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_SYSLOG_PORT: 'auto' });
  admin = await h.login();
  port = h.appliance.ctx.collectorPorts.report().syslog!.udp!;
}, 60_000);
afterAll(() => h?.close());

describe.runIf(HAVE_LOGGER)('syslog intake from logger', () => {
  it('binds UDP and TCP on one reported port', () => {
    expect(h.appliance.ctx.collectorPorts.report().syslog).toEqual({ udp: port, tcp: port });
  });

  it('stores RFC 3164 and RFC 5424 over UDP and TCP, with facility, severity, host and tag', async () => {
    logger(['-d', '--rfc3164', '-t', 'bsd-udp', '-p', 'local0.err', `udp 3164 ${INJECTION}`]);
    logger([
      '-d',
      '--rfc5424',
      '-t',
      'ietf-udp',
      '--msgid',
      'ID7',
      '-p',
      'user.warning',
      `udp 5424 ${XSS}`,
    ]);
    logger(['-T', '--rfc3164', '-t', 'bsd-tcp', '-p', 'auth.crit', 'tcp 3164 newline']);
    logger([
      '-T',
      '--octet-count',
      '--rfc5424',
      '-t',
      'ietf-tcp',
      '-p',
      'daemon.debug',
      'tcp 5424 counted',
    ]);
    await waitForRows(4);
    const [bsd] = await byMessage('udp 3164');
    expect(bsd).toMatchObject({
      device_id: 1,
      facility: 16,
      severity: 3,
      source: 'bsd-udp',
      message: `udp 3164 ${INJECTION}`,
      sender: '127.0.0.1',
      malformed: false,
    });
    expect(typeof bsd!.host).toBe('string');
    expect(await byMessage('udp 5424')).toEqual([
      expect.objectContaining({
        facility: 1,
        severity: 4,
        source: 'ietf-udp',
        message: `udp 5424 ${XSS}`,
      }),
    ]);
    const [ietf] = await byMessage('udp 5424');
    expect(Math.abs(Date.parse(ietf!.reported_at as string) - Date.now())).toBeLessThan(60_000);
    expect(await byMessage('tcp 3164 newline')).toEqual([
      expect.objectContaining({ facility: 4, severity: 2, source: 'bsd-tcp' }),
    ]);
    expect(await byMessage('tcp 5424 counted')).toEqual([
      expect.objectContaining({ facility: 3, severity: 7, source: 'ietf-tcp' }),
    ]);
  });

  it('stores malformed datagrams raw with the sender as source, unknown senders with device_id null', async () => {
    const before = stored();
    const invalidUtf8 = Buffer.from([0x3c, 0x31, 0x33, 0x3e, 0xff, 0xfe, 0x80, 0x41]);
    await sendFrom('127.0.0.2', [
      'no priority at all',
      '<999>out of range',
      '',
      invalidUtf8,
      `<13>${'x'.repeat(20_000)}`,
    ]);
    await waitForRows(before + 5);
    const [raw] = await byMessage('no priority at all');
    expect(raw).toMatchObject({
      device_id: null,
      source: '127.0.0.2',
      sender: '127.0.0.2',
      malformed: true,
      facility: 1,
      severity: 5,
    });
    expect((await byMessage('<999>out of range'))[0]).toMatchObject({ malformed: true });
    const long = await byMessage('xxxxxxxxxx');
    expect((long[0]!.message as string).length).toBe(8192);
  });

  it('applies the device access config at intake and counts what it filtered', async () => {
    const set = await h.request('POST', '/api/syslog/config/1', {
      token: admin,
      body: { enabled: true, min_severity: 3 },
    });
    expect(set.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const before = stored();
    logger(['-d', '--rfc5424', '-t', 'cfg', '-p', 'user.info', 'below the minimum']);
    logger(['-d', '--rfc5424', '-t', 'cfg', '-p', 'user.err', 'at the minimum']);
    await waitForRows(before + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(stored()).toBe(before + 1);
    expect(await byMessage('below the minimum')).toEqual([]);
    expect(await byMessage('at the minimum')).toHaveLength(1);
    const off = await h.request('POST', '/api/syslog/config/1', {
      token: admin,
      body: { enabled: false, min_severity: 3 },
    });
    expect(off.body.config.min_severity).toBe(-1);
    await new Promise((r) => setTimeout(r, 100));
    logger(['-d', '--rfc5424', '-t', 'cfg', '-p', 'user.emerg', 'disabled intake']);
    await new Promise((r) => setTimeout(r, 300));
    expect(stored()).toBe(before + 1);
    await h.request('POST', '/api/syslog/config/1', {
      token: admin,
      body: { enabled: true, min_severity: 7 },
    });

    const counters = await h.request('GET', '/api/intake/counters', { token: admin });
    const syslog = counters.body.syslog;
    expect(syslog).toMatchObject({ stored: stored(), dropped: 0, filtered: 2, malformed: 3, port });
    expect(syslog.received).toBe(syslog.stored + syslog.filtered);
    const metrics = await h.request('GET', '/metrics', { token: admin });
    expect(metrics.text).toContain(
      `appliance_intake_messages_total{feed="syslog",outcome="filtered"} 2`,
    );
  });

  it('keeps the severity rollup equal to the rows it counts', async () => {
    const sum = await h.request('GET', '/api/syslog/sevSum', { token: admin });
    const rows = h.appliance.db
      .prepare('SELECT severity, count(*) AS n FROM syslog_log GROUP BY severity')
      .all() as { severity: number; n: number }[];
    const expected = Object.fromEntries([0, 1, 2, 3, 4, 5, 6, 7].map((s) => [String(s), 0]));
    for (const row of rows) expected[String(row.severity)] = row.n;
    expect(sum.body.severityCounts).toEqual(expected);
    const rollup = h.appliance.db
      .prepare('SELECT sum(count) FROM syslog_minute_rollup')
      .pluck()
      .get() as number;
    expect(rollup).toBe(stored());
  });
});

describe('a burst', () => {
  it('counts every datagram it read exactly once: stored, dropped or filtered, rows and rollup agreeing', async () => {
    const engine = h.appliance.engines.find((e) => e.name === 'syslog') as unknown as {
      counts(): { received: number; stored: number; dropped: number; filtered: number };
    };
    const before = engine.counts();
    const rowsBefore = stored();
    // As fast as one socket sends (no pacing): many batches, slots reused many times over.
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind({ address: '127.0.0.1', port: 0 }, resolve));
    const total = 30_000;
    let pending = 0;
    for (let i = 0; i < total; i++) {
      pending++;
      socket.send(
        `<14>1 - burst app - - - burst ${i} ${'x'.repeat(i % 300)}`,
        port,
        '127.0.0.1',
        () => pending--,
      );
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    for (let i = 0; i < 200 && pending > 0; i++) await new Promise((r) => setTimeout(r, 10));
    socket.close();
    let after = engine.counts();
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const next = engine.counts();
      const done =
        next.received === next.stored + next.dropped + next.filtered &&
        next.stored === after.stored;
      after = next;
      if (done) break;
    }
    const received = after.received - before.received;
    const storedNow = after.stored - before.stored;
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThanOrEqual(total);
    expect(received).toBe(
      storedNow + (after.dropped - before.dropped) + (after.filtered - before.filtered),
    );
    // 30,000 frames fit the receiver's slots and the writer's queue: nothing is dropped.
    expect(after.dropped - before.dropped).toBe(0);
    expect(stored() - rowsBefore).toBe(storedNow);
    const burstRows = h.appliance.db
      .prepare(
        "SELECT count(DISTINCT message) FROM syslog_log WHERE source = 'app' AND message LIKE 'burst %'",
      )
      .pluck()
      .get() as number;
    expect(burstRows).toBe(storedNow);
    const rollup = h.appliance.db
      .prepare('SELECT sum(count) FROM syslog_minute_rollup')
      .pluck()
      .get() as number;
    expect(rollup).toBe(stored());
  });
});

describe.runIf(HAVE_LOGGER)('a receiver that dies', () => {
  it('is started again on the same port, and intake goes on', async () => {
    const engine = h.appliance.engines.find((e) => e.name === 'syslog') as unknown as {
      worker: { terminate(): Promise<number> } | null;
      port: number;
    };
    const crashed = engine.worker!;
    await crashed.terminate();
    let delivered = 0;
    // Datagrams sent while no socket listens are lost: send until one is stored (at most ~6 s).
    for (let i = 0; i < 30 && delivered === 0; i++) {
      logger(['-d', '--rfc5424', '-t', 'again', `after the restart ${i}`]);
      await new Promise((r) => setTimeout(r, 200));
      delivered = (await byMessage('after the restart')).length;
    }
    expect(delivered).toBe(1);
    expect(engine.worker).not.toBe(crashed);
    expect(engine.port).toBe(port);
  });
});

describe('a busy syslog port', () => {
  it('fails the start with one line naming the protocol, address and port', async () => {
    // (The outcome as text: a started appliance must not reach the matcher's printer.)
    const outcome = await startAppliance({ APPLIANCE_SYSLOG_PORT: String(port) }).then(
      async (started) => {
        await started.close();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(outcome).toBe(`syslog: UDP 127.0.0.1:${port} is already in use`);
  });
});
