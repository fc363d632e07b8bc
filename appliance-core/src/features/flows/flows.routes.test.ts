/**
 * The flow explorer over HTTP with the real collector (spec part 3 "Flow explorer"): IPFIX and
 * v9 datagrams sent to the collector's UDP port on loopback, then every route: gates, active
 * flows and windows, the inverted-window message, filters (OR arrays, protocol names, ip/port),
 * the aggregated list (sort allowlist, src_port within src_ports, port = dst_port), saved
 * filters as exclusions in both lists, tag scope (0 out-of-scope flows in both lists, the
 * aggregate and the device summary), the device hooks, the intake counters and a malformed
 * datagram that is counted and survived.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
} from '../../../../test/harness/appliance.js';
import {
  dataRecords,
  ipfixPacket,
  IPV4_FIELDS,
  set,
  templateRecord,
  V9_FIELDS,
  v9Packet,
} from './testing/flow-packets.js';

const NO_PERMISSION = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

let h: Harness;
let admin: string;
let restricted: string;
let noVne: string;
let inScope: number;
let outOfScope: number;
let now: number;

const call = (method: string, path: string, token: string, options: RequestOptions = {}) =>
  h.request(method, path, { token, ...options });
const q = (params: Record<string, unknown>) =>
  '?' +
  new URLSearchParams(
    Object.entries(params).map(([k, v]): [string, string] => [
      k,
      typeof v === 'string' ? v : JSON.stringify(v),
    ]),
  ).toString();

async function send(port: number, ...packets: Uint8Array[]): Promise<void> {
  const socket = dgram.createSocket('udp4');
  for (const p of packets)
    await new Promise<void>((resolve, reject) =>
      socket.send(p, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  socket.close();
}

type Counters = Record<string, number> & {
  stored: number;
  malformed: number;
  received: number;
  datagrams: number;
};

async function counters(): Promise<Counters> {
  return (await call('GET', '/api/intake/counters', admin)).body.flows as Counters;
}

async function waitStored(n: number): Promise<Counters> {
  let c = await counters();
  for (let i = 0; i < 100 && c.stored < n; i++) {
    await new Promise((r) => setTimeout(r, 50));
    c = await counters();
  }
  return c;
}

const iso = (ms: number) => new Date(ms).toISOString();
const data = (res: { body: { data: Record<string, unknown>[] } }) => res.body.data;

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_NETFLOW_PORT: 'auto' });
  admin = await h.login();
  const device = async (ip: string, tag: string) =>
    (
      await call('POST', '/api/device/set', admin, {
        body: { ip_address: ip, label: `dev-${tag}`, profile: 'dash_generic', tags: [tag] },
      })
    ).body.device.id as number;
  inScope = await device('127.0.6.1', 'flows-a');
  outOfScope = await device('127.0.6.2', 'flows-b');
  restricted = (await h.userWith(['vne', 'devices'], { tags: ['flows-a'] })).token;
  noVne = (await h.userWith(['devices'])).token;
  // The collector's worker reads the device map as data: give it a moment to arrive.
  await new Promise((r) => setTimeout(r, 300));
  now = h.clock.now();
  const port = h.appliance.ctx.collectorPorts.report().netflow?.udp as number;
  const ipfixRows = [
    // in scope, active: 127.0.6.1 -> 10.0.0.9:443 tcp
    ['127.0.6.1', '10.0.0.9', 40000, 443, 6, 10, 1000, now - 20_000, now - 10_000],
    // out of scope (device b), active
    ['10.0.0.8', '127.0.6.2', 5000, 53, 17, 2, 500, now - 6_000, now - 5_000],
    // in scope, ended two hours ago
    ['127.0.6.1', '10.0.0.9', 40001, 443, 6, 30, 3000, now - 7_300_000, now - 7_200_000],
    // no device at all, active
    ['10.1.1.1', '10.1.1.2', 7, 7, 17, 1, 200, now - 2_000, now - 1_000],
    // in scope, active, same conversation as the first
    ['127.0.6.1', '10.0.0.9', 40002, 443, 6, 4, 400, now - 30_000, now - 15_000],
  ];
  const exportSecs = Math.floor(now / 1000);
  await send(
    port,
    ipfixPacket(
      [set(2, templateRecord(256, IPV4_FIELDS)), set(256, dataRecords(IPV4_FIELDS, ipfixRows))],
      { exportSecs },
    ),
  );
  // A v9 exporter too (uptime-relative times): one flow from device b to device a.
  await send(
    port,
    v9Packet(
      [
        set(0, templateRecord(300, V9_FIELDS)),
        set(
          300,
          dataRecords(V9_FIELDS, [
            ['127.0.6.2', '127.0.6.1', 6000, 22, 6, 7, 700, 50_000, 58_000, 3, 4, 12],
          ]),
        ),
      ],
      { uptime: 60_000, unixSecs: exportSecs },
    ),
  );
  const c = await waitStored(6);
  expect(c.stored).toBe(6);
}, 60_000);
afterAll(() => h.close());

describe('gates', () => {
  it('answers 401 without vne on every flow route', async () => {
    for (const [method, path] of [
      ['GET', '/api/netflow/list'],
      ['GET', '/api/aggnetflow/list'],
      ['GET', '/api/netflow/top'],
      ['GET', '/api/netflow/filters'],
      ['POST', '/api/netflow/filters'],
      ['POST', '/api/netflow/filters/toggle/1'],
      ['DELETE', '/api/netflow/filters/1'],
    ] as const) {
      const res = await call(method, path, noVne, method === 'POST' ? { body: {} } : {});
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 401,
        body: NO_PERMISSION,
      });
    }
  });
});

describe('GET /api/netflow/list', () => {
  it('without a window lists active flows (end within 60 s) by bytes, window null', async () => {
    const res = await call('GET', '/api/netflow/list', admin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      current_page: 1,
      per_page: 1000,
      total: 5,
      total_capped: false,
      startTime: null,
      endTime: null,
    });
    expect(data(res).map((r) => r.bytes)).toEqual([1000, 700, 500, 400, 200]);
    expect(data(res)[0]).toMatchObject({
      src_ip: '127.0.6.1',
      src_port: 40000,
      dst_ip: '10.0.0.9',
      dst_port: 443,
      protocol: 6,
      prot_name: 'tcp',
      packets: 10,
      start_time: iso(now - 20_000),
      end_time: iso(now - 10_000),
      flow_src: '127.0.0.1',
      src_id: inScope,
      src_host: 'dev-flows-a',
      src_profile: 'dash_generic',
      dst_id: null,
      dst_host: null,
      bps: 800,
    });
    // The v9 record: uptime-relative times, interfaces and vlan.
    expect(data(res)[1]).toMatchObject({
      src_id: outOfScope,
      dst_id: inScope,
      start_time: iso(Math.floor(now / 1000) * 1000 - 10_000),
      end_time: iso(Math.floor(now / 1000) * 1000 - 2_000),
      in_iface: 3,
      out_iface: 4,
      vlan: 12,
    });
  });

  it('with a window: start_time >= startTime and end_time <= endTime, echoed', async () => {
    const res = await call('GET', `/api/netflow/list${q({ hours: '3' })}`, admin);
    expect(res.status).toBe(200);
    expect(data(res).map((r) => r.bytes)).toEqual([3000, 1000, 700, 500, 400, 200]);
    expect(res.body.startTime).not.toBeNull();
    const cut = await call(
      'GET',
      `/api/netflow/list${q({ startTime: iso(now - 7_250_000), endTime: iso(now) })}`,
      admin,
    );
    expect(data(cut).map((r) => r.bytes)).not.toContain(3000);
    expect(cut.body).toMatchObject({ startTime: iso(now - 7_250_000), endTime: iso(now) });
    const early = await call(
      'GET',
      `/api/netflow/list${q({ startTime: iso(now - 8_000_000), endTime: iso(now - 3_600_000) })}`,
      admin,
    );
    expect(data(early).map((r) => r.bytes)).toEqual([3000]);
  });

  it('answers 400 with the spec message for an inverted window, and for bad input', async () => {
    const inverted = await call(
      'GET',
      `/api/netflow/list${q({ startTime: iso(now), endTime: iso(now - 1000) })}`,
      admin,
    );
    expect(inverted.status).toBe(400);
    expect(inverted.body).toEqual({ status: false, message: 'startTime must be before endTime.' });
    for (const query of [
      { startTime: 'yesterday-ish' },
      { filters: '{"bytes":' },
      { filters: { nope: 1 } },
      { filters: { src_ip: 'not an ip' } },
      { filters: { protocol: 'carrier-pigeon' } },
      { limit: '0' },
      { hours: '-1' },
    ]) {
      const res = await call('GET', `/api/netflow/list${q(query)}`, admin);
      expect({ query, status: res.status, status_field: res.body.status }).toEqual({
        query,
        status: 400,
        status_field: false,
      });
      expect(typeof res.body.message).toBe('string');
    }
  });

  it('filters: OR arrays, protocol names, ip and port on either endpoint, paging', async () => {
    const by = async (filters: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      data(await call('GET', `/api/netflow/list${q({ filters, ...extra })}`, admin)).map(
        (r) => r.bytes,
      );
    expect(await by({ protocol: 'udp' })).toEqual([500, 200]);
    expect(await by({ protocol: [17, 'tcp'] })).toEqual([1000, 700, 500, 400, 200]);
    expect(await by({ ip: '127.0.6.2' })).toEqual([700, 500]);
    expect(await by({ port: 53 })).toEqual([500]);
    expect(await by({ src_port: [40000, 40002] })).toEqual([1000, 400]);
    expect(await by({ flow_src: '127.0.0.1', vlan: 12 })).toEqual([700]);
    expect(await by({ dst_ip: "'; DROP TABLE flows;--" }).catch(() => 'rejected')).toBe('rejected');
    const page2 = await call('GET', `/api/netflow/list${q({ limit: 2, page: 2 })}`, admin);
    expect(page2.body).toMatchObject({ current_page: 2, per_page: 2, total: 5 });
    expect(data(page2).map((r) => r.bytes)).toEqual([500, 400]);
  });
});

describe('GET /api/aggnetflow/list', () => {
  it('one row per conversation per hour with src_ports, start_time descending by default', async () => {
    const res = await call('GET', '/api/aggnetflow/list', admin);
    expect(res.status).toBe(200);
    const rows = data(res);
    const conv = rows.find((r) => r.src_ip === '127.0.6.1' && r.bytes === 1400);
    expect(conv).toMatchObject({
      dst_ip: '10.0.0.9',
      dst_port: 443,
      protocol: 6,
      prot_name: 'tcp',
      flows: 2,
      packets: 14,
      src_ports: [40000, 40002],
      start_time: iso(now - 30_000),
      end_time: iso(now - 10_000),
      src_id: inScope,
      vlan: null,
    });
    const starts = rows.map((r) => Date.parse(r.start_time as string));
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    expect(res.body.startTime).toEqual(expect.any(String));
  });

  it('sort=bytes orders by bytes; any other sort value is start_time', async () => {
    const bytes = data(await call('GET', `/api/aggnetflow/list${q({ sort: 'bytes' })}`, admin));
    expect(bytes.map((r) => r.bytes)).toEqual([3000, 1400, 700, 500, 200]);
    const odd = data(
      await call('GET', `/api/aggnetflow/list${q({ sort: 'bytes; DROP TABLE flows' })}`, admin),
    );
    const byStart = data(await call('GET', '/api/aggnetflow/list', admin));
    expect(odd).toEqual(byStart);
  });

  it('src_port matches within src_ports; port matches dst_port', async () => {
    const within = data(
      await call('GET', `/api/aggnetflow/list${q({ filters: { src_port: 40002 } })}`, admin),
    );
    expect(within.map((r) => r.bytes)).toEqual([1400]);
    const port = data(
      await call('GET', `/api/aggnetflow/list${q({ filters: { port: 443 } })}`, admin),
    );
    expect(port.map((r) => r.bytes).sort((a, b) => Number(a) - Number(b))).toEqual([1400, 3000]);
    const notSrc = data(
      await call('GET', `/api/aggnetflow/list${q({ filters: { port: 40000 } })}`, admin),
    );
    expect(notSrc).toEqual([]);
    const packets = await call(
      'GET',
      `/api/aggnetflow/list${q({ filters: { packets: 1 } })}`,
      admin,
    );
    expect(packets.status).toBe(400);
  });
});

describe('GET /api/netflow/top (designed)', () => {
  it('top sources, destinations, conversations, protocols and bytes per hour', async () => {
    const res = await call('GET', `/api/netflow/top${q({ hours: '3', top: 2 })}`, admin);
    expect(res.status).toBe(200);
    expect(res.body.top_sources).toEqual([
      {
        ip: '127.0.6.1',
        device_id: inScope,
        host: 'dev-flows-a',
        bytes: 4400,
        packets: 44,
        flows: 3,
      },
      expect.objectContaining({ ip: '127.0.6.2', bytes: 700 }),
    ]);
    expect(res.body.top_destinations[0]).toMatchObject({ ip: '10.0.0.9', bytes: 4400 });
    expect(res.body.top_protocols).toEqual([
      { protocol: 6, prot_name: 'tcp', bytes: 5100, packets: 51, flows: 4 },
      { protocol: 17, prot_name: 'udp', bytes: 700, packets: 3, flows: 2 },
    ]);
    expect(res.body.top_conversations[0]).toMatchObject({
      src_ip: '127.0.6.1',
      dst_ip: '10.0.0.9',
      dst_port: 443,
      bytes: 4400,
    });
    const total = (res.body.series as { bytes: number }[]).reduce((n, s) => n + s.bytes, 0);
    expect(total).toBe(5800);
  });
});

describe('tag scope', () => {
  it('a restricted user sees 0 flows between out-of-scope addresses anywhere', async () => {
    const inScopeOnly = (rows: Record<string, unknown>[]) =>
      rows.every((r) => r.src_ip === '127.0.6.1' || r.dst_ip === '127.0.6.1');
    const list = data(await call('GET', `/api/netflow/list${q({ hours: '3' })}`, restricted));
    expect(list.map((r) => r.bytes)).toEqual([3000, 1000, 700, 400]);
    expect(inScopeOnly(list)).toBe(true);
    const agg = data(await call('GET', '/api/aggnetflow/list', restricted));
    expect(agg.length).toBeGreaterThan(0);
    expect(inScopeOnly(agg)).toBe(true);
    const top = (await call('GET', `/api/netflow/top${q({ hours: '3' })}`, restricted)).body;
    expect(top.top_protocols).toEqual([
      { protocol: 6, prot_name: 'tcp', bytes: 5100, packets: 51, flows: 4 },
    ]);
    const ips = [...top.top_sources, ...top.top_destinations].map((t: { ip: string }) => t.ip);
    expect(ips).not.toContain('10.1.1.1');
    expect(ips).not.toContain('10.0.0.8');
    expect((await call('GET', `/api/device/${outOfScope}`, restricted)).status).toBe(404);
  });
});

describe('saved filters (feed flows, one set for both lists)', () => {
  it('creates, refuses bytes and unknown keys, excludes from both lists, toggles, deletes', async () => {
    const user = (await h.userWith(['vne'])).token;
    const bad = await call('POST', '/api/netflow/filters', user, {
      body: { label: 'x', filter: JSON.stringify({ bytes: 1 }) },
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Filter contains invalid criteria: bytes' });
    const empty = await call('POST', '/api/netflow/filters', user, {
      body: { label: 'x', filter: '{}' },
    });
    expect(empty.body).toEqual({ error: 'Filter cannot be empty.' });
    const noLabel = await call('POST', '/api/netflow/filters', user, {
      body: { filter: JSON.stringify({ port: 443 }) },
    });
    expect(noLabel.status).toBe(422);
    const created = await call('POST', '/api/netflow/filters', user, {
      body: { label: 'no https', filter: JSON.stringify({ port: 443 }) },
    });
    expect(created.status).toBe(201);
    const id = created.body.filter.id as number;
    expect(created.body.filter).toMatchObject({
      label: 'no https',
      filter: { port: 443 },
      enabled: true,
    });
    const list = data(await call('GET', `/api/netflow/list${q({ hours: '3' })}`, user));
    expect(list.map((r) => r.dst_port)).not.toContain(443);
    const agg = data(await call('GET', '/api/aggnetflow/list', user));
    expect(agg.map((r) => r.dst_port)).not.toContain(443);
    // The syslog feed's filters are another set.
    expect((await call('GET', '/api/netflow/filters', user)).body.filters).toHaveLength(1);
    const toggled = await call('POST', `/api/netflow/filters/toggle/${id}`, user);
    expect(toggled.status).toBe(201);
    expect(toggled.body.filters[0].enabled).toBe(false);
    expect(
      data(await call('GET', `/api/netflow/list${q({ hours: '3' })}`, user)).map((r) => r.dst_port),
    ).toContain(443);
    const foreign = await call('POST', `/api/netflow/filters/toggle/${id}`, admin);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Filter not found or access denied.' });
    expect((await call('DELETE', `/api/netflow/filters/${id}`, user)).body).toEqual({
      message: 'Filter deleted successfully.',
    });
    const gone = await call('DELETE', `/api/netflow/filters/${id}`, user);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: 'Filter not found or access denied.' });
  });
});

describe('device hooks', () => {
  it('GET /api/device/{device} carries the netflow summary; stats has a flows row', async () => {
    const res = await call('GET', `/api/device/${inScope}${q({ hours: '8' })}`, restricted);
    expect(res.status).toBe(200);
    expect(res.body.device.netflow).toEqual({
      bytes: 4400 + 700,
      count: 4,
      top_partners: [
        { ip: '10.0.0.9', device_id: null, host: null, bytes: 4400 },
        { ip: '127.0.6.2', device_id: outOfScope, host: 'dev-flows-b', bytes: 700 },
      ],
    });
    const stats = await call('GET', `/api/device/${inScope}/stats`, admin);
    expect(stats.body.find((r: { log_name: string }) => r.log_name === 'flows')).toMatchObject({
      total_rows: 4,
    });
  });
});

describe('collector', () => {
  it('counts a malformed datagram and keeps collecting; /metrics carries the flows feed', async () => {
    const port = h.appliance.ctx.collectorPorts.report().netflow?.udp as number;
    const before = await counters();
    await send(port, Uint8Array.from([0, 10, 0, 200, 1, 2, 3]), Uint8Array.from([0, 77]));
    const exportSecs = Math.floor(h.clock.now() / 1000);
    await send(
      port,
      ipfixPacket(
        [
          set(
            256,
            dataRecords(IPV4_FIELDS, [
              ['10.2.2.2', '10.2.2.3', 1, 2, 17, 1, 1, now - 1000, now - 1000],
            ]),
          ),
        ],
        { exportSecs },
      ),
    );
    const after = await waitStored(before.stored + 1);
    expect(after.malformed).toBe(before.malformed + 2);
    expect(after.stored).toBe(before.stored + 1);
    expect(after).toMatchObject({ dropped: 0 });
    expect(after.templates).toBeGreaterThanOrEqual(2);
    const metrics = await call('GET', '/metrics', admin);
    expect(metrics.text).toMatch(
      /appliance_intake_messages_total\{feed="flows",outcome="stored"\} 7/,
    );
  });
});

describe('a receiver that dies', () => {
  type Engine = {
    worker: { terminate(): Promise<number>; postMessage(msg: unknown): void } | null;
    port: number | null;
  };
  const engine = () => h.appliance.engines.find((e) => e.name === 'flows') as unknown as Engine;

  /** Sends template + data until the flow from `src` is listed (datagrams sent while no socket listens are lost; at most ~6 s). */
  async function sendUntilListed(port: number, src: string): Promise<number> {
    let listed = 0;
    for (let i = 0; i < 30 && listed === 0; i++) {
      const t = h.clock.now();
      await send(
        port,
        ipfixPacket(
          [
            set(2, templateRecord(256, IPV4_FIELDS)),
            set(256, dataRecords(IPV4_FIELDS, [[src, '10.4.4.4', 9, 9, 17, 1, 64, t - 500, t]])),
          ],
          { exportSecs: Math.floor(t / 1000) },
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
      listed = data(
        await call('GET', `/api/netflow/list${q({ filters: { src_ip: src } })}`, admin),
      ).length;
    }
    return listed;
  }

  it.each([
    [
      'crashes (an uncaught error)',
      (w: NonNullable<Engine['worker']>) => w.postMessage({ type: 'crash' }),
    ],
    ['is killed', (w: NonNullable<Engine['worker']>) => void w.terminate()],
  ])(
    'that %s is started again on the same port; records are stored again; counters carry on',
    async (what, kill) => {
      const e = engine();
      const port = e.port as number;
      const before = await counters();
      expect(before.stored).toBeGreaterThan(0);
      expect(before.malformed).toBeGreaterThan(0);
      const dead = e.worker!;
      kill(dead);
      const src = what.startsWith('crash') ? '10.3.3.1' : '10.3.3.2';
      expect(await sendUntilListed(port, src)).toBeGreaterThanOrEqual(1);
      expect(e.worker).not.toBe(dead);
      expect(e.port).toBe(port);
      expect(h.appliance.ctx.collectorPorts.report().netflow?.udp).toBe(port);
      const after = await counters();
      // Carried on: nothing counted before the death is lost, the new records add to it.
      expect(after.stored).toBeGreaterThan(before.stored);
      expect(after.received).toBeGreaterThan(before.received);
      expect(after.datagrams).toBeGreaterThan(before.datagrams);
      expect(after.malformed).toBe(before.malformed);
      expect(after.stored).toBeGreaterThanOrEqual(before.stored + 1);
    },
    20_000,
  );

  it('stopped during the restart delay, stays stopped (last: it stops the collector)', async () => {
    const e = engine() as Engine & { stop(): Promise<void> };
    const dead = e.worker!;
    void dead.terminate();
    await new Promise((r) => setTimeout(r, 100));
    expect(e.worker).toBeNull();
    await e.stop();
    await new Promise((r) => setTimeout(r, 1500));
    expect(e.worker).toBeNull();
    expect(e.port).toBeNull();
    expect(h.appliance.ctx.collectorPorts.report().netflow).toBeUndefined();
  });
});
