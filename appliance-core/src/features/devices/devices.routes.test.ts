/**
 * HTTP-level tests of the device inventory, tags and profiles (spec part 2 > Device inventory;
 * Tags and profiles; Resources > Device). One appliance per file; SNMP configurations here point
 * at a closed loopback port, so nothing answers (the SNMP behaviour is in snmp.routes.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { setDeviceReachability } from './devices.repository.js';

const SENTINEL = { __encrypted__: true };
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const CLOSED_PORT = 9;

describe('device inventory (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let reader: string;
  let overwatch: string;
  let nobody: string;
  let ipCounter = 20;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const nextIp = () => `127.0.1.${ipCounter++}`;
  const count = (table: string) =>
    (h.appliance.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const create = async (body: Record<string, unknown> = {}) => {
    const res = await req('POST', '/api/device/set', {
      token: admin,
      body: { ip_address: nextIp(), label: 'dev', profile: 'dash_generic', ...body },
    });
    if (res.status !== 200) throw new Error(`create failed: ${res.text}`);
    return res.body.device.id as number;
  };

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    reader = (await h.userWith(['devices'])).token;
    overwatch = (await h.userWith(['overwatch'])).token;
    nobody = (await h.userWith([])).token;
  });
  afterAll(() => h?.close());

  // spec: part2 > Device inventory > POST /api/device/set
  describe('POST /api/device/set', () => {
    it('creates a device: 200 {status: 200, message, device: {id, tags}}, creating missing tags', async () => {
      const ip = nextIp();
      const res = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          ip_address: ip,
          label: 'web-1',
          profile: 'dash_generic',
          tags: [{ slug: 'dc-east', name: 'DC East', type: 'device' }, 'rack-7'],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 200,
        message: 'Device created',
        device: {
          id: expect.any(Number),
          tags: [
            { slug: 'dc-east', name: 'DC East', type: 'device' },
            { slug: 'rack-7', name: 'rack-7', type: 'device' },
          ],
        },
      });
      const row = h.appliance.db
        .prepare('SELECT * FROM devices WHERE id = ?')
        .get(res.body.device.id) as Record<string, unknown>;
      expect(row).toMatchObject({
        ip_address: ip,
        label: 'web-1',
        profile: 'dash_generic',
        enable_snmp: 0,
        enable_agent: 0,
        enable_netflow: 0,
        enable_port_monitor: 0,
        agent_uuid: null,
      });
    });

    it('answers 422 {status: 422, errors} for each field rule and changes nothing', async () => {
      const before = count('devices');
      const base = { ip_address: nextIp(), label: 'x', profile: 'dash_generic' };
      const cases: [Record<string, unknown>, Record<string, string[]>][] = [
        [{ ...base, label: undefined }, { label: ['The label field is required.'] }],
        [{ ...base, label: '   ' }, { label: ['The label field is required.'] }],
        [
          { ...base, label: 'x'.repeat(256) },
          { label: ['The label field must not be greater than 255 characters.'] },
        ],
        [{ ...base, ip_address: undefined }, { ip_address: ['The ip address field is required.'] }],
        [
          { ...base, ip_address: '10.0.0.256' },
          { ip_address: ['The ip address must be a valid IP address.'] },
        ],
        [
          { ...base, ip_address: 'router.example' },
          { ip_address: ['The ip address must be a valid IP address.'] },
        ],
        [
          { ...base, profile: 'no_such_profile' },
          { profile: ['The selected profile is invalid.'] },
        ],
        [{ ...base, profile: undefined }, { profile: ['The profile field is required.'] }],
        [{ ...base, id: 999_999 }, { id: ['The selected id is invalid.'] }],
        [
          { ...base, enable_snmp: 'yes' },
          { enable_snmp: ['The selected enable snmp is invalid.'] },
        ],
        [
          { ...base, enable_snmp: true, snmpconfig: { snmp_version: 2 } },
          {
            'snmpconfig.snmp_community': [
              'The snmp community field is required for SNMP v1 and v2c.',
            ],
          },
        ],
        [
          { ...base, enable_snmp: true, snmpconfig: { snmp_version: 7, snmp_community: 'c' } },
          { 'snmpconfig.snmp_version': ['The selected snmpconfig.snmp version is invalid.'] },
        ],
        [
          { ...base, enable_snmp: true, snmpconfig: { snmp_community: 'c', snmp_port: 70000 } },
          {
            'snmpconfig.snmp_port': [
              'The snmpconfig.snmp port field must not be greater than 65535.',
            ],
          },
        ],
        [
          { ...base, enable_snmp: true, snmpconfig: { snmp_version: 3 } },
          {
            'snmpconfig.snmp_v3_security': [
              'The snmp v3 security field is required for SNMPv3 (noAuthNoPriv, authNoPriv, authPriv).',
            ],
            'snmpconfig.authuser': ['The authuser field is required for SNMPv3.'],
          },
        ],
        [
          {
            ...base,
            enable_snmp: true,
            snmpconfig: { snmp_version: 3, snmp_v3_security: 'authPriv', authuser: 'mon' },
          },
          {
            'snmpconfig.authprot': ['The authprot field is required for SNMPv3 authentication.'],
            'snmpconfig.authpass': ['The authpass field is required for SNMPv3 authentication.'],
            'snmpconfig.privprot': ['The privprot field is required for SNMPv3 privacy.'],
            'snmpconfig.privpass': ['The privpass field is required for SNMPv3 privacy.'],
          },
        ],
        [
          {
            ...base,
            enable_snmp: true,
            snmpconfig: {
              snmp_version: 3,
              snmp_v3_security: 'authNoPriv',
              authuser: 'mon',
              authprot: 'SHA999',
              authpass: 'short',
            },
          },
          {
            'snmpconfig.authprot': [
              'The authprot must be one of MD5, SHA, SHA224, SHA256, SHA384, SHA512.',
            ],
            'snmpconfig.authpass': ['The authpass must be at least 8 characters.'],
          },
        ],
        [
          { ...base, tags: [{ slug: 'bad slug' }] },
          { 'tags.0.slug': ['The tags.0.slug field format is invalid.'] },
        ],
        [{ ...base, tags: ['bad slug'] }, { 'tags.0': ['The tags.0 field format is invalid.'] }],
      ];
      for (const [body, errors] of cases) {
        const res = await req('POST', '/api/device/set', { token: admin, body });
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body, JSON.stringify(body)).toEqual({ status: 422, errors });
      }
      expect(count('devices')).toBe(before);
      expect(count('device_snmp')).toBe(0);
    });

    it('answers 409 {status: 409, message} for an IP address another device holds (IPv6 compared canonically)', async () => {
      const ip = nextIp();
      await create({ ip_address: ip });
      const dup = await req('POST', '/api/device/set', {
        token: admin,
        body: { ip_address: ip, label: 'dup', profile: 'dash_generic' },
      });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({
        status: 409,
        message: `A device with the IP address ${ip} already exists.`,
      });
      await create({ ip_address: 'fd00::10' });
      const v6 = await req('POST', '/api/device/set', {
        token: admin,
        body: { ip_address: 'FD00:0:0:0:0:0:0:10', label: 'dup6', profile: 'dash_generic' },
      });
      expect(v6.body).toEqual({
        status: 409,
        message: 'A device with the IP address fd00::10 already exists.',
      });
      const other = await create();
      const moved = await req('POST', '/api/device/set', {
        token: admin,
        body: { id: other, ip_address: ip, label: 'move', profile: 'dash_generic' },
      });
      expect(moved.body).toEqual({
        status: 409,
        message: `A device with the IP address ${ip} already exists.`,
      });
    });

    it('updates with id: enable_snmp defaults to false, the other flags stay when omitted, agent_uuid only when present, tags replace the set', async () => {
      const id = await create({
        enable_agent: true,
        enable_netflow: 1,
        enable_port_monitor: 'true',
        agent_uuid: 'agent-0001',
        tags: ['one', 'two'],
      });
      const res = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id,
          ip_address: nextIp(),
          label: 'renamed',
          profile: 'dash_network_snmp',
          tags: ['three'],
        },
      });
      expect(res.body).toEqual({
        status: 200,
        message: 'Device updated',
        device: { id, tags: [{ slug: 'three', name: 'three', type: 'device' }] },
      });
      const got = await req('GET', `/api/device/${id}`, { token: admin });
      expect(got.body.device).toMatchObject({
        label: 'renamed',
        profile: 'dash_network_snmp',
        enable_snmp: false,
        enable_agent: true,
        enable_netflow: true,
        enable_port_monitor: true,
        agent_uuid: 'agent-0001',
      });
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id,
          ip_address: got.body.device.ip_address,
          label: 'renamed',
          profile: 'dash_generic',
          enable_agent: false,
          agent_uuid: null,
        },
      });
      const again = await req('GET', `/api/device/${id}`, { token: admin });
      expect(again.body.device).toMatchObject({
        enable_agent: false,
        enable_netflow: true,
        agent_uuid: null,
        tags: [{ slug: 'three', name: 'three', type: 'device' }],
      });
    });

    it('never lets device 1 leave 127.0.0.1', async () => {
      const res = await req('POST', '/api/device/set', {
        token: admin,
        body: { id: 1, ip_address: '127.0.0.2', label: 'appliance', profile: 'dash_appliance' },
      });
      expect(res.body).toEqual({
        status: 422,
        errors: {
          ip_address: ['The IP address of the appliance device (id 1) cannot be changed.'],
        },
      });
      const ok = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id: 1,
          ip_address: '127.0.0.1',
          label: 'this appliance',
          profile: 'dash_appliance',
        },
      });
      expect(ok.status).toBe(200);
    });

    it('removes the pending row of the address it creates', async () => {
      const ip = nextIp();
      const now = Date.now();
      h.appliance.db
        .prepare(
          `INSERT INTO pending_devices (label, ip_address, profile, source, first_seen_at, last_seen_at) VALUES ('p', ?, 'dash_generic', 'discovery', ?, ?)`,
        )
        .run(ip, now, now);
      await create({ ip_address: ip });
      expect(
        h.appliance.db.prepare('SELECT 1 FROM pending_devices WHERE ip_address = ?').get(ip),
      ).toBeUndefined();
    });

    it('encrypts SNMP secrets at rest, masks them on read, keeps them for the sentinel, empty or omitted, and replaces them with new plaintext', async () => {
      const snmp = {
        snmp_version: 3,
        snmp_port: CLOSED_PORT,
        snmp_v3_security: 'authPriv',
        authuser: 'mon',
        authprot: 'sha-256',
        authpass: 'auth-secret-1',
        privprot: 'aes',
        privpass: 'priv-secret-1',
        snmp_community: 'community-secret',
      };
      const id = await create({ enable_snmp: true, snmpconfig: snmp });
      const stored = () =>
        h.appliance.db.prepare('SELECT * FROM device_snmp WHERE device_id = ?').get(id) as Record<
          string,
          string
        >;
      const open = (sealed: string) => h.appliance.ctx.secrets.open(sealed);
      const first = stored();
      for (const column of ['snmp_community', 'authpass', 'privpass'])
        expect(first[column]).toMatch(/^v1:/);
      expect(JSON.stringify(first)).not.toMatch(/secret/);
      expect([open(first.snmp_community!), open(first.authpass!), open(first.privpass!)]).toEqual([
        'community-secret',
        'auth-secret-1',
        'priv-secret-1',
      ]);
      expect(first).toMatchObject({ authprot: 'SHA256', privprot: 'AES' });

      const got = await req('GET', `/api/device/${id}`, { token: admin });
      expect(got.body.device.snmpconfig).toEqual({
        snmp_version: 3,
        snmp_port: CLOSED_PORT,
        snmp_community: SENTINEL,
        snmp_v3_security: 'authPriv',
        authuser: 'mon',
        authpass: SENTINEL,
        authprot: 'SHA256',
        privpass: SENTINEL,
        privprot: 'AES',
      });
      expect(got.text).not.toMatch(/secret/);
      const list = await req('GET', '/api/devices', { token: admin });
      expect(list.text).not.toMatch(/secret|snmpconfig/);

      const ip = got.body.device.ip_address as string;
      const keep = { ...snmp, snmp_community: SENTINEL, authpass: '', privpass: undefined };
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id,
          ip_address: ip,
          label: 'dev',
          profile: 'dash_generic',
          enable_snmp: true,
          snmpconfig: keep,
        },
      });
      expect([
        open(stored().snmp_community!),
        open(stored().authpass!),
        open(stored().privpass!),
      ]).toEqual(['community-secret', 'auth-secret-1', 'priv-secret-1']);
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id,
          ip_address: ip,
          label: 'dev',
          profile: 'dash_generic',
          enable_snmp: true,
          snmpconfig: { ...keep, authpass: 'auth-secret-2' },
        },
      });
      expect(open(stored().authpass!)).toBe('auth-secret-2');
      // Switching SNMP off keeps the configuration for later.
      await req('POST', '/api/device/set', {
        token: admin,
        body: { id, ip_address: ip, label: 'dev', profile: 'dash_generic' },
      });
      expect(open(stored().authpass!)).toBe('auth-secret-2');
    });

    it('refuses a caller without write_devices with 401 and the legacy body', async () => {
      const res = await req('POST', '/api/device/set', {
        token: reader,
        body: { ip_address: nextIp(), label: 'x', profile: 'dash_generic' },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
      expect((await req('POST', '/api/device/set', { body: {} })).body).toEqual(UNAUTHENTICATED);
    });
  });

  // spec: part2 > Device inventory > GET /api/devices
  describe('GET /api/devices', () => {
    it('serves the unfiltered list from a cache that every change to it invalidates at once', async () => {
      const list = async () =>
        (await req('GET', '/api/devices', { token: reader })).body.devices as {
          id: number;
          label: string;
          tags: { slug: string }[];
        }[];
      const id = await create({ label: 'cached-a' });
      expect((await list()).find((d) => d.id === id)?.label).toBe('cached-a');
      expect(await list()).toEqual(await list());
      // Through the API, and through raw SQL (as any feature's repository would write).
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id,
          ip_address: h.appliance.db
            .prepare('SELECT ip_address FROM devices WHERE id = ?')
            .pluck()
            .get(id),
          label: 'cached-b',
          profile: 'dash_generic',
        },
      });
      expect((await list()).find((d) => d.id === id)?.label).toBe('cached-b');
      h.appliance.db.prepare('UPDATE devices SET label = ? WHERE id = ?').run('cached-c', id);
      expect((await list()).find((d) => d.id === id)?.label).toBe('cached-c');
      await req('POST', `/api/device/${id}/tags`, {
        token: admin,
        body: { tags: [{ slug: 'cache-tag', name: 'Cache', type: 'device' }] },
      });
      expect((await list()).find((d) => d.id === id)?.tags.map((t) => t.slug)).toEqual([
        'cache-tag',
      ]);
      h.appliance.db.prepare(`UPDATE tags SET name = 'Renamed' WHERE slug = 'cache-tag'`).run();
      expect((await list()).find((d) => d.id === id)?.tags).toEqual([
        { slug: 'cache-tag', name: 'Renamed', type: 'device' },
      ]);
      const raw = Number(
        h.appliance.db
          .prepare(
            `INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES ('raw', ?, 'dash_generic', 0, 0)`,
          )
          .run(nextIp()).lastInsertRowid,
      );
      expect((await list()).some((d) => d.id === raw)).toBe(true);
      await req('DELETE', `/api/device/${raw}`, { token: admin });
      expect((await list()).some((d) => d.id === raw)).toBe(false);
      // A filtered list is never served from the cache, and answers the same records.
      const filtered = (await req('GET', '/api/devices?search=cached-c', { token: reader })).body
        .devices;
      expect(filtered).toEqual((await list()).filter((d) => d.label === 'cached-c'));
    });

    it('lists devices with their tags and no SNMP configuration: 200 {status: 200, devices}', async () => {
      const res = await req('GET', '/api/devices', { token: admin });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      const appliance = res.body.devices.find((d: { id: number }) => d.id === 1);
      expect(Object.keys(appliance).sort()).toEqual([
        'agent_uuid',
        'enable_agent',
        'enable_netflow',
        'enable_port_monitor',
        'enable_snmp',
        'id',
        'ip_address',
        'label',
        'profile',
        'tags',
      ]);
      expect(res.body.devices.length).toBe(count('devices'));
    });

    it('filters by tag, by status (the latest latency reading) and by a case-insensitive search on label or address', async () => {
      const a = await create({ label: 'Core-SWITCH-alpha', tags: ['filter-tag'] });
      const b = await create({ label: 'edge' });
      const ipB = (
        h.appliance.db.prepare('SELECT ip_address FROM devices WHERE id = ?').get(b) as {
          ip_address: string;
        }
      ).ip_address;
      const ids = async (query: string) =>
        (
          (await req('GET', `/api/devices?${query}`, { token: admin })).body.devices as {
            id: number;
          }[]
        ).map((d) => d.id);
      expect(await ids('tag=filter-tag')).toEqual([a]);
      expect(await ids('tag=no-such-tag')).toEqual([]);
      expect(await ids('search=switch-ALPHA')).toEqual([a]);
      expect(await ids(`search=${ipB}`)).toEqual([b]);
      expect(await ids('search=%25')).toEqual([]);
      setDeviceReachability(h.appliance.db, a, 3.2, Date.now());
      setDeviceReachability(h.appliance.db, b, -1, Date.now());
      // Device 1's own latency tracker is polled in the background and may list it as up too.
      const mine = (list: number[]) => list.filter((id) => id === a || id === b);
      expect(mine(await ids('status=up'))).toEqual([a]);
      expect(mine(await ids('status=down'))).toEqual([b]);
      expect(await ids('status=down')).not.toContain(a);
      const bad = await req('GET', '/api/devices?status=sideways', { token: admin });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({
        status: 422,
        errors: { status: ['The selected status is invalid.'] },
      });
    });

    it('eager-loads the relations asked for, each with its real value or its empty one', async () => {
      const id = await create();
      const now = Date.now();
      h.appliance.db
        .prepare(
          `INSERT INTO interface_trackers (device_id, interface, name, description, last_seen_at, created_at, updated_at) VALUES (?, 2, 'eth0', 'uplink', ?, ?, ?)`,
        )
        .run(id, now, now, now);
      h.appliance.db
        .prepare(
          `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, available, total, created_at, updated_at) VALUES (?, '/', 31, '1.3.6.1.2.1.25.2.3.1.6.31', 10, 20, ?, ?)`,
        )
        .run(id, now, now);
      const res = await req(
        'GET',
        '/api/devices?interfaces=true&disks=1&walks=true&alerts=true&ping=true&oids=true&ports=true',
        { token: admin },
      );
      const device = res.body.devices.find((d: { id: number }) => d.id === id);
      expect(device.interfaces).toEqual([
        {
          id: expect.any(Number),
          device_id: id,
          interface: 2,
          name: 'eth0',
          description: 'uplink',
          interval: 300,
          enable_logging: true,
          type: null,
          speed: null,
          mac: null,
          admin_status: null,
          oper_status: null,
        },
      ]);
      expect(device.disks).toEqual([
        {
          id: expect.any(Number),
          device_id: id,
          name: '/',
          index: 31,
          freespace_oid: '1.3.6.1.2.1.25.2.3.1.6.31',
          interval: 600,
          enable_logging: true,
          available: 10,
          total: 20,
        },
      ]);
      expect(device).toMatchObject({ walks: [], alerts: [], ping: null, oids: [], ports: [] });
      const plain = await req('GET', '/api/devices?interfaces=false', { token: admin });
      expect(plain.body.devices.find((d: { id: number }) => d.id === id)).not.toHaveProperty(
        'interfaces',
      );
    });

    it('is open to devices and overwatch, closed to others', async () => {
      expect((await req('GET', '/api/devices', { token: overwatch })).status).toBe(200);
      expect((await req('GET', '/api/devices', { token: reader })).status).toBe(200);
      const denied = await req('GET', '/api/devices', { token: nobody });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual(DENIED);
    });
  });

  // spec: part2 > Device inventory > GET /api/device/{device}
  describe('GET /api/device/{device}', () => {
    it('answers the device with masked snmpconfig, the later features’ empty values and its trackers in the window', async () => {
      const id = await create({ tags: ['detail'] });
      const now = Date.now();
      h.appliance.db
        .prepare(
          `INSERT INTO interface_trackers (device_id, interface, name, description, last_seen_at, created_at, updated_at) VALUES (?, 1, 'lo', '', ?, ?, ?)`,
        )
        .run(id, now, now, now);
      const res = await req('GET', `/api/device/${id}`, { token: reader });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      const device = res.body.device;
      expect(device).toMatchObject({
        id,
        tags: [{ slug: 'detail', name: 'detail', type: 'device' }],
        alerts: [],
        syslogconfig: { severity: null },
        netflow: { bytes: 0, count: 0, top_partners: [] },
        ping: [],
        oids: [],
        ports: [],
        disks: [],
        snmpconfig: {
          snmp_version: 2,
          snmp_port: 161,
          snmp_community: null,
          snmp_v3_security: null,
          authuser: null,
          authpass: null,
          authprot: null,
          privpass: null,
          privprot: null,
        },
      });
      expect(device.interfaces).toEqual([
        expect.objectContaining({ interface: 1, name: 'lo', logs: [] }),
      ]);
      const span = Date.parse(device.window.end_time) - Date.parse(device.window.start_time);
      expect(span).toBe(8 * 3_600_000);
    });

    it('takes hours, or start_time plus end_time (UTC when no offset), and refuses bad windows with 422', async () => {
      const span = async (query: string) => {
        const res = await req('GET', `/api/device/1?${query}`, { token: admin });
        return res.status === 200
          ? [res.body.device.window.start_time, res.body.device.window.end_time]
          : res;
      };
      const two = (await span('hours=2')) as string[];
      expect(Date.parse(two[1]!) - Date.parse(two[0]!)).toBe(2 * 3_600_000);
      expect(
        await span('start_time=2026-11-20%2010:00:00&end_time=2026-11-20T12:30:00%2B01:00'),
      ).toEqual(['2026-11-20T10:00:00.000Z', '2026-11-20T11:30:00.000Z']);
      const bad: [string, Record<string, string[]>][] = [
        [
          'start_time=2026-11-20',
          { end_time: ['The end time field is required when start time is present.'] },
        ],
        [
          'end_time=2026-11-20',
          { start_time: ['The start time field is required when end time is present.'] },
        ],
        [
          'start_time=2026-13-01&end_time=2026-11-20',
          { start_time: ['The start time is not a valid date-time.'] },
        ],
        [
          'start_time=2026-11-21&end_time=2026-11-20',
          { start_time: ['The start time must be before the end time.'] },
        ],
        ['hours=0', { hours: ['The hours field must be at least 1.'] }],
        ['hours=abc', { hours: ['The hours field must be an integer.'] }],
      ];
      for (const [query, errors] of bad) {
        const res = (await span(query)) as Response;
        expect(res.status, query).toBe(422);
        expect(res.body, query).toEqual({ status: 422, errors });
      }
    });

    it('answers 404 {status: 404, message} for an unknown device and 422 for a malformed id', async () => {
      const res = await req('GET', '/api/device/987654', { token: admin });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: 404, message: 'Device not found' });
      const malformed = await req('GET', '/api/device/abc', { token: admin });
      expect(malformed.status).toBe(422);
      expect(malformed.body).toEqual({
        status: 422,
        errors: { device: ['The device field must be an integer.'] },
      });
      expect((await req('GET', '/api/device/1', { token: overwatch })).body).toEqual(DENIED);
    });
  });

  // spec: part2 > Device inventory > GET /api/device/{device}/stats
  describe('GET /api/device/{device}/stats', () => {
    it('answers one row per log category ending with Total', async () => {
      const id = await create();
      h.appliance.db
        .prepare(
          `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (?, ?, 'crawl', 1, 5, ?)`,
        )
        .run(
          id,
          Date.now(),
          JSON.stringify([
            { oid: '1.3.6.1.2.1.1.5.0', type: 'OctetString', value: 'x'.repeat(2000) },
          ]),
        );
      const res = await req('GET', `/api/device/${id}/stats`, { token: reader });
      expect(res.status).toBe(200);
      // Other features register their categories too (tracker samples, 0 rows here).
      const walks = res.body.find((row: { log_name: string }) => row.log_name === 'walks_log');
      expect(walks).toEqual({
        log_name: 'walks_log',
        total_rows: 1,
        size: expect.any(Number),
        formatted: expect.stringMatching(/^\d+(\.\d+)? KB$/),
      });
      expect(res.body.at(-1)).toEqual({
        log_name: 'Total',
        total_rows: 1,
        size: walks.size,
        formatted: walks.formatted,
      });
      expect(walks.size).toBeGreaterThan(2000);
    });

    it('answers 400 {message} for an invalid id and 404 {message} for an unknown device', async () => {
      const bad = await req('GET', '/api/device/x1/stats', { token: admin });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: 'The device field must be an integer.' });
      const zero = await req('GET', '/api/device/0/stats', { token: admin });
      expect(zero.body).toEqual({ message: 'The device field must be at least 1.' });
      const missing = await req('GET', '/api/device/999999/stats', { token: admin });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: 'Device not found' });
    });
  });

  // spec: part2 > Device inventory > DELETE /api/device/{device}; POST /api/deleteDevice
  describe('deleting a device', () => {
    const seedHistory = (id: number, ip: string) => {
      const db = h.appliance.db;
      const now = Date.now();
      db.prepare(
        `INSERT INTO interface_trackers (device_id, interface, name, last_seen_at, created_at, updated_at) VALUES (?, 1, 'eth0', ?, ?, ?)`,
      ).run(id, now, now, now);
      db.prepare(
        `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, created_at, updated_at) VALUES (?, '/', 1, '1.3.6.1.2.1.25.2.3.1.6.1', ?, ?)`,
      ).run(id, now, now);
      db.prepare(
        `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (?, ?, 'crawl', 0, 1, '[]')`,
      ).run(id, now);
      db.prepare(
        `INSERT INTO device_layouts (user_id, device_id, layouts, updated_at) VALUES (1, ?, '{}', ?)`,
      ).run(id, now);
      db.prepare(
        `INSERT INTO device_snmp (device_id, snmp_community, updated_at) VALUES (?, NULL, ?)`,
      ).run(id, now);
      // A pending duplicate of the address (inserted after the device, as an agent check-in could).
      db.prepare(
        `INSERT INTO pending_devices (label, ip_address, profile, source, first_seen_at, last_seen_at) VALUES ('dup', ?, 'dash_generic', 'agent', ?, ?)`,
      ).run(ip, now, now);
    };
    const remaining = (id: number, ip: string) => {
      const db = h.appliance.db;
      const n = (sql: string, ...params: unknown[]) =>
        (db.prepare(sql).get(...params) as { n: number }).n;
      return {
        device: n('SELECT count(*) AS n FROM devices WHERE id = ?', id),
        tags: n('SELECT count(*) AS n FROM device_tags WHERE device_id = ?', id),
        interfaces: n('SELECT count(*) AS n FROM interface_trackers WHERE device_id = ?', id),
        disks: n('SELECT count(*) AS n FROM disk_trackers WHERE device_id = ?', id),
        walks: n('SELECT count(*) AS n FROM walks_log WHERE device_id = ?', id),
        layouts: n('SELECT count(*) AS n FROM device_layouts WHERE device_id = ?', id),
        snmp: n('SELECT count(*) AS n FROM device_snmp WHERE device_id = ?', id),
        pending: n('SELECT count(*) AS n FROM pending_devices WHERE ip_address = ?', ip),
      };
    };

    it('DELETE removes the device with its tags and history (tag rows and partitioned walks stay): 200 {status: 200, message}', async () => {
      const ip = nextIp();
      const id = await create({ ip_address: ip, tags: ['keep-me'] });
      seedHistory(id, ip);
      expect(Object.values(remaining(id, ip)).every((n) => n > 0)).toBe(true);
      const res = await req('DELETE', `/api/device/${id}`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 200, message: 'Device deleted' });
      expect(remaining(id, ip)).toEqual({
        device: 0,
        tags: 0,
        interfaces: 0,
        disks: 0,
        walks: 1, // partitioned: kept until its partition is pruned (docs/spec-decisions.md)
        layouts: 0,
        snmp: 0,
        pending: 0,
      });
      expect(
        h.appliance.db.prepare(`SELECT 1 FROM tags WHERE slug = 'keep-me'`).get(),
      ).toBeDefined();
    });

    it('DELETE of an unknown device or of device 1 answers 500 {status: 500, message}', async () => {
      const missing = await req('DELETE', '/api/device/999999', { token: admin });
      expect(missing.status).toBe(500);
      expect(missing.body).toEqual({ status: 500, message: 'Device not found' });
      const appliance = await req('DELETE', '/api/device/1', { token: admin });
      expect(appliance.status).toBe(500);
      expect(appliance.body).toEqual({
        status: 500,
        message: 'The appliance device (id 1) cannot be deleted.',
      });
      expect(count('devices')).toBeGreaterThan(0);
      expect((await req('DELETE', '/api/device/1', { token: reader })).body).toEqual(DENIED);
    });

    it('POST /api/deleteDevice answers {status: 201, hasError: false, message: true} and the legacy failures', async () => {
      const ip = nextIp();
      const id = await create({ ip_address: ip });
      seedHistory(id, ip);
      const res = await req('POST', '/api/deleteDevice', { token: admin, body: { device: id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 201, hasError: false, message: true });
      expect(remaining(id, ip)).toEqual({
        device: 0,
        tags: 0,
        interfaces: 0,
        disks: 0,
        walks: 1, // partitioned: kept until its partition is pruned (docs/spec-decisions.md)
        layouts: 0,
        snmp: 0,
        pending: 0,
      });
      const missingId = await req('POST', '/api/deleteDevice', { token: admin, body: {} });
      expect(missingId.status).toBe(200);
      expect(missingId.body).toEqual({
        status: false,
        hasError: true,
        message: 'The device field is required.',
      });
      const zero = await req('POST', '/api/deleteDevice', { token: admin, body: { device: 0 } });
      expect(zero.body).toEqual({
        status: false,
        hasError: true,
        message: 'The device field must be at least 1.',
      });
      const unknown = await req('POST', '/api/deleteDevice', {
        token: admin,
        body: { device: id },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ status: false, hasError: true, message: 'Device not found' });
      const appliance = await req('POST', '/api/deleteDevice', {
        token: admin,
        body: { device: 1 },
      });
      expect(appliance.status).toBe(200);
      expect(appliance.body).toEqual({
        status: false,
        hasError: true,
        message: 'The appliance device (id 1) cannot be deleted.',
      });
    });
  });

  // spec: part2 > Device inventory > POST /api/device/{device}/recrawl
  describe('POST /api/device/{device}/recrawl', () => {
    it('queues a crawl of an SNMP device (200), says what it does for a device without SNMP (200), 404 for an unknown one', async () => {
      const snmpDevice = await create({
        enable_snmp: true,
        snmpconfig: { snmp_community: 'c', snmp_port: CLOSED_PORT },
      });
      const res = await req('POST', `/api/device/${snmpDevice}/recrawl`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 200, message: 'Crawl queued' });
      const plain = await create();
      const withoutSnmp = await req('POST', `/api/device/${plain}/recrawl`, { token: admin });
      expect(withoutSnmp.status).toBe(200);
      expect(withoutSnmp.body).toEqual({
        status: 200,
        message:
          'Nothing to crawl: SNMP is not enabled for this device (the crawl walks interfaces, disks and system data over SNMP). Only its reachability is measured, by its latency tracker when it has one.',
      });

      const missing = await req('POST', '/api/device/999999/recrawl', { token: admin });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ status: 404, message: 'Device not found' });
      expect(
        (await req('POST', `/api/device/${snmpDevice}/recrawl`, { token: reader })).body,
      ).toEqual(DENIED);
    });

    it('records a crawl that gets no answer on the device (and changes no tracker)', async () => {
      const id = await create({
        enable_snmp: true,
        snmpconfig: { snmp_community: 'c', snmp_port: CLOSED_PORT },
      });
      const row = () =>
        h.appliance.db
          .prepare(
            'SELECT last_crawl_status, last_crawl_error FROM device_snmp WHERE device_id = ?',
          )
          .get(id) as { last_crawl_status: string | null; last_crawl_error: string | null };
      const deadline = Date.now() + 20_000;
      while (row().last_crawl_status === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(row()).toEqual({
        last_crawl_status: 'failed',
        last_crawl_error: expect.stringMatching(/timed out/),
      });
      expect(
        h.appliance.db
          .prepare('SELECT count(*) AS n FROM interface_trackers WHERE device_id = ?')
          .get(id),
      ).toEqual({ n: 0 });
    });
  });

  // spec: part2 > Tags and profiles
  describe('tags and profiles', () => {
    it('GET /api/tags lists every tag: {status: 200, tags: [{id, slug, name, type}]}', async () => {
      await create({ tags: [{ slug: 'listed', name: 'Listed Tag' }] });
      const res = await req('GET', '/api/tags', { token: overwatch });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      expect(res.body.tags).toContainEqual({
        id: expect.any(Number),
        slug: 'listed',
        name: 'Listed Tag',
        type: 'device',
      });
      expect(res.body.tags.length).toBe(count('tags'));
      expect((await req('GET', '/api/tags', { token: nobody })).body).toEqual(DENIED);
    });

    it('GET, POST and DELETE /api/device/{device}/tags', async () => {
      const id = await create({ tags: ['t-one'] });
      const list = async () => (await req('GET', `/api/device/${id}/tags`, { token: reader })).body;
      expect(await list()).toEqual({
        status: 200,
        tags: [{ name: 't-one', slug: 't-one', type: 'device' }],
      });

      const added = await req('POST', `/api/device/${id}/tags`, {
        token: admin,
        body: {
          tags: [
            { slug: 't-two', name: 'Tag Two', type: 'device' },
            { slug: 't-one', name: 'ignored' },
          ],
        },
      });
      expect(added.status).toBe(201);
      expect(added.body).toEqual({ status: 201, message: 'Tags added' });
      expect((await list()).tags).toEqual([
        { name: 't-one', slug: 't-one', type: 'device' },
        { name: 'Tag Two', slug: 't-two', type: 'device' },
      ]);

      const invalid: [unknown, Record<string, string[]>][] = [
        [{}, { tags: ['The tags field is required.'] }],
        [{ tags: [] }, { tags: ['The tags field must have at least 1 items.'] }],
        [
          { tags: [{ name: 'no slug' }] },
          { 'tags.0.slug': ['The tags.0.slug field is required.'] },
        ],
        [
          { tags: [{ slug: 'x', name: 'n'.repeat(256) }] },
          { 'tags.0.name': ['The tags.0.name field must not be greater than 255 characters.'] },
        ],
        [
          { tags: [{ slug: 'x', type: 'user' }] },
          { 'tags.0.type': ['The selected tags.0.type is invalid.'] },
        ],
      ];
      for (const [body, errors] of invalid) {
        const res = await req('POST', `/api/device/${id}/tags`, { token: admin, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body, JSON.stringify(body)).toEqual({ status: false, errors });
      }

      const removed = await req('DELETE', `/api/device/${id}/tags`, {
        token: admin,
        body: { tags: [{ slug: 't-one' }] },
      });
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ status: 200, message: 'Tags removed' });
      expect((await list()).tags).toEqual([{ name: 'Tag Two', slug: 't-two', type: 'device' }]);
      const unknown = await req('DELETE', `/api/device/${id}/tags`, {
        token: admin,
        body: { tags: [{ slug: 'never-made' }] },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({
        status: false,
        errors: { tags: ['The selected tag never-made is invalid.'] },
      });
      const missing = await req('POST', '/api/device/999999/tags', {
        token: admin,
        body: { tags: [{ slug: 'x' }] },
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ status: false, message: 'Device not found' });
      expect((await req('GET', '/api/device/999999/tags', { token: admin })).body).toEqual({
        status: 404,
        message: 'Device not found',
      });
      expect(
        (
          await req('POST', `/api/device/${id}/tags`, {
            token: reader,
            body: { tags: [{ slug: 'x' }] },
          })
        ).body,
      ).toEqual(DENIED);
    });

    it('GET /api/device/profiles lists the profiles with their layouts', async () => {
      const res = await req('GET', '/api/device/profiles', { token: reader });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      expect(res.body.profiles).toContainEqual({
        id: 2,
        profile: 'dash_generic',
        layout: { widgets: ['latency', 'ports'] },
      });
      expect((await req('GET', '/api/device/profiles', { token: nobody })).body).toEqual(DENIED);
    });
  });
});
