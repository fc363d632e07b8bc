/**
 * The collector against a real exporter (issue 15, "Proof"): the test records a pcap on
 * loopback with tcpdump (a bounded TCP and UDP exchange between sockets it opens on free ports),
 * replays it with Debian's softflowd as NetFlow v5, v9 (`-a`) and IPFIX (`-A milli`) to the
 * appliance's collector, and checks that the flows in GET /api/netflow/list are the pcap's
 * (addresses, ports, protocol, packets, bytes = IP lengths) with sane times, and that the count
 * the appliance decoded for each export equals nfdump's count for the same export (nfcapd on
 * another loopback port). Skipped with a message when a program is missing, failed under
 * REQUIRE_PEERS=1.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';

const havePrograms =
  havePeer('softflowd', 'softflowd') &&
  havePeer('nfcapd', 'nfdump') &&
  havePeer('nfdump', 'nfdump') &&
  havePeer('tcpdump', 'tcpdump');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Expected {
  packets: number;
  bytes: number;
}

/** Flows of an Ethernet-framed IPv4 pcap, keyed `src sport > dst dport proto` (bytes: IP total length). */
function flowsOfPcap(file: string): Map<string, Expected> {
  const b = fs.readFileSync(file);
  const little = b.readUInt32LE(0) === 0xa1b2c3d4 || b.readUInt32LE(0) === 0xa1b23c4d;
  const u32 = (o: number) => (little ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const flows = new Map<string, Expected>();
  for (let o = 24; o + 16 <= b.length;) {
    const length = u32(o + 8);
    const frame = o + 16;
    o = frame + length;
    if (b.readUInt16BE(frame + 12) !== 0x0800) continue;
    const ip = frame + 14;
    const ihl = (b[ip]! & 15) * 4;
    const total = b.readUInt16BE(ip + 2);
    const proto = b[ip + 9]!;
    const src = [...b.subarray(ip + 12, ip + 16)].join('.');
    const dst = [...b.subarray(ip + 16, ip + 20)].join('.');
    const sport = b.readUInt16BE(ip + ihl);
    const dport = b.readUInt16BE(ip + ihl + 2);
    const key = `${src} ${sport} > ${dst} ${dport} ${proto}`;
    const entry = flows.get(key) ?? { packets: 0, bytes: 0 };
    entry.packets++;
    entry.bytes += total;
    flows.set(key, entry);
  }
  return flows;
}

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  const port = socket.address().port;
  await new Promise<void>((r) => socket.close(() => r()));
  return port;
}

/** Waits (bounded) for `pattern` in a child's stderr. */
async function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready: ${seen}`)), 10_000);
    const on = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on('data', on);
    child.stdout?.on('data', on);
  });
}

/** A bounded exchange on loopback between sockets of this test: TCP there and back, 3 UDP datagrams. */
async function exchange(tcp: net.Server, udp: dgram.Socket): Promise<void> {
  const tcpPort = (tcp.address() as net.AddressInfo).port;
  const udpPort = udp.address().port;
  await new Promise<void>((resolve, reject) => {
    const client = net.connect(tcpPort, '127.0.0.1', () => {
      client.write(Buffer.alloc(6000, 7));
      client.end();
    });
    client.on('data', () => {});
    client.on('close', () => resolve());
    client.on('error', reject);
  });
  const sender = dgram.createSocket('udp4');
  for (const size of [10, 200, 1200])
    await new Promise<void>((r) =>
      sender.send(Buffer.alloc(size, 1), udpPort, '127.0.0.1', () => r()),
    );
  sender.close();
}

describe.skipIf(!havePrograms)('flow collector with softflowd and nfdump', () => {
  let dir: string;
  let pcap: string;
  let h: Harness;
  let expected: Map<string, Expected>;
  let recordedFrom: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-softflowd-'));
    fs.chmodSync(dir, 0o777); // tcpdump drops to its own user before writing
    pcap = path.join(dir, 'lo.pcap');
    const tcp = net.createServer((socket) => {
      let got = 0;
      socket.on('data', (chunk) => {
        got += chunk.length;
      });
      socket.on('end', () => socket.end(Buffer.alloc(Math.min(got, 1500), 9)));
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const udp = dgram.createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    const filter = `(tcp port ${(tcp.address() as net.AddressInfo).port}) or (udp port ${udp.address().port})`;
    const tcpdump = spawn(
      'tcpdump',
      ['-i', 'lo', '-n', '-U', '--immediate-mode', '-w', pcap, filter],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      await waitFor(tcpdump, /listening on lo/, 'tcpdump');
      recordedFrom = Date.now();
      await exchange(tcp, udp);
      await sleep(300);
    } finally {
      const exited = new Promise((r) => tcpdump.once('exit', r));
      tcpdump.kill('SIGINT');
      await Promise.race([exited, sleep(3000)]);
      tcp.close();
      udp.close();
    }
    expected = flowsOfPcap(pcap);
    h = await startAppliance({ APPLIANCE_NETFLOW_PORT: 'auto' });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const softflowd = (port: number, version: string[]) =>
    execFileSync('softflowd', ['-r', pcap, '-n', `127.0.0.1:${port}`, ...version], {
      timeout: 10_000,
      stdio: 'ignore',
    });

  /** nfdump's flow count for the same export (nfcapd on its own loopback port). */
  async function nfdumpCount(version: string[]): Promise<number> {
    const out = fs.mkdtempSync(path.join(dir, 'nfcapd-'));
    const port = await freeUdpPort();
    const nfcapd = spawn('nfcapd', ['-b', '127.0.0.1', '-p', String(port), '-w', out, '-t', '60'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await waitFor(nfcapd, /Startup nfcapd/, 'nfcapd');
      softflowd(port, version);
      await sleep(500);
    } finally {
      const exited = new Promise((r) => nfcapd.once('exit', r));
      nfcapd.kill('SIGTERM'); // nfcapd writes its file on exit
      await Promise.race([exited, sleep(5000)]);
    }
    const text = execFileSync('nfdump', ['-R', out, '-q', '-o', 'fmt:%pr %sa %sp %da %dp'], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return text.split('\n').filter((line) => line.trim() !== '').length;
  }

  async function stored(): Promise<number> {
    const admin = await h.login();
    return (await h.request('GET', '/api/intake/counters', { token: admin })).body.flows.stored;
  }

  const versions: [string, string[]][] = [
    ['NetFlow v5', ['-v', '5']],
    ['NetFlow v9', ['-v', '9', '-a']],
    ['IPFIX', ['-v', '10', '-A', 'milli']],
  ];

  it('records a pcap with the exchange in it', () => {
    expect([...expected.keys()].some((k) => k.endsWith(' 6'))).toBe(true);
    expect([...expected.keys()].some((k) => k.endsWith(' 17'))).toBe(true);
    expect(expected.size).toBe(3);
  });

  versions.forEach(([name, version], index) => {
    it(`${name}: the API's flows are the pcap's, and the count equals nfdump's`, async () => {
      const port = h.appliance.ctx.collectorPorts.report().netflow?.udp as number;
      const before = await stored();
      softflowd(port, version);
      let now = before;
      for (let i = 0; i < 100 && now < before + expected.size; i++) {
        await sleep(50);
        now = await stored();
      }
      const decoded = now - before;
      expect(decoded).toBe(await nfdumpCount(version));

      const admin = await h.login();
      const res = await h.request(
        'GET',
        `/api/netflow/list?hours=1&limit=1000&filters=${encodeURIComponent(JSON.stringify({ flow_src: '127.0.0.1' }))}`,
        { token: admin },
      );
      expect(res.status).toBe(200);
      const seen = new Map<string, { packets: number; bytes: number; n: number }>();
      for (const row of res.body.data as Record<string, any>[]) {
        const key = `${row.src_ip} ${row.src_port} > ${row.dst_ip} ${row.dst_port} ${row.protocol}`;
        const entry = seen.get(key) ?? { packets: row.packets, bytes: row.bytes, n: 0 };
        expect({ key, packets: row.packets, bytes: row.bytes }).toEqual({
          key,
          packets: entry.packets,
          bytes: entry.bytes,
        });
        entry.n++;
        seen.set(key, entry);
        // Times from the pcap, never dated weeks away (softflowd's uptime wrap without -a).
        const start = Date.parse(row.start_time);
        const end = Date.parse(row.end_time);
        expect(start).toBeGreaterThanOrEqual(recordedFrom - 2000);
        expect(end).toBeGreaterThanOrEqual(start);
        expect(end).toBeLessThanOrEqual(Date.now() + 2000);
        expect(row.src_id).toBe(1); // device 1 holds 127.0.0.1 (first start)
      }
      expect([...seen.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [key, want] of expected)
        expect({ key, ...seen.get(key) }).toEqual({ key, ...want, n: index + 1 });
    }, 60_000);
  });
});
