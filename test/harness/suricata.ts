/**
 * Real Suricata for tests, offline: a pcap written here (complete TCP conversations between
 * loopback-range addresses, Ethernet framing, optional 802.1Q tag, correct checksums) and
 * `suricata -r <pcap>` with a small rule file and its own log directory, whose eve.json the IDS
 * intake then follows. Nothing is sent on any network: the packets only exist in the file.
 * Guard tests with `havePeer('suricata', 'suricata')` (Debian 12: bookworm-backports, which
 * build/scripts/setup-debian.sh enables).
 *
 *   const pcap = writePcap(path.join(dir, 'in.pcap'), [
 *     { src: '127.0.0.1', dst: '127.0.0.2', srcPort: 40000, dstPort: 8080, payload: 'EVIL-ONE' },
 *   ]);
 *   const eve = await runSuricata({ pcap, rules: [rule(1000001, 'EVIL-ONE', 1)], dir });
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findProgram } from './peers.js';

/** One TCP conversation: handshake, the client's payload, the server's reply, FIN both ways. */
export interface TcpExchange {
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  /** What the client sends (one segment). */
  payload: string;
  /** What the server answers (default `OK`). */
  reply?: string;
  /** An 802.1Q VLAN id on every frame. */
  vlan?: number;
}

const ip4 = (text: string): Buffer => Buffer.from(text.split('.').map(Number));

function checksum(...parts: Buffer[]): number {
  let sum = 0;
  for (const buf of parts) {
    for (let i = 0; i + 1 < buf.length; i += 2) sum += buf.readUInt16BE(i);
    if (buf.length % 2 === 1) sum += (buf[buf.length - 1] as number) << 8;
  }
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

interface Segment {
  from: 'client' | 'server';
  flags: number;
  seq: number;
  ack: number;
  data: Buffer;
}

const FIN = 0x01;
const SYN = 0x02;
const PSH = 0x08;
const ACK = 0x10;

function frame(x: TcpExchange, s: Segment, ipId: number): Buffer {
  const client = s.from === 'client';
  const [srcIp, dstIp] = client ? [ip4(x.src), ip4(x.dst)] : [ip4(x.dst), ip4(x.src)];
  const [srcPort, dstPort] = client ? [x.srcPort, x.dstPort] : [x.dstPort, x.srcPort];
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(srcPort, 0);
  tcp.writeUInt16BE(dstPort, 2);
  tcp.writeUInt32BE(s.seq >>> 0, 4);
  tcp.writeUInt32BE(s.ack >>> 0, 8);
  tcp[12] = 5 << 4;
  tcp[13] = s.flags;
  tcp.writeUInt16BE(65535, 14);
  const pseudo = Buffer.alloc(12);
  srcIp.copy(pseudo, 0);
  dstIp.copy(pseudo, 4);
  pseudo[9] = 6;
  pseudo.writeUInt16BE(20 + s.data.length, 10);
  tcp.writeUInt16BE(checksum(pseudo, tcp, s.data), 16);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + 20 + s.data.length, 2);
  ip.writeUInt16BE(ipId & 0xffff, 4);
  ip[6] = 0x40; // don't fragment
  ip[8] = 64;
  ip[9] = 6;
  srcIp.copy(ip, 12);
  dstIp.copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  const macs = Buffer.from(client ? '020000000002020000000001' : '020000000001020000000002', 'hex');
  const ether =
    x.vlan === undefined
      ? Buffer.concat([macs, Buffer.from([0x08, 0x00])])
      : Buffer.concat([
          macs,
          Buffer.from([0x81, 0x00, (x.vlan >> 8) & 0x0f, x.vlan & 0xff, 0x08, 0x00]),
        ]);
  return Buffer.concat([ether, ip, tcp, s.data]);
}

function segments(x: TcpExchange): Segment[] {
  const request = Buffer.from(x.payload);
  const reply = Buffer.from(x.reply ?? 'OK');
  let c = 1000;
  let s = 5000;
  const out: Segment[] = [];
  out.push({ from: 'client', flags: SYN, seq: c, ack: 0, data: Buffer.alloc(0) });
  out.push({ from: 'server', flags: SYN | ACK, seq: s, ack: c + 1, data: Buffer.alloc(0) });
  c += 1;
  s += 1;
  out.push({ from: 'client', flags: ACK, seq: c, ack: s, data: Buffer.alloc(0) });
  out.push({ from: 'client', flags: PSH | ACK, seq: c, ack: s, data: request });
  c += request.length;
  out.push({ from: 'server', flags: PSH | ACK, seq: s, ack: c, data: reply });
  s += reply.length;
  out.push({ from: 'client', flags: ACK, seq: c, ack: s, data: Buffer.alloc(0) });
  out.push({ from: 'client', flags: FIN | ACK, seq: c, ack: s, data: Buffer.alloc(0) });
  c += 1;
  out.push({ from: 'server', flags: FIN | ACK, seq: s, ack: c, data: Buffer.alloc(0) });
  s += 1;
  out.push({ from: 'client', flags: ACK, seq: c, ack: s, data: Buffer.alloc(0) });
  return out;
}

/**
 * Writes the conversations, one after another, as a classic pcap (Ethernet link type), packets
 * 1 ms apart from `startMs` (default 2026-11-26T10:00:00Z). Returns the file path.
 */
export function writePcap(
  file: string,
  exchanges: readonly TcpExchange[],
  startMs = Date.UTC(2026, 10, 26, 10, 0, 0),
): string {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20); // LINKTYPE_ETHERNET
  const records: Buffer[] = [header];
  let t = startMs;
  let ipId = 1;
  for (const x of exchanges) {
    for (const s of segments(x)) {
      const data = frame(x, s, ipId++);
      const rec = Buffer.alloc(16);
      rec.writeUInt32LE(Math.floor(t / 1000), 0);
      rec.writeUInt32LE((t % 1000) * 1000, 4);
      rec.writeUInt32LE(data.length, 8);
      rec.writeUInt32LE(data.length, 12);
      records.push(rec, data);
      t += 1;
    }
  }
  fs.writeFileSync(file, Buffer.concat(records));
  return file;
}

/** A rule alerting on `content` in TCP traffic, with a given priority (Suricata's alert severity). */
export function rule(
  sid: number,
  content: string,
  priority: number,
  msg = `test ${content}`,
): string {
  return `alert tcp any any -> any any (msg:"${msg}"; flow:to_server,established; content:"${content}"; classtype:misc-activity; priority:${priority}; sid:${sid}; rev:1;)`;
}

export interface SuricataRun {
  /** The eve.json Suricata wrote. */
  eve: string;
  /** Its alert lines, as written. */
  alertLines: string[];
  /** Every line, as written. */
  lines: string[];
}

/**
 * Runs `suricata -r pcap` offline with only `rules` (no other rule files), checksum checks off,
 * one thread, logs in `dir/suricata-log`; resolves when it has exited. Bounded by `timeoutMs`.
 */
export async function runSuricata(options: {
  pcap: string;
  rules: readonly string[];
  dir: string;
  timeoutMs?: number;
}): Promise<SuricataRun> {
  const program = findProgram('suricata');
  if (!program) throw new Error('suricata is not installed (Debian package: suricata)');
  const logDir = path.join(options.dir, 'suricata-log');
  fs.mkdirSync(logDir, { recursive: true });
  const rulesFile = path.join(options.dir, 'test.rules');
  fs.writeFileSync(rulesFile, options.rules.join('\n') + '\n');
  const args = [
    '-r',
    options.pcap,
    '-S',
    rulesFile,
    '-l',
    logDir,
    '-k',
    'none',
    '--runmode',
    'single',
    '--set',
    'unix-command.enabled=no',
    '--set',
    `default-log-dir=${logDir}`,
  ];
  const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < 20_000) stderr += d;
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`suricata did not finish within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  if (code !== 0) throw new Error(`suricata exited with ${code}: ${stderr}`);
  const eve = path.join(logDir, 'eve.json');
  const text = fs.existsSync(eve) ? fs.readFileSync(eve, 'utf8') : '';
  const lines = text.split('\n').filter((l) => l.length > 0);
  const alertLines = lines.filter(
    (l) => (JSON.parse(l) as { event_type?: string }).event_type === 'alert',
  );
  return { eve, lines, alertLines };
}

export interface LiveSuricata {
  /** The eve.json it writes (in its log directory). */
  eve: string;
  logDir: string;
  /** Hands it a pcap of these conversations (it reads each new file in its directory). */
  feed(exchanges: readonly TcpExchange[]): void;
  /** SIGHUP: Suricata reopens its log files (what logrotate's postrotate does). */
  hup(): void;
  /** Alert lines in `file` (default: the eve.json), as written. */
  alertLines(file?: string): string[];
  /** Waits until `file` holds `count` alert lines (bounded). */
  waitForAlerts(count: number, file?: string, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function alertLinesOf(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .filter((l) => (JSON.parse(l) as { event_type?: string }).event_type === 'alert');
}

/**
 * A running Suricata (`-r <dir> --pcap-file-continuous`): it keeps reading the pcap files that
 * appear in its input directory (each at least 1 s old, polled every second), writing eve.json
 * as a live sensor does, so that rename-and-SIGHUP rotation can be tested against the real
 * thing. Nothing is captured from any interface.
 */
export async function startLiveSuricata(options: {
  dir: string;
  rules: readonly string[];
}): Promise<LiveSuricata> {
  const program = findProgram('suricata');
  if (!program) throw new Error('suricata is not installed (Debian package: suricata)');
  const input = path.join(options.dir, 'pcaps');
  const logDir = path.join(options.dir, 'suricata-log');
  fs.mkdirSync(input, { recursive: true });
  fs.mkdirSync(logDir, { recursive: true });
  const rulesFile = path.join(options.dir, 'test.rules');
  fs.writeFileSync(rulesFile, options.rules.join('\n') + '\n');
  const child = spawn(
    program,
    [
      '-r',
      input,
      '--pcap-file-continuous',
      '-S',
      rulesFile,
      '-l',
      logDir,
      '-k',
      'none',
      '--runmode',
      'single',
      '--set',
      'unix-command.enabled=no',
      '--set',
      'pcap-file.delay=1',
      '--set',
      'pcap-file.poll-interval=1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  live.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < 20_000) stderr += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const eve = path.join(logDir, 'eve.json');
  let fed = 0;
  let minute = 0;
  return {
    eve,
    logDir,
    feed(exchanges) {
      fed++;
      const staging = path.join(options.dir, `staging-${fed}.pcap`);
      writePcap(staging, exchanges, Date.UTC(2026, 10, 26, 10, minute++));
      // Old enough for pcap-file.delay from the start: it is read at the next poll.
      const past = new Date(Date.now() - 5000);
      fs.utimesSync(staging, past, past);
      fs.renameSync(staging, path.join(input, `input-${fed}.pcap`));
    },
    hup() {
      child.kill('SIGHUP');
    },
    alertLines: (file = eve) => alertLinesOf(file),
    async waitForAlerts(count, file = eve, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lines = alertLinesOf(file);
        if (lines.length >= count) return lines;
        if (child.exitCode !== null) throw new Error(`suricata exited: ${stderr}`);
        if (Date.now() > deadline)
          throw new Error(`suricata wrote ${lines.length} of ${count} alerts in time: ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      live.delete(child);
    },
  };
}
