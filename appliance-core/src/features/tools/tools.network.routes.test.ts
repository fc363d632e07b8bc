/**
 * HTTP-level tests of ping, MTR, traceroute and port scan (spec part 2 > Network tools) against a
 * real appliance and the real system programs, with traffic to 127.0.0.1 and ::1 only. Reverse
 * DNS is off (or a test double); probe intervals are shortened through the tools' options.
 */
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import {
  isProcessRunning,
  liveToolProcesses,
  onToolSpawn,
  type LiveToolProcess,
} from '../../platform/process/spawn.js';
import { INVALID_PORTLIST, INVALID_TARGET } from './tools.routes.js';
import type { ToolsEngine, ToolsOverrides } from './index.js';

const HAVE = {
  ping: havePeer('ping', 'iputils-ping'),
  mtr: havePeer('mtr', 'mtr-tiny'),
  tracepath: havePeer('tracepath', 'iputils-tracepath'),
  nmap: havePeer('nmap', 'nmap'),
};
const IS_ROOT = process.getuid?.() === 0;
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };

let h: Harness;
let engine: ToolsEngine;
let token: string;
/** A user with permissions, but not `tools`. */
let outsider: string;
let port: number;
let spawned: LiveToolProcess[] = [];
let stopSpying: () => void;
const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-tools-'));
const BASE: ToolsOverrides = {
  reverseDns: null,
  pingIntervalSeconds: 0.2,
  mtrIntervalSeconds: IS_ROOT ? 0.2 : 1,
  mtrGraceSeconds: 0.5,
  portscanBudgetMs: 60_000,
  searchPath: undefined,
};

beforeAll(async () => {
  h = await startAppliance();
  engine = h.appliance.engines.find((e) => e.name === 'tools') as ToolsEngine;
  engine.service.configure(BASE);
  token = (await h.userWith(['tools'])).token;
  outsider = (await h.userWith(['devices', 'system'])).token;
  port = Number(new URL(h.url).port);
  // The appliance's own latency poller (device 1's tracker) runs fping in the background; the
  // tools never do, so only the tools' processes are recorded.
  stopSpying = onToolSpawn((p) => {
    if (p.program !== 'fping') spawned.push(p);
  });
});

afterAll(async () => {
  stopSpying();
  await h.close();
});

afterEach(() => {
  engine.service.configure(BASE);
  spawned = [];
});

// --- a small event-stream client ----------------------------------------------------------------

interface SseEvent {
  event: string;
  data: any;
  at: number;
}

interface SseRun {
  events: SseEvent[];
  done: Promise<{ status: number; contentType: string; endedAt: number }>;
  abort(): void;
}

function openSse(
  urlPath: string,
  bearer: string | null,
  onEvent?: (event: SseEvent, run: SseRun) => void,
): SseRun {
  const events: SseEvent[] = [];
  let request: ReturnType<typeof https.request>;
  const run: SseRun = {
    events,
    done: undefined as never,
    abort: () => request.destroy(),
  };
  run.done = new Promise((resolve, reject) => {
    let status = 0;
    let contentType = '';
    request = https.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'GET',
        rejectUnauthorized: false,
        headers: {
          accept: 'text/event-stream',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
      },
      (res) => {
        status = res.statusCode ?? 0;
        contentType = String(res.headers['content-type'] ?? '');
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let index: number;
          while ((index = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, index);
            buffer = buffer.slice(index + 2);
            let event = 'message';
            let data: string | null = null;
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data = line.slice(6);
            }
            if (data === null) continue;
            const parsed = {
              event,
              data: contentType.includes('event-stream') ? JSON.parse(data) : data,
              at: Date.now(),
            };
            events.push(parsed);
            onEvent?.(parsed, run);
          }
        });
        const finish = () => resolve({ status, contentType, endedAt: Date.now() });
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      },
    );
    request.on('error', (err) =>
      status ? resolve({ status, contentType, endedAt: Date.now() }) : reject(err),
    );
    request.end();
  });
  return run;
}

async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return condition();
}

/** Running (non-zombie) members of a process group. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

const enc = encodeURIComponent;
const INJECTIONS = [
  '-oX /tmp/appliance-injection-probe',
  '127.0.0.1;id',
  '$(id)',
  '`id`',
  '127.0.0.1 -v',
  '--help',
  '-',
  'a|b',
  '../../etc/passwd',
];

// --- ping ---------------------------------------------------------------------------------------

describe('GET /api/SSEgetPingInfo/{pingTarget}: refusals (ping is never started)', () => {
  it.each(INJECTIONS)(
    'answers event: error for the target %j and starts nothing',
    async (target) => {
      const run = openSse(`/api/SSEgetPingInfo/${enc(target)}`, token);
      const { status, contentType } = await run.done;
      expect(status).toBe(200);
      expect(contentType).toBe('text/event-stream; charset=utf-8');
      expect(run.events).toEqual([
        { event: 'error', data: { message: INVALID_TARGET }, at: expect.any(Number) },
      ]);
      expect(spawned).toEqual([]);
      expect(fs.existsSync('/tmp/appliance-injection-probe')).toBe(false);
    },
  );

  it('names the missing program and its package in the error event', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const run = openSse('/api/SSEgetPingInfo/127.0.0.1', token);
    await run.done;
    expect(run.events.map((e) => [e.event, e.data])).toEqual([
      ['error', { message: 'ping is not installed (Debian package iputils-ping)' }],
    ]);
    expect(spawned).toEqual([]);
  });

  it('refuses callers without the tools permission (401) and without a token', async () => {
    const denied = await h.request('GET', '/api/SSEgetPingInfo/127.0.0.1', { token: outsider });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(DENIED);
    const anonymous = await h.request('GET', '/api/SSEgetPingInfo/127.0.0.1');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(UNAUTHENTICATED);
    expect(spawned).toEqual([]);
  });
});

describe.runIf(HAVE.ping)('GET /api/SSEgetPingInfo/{pingTarget}: runs ping', () => {
  it('streams one frame per reply as it arrives, then the summary, and ends', async () => {
    const run = openSse('/api/SSEgetPingInfo/127.0.0.1', token);
    const { status, contentType, endedAt } = await run.done;
    expect(status).toBe(200);
    expect(contentType).toBe('text/event-stream; charset=utf-8');
    const replies = run.events.slice(0, -1);
    expect(replies).toHaveLength(10);
    replies.forEach((frame, i) => {
      expect(frame.event).toBe('message');
      expect(Object.keys(frame.data).sort()).toEqual(['icmp_seq', 'latency', 'summary']);
      expect(frame.data.icmp_seq).toBe(i + 1);
      expect(frame.data.latency).toBeGreaterThanOrEqual(0);
      expect(frame.data.summary).toBeNull();
    });
    const last = run.events.at(-1)!;
    expect(last.data).toEqual({
      summary: { total_transmitted: 10, total_received: 10, packet_loss: 0 },
    });
    // Frames arrive as the replies do: nine 0.2 s intervals separate the first from the summary.
    expect(last.at - replies[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(replies[0]!.at).toBeLessThan(endedAt - 1000);
    for (let i = 1; i < run.events.length; i++)
      expect(run.events[i]!.at).toBeGreaterThanOrEqual(run.events[i - 1]!.at);
    expect(spawned.map((p) => [p.program, p.args])).toEqual([
      ['ping', ['-n', '-c', '10', '-i', '0.2', '-W', '2', '--', '127.0.0.1']],
    ]);
  });

  it('pings IPv6 literals', async () => {
    const run = openSse(`/api/SSEgetPingInfo/${enc('::1')}`, token);
    await run.done;
    expect(run.events).toHaveLength(11);
    expect(run.events.at(-1)!.data.summary.total_received).toBe(10);
  });

  it('ends the ping process within a second when the client goes away', async () => {
    engine.service.configure({ pingIntervalSeconds: 1 });
    const run = openSse('/api/SSEgetPingInfo/127.0.0.1', token, (event, self) => {
      if (event.data.icmp_seq === 1) self.abort();
    });
    await run.done;
    const abortedAt = Date.now();
    expect(run.events.length).toBeLessThan(11);
    const child = spawned.find((p) => p.program === 'ping');
    expect(child).toBeDefined();
    expect(await waitUntil(() => !isProcessRunning(child!.pid), 1000)).toBe(true);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(await waitUntil(() => !liveToolProcesses().some((p) => p.pid === child!.pid), 500)).toBe(
      true,
    );
  });
});

describe('POST /api/getPingInfo/{pingTarget}: refusals (ping is never started)', () => {
  it.each(INJECTIONS)(
    'answers {status: false, message} for the target %j and starts nothing',
    async (target) => {
      const res = await h.request('POST', `/api/getPingInfo/${enc(target)}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: false, message: INVALID_TARGET });
      expect(spawned).toEqual([]);
    },
  );

  it('names the missing program', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const res = await h.request('POST', '/api/getPingInfo/127.0.0.1', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: false,
      message: 'ping is not installed (Debian package iputils-ping)',
    });
  });

  it('refuses callers without the tools permission', async () => {
    const res = await h.request('POST', '/api/getPingInfo/127.0.0.1', { token: outsider });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
  });
});

describe.runIf(HAVE.ping)('POST /api/getPingInfo/{pingTarget}: runs ping', () => {
  it('answers a JSON-encoded {address, latency, status, hostname} after 4 probes', async () => {
    const t0 = Date.now();
    const res = await h.request('POST', '/api/getPingInfo/127.0.0.1', { token });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['message', 'status']);
    expect(res.body.status).toBe(201);
    expect(typeof res.body.message).toBe('string');
    const result = JSON.parse(res.body.message);
    expect(result).toEqual({
      address: '127.0.0.1',
      latency: expect.any(Number),
      status: true,
      hostname: '127.0.0.1',
    });
    expect(Number.isInteger(result.latency)).toBe(true);
    expect(spawned.map((p) => p.args)).toEqual([
      ['-n', '-c', '4', '-i', '1', '-W', '2', '--', '127.0.0.1'],
    ]);
  });

  it('looks up the reverse name of an IP literal only', async () => {
    const asked: string[] = [];
    engine.service.configure({
      reverseDns: async (ip) => (
        asked.push(ip),
        ip === '127.0.0.1' ? 'loopback.appliance.test' : null
      ),
    });
    const byIp = await h.request('POST', '/api/getPingInfo/127.0.0.1', { token });
    expect(JSON.parse(byIp.body.message).hostname).toBe('loopback.appliance.test');
    const byName = await h.request('POST', '/api/getPingInfo/localhost', { token });
    expect(JSON.parse(byName.body.message)).toEqual({
      address: '127.0.0.1',
      latency: expect.any(Number),
      status: true,
      hostname: 'localhost',
    });
    expect(asked).toEqual(['127.0.0.1']);
  });
});

// --- mtr ----------------------------------------------------------------------------------------

describe('GET /api/SSEgetMTRInfo/{mtrTarget}: refusals (mtr is never started)', () => {
  it.each(INJECTIONS)(
    'answers event: error then stream-complete for the target %j, starting nothing',
    async (target) => {
      const run = openSse(`/api/SSEgetMTRInfo/${enc(target)}`, token);
      await run.done;
      expect(run.events.map((e) => [e.event, e.data])).toEqual([
        ['error', { message: INVALID_TARGET }],
        ['stream-complete', {}],
      ]);
      expect(spawned).toEqual([]);
    },
  );

  it('names the missing program in the error event, still ending with stream-complete', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const run = openSse('/api/SSEgetMTRInfo/127.0.0.1', token);
    await run.done;
    expect(run.events.map((e) => [e.event, e.data])).toEqual([
      ['error', { message: 'mtr is not installed (Debian package mtr-tiny)' }],
      ['stream-complete', {}],
    ]);
  });
});

describe.runIf(HAVE.mtr)('GET /api/SSEgetMTRInfo/{mtrTarget}: runs mtr', () => {
  it('streams sent, host and reply frames for 10 cycles and ends with stream-complete', async () => {
    const run = openSse('/api/SSEgetMTRInfo/127.0.0.1', token);
    const { status, contentType } = await run.done;
    expect(status).toBe(200);
    expect(contentType).toBe('text/event-stream; charset=utf-8');
    const last = run.events.at(-1)!;
    expect(last).toEqual({ event: 'stream-complete', data: {}, at: expect.any(Number) });
    const frames = run.events.slice(0, -1);
    expect(frames.every((f) => f.event === 'message')).toBe(true);
    const firstHop = frames.filter((f) => f.data.hop === 1);
    expect(firstHop.filter((f) => f.data.type === 'sent')).toHaveLength(10);
    expect(firstHop.filter((f) => f.data.type === 'host')).toEqual([
      {
        event: 'message',
        data: { type: 'host', hop: 1, host: '127.0.0.1' },
        at: expect.any(Number),
      },
    ]);
    const replies = firstHop.filter((f) => f.data.type === 'reply');
    expect(replies.length).toBeGreaterThanOrEqual(9);
    for (const reply of replies) {
      expect(Object.keys(reply.data).sort()).toEqual(['hop', 'latency', 'type']);
      expect(reply.data.latency).toBeGreaterThanOrEqual(0);
    }
    for (const frame of frames) expect(['sent', 'host', 'reply']).toContain(frame.data.type);
    expect(frames[0]!.at).toBeLessThan(last.at);
    expect(spawned[0]!.args).toEqual([
      '-n',
      '--raw',
      '-c',
      '10',
      '-i',
      String(BASE.mtrIntervalSeconds),
      '-G',
      '0.5',
      '--',
      '127.0.0.1',
    ]);
  });

  it('ends mtr and its helper process within a second when the client goes away', async () => {
    engine.service.configure({ mtrIntervalSeconds: 1 });
    const run = openSse('/api/SSEgetMTRInfo/127.0.0.1', token, (event, self) => {
      if (event.data.type === 'reply') self.abort();
    });
    await run.done;
    const abortedAt = Date.now();
    expect(run.events.some((e) => e.event === 'stream-complete')).toBe(false);
    const child = spawned.find((p) => p.program === 'mtr')!;
    expect(child).toBeDefined();
    expect(
      await waitUntil(
        () => !isProcessRunning(child.pid) && groupMembers(child.pid).length === 0,
        1000,
      ),
    ).toBe(true);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
  });
});

// --- traceroute -----------------------------------------------------------------------------------

describe('POST /api/getTracerouteInfo/{traceTarget}: refusals (tracepath is never started)', () => {
  it.each(INJECTIONS)(
    'answers {status: false, message} for the target %j and starts nothing',
    async (target) => {
      const res = await h.request('POST', `/api/getTracerouteInfo/${enc(target)}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: false, message: INVALID_TARGET });
      expect(spawned).toEqual([]);
    },
  );

  it('names the missing program', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const res = await h.request('POST', '/api/getTracerouteInfo/127.0.0.1', { token });
    expect(res.body).toEqual({
      status: false,
      message: 'tracepath is not installed (Debian package iputils-tracepath)',
    });
  });
});

describe.runIf(HAVE.tracepath)('POST /api/getTracerouteInfo/{traceTarget}: runs tracepath', () => {
  it('answers the hops with latency, hostname and path MTU', async () => {
    const res = await h.request('POST', '/api/getTracerouteInfo/127.0.0.1', { token });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(201);
    expect(res.body.message).toEqual([
      {
        hop: 1,
        address: '127.0.0.1',
        latency: expect.any(Number),
        hostname: '127.0.0.1',
        mtu: expect.any(Number),
      },
    ]);
    expect(Number.isInteger(res.body.message[0].mtu)).toBe(true);
    expect(res.body.message[0].mtu).toBeGreaterThanOrEqual(1280);
    expect(spawned.map((p) => [p.program, p.args])).toEqual([
      ['tracepath', ['-n', '-m', '10', '--', '127.0.0.1']],
    ]);
  });

  it('traces IPv6 literals and uses reverse names when there are some', async () => {
    engine.service.configure({
      reverseDns: async (ip) => (ip === '::1' ? 'ip6-loopback.test' : null),
    });
    const res = await h.request('POST', `/api/getTracerouteInfo/${enc('::1')}`, { token });
    expect(res.body.status).toBe(201);
    expect(res.body.message[0]).toMatchObject({
      hop: 1,
      address: '::1',
      hostname: 'ip6-loopback.test',
    });
  });
});

// --- port scan ------------------------------------------------------------------------------------

describe('POST /api/getPortscanInfo: refusals (nmap is never started)', () => {
  it.each([
    [{ portlist: '22' }, 'The ip field is required.'],
    [{ ip: '127.0.0.1' }, 'The portlist field is required.'],
    [{ ip: '127.0.0.1', portlist: '' }, 'The portlist field is required.'],
    [{ ip: 42, portlist: '22' }, 'The ip field must be a string.'],
    [
      { ip: '127.0.0.1', portlist: '22', service: 'yes' },
      'The service field must be true or false.',
    ],
  ])('validates the body %j', async (body, message) => {
    const res = await h.request('POST', '/api/getPortscanInfo', { token, body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message });
    expect(spawned).toEqual([]);
  });

  it.each([
    '0',
    '65536',
    '1-2-3',
    '5-1',
    '22;id',
    '-oX',
    '-',
    '22 80',
    '22,,80',
    'ssh',
    '-p-',
    `${'1,'.repeat(100)}1`,
  ])('refuses the port list %j and starts nothing', async (portlist) => {
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip: '127.0.0.1', portlist },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message: INVALID_PORTLIST });
    expect(spawned).toEqual([]);
  });

  it.each(INJECTIONS)('refuses the target %j and starts nothing', async (ip) => {
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip, portlist: '22' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message: INVALID_TARGET });
    expect(spawned).toEqual([]);
    expect(fs.existsSync('/tmp/appliance-injection-probe')).toBe(false);
  });

  it('names the missing program', async () => {
    engine.service.configure({ searchPath: [emptyDir] });
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip: '127.0.0.1', portlist: '22' },
    });
    expect(res.body).toEqual({
      status: false,
      message: 'nmap is not installed (Debian package nmap)',
    });
  });
});

describe.runIf(HAVE.nmap)('POST /api/getPortscanInfo: runs nmap', () => {
  let banner: net.Server;
  let silent: net.Server;
  let bannerPort: number;
  let silentPort: number;
  const sockets = new Set<net.Socket>();

  const listen = async (server: net.Server) => {
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  };

  beforeAll(async () => {
    banner = net.createServer((socket) =>
      socket.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n'),
    );
    silent = net.createServer(() => {});
    bannerPort = await listen(banner);
    silentPort = await listen(silent);
  });

  afterAll(() => {
    for (const s of sockets) s.destroy();
    banner.close();
    silent.close();
  });

  it('scans a local listener and answers the raw nmap output', async () => {
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip: '127.0.0.1', portlist: `${bannerPort}`, timing: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(201);
    expect(res.body.message).toContain('Nmap scan report for 127.0.0.1');
    expect(res.body.message).toMatch(new RegExp(`${bannerPort}/tcp\\s+open`));
    expect(spawned.map((p) => p.args)).toEqual([
      ['-n', '-Pn', '-T5', '-p', String(bannerPort), '--', '127.0.0.1'],
    ]);
  });

  it('detects service versions when asked', async () => {
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip: '127.0.0.1', portlist: `${bannerPort}`, timing: '5', service: true },
    });
    expect(res.body.status).toBe(201);
    expect(res.body.message).toMatch(/VERSION/);
    expect(res.body.message).toMatch(/OpenSSH 9\.2p1/);
    expect(spawned[0]!.args).toContain('-sV');
  });

  it('takes timing 3, 4 and 5 as given and any other value as 4', async () => {
    const cases: [unknown, string][] = [
      [3, '-T3'],
      ['4', '-T4'],
      [5, '-T5'],
      [' 3 ', '-T3'],
      [1, '-T4'],
      [0, '-T4'],
      ['fast', '-T4'],
      [null, '-T4'],
      [undefined, '-T4'],
      [{ x: 1 }, '-T4'],
      [6, '-T4'],
    ];
    for (const [timing, flag] of cases) {
      spawned = [];
      const res = await h.request('POST', '/api/getPortscanInfo', {
        token,
        body: {
          ip: '127.0.0.1',
          portlist: `${bannerPort}`,
          ...(timing === undefined ? {} : { timing }),
        },
      });
      expect(res.body.status, JSON.stringify(timing)).toBe(201);
      expect(spawned[0]!.args[2], JSON.stringify(timing)).toBe(flag);
    }
  });

  it('accepts lists and ranges, normalized', async () => {
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: {
        ip: '127.0.0.1',
        portlist: ` ${bannerPort} , ${silentPort}-${silentPort}, 1-3`,
        timing: 5,
      },
    });
    expect(res.body.status).toBe(201);
    expect(spawned[0]!.args[4]).toBe(`${bannerPort},${silentPort},1-3`);
    expect(res.body.message).toMatch(new RegExp(`${silentPort}/tcp\\s+open`));
  });

  it('answers {status: "timeout"} past its time budget and ends nmap', async () => {
    engine.service.configure({ portscanBudgetMs: 500 });
    const res = await h.request('POST', '/api/getPortscanInfo', {
      token,
      body: { ip: '127.0.0.1', portlist: `${silentPort}`, timing: 4, service: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'timeout',
      message: 'The port scan did not finish within 1 second',
    });
    expect(await waitUntil(() => !isProcessRunning(spawned[0]!.pid), 1000)).toBe(true);
  });

  it('ends nmap within a second when the client goes away', async () => {
    const request = https.request({
      host: '127.0.0.1',
      port,
      path: '/api/getPortscanInfo',
      method: 'POST',
      rejectUnauthorized: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    const failed = new Promise<boolean>((resolve) => {
      request.on('error', () => resolve(true));
      request.on('response', () => resolve(false));
    });
    request.end(JSON.stringify({ ip: '127.0.0.1', portlist: `${silentPort}`, service: true }));
    expect(await waitUntil(() => spawned.some((p) => p.program === 'nmap'), 10_000)).toBe(true);
    const child = spawned.find((p) => p.program === 'nmap')!;
    expect(isProcessRunning(child.pid)).toBe(true);
    request.destroy();
    expect(await failed).toBe(true);
    const abortedAt = Date.now();
    expect(await waitUntil(() => !isProcessRunning(child.pid), 1000)).toBe(true);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
  });
});

describe('permissions of the network tools', () => {
  it.each([
    ['POST', '/api/getTracerouteInfo/127.0.0.1'],
    ['GET', '/api/SSEgetMTRInfo/127.0.0.1'],
    ['POST', '/api/getPortscanInfo'],
  ])('%s %s needs the tools permission', async (method, url) => {
    const res = await h.request(method, url, {
      token: outsider,
      ...(method === 'POST' ? { body: { ip: '127.0.0.1', portlist: '1' } } : {}),
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
    expect((await h.request(method, url)).body).toEqual(UNAUTHENTICATED);
    expect(spawned).toEqual([]);
  });
});
