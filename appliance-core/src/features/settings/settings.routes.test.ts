/**
 * The appliance settings endpoints over HTTP (spec part 3, "Appliance settings") against real
 * appliances on this machine: the default dry-run appliance (nothing reaches the host), and an
 * `apply` appliance whose root helper is a fake on a temp Unix socket (a real socket peer that
 * records what would have been applied). Nothing here changes this machine's hostname, clock or
 * network: the only host commands run are reads (`ip -j addr`).
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../platform/audit/audit-log.js';
import { onToolSpawn, type LiveToolProcess } from '../../platform/process/spawn.js';
import {
  startFakeRootHelper,
  type FakeRootHelper,
} from '../../platform/host/testing/fake-root-helper.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { INJECTIONS, validKey } from './testing/injections.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

let h: Harness;
let other: Harness;
let system: string;
let plain: string;
const post = (url: string, body?: unknown, token = system) =>
  h.request('POST', url, { token, body });
const get = (url: string, token = system) => h.request('GET', url, { token });
const legacyFailure = (res: { status: number; body: any }) => {
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: false, hasError: true });
  expect(typeof res.body.message).toBe('string');
};
const auditActions = (harness: Harness) =>
  listAudit(harness.appliance.db, { page: 1, limit: 500 }).rows.map((r) => r.action);

beforeAll(async () => {
  h = await startAppliance();
  other = await startAppliance();
  system = (await h.userWith(['system'])).token;
  plain = (await h.userWith(['devices'])).token;
});
afterAll(async () => {
  await h?.close();
  await other?.close();
});

describe('the system gate', () => {
  it('denies every settings endpoint without system (401, legacy body) and changes nothing', async () => {
    const routes: [string, string, unknown][] = [
      ['GET', '/api/manageApplianceServices', undefined],
      ['POST', '/api/procmon', { service: 'devices', action: 'restart' }],
      ['POST', '/api/restartAppliance', undefined],
      ['POST', '/api/getNetworkInfo', undefined],
      [
        'POST',
        '/api/setNetworkInfo',
        { interfaces: [{ name: 'lo', config: { type: 'manual', use_sniffer: true } }] },
      ],
      ['GET', '/api/getHostname', undefined],
      ['POST', '/api/setHostname', { hostname: 'x' }],
      ['POST', '/api/getHostnames', {}],
      [
        'POST',
        '/api/createHostname',
        { ip: '192.0.2.1', hostname: 'a', host_name_type: 'hostname', node_type: 'host' },
      ],
      [
        'POST',
        '/api/updateHostname',
        { id: 1, ip: '192.0.2.1', hostname: 'a', host_name_type: 'hostname', node_type: 'host' },
      ],
      ['POST', '/api/deleteHost', { id: 1 }],
      ['GET', '/api/getTimeSettings', undefined],
      ['POST', '/api/setTimeSettings', { type: 'ntp', tz: 'UTC', ntpserver: '192.0.2.1' }],
      ['GET', '/api/getLicenseInfo', undefined],
      [
        'POST',
        '/api/validateLicense',
        { registrationKey: validKey('000000-000000-000000-000000-000000') },
      ],
    ];
    for (const [method, url, body] of routes) {
      const res = await h.request(method, url, { token: plain, body });
      expect(res.status, url).toBe(401);
      expect(res.body, url).toEqual(DENIED);
    }
    const count = (table: string) =>
      (h.appliance.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(count('interface_roles') + count('host_map') + count('license_activations')).toBe(0);
  });
});

describe('services', () => {
  it('lists the registry engines with state and pid; shared ones marked; no systemd unit here', async () => {
    const res = await get('/api/manageApplianceServices');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 201, hasError: false });
    const services = res.body.data.services as any[];
    expect(services.map((s) => s.name)).toEqual(h.appliance.registry.list().map((e) => e.name));
    const devices = services.find((s) => s.name === 'devices');
    expect(devices).toMatchObject({
      kind: 'engine',
      status: 'running',
      pid: process.pid,
      shared: false,
    });
    expect(services.find((s) => s.name === 'scheduler')).toMatchObject({ shared: true });
    // CI and this container have no systemd as init: no unit row.
    expect(services.some((s) => s.kind === 'systemd')).toBe(false);
  });

  it('procmon stops and starts an engine live, and refuses bad input with 400', async () => {
    const stop = await post('/api/procmon', { service: 'devices', action: 'stop' });
    expect(stop.status).toBe(200);
    expect(stop.body).toEqual({ status: 201, hasError: false, message: 'devices stopped' });
    expect(h.appliance.registry.status('devices').state).toBe('stopped');
    const start = await post('/api/procmon', { service: 'devices', action: 'start' });
    expect(start.body).toEqual({ status: 201, hasError: false, message: 'devices started' });
    expect(h.appliance.registry.status('devices').state).toBe('running');

    for (const body of [
      { service: 'scheduler', action: 'restart' },
      { service: 'storage-writer', action: 'stop' },
      { service: 'nope', action: 'restart' },
      { service: 'devices', action: 'kill' },
      { service: 'devices' },
      { action: 'restart' },
      ...INJECTIONS.map((s) => ({ service: s, action: 'restart' })),
      ...INJECTIONS.map((s) => ({ service: 'devices', action: s })),
    ]) {
      const res = await post('/api/procmon', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body).toMatchObject({ hasError: true, status: false });
      expect(typeof res.body.message).toBe('string');
    }
    expect(h.appliance.registry.status('scheduler').state).toBe('running');
    expect(h.appliance.registry.status('storage-writer').state).toBe('running');
  });

  it("restartAppliance restarts this instance's engines only: not the shared ones, not another appliance's", async () => {
    const before = new Map(h.appliance.registry.list().map((e) => [e.name, e.startedAt]));
    const otherBefore = other.appliance.registry.list().map((e) => [e.name, e.startedAt]);
    h.clock.advance(5_000);
    const res = await post('/api/restartAppliance');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 200, hasError: false });
    for (const engine of h.appliance.registry.list()) {
      expect(engine.state, engine.name).toBe('running');
      if (engine.shared) expect(engine.startedAt, engine.name).toBe(before.get(engine.name));
      else expect(engine.startedAt, engine.name).toBeGreaterThan(before.get(engine.name) as number);
    }
    expect(res.body.restarted).toEqual(
      h.appliance.registry
        .list()
        .filter((e) => !e.shared)
        .map((e) => e.name),
    );
    expect(other.appliance.registry.list().map((e) => [e.name, e.startedAt])).toEqual(otherBefore);
    expect(auditActions(h)).toContain('settings.restart_appliance');
  });
});

describe('network', () => {
  it('getNetworkInfo matches ip -j addr and reports network_mode', async () => {
    const res = await post('/api/getNetworkInfo');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 201, hasError: false, network_mode: 'dry-run' });
    const real = JSON.parse(
      execFileSync('ip', ['-j', 'addr', 'show'], { encoding: 'utf8' }),
    ) as any[];
    expect(res.body.interfaces.map((i: any) => i.name)).toEqual(real.map((l) => l.ifname));
    for (const link of real) {
      const iface = res.body.interfaces.find((i: any) => i.name === link.ifname);
      const v4 = link.addr_info.filter((a: any) => a.family === 'inet').map((a: any) => a.local);
      const v6 = link.addr_info.filter((a: any) => a.family === 'inet6').map((a: any) => a.local);
      expect(iface.ipv4.map((a: any) => a.address)).toEqual(v4);
      expect(iface.ipv6.map((a: any) => a.address)).toEqual(v6);
      expect(iface.config).toMatchObject({ use_sniffer: false, use_suricata: false });
    }
    const lo = res.body.interfaces.find((i: any) => i.name === 'lo');
    expect(lo.ipv4).toContainEqual({ address: '127.0.0.1', netmask: '255.0.0.0' });
    expect(lo.online).toBe(true);
  });

  it('dry run validates fully, says what would be written, saves use_sniffer, and feeds capture', async () => {
    const res = await post('/api/setNetworkInfo', {
      interfaces: [
        {
          name: 'lo',
          config: {
            type: 'static',
            address: '127.0.0.1/8',
            netmask: '255.0.0.0',
            gateway: '127.0.0.254',
            'dns-nameservers': ['127.0.0.53'],
            use_sniffer: true,
            use_suricata: false,
          },
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 201, hasError: false, dry_run: true });
    expect(res.body.message).toMatch(/Dry run/);
    expect(res.body.message).toContain(
      'lo: static 127.0.0.1/8 netmask 255.0.0.0 gateway 127.0.0.254',
    );
    const info = await post('/api/getNetworkInfo');
    expect(info.body.interfaces.find((i: any) => i.name === 'lo').config.use_sniffer).toBe(true);
    expect(auditActions(h)).toContain('settings.network_set');
  });

  it('one bad element rejects the whole request and nothing is saved', async () => {
    const roles = () => h.appliance.db.prepare('SELECT * FROM interface_roles ORDER BY name').all();
    const before = roles();
    const good = { name: 'lo', config: { type: 'dhcp', use_suricata: true } };
    const bad: unknown[] = [
      { name: 'lo', config: { type: 'static', address: '127.0.0.1' } },
      { name: 'lo', config: { type: 'static', netmask: '255.0.0.0' } },
      { name: 'lo', config: { type: 'static', address: '127.0.0.1/8', netmask: '255.255.0.0' } },
      { name: 'lo', config: { type: 'static', address: '127.0.0.1', netmask: '255.0.255.0' } },
      { name: 'lo', config: { type: 'bridge' } },
      { name: 'lo', config: {} },
      { name: 'lo' },
      { name: 'lo', config: { type: 'dhcp', address: '127.0.0.1' } },
      { name: 'nosuchif0', config: { type: 'dhcp' } },
      { name: 'x'.repeat(16), config: { type: 'dhcp' } },
      { name: 'lo', config: { type: 'dhcp', extra: 1 } },
      ...INJECTIONS.map((name) => ({ name, config: { type: 'dhcp' } })),
      ...INJECTIONS.map((address) => ({
        name: 'lo',
        config: { type: 'static', address, netmask: '255.0.0.0' },
      })),
      ...INJECTIONS.map((gateway) => ({
        name: 'lo',
        config: { type: 'static', address: '127.0.0.1', netmask: '255.0.0.0', gateway },
      })),
      ...INJECTIONS.map((dns) => ({
        name: 'lo',
        config: { type: 'dhcp', 'dns-nameservers': [dns] },
      })),
    ];
    const spawned: LiveToolProcess[] = [];
    const unsubscribe = onToolSpawn((p) => spawned.push(p));
    try {
      for (const element of bad) {
        const res = await post('/api/setNetworkInfo', { interfaces: [good, element] });
        legacyFailure(res);
        expect(res.body.message).not.toMatch(/Dry run/);
      }
    } finally {
      unsubscribe();
    }
    // No shell and no typed value on a command line: only the fixed read of the interfaces ran.
    for (const p of spawned) {
      expect(path.basename(p.program)).toBe('ip');
      expect(p.args).toEqual(['-j', 'addr', 'show']);
    }
    legacyFailure(await post('/api/setNetworkInfo', { interfaces: [] }));
    legacyFailure(await post('/api/setNetworkInfo', { interfaces: [good, good] }));
    expect(roles()).toEqual(before);
  });

  it('reads a null address, netmask or gateway of a non-static interface as absent (the schema allows null)', async () => {
    const res = await post('/api/setNetworkInfo', {
      interfaces: [
        { name: 'lo', config: { type: 'dhcp', address: null, netmask: null, gateway: null } },
      ],
    });
    expect(res.body).toMatchObject({ status: 201, hasError: false, dry_run: true });
  });
});

describe('hostname', () => {
  it('getHostname is the real host name', async () => {
    const res = await get('/api/getHostname');
    expect(res.body).toEqual({ status: 200, hasError: false, hostname: os.hostname() });
  });

  it('setHostname validates (422 {message, errors}) and in dry run changes nothing', async () => {
    const before = os.hostname();
    const res = await post('/api/setHostname', { hostname: 'nms-test.example.net' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 201,
      hostname: 'nms-test.example.net',
      dry_run: true,
    });
    expect(res.body.message).toMatch(/Dry run/);
    for (const hostname of [undefined, '', 'a'.repeat(256), '-x', 'a_b', 12, ...INJECTIONS]) {
      const bad = await post('/api/setHostname', hostname === undefined ? {} : { hostname });
      expect(bad.status, String(hostname).slice(0, 20)).toBe(422);
      expect(Object.keys(bad.body).sort()).toEqual(['errors', 'message']);
      expect(bad.body.errors.hostname).toHaveLength(1);
    }
    expect(os.hostname()).toBe(before);
  });
});

describe('host map', () => {
  it('creates, pages, updates, refuses duplicates and deletes', async () => {
    const entry = {
      ip: '192.0.2.10',
      hostname: 'Core-SW.example.net',
      host_name_type: 'fqdn',
      node_type: 'switch',
    };
    const created = await post('/api/createHostname', entry);
    expect(created.body).toMatchObject({
      status: 201,
      hasError: false,
      data: {
        ip: '192.0.2.10',
        hostname: 'core-sw.example.net',
        host_name_type: 'fqdn',
        node_type: 'switch',
      },
    });
    const id = created.body.data.id as number;
    legacyFailure(await post('/api/createHostname', entry));
    const second = await post('/api/createHostname', { ...entry, ip: '2001:DB8::1' });
    expect(second.body.data.ip).toBe('2001:db8::1');
    const all = await post('/api/getHostnames');
    expect(all.body).toMatchObject({ status: 201, total: 2, page: 1, limit: 50, last_page: 1 });
    // The same address written another way is the same address.
    legacyFailure(await post('/api/createHostname', { ...entry, ip: '2001:db8:0::1' }));
    const page = await post('/api/getHostnames', { page: 2, limit: 1 });
    expect(page.body).toMatchObject({
      status: 201,
      hasError: false,
      total: 2,
      page: 2,
      limit: 1,
      last_page: 2,
    });
    expect(page.body.data.map((r: any) => r.id)).toEqual([second.body.data.id]);
    // Updating the second to the first's pair is a duplicate.
    legacyFailure(await post('/api/updateHostname', { id: second.body.data.id, ...entry }));
    const updated = await post('/api/updateHostname', { id, ...entry, node_type: 'router' });
    expect(updated.body.data).toMatchObject({ id, node_type: 'router' });
    legacyFailure(await post('/api/updateHostname', { id: 999, ...entry }));
    expect((await post('/api/deleteHost', { id })).body).toEqual({
      status: 201,
      hasError: false,
      message: 'Host deleted',
    });
    legacyFailure(await post('/api/deleteHost', { id }));
    legacyFailure(await post('/api/deleteHost', { id: 0 }));
    legacyFailure(await post('/api/deleteHost', { id: -1 }));
    expect(auditActions(h)).toEqual(
      expect.arrayContaining(['host_map.create', 'host_map.update', 'host_map.delete']),
    );
  });

  it('requires every field with allowed values and refuses injections', async () => {
    const count = () =>
      (h.appliance.db.prepare('SELECT count(*) AS n FROM host_map').get() as { n: number }).n;
    const before = count();
    const entry = {
      ip: '192.0.2.20',
      hostname: 'printer',
      host_name_type: 'hostname',
      node_type: 'printer',
    };
    const bad: Record<string, unknown>[] = [
      { ...entry, ip: undefined },
      { ...entry, hostname: '' },
      { ...entry, host_name_type: 'cname' },
      { ...entry, node_type: 'toaster' },
      { ...entry, host_name_type: 'fqdn' },
      { ...entry, ip: 'fe80::1%eth0' },
      ...INJECTIONS.flatMap((s) => [
        { ...entry, ip: s },
        { ...entry, hostname: s },
        { ...entry, node_type: s },
      ]),
    ];
    for (const body of bad) legacyFailure(await post('/api/createHostname', body));
    expect(count()).toBe(before);
  });
});

describe('time', () => {
  it("reads zones from the system's zone database, the zone, mode and clock", async () => {
    const res = await get('/api/getTimeSettings');
    expect(res.body).toMatchObject({ status: 201, hasError: false });
    const { tzs, tz, type, time } = res.body.data;
    expect(tzs).toContain('Europe/Berlin');
    expect(tzs).toContain('UTC');
    expect(tzs).toContain(tz);
    expect(['ntp', 'manual']).toContain(type);
    if (type === 'manual') expect(res.body.data).not.toHaveProperty('ntpserver');
    expect(time).toBe(Math.floor(h.clock.now() / 1000));
  });

  it('setTimeSettings validates every field and, in dry run, only says what it would set', async () => {
    const ntp = await post('/api/setTimeSettings', {
      type: 'ntp',
      tz: 'Europe/Berlin',
      ntpserver: '0.debian.pool.ntp.org 192.0.2.1',
    });
    expect(ntp.body).toMatchObject({ status: 201, hasError: false, dry_run: true });
    expect(ntp.body.message).toContain('Europe/Berlin');
    const manual = await post('/api/setTimeSettings', {
      type: 'manual',
      tz: 'UTC',
      manual: '2026-12-04T10:20:30Z',
    });
    expect(manual.body.message).toContain('2026-12-04T10:20:30.000Z');
    const bad: Record<string, unknown>[] = [
      { type: 'ptp', tz: 'UTC' },
      { type: 'ntp', tz: 'Mars/Olympus', ntpserver: '192.0.2.1' },
      { type: 'ntp', tz: 'UTC' },
      { type: 'manual', tz: 'UTC' },
      { type: 'manual', tz: 'UTC', manual: '1764843630' },
      ...INJECTIONS.map((s) => ({ type: 'ntp', tz: 'UTC', ntpserver: s })),
      ...INJECTIONS.map((s) => ({ type: 'ntp', tz: s, ntpserver: '192.0.2.1' })),
      ...INJECTIONS.map((s) => ({ type: 'manual', tz: 'UTC', manual: s })),
    ];
    for (const body of bad) legacyFailure(await post('/api/setTimeSettings', body));
  });
});

describe('license', () => {
  it('is an empty list unlicensed; a bad key is 422; a good one is stored and restarts the engines', async () => {
    const fresh = await startAppliance();
    try {
      const token = (await fresh.userWith(['system'])).token;
      const info = await fresh.request('GET', '/api/getLicenseInfo', { token });
      expect(info.body).toEqual({ status: 201, hasError: false, data: [] });
      for (const registrationKey of [
        'abc',
        '000000-000000-000000-000000-000000-000000',
        ...INJECTIONS.slice(0, 8),
      ]) {
        const bad = await fresh.request('POST', '/api/validateLicense', {
          token,
          body: { registrationKey },
        });
        expect(bad.status, registrationKey.slice(0, 20)).toBe(422);
        expect(bad.body).toMatchObject({ status: false, hasError: true });
      }
      const before = new Map(fresh.appliance.registry.list().map((e) => [e.name, e.startedAt]));
      const otherBefore = other.appliance.registry.list().map((e) => e.startedAt);
      fresh.clock.advance(1_000);
      const key = validKey('ABCDEF-123456-ABCDEF-123456-ABCDEF');
      const ok = await fresh.request('POST', '/api/validateLicense', {
        token,
        body: { registrationKey: key.toLowerCase() },
      });
      expect(ok.body).toEqual({ status: 201, hasError: false, message: { activation_key: key } });
      for (const engine of fresh.appliance.registry.list())
        if (engine.shared) expect(engine.startedAt).toBe(before.get(engine.name));
        else
          expect(engine.startedAt, engine.name).toBeGreaterThan(before.get(engine.name) as number);
      expect(other.appliance.registry.list().map((e) => e.startedAt)).toEqual(otherBefore);
      const listed = await fresh.request('GET', '/api/getLicenseInfo', { token });
      expect(listed.body.data).toEqual([
        expect.objectContaining({
          activation_key: key,
          active: true,
          license_type: 'perpetual',
          end_of_license: null,
        }),
      ]);
      expect(auditActions(fresh)).toContain('license.activate');
    } finally {
      await fresh.close();
    }
  });
});

describe('apply mode with a root helper', () => {
  let helper: FakeRootHelper;
  let a: Harness;
  let token: string;
  beforeAll(async () => {
    helper = await startFakeRootHelper();
    a = await startAppliance({
      APPLIANCE_NETWORK_MODE: 'apply',
      APPLIANCE_ROOT_HELPER_SOCKET: helper.socketPath,
    });
    token = (await a.userWith(['system'])).token;
  });
  afterAll(async () => {
    await a?.close();
    await helper?.close();
  });

  it('applies a network change through the helper with the 120 s window, and getNetworkInfo confirms it', async () => {
    const res = await a.request('POST', '/api/setNetworkInfo', {
      token,
      body: {
        interfaces: [
          { name: 'lo', config: { type: 'static', address: '127.0.0.1', netmask: '255.0.0.0' } },
        ],
      },
    });
    expect(res.body).toMatchObject({
      status: 201,
      hasError: false,
      dry_run: false,
      confirm_within: 120,
    });
    expect(helper.requests.at(-1)).toEqual({
      v: 1,
      op: 'network.apply',
      args: {
        interfaces: [{ name: 'lo', type: 'static', address: '127.0.0.1', netmask: '255.0.0.0' }],
        confirmSeconds: 120,
      },
    });
    // A second change waits for the first's confirmation.
    legacyFailure(
      await a.request('POST', '/api/setNetworkInfo', {
        token,
        body: { interfaces: [{ name: 'lo', config: { type: 'dhcp' } }] },
      }),
    );
    const info = await a.request('POST', '/api/getNetworkInfo', { token });
    expect(info.body).toMatchObject({ network_mode: 'apply', confirmed: true });
    expect(helper.requests.at(-1)).toEqual({ v: 1, op: 'network.confirm', args: {} });
    const again = await a.request('POST', '/api/getNetworkInfo', { token });
    expect(again.body.confirmed).toBe(false);
    expect(auditActions(a)).toContain('settings.network_confirm');
  });

  it('sets hostname and time through the helper only; a refusal is the failure shape', async () => {
    const n = helper.requests.length;
    const host = await a.request('POST', '/api/setHostname', {
      token,
      body: { hostname: 'nms-apply' },
    });
    expect(host.body).toEqual({
      status: 201,
      message: 'Hostname updated',
      hostname: 'nms-apply',
      dry_run: false,
    });
    const time = await a.request('POST', '/api/setTimeSettings', {
      token,
      body: { type: 'manual', tz: 'UTC', manual: '2026-12-04T10:20:30Z' },
    });
    expect(time.body).toMatchObject({ status: 201, dry_run: false });
    expect(helper.requests.slice(n)).toEqual([
      { v: 1, op: 'hostname.set', args: { hostname: 'nms-apply' } },
      { v: 1, op: 'timezone.set', args: { tz: 'UTC' } },
      { v: 1, op: 'ntp.set', args: { servers: [] } },
      { v: 1, op: 'time.set', args: { unix: Date.UTC(2026, 11, 4, 10, 20, 30) / 1000 } },
    ]);
    helper.answer = () => ({ ok: false, code: 'refused', message: 'hostname not allowed' });
    const refused = await a.request('POST', '/api/setHostname', {
      token,
      body: { hostname: 'nms-refused' },
    });
    legacyFailure(refused);
    expect(refused.body.message).toContain('hostname not allowed');
    helper.answer = () => ({ ok: true });
  });

  it('a dry-run appliance with a reachable helper still sends it nothing', async () => {
    const dry = await startAppliance({ APPLIANCE_ROOT_HELPER_SOCKET: helper.socketPath });
    try {
      const t = (await dry.userWith(['system'])).token;
      const n = helper.requests.length;
      const bodies: [string, unknown][] = [
        ['/api/setNetworkInfo', { interfaces: [{ name: 'lo', config: { type: 'dhcp' } }] }],
        ['/api/setHostname', { hostname: 'nms-dry' }],
        ['/api/setTimeSettings', { type: 'ntp', tz: 'UTC', ntpserver: '192.0.2.1' }],
        ['/api/getNetworkInfo', undefined],
      ];
      for (const [url, body] of bodies) {
        const res = await dry.request('POST', url, { token: t, body });
        expect(res.body.hasError ?? false, url).toBe(false);
        if (url !== '/api/getNetworkInfo') expect(res.body.dry_run, url).toBe(true);
      }
      expect(helper.requests.slice(n)).toEqual([]);
    } finally {
      await dry.close();
    }
  });

  it('with no helper reachable, every host change answers the failure shape and nothing is applied', async () => {
    const none = await startAppliance({
      APPLIANCE_NETWORK_MODE: 'apply',
      APPLIANCE_ROOT_HELPER_SOCKET: path.join(os.tmpdir(), `no-helper-${process.pid}.sock`),
    });
    try {
      const t = (await none.userWith(['system'])).token;
      const net = await none.request('POST', '/api/setNetworkInfo', {
        token: t,
        body: { interfaces: [{ name: 'lo', config: { type: 'dhcp' } }] },
      });
      legacyFailure(net);
      expect(net.body.message).toMatch(/not reachable/);
      legacyFailure(
        await none.request('POST', '/api/setHostname', { token: t, body: { hostname: 'x' } }),
      );
      legacyFailure(
        await none.request('POST', '/api/setTimeSettings', {
          token: t,
          body: { type: 'ntp', tz: 'UTC', ntpserver: '192.0.2.1' },
        }),
      );
      const rows = listAudit(none.appliance.db, { page: 1, limit: 50 }).rows;
      expect(rows.find((r) => r.action === 'settings.network_set')?.outcome).toBe('failure');
    } finally {
      await none.close();
    }
  });
});
