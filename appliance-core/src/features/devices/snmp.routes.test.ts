/**
 * SNMP through the API against a real snmpd on loopback (spec part 2 > Device inventory:
 * testSnmp, recrawl; Network tools: getSNMPWalkInfo, getLastWalk). snmpd listens on 127.0.0.2
 * and 127.0.0.3 (device 1 is 127.0.0.1), with a v2c community and v3 users at every level.
 * Expected values come from Net-SNMP's own snmpwalk, an independent client.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { startSnmpd, type Snmpd } from '../../../../test/harness/snmpd.js';

const SENTINEL = { __encrypted__: true };
const AUTH = 'authpass123';
const PRIV = 'privpass123';
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const INVALID_DEVICE = { status: false, message: 'Invalid device specified' };

/** OID strings compared numerically, component by component. */
const compareOids = (a: string, b: string) => {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
};

/** `.1.3.6...N = TYPE: value` lines of snmpwalk -On as [oid, value] pairs. */
const walkLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('.'))
    .map((line) => {
      const [oid, rest = ''] = line.split(' = ');
      return [
        oid!.slice(1),
        rest.replace(/^[A-Za-z0-9-]+: /, '').replace(/^"(.*)"$/, '$1'),
      ] as const;
    });

describe.runIf(havePeer('snmpd', 'snmpd'))('SNMP through the API (real snmpd)', () => {
  let h: Harness;
  let agent: Snmpd;
  let admin: string;
  let toolsOnly: string;
  let v2Device: number;
  let v3Device: number;

  /** `deviceData`: the body carries the agent's own text (its process table names node_modules paths). */
  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
    deviceData = false,
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    if (!deviceData) expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    expect(res.text).not.toMatch(/authpass123|privpass123|public123/);
    return res;
  };
  const v2 = () => ({ snmp_version: 2, snmp_port: agent.port, snmp_community: agent.community });
  const v3 = (extra: Record<string, unknown> = {}) => ({
    snmp_version: 3,
    snmp_port: agent.port,
    snmp_v3_security: 'authPriv',
    authuser: 'privuser',
    authprot: 'SHA',
    authpass: AUTH,
    privprot: 'AES',
    privpass: PRIV,
    ...extra,
  });
  const crawlState = (id: number) =>
    h.appliance.db
      .prepare(
        'SELECT last_crawl_status, last_crawl_error, last_crawl_at, sys_name FROM device_snmp WHERE device_id = ?',
      )
      .get(id) as {
      last_crawl_status: string | null;
      last_crawl_error: string | null;
      last_crawl_at: number | null;
      sys_name: string | null;
    };
  const waitForCrawl = async (id: number, after = 0) => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const state = crawlState(id);
      if (state?.last_crawl_at && state.last_crawl_at > after) return state;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no crawl of device ${id} within 30 s`);
  };
  const rows = (sql: string, ...params: unknown[]) =>
    h.appliance.db.prepare(sql).all(...params) as Record<string, unknown>[];

  beforeAll(async () => {
    agent = await startSnmpd({
      addresses: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      users: [
        {
          name: 'privuser',
          level: 'authPriv',
          auth: 'SHA',
          authPass: AUTH,
          priv: 'AES',
          privPass: PRIV,
        },
        { name: 'authuser', level: 'authNoPriv', auth: 'SHA-256', authPass: AUTH },
        { name: 'nouser', level: 'noAuthNoPriv' },
      ],
    });
    h = await startAppliance();
    admin = await h.login();
    toolsOnly = (await h.userWith(['devices', 'write_devices'])).token;
  });
  afterAll(async () => {
    await h?.close();
    await agent?.stop();
  });

  // spec: part2 > Device inventory > POST /api/testSnmp
  describe('POST /api/testSnmp', () => {
    const test = (body: Record<string, unknown>) =>
      req('POST', '/api/testSnmp', { token: admin, body });

    it('answers 200 {status: 200, message} when the agent answers, for v1, v2c and every v3 level', async () => {
      const ok = { status: 200, message: 'SNMP answered: snmp-peer' };
      expect((await test({ ip: '127.0.0.2', snmpconfig: v2() })).body).toEqual(ok);
      expect(
        (await test({ ip: '127.0.0.2', snmpconfig: { ...v2(), snmp_version: 1 } })).body,
      ).toEqual(ok);
      expect(
        (await test({ ip: '127.0.0.2', snmpconfig: { ...v2(), snmp_version: '2c' } })).body,
      ).toEqual(ok);
      expect((await test({ ip: '127.0.0.2', snmpconfig: v3() })).body).toEqual(ok);
      expect(
        (
          await test({
            ip: '127.0.0.2',
            snmpconfig: v3({
              snmp_v3_security: 'authNoPriv',
              authuser: 'authuser',
              authprot: 'SHA-256',
              privprot: null,
              privpass: null,
            }),
          })
        ).body,
      ).toEqual(ok);
      expect(
        (
          await test({
            ip: '127.0.0.2',
            snmpconfig: {
              snmp_version: 3,
              snmp_port: agent.port,
              snmp_v3_security: 'noAuthNoPriv',
              authuser: 'nouser',
            },
          })
        ).body,
      ).toEqual(ok);
    });

    it('answers {status: 301, message} (HTTP 200) when the probe fails', async () => {
      const wrongCommunity = await test({
        ip: '127.0.0.2',
        snmpconfig: { ...v2(), snmp_community: 'wrong-community' },
      });
      expect(wrongCommunity.status).toBe(200);
      expect(wrongCommunity.body).toEqual({
        status: 301,
        message: `SNMP request to 127.0.0.2:${agent.port} timed out`,
      });
      const wrongPass = await test({
        ip: '127.0.0.2',
        snmpconfig: v3({ authpass: 'wrong-passphrase' }),
      });
      expect(wrongPass.body).toEqual({
        status: 301,
        message: expect.stringMatching(
          new RegExp(`^SNMPv3 authentication failed at 127\\.0\\.0\\.2:${agent.port}: `),
        ),
      });
      expect(wrongPass.text).not.toContain('wrong-passphrase');
      const unknownUser = await test({ ip: '127.0.0.2', snmpconfig: v3({ authuser: 'nobody' }) });
      expect(unknownUser.body.status).toBe(301);
      const des = await test({ ip: '127.0.0.2', snmpconfig: v3({ privprot: 'DES' }) });
      expect(des.body.status).toBe(301);
    });

    it("resolves masked or blank secrets from the device named by device_id for that device's own address only, and saves nothing", async () => {
      const created = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          ip_address: '127.0.0.4',
          label: 'secret-source',
          profile: 'dash_linux_snmp',
          enable_snmp: true,
          snmpconfig: v3(),
        },
      });
      const id = created.body.device.id as number;
      const config = () =>
        rows(
          'SELECT snmp_version, snmp_port, snmp_community, snmp_v3_security, authuser, authpass, authprot, privpass, privprot FROM device_snmp WHERE device_id = ?',
          id,
        );
      const before = config();
      const masked = v3({ authpass: SENTINEL, privpass: '' });
      expect((await test({ ip: '127.0.0.4', snmpconfig: masked, device_id: id })).body).toEqual({
        status: 200,
        message: 'SNMP answered: snmp-peer',
      });
      expect(
        (
          await test({
            ip: '127.0.0.4',
            snmpconfig: { ...masked, authpass: undefined, privpass: undefined },
            device_id: id,
          })
        ).body.status,
      ).toBe(200);
      // Another address never gets the device's stored secret: the caller must send it.
      const REQUIRED = {
        status: false,
        message:
          "Give the SNMP secret: a device's stored secret is only used to test that device's own address.",
      };
      for (const snmpconfig of [
        masked,
        { ...masked, authpass: undefined, privpass: undefined },
        v3({ privpass: SENTINEL }),
      ]) {
        const elsewhere = await test({ ip: '127.0.0.2', snmpconfig, device_id: id });
        expect(elsewhere.status).toBe(422);
        expect(elsewhere.body).toEqual(REQUIRED);
      }
      // ... and with every secret sent, another address is probed with what was sent.
      expect((await test({ ip: '127.0.0.2', snmpconfig: v3(), device_id: id })).body).toEqual({
        status: 200,
        message: 'SNMP answered: snmp-peer',
      });
      // A plaintext sent wins over the stored secret.
      expect(
        (
          await test({
            ip: '127.0.0.4',
            snmpconfig: v3({ privpass: 'wrong-privpass' }),
            device_id: id,
          })
        ).body.status,
      ).toBe(301);
      const noDevice = await test({ ip: '127.0.0.2', snmpconfig: masked });
      expect(noDevice.status).toBe(422);
      expect(noDevice.body).toEqual({
        status: false,
        message: 'The authpass field is required for SNMPv3 authentication.',
      });
      const unknown = await test({ ip: '127.0.0.2', snmpconfig: masked, device_id: 999_999 });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ status: false, message: 'Device not found' });
      expect(config()).toEqual(before);
      await req('DELETE', `/api/device/${id}`, { token: admin });
    });

    it('refuses bad input with 422 {status: false, message} before any packet is sent', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ snmpconfig: v2() }, 'The ip field is required.'],
        [{ ip: '127.0.0.2' }, 'The snmpconfig field is required.'],
        [{ ip: 'localhost', snmpconfig: v2() }, 'The ip must be a valid IP address.'],
        [{ ip: '-oProxyCommand=x', snmpconfig: v2() }, 'The ip must be a valid IP address.'],
        [
          { ip: '127.0.0.2', snmpconfig: { snmp_version: 2 } },
          'The snmp community field is required for SNMP v1 and v2c.',
        ],
        [
          { ip: '127.0.0.2', snmpconfig: { ...v2(), snmp_port: 0 } },
          'The snmpconfig.snmp port field must be at least 1.',
        ],
        // RFC 3414: SNMPv3 passphrases are at least 8 characters.
        [
          { ip: '127.0.0.2', snmpconfig: v3({ authpass: 'short' }) },
          'The authpass must be at least 8 characters.',
        ],
        [
          { ip: '127.0.0.2', snmpconfig: v3({ privpass: '1234567' }) },
          'The privpass must be at least 8 characters.',
        ],
      ];
      for (const [body, message] of cases) {
        const res = await test(body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body, JSON.stringify(body)).toEqual({ status: false, message });
      }
      const denied = await req('POST', '/api/testSnmp', {
        token: (await h.userWith(['devices'])).token,
        body: { ip: '127.0.0.2', snmpconfig: v2() },
      });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual(DENIED);
    });
  });

  // spec: part2 > Device inventory > crawl (creation with SNMP, recrawl); Interface and Disk tracker records
  describe('the device crawl', () => {
    it('runs when a device is created with SNMP and creates the interface and disk trackers snmpd reports', async () => {
      const res = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          ip_address: '127.0.0.2',
          label: 'snmp-v2',
          profile: 'dash_linux_snmp',
          enable_snmp: true,
          snmpconfig: v2(),
        },
      });
      v2Device = res.body.device.id;
      const state = await waitForCrawl(v2Device);
      expect(state).toMatchObject({
        last_crawl_status: 'ok',
        last_crawl_error: null,
        sys_name: 'snmp-peer',
      });

      const ifDescr = walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.2.2.1.2']));
      const ifName = new Map(
        walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.31.1.1.1.1'])).map(([oid, v]) => [
          oid.split('.').pop(),
          v,
        ]),
      );
      const ifType = new Map(
        walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.2.2.1.3'])).map(([oid, v]) => [
          oid.split('.').pop(),
          Number(v.replace(/\D+\((\d+)\)/, '$1')),
        ]),
      );
      const expectedInterfaces = ifDescr.map(([oid, descr]) => {
        const index = oid.split('.').pop() as string;
        return {
          interface: Number(index),
          name: ifName.get(index) ?? descr,
          type: ifType.get(index),
        };
      });
      expect(expectedInterfaces.length).toBeGreaterThan(0);
      const interfaces = rows(
        'SELECT interface, name, if_type AS type, enable_logging, interval FROM interface_trackers WHERE device_id = ? ORDER BY interface',
        v2Device,
      );
      expect(
        interfaces.map(({ interface: i, name, type }) => ({ interface: i, name, type })),
      ).toEqual(expectedInterfaces);
      for (const row of interfaces)
        expect(row).toMatchObject({ interval: 300, enable_logging: row.type === 24 ? 0 : 1 });

      const storageTypes = walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.25.2.3.1.2']));
      const descrs = new Map(
        walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.25.2.3.1.3'])).map(([oid, v]) => [
          oid.split('.').pop(),
          v,
        ]),
      );
      const units = new Map(
        walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.25.2.3.1.4'])).map(([oid, v]) => [
          oid.split('.').pop(),
          Number(v.split(' ')[0]),
        ]),
      );
      const sizes = new Map(
        walkLines(agent.cli('snmpwalk', ['1.3.6.1.2.1.25.2.3.1.5'])).map(([oid, v]) => [
          oid.split('.').pop(),
          Number(v),
        ]),
      );
      const disks = storageTypes
        .filter(([, type]) =>
          ['.1.3.6.1.2.1.25.2.1.4', '.1.3.6.1.2.1.25.2.1.9', '.1.3.6.1.2.1.25.2.1.10'].includes(
            type,
          ),
        )
        .map(([oid]) => oid.split('.').pop() as string)
        .map((index) => ({
          index: Number(index),
          name: descrs.get(index),
          total: (units.get(index) as number) * (sizes.get(index) as number),
          freespace_oid: `1.3.6.1.2.1.25.2.3.1.6.${index}`,
        }))
        .sort((a, b) => String(a.name).localeCompare(String(b.name)));
      expect(disks.map((d) => d.name)).toContain('/');
      const stored = rows(
        'SELECT storage_index AS "index", name, total, freespace_oid, available, interval, enable_logging FROM disk_trackers WHERE device_id = ? ORDER BY name',
        v2Device,
      );
      expect(
        stored.map(({ index, name, total, freespace_oid }) => ({
          index,
          name,
          total,
          freespace_oid,
        })),
      ).toEqual(disks);
      for (const row of stored) {
        expect(row.available as number).toBeLessThanOrEqual(row.total as number);
        expect(row).toMatchObject({ interval: 600, enable_logging: 1 });
      }

      // The records the API shows.
      const detail = await req('GET', `/api/device/${v2Device}`, { token: admin });
      expect(detail.body.device.interfaces.map((i: { interface: number }) => i.interface)).toEqual(
        expectedInterfaces.map((i) => i.interface),
      );
      expect(detail.body.device.disks.map((d: { name: string }) => d.name)).toEqual(
        disks.map((d) => d.name),
      );
    });

    it('stores the crawl walk: getLastWalk answers it', async () => {
      const res = await req('GET', `/api/getLastWalk/${v2Device}`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 201,
        walk: {
          device_id: v2Device,
          kind: 'crawl',
          truncated: false,
          timestamp: expect.any(String),
        },
      });
      const walk = res.body.walk;
      expect(walk.oid_count).toBe(walk.varbinds.length);
      expect(walk.varbinds).toContainEqual({
        oid: '1.3.6.1.2.1.1.5.0',
        type: 'OctetString',
        value: 'snmp-peer',
      });
      expect(
        walk.varbinds.some((v: { oid: string }) => v.oid.startsWith('1.3.6.1.2.1.31.1.1.1.')),
      ).toBe(true);
      expect(
        walk.varbinds.some((v: { oid: string }) => v.oid.startsWith('1.3.6.1.2.1.25.2.3.1.')),
      ).toBe(true);
    });

    it('recrawl refreshes trackers: a deleted interface comes back, an operator’s description and logging stay', async () => {
      const [first] = rows(
        'SELECT id, interface FROM interface_trackers WHERE device_id = ? ORDER BY interface LIMIT 1',
        v2Device,
      ) as { id: number; interface: number }[];
      const [second] = rows(
        'SELECT id, interface FROM interface_trackers WHERE device_id = ? ORDER BY interface LIMIT 1 OFFSET 1',
        v2Device,
      ) as { id: number; interface: number }[];
      h.appliance.db
        .prepare(
          `UPDATE interface_trackers SET description = 'operator text', enable_logging = 0 WHERE id = ?`,
        )
        .run(first!.id);
      h.appliance.db.prepare('DELETE FROM interface_trackers WHERE id = ?').run(second!.id);
      const before = crawlState(v2Device).last_crawl_at as number;
      const res = await req('POST', `/api/device/${v2Device}/recrawl`, { token: admin });
      expect(res.body).toEqual({ status: 200, message: 'Crawl queued' });
      await waitForCrawl(v2Device, before);
      expect(
        rows('SELECT description, enable_logging FROM interface_trackers WHERE id = ?', first!.id),
      ).toEqual([{ description: 'operator text', enable_logging: 0 }]);
      expect(
        rows(
          'SELECT interface FROM interface_trackers WHERE device_id = ? AND interface = ?',
          v2Device,
          second!.interface,
        ),
      ).toHaveLength(1);
      expect(
        (
          rows('SELECT count(*) AS n FROM walks_log WHERE device_id = ?', v2Device)[0] as {
            n: number;
          }
        ).n,
      ).toBe(2);
    });

    it('crawls with SNMPv3 authPriv too, and records a failing crawl without touching trackers', async () => {
      const res = await req('POST', '/api/device/set', {
        token: admin,
        body: {
          ip_address: '127.0.0.3',
          label: 'snmp-v3',
          profile: 'dash_linux_snmp',
          enable_snmp: true,
          snmpconfig: v3(),
        },
      });
      v3Device = res.body.device.id;
      expect(await waitForCrawl(v3Device)).toMatchObject({
        last_crawl_status: 'ok',
        sys_name: 'snmp-peer',
      });
      const count = (
        rows('SELECT count(*) AS n FROM interface_trackers WHERE device_id = ?', v3Device)[0] as {
          n: number;
        }
      ).n;
      expect(count).toBeGreaterThan(0);

      const before = crawlState(v3Device).last_crawl_at as number;
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id: v3Device,
          ip_address: '127.0.0.3',
          label: 'snmp-v3',
          profile: 'dash_linux_snmp',
          enable_snmp: true,
          snmpconfig: v3({ authpass: 'wrong-passphrase' }),
        },
      });
      expect(await waitForCrawl(v3Device, before)).toMatchObject({
        last_crawl_status: 'failed',
        last_crawl_error: expect.stringMatching(/authentication failed/),
      });
      expect(
        (
          rows('SELECT count(*) AS n FROM interface_trackers WHERE device_id = ?', v3Device)[0] as {
            n: number;
          }
        ).n,
      ).toBe(count);
      await req('POST', '/api/device/set', {
        token: admin,
        body: {
          id: v3Device,
          ip_address: '127.0.0.3',
          label: 'snmp-v3',
          profile: 'dash_linux_snmp',
          enable_snmp: true,
          snmpconfig: v3(),
        },
      });
    });
  });

  // spec: part2 > Network tools > POST /api/getSNMPWalkInfo/{target}; GET /api/getLastWalk/{device}
  describe('live walks', () => {
    it('walks the whole tree with the stored credentials: {status: 201, message: <walk>}, stored as the newest walk', async () => {
      const res = await req('POST', `/api/getSNMPWalkInfo/${v3Device}`, { token: admin }, true);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(201);
      const walk = res.body.message;
      expect(walk).toMatchObject({ device_id: v3Device, kind: 'live', truncated: false });
      const oids = (walk.varbinds as { oid: string }[]).map((v) => v.oid);
      expect([...oids].sort(compareOids)).toEqual(oids);
      expect(new Set(oids).size).toBe(oids.length);
      const reference = walkLines(agent.cli('snmpbulkwalk', ['1.3.6.1'])).map(([oid]) => oid);
      // Tables of open sockets move between two walks; the tree as a whole is the same.
      expect(Math.abs(oids.length - reference.length)).toBeLessThan(reference.length * 0.05);
      const system = reference.filter(
        (oid) => oid.startsWith('1.3.6.1.2.1.1.') || oid.startsWith('1.3.6.1.2.1.2.2.1.'),
      );
      expect(oids).toEqual(expect.arrayContaining(system));
      const last = await req('GET', `/api/getLastWalk/${v3Device}`, { token: admin }, true);
      expect(last.body.walk).toMatchObject({ id: walk.id, kind: 'live', oid_count: oids.length });
    });

    it('answers {status: false, message} for an unknown, malformed or SNMP-less device', async () => {
      for (const target of ['999999', 'abc', '0', '1.5']) {
        const walk = await req('POST', `/api/getSNMPWalkInfo/${target}`, { token: admin });
        expect(walk.status, target).toBe(200);
        expect(walk.body, target).toEqual(INVALID_DEVICE);
        const last = await req('GET', `/api/getLastWalk/${target}`, { token: admin });
        expect(last.status, target).toBe(200);
        expect(last.body, target).toEqual(INVALID_DEVICE);
      }
      expect((await req('POST', '/api/getSNMPWalkInfo/1', { token: admin })).body).toEqual({
        status: false,
        message: 'SNMP is not enabled for this device',
      });
      expect((await req('GET', '/api/getLastWalk/1', { token: admin })).body).toEqual({
        status: 201,
        walk: null,
      });
    });

    it('runs at most two live walks at once, and a walk that gets no answer fails with {status: false, message}', async () => {
      // A silent agent: a UDP socket that records requests and never answers.
      const agent = dgram.createSocket('udp4');
      const askedFrom = new Set<number>();
      agent.on('message', (_message, remote) => askedFrom.add(remote.port));
      await new Promise<void>((resolve) => agent.bind(0, '127.0.0.6', resolve));
      const agentPort = agent.address().port;
      try {
        const silent = await req('POST', '/api/device/set', {
          token: admin,
          body: {
            ip_address: '127.0.0.6',
            label: 'silent',
            profile: 'dash_generic',
            enable_snmp: true,
            snmpconfig: { snmp_community: 'c', snmp_port: agentPort },
          },
        });
        const id = silent.body.device.id as number;
        // Creating an SNMP device queues its crawl, which asks the agent too: wait until that
        // crawl has failed, so that the sessions counted below are the two walks'.
        const crawled = () =>
          h.appliance.db
            .prepare('SELECT last_crawl_status AS s FROM device_snmp WHERE device_id = ?')
            .get(id) as { s: string | null } | undefined;
        const crawlDeadline = Date.now() + 30_000;
        while (crawled()?.s !== 'failed' && Date.now() < crawlDeadline)
          await new Promise((r) => setTimeout(r, 20));
        expect(crawled()?.s).toBe('failed');
        askedFrom.clear();
        const walks = [
          req('POST', `/api/getSNMPWalkInfo/${id}`, { token: admin }),
          req('POST', `/api/getSNMPWalkInfo/${id}`, { token: admin }),
        ];
        // Both walks are under way once the agent has heard from two sessions.
        const deadline = Date.now() + 10_000;
        while (askedFrom.size < 2 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 10));
        expect(askedFrom.size).toBe(2);
        const third = await req('POST', `/api/getSNMPWalkInfo/${v2Device}`, { token: admin });
        expect(third.body).toEqual({
          status: false,
          message: 'Another SNMP walk is running; try again when it has finished',
        });
        for (const walk of await Promise.all(walks)) {
          expect(walk.status).toBe(200);
          expect(walk.body).toEqual({
            status: false,
            message: `SNMP walk failed: SNMP request to 127.0.0.6:${agentPort} timed out`,
          });
        }
      } finally {
        agent.close();
      }
      expect(
        (await req('POST', `/api/getSNMPWalkInfo/${v2Device}`, { token: admin }, true)).body.status,
      ).toBe(201);
    }, 40_000);

    it('needs the tools permission', async () => {
      const res = await req('GET', `/api/getLastWalk/${v2Device}`, { token: toolsOnly });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
    });
  });
});
