/**
 * HTTP-level tests of autodiscovery credentials and pending devices (spec part 2 > Autodiscovery
 * credentials; Pending devices; States: pending -> imported | hidden | removed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { recordDiscoveredHosts } from './pending.repository.js';

const SENTINEL = { __encrypted__: true };
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const NOT_FOUND = { status: false, hasError: true, message: 'Pending device not found' };

describe('credentials and pending devices (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let reader: string;
  let ipCounter = 10;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    expect(res.text).not.toMatch(/s3cret/);
    return res;
  };
  const post = (path: string, body: unknown, token = admin) => req('POST', path, { token, body });
  const db = () => h.appliance.db;
  const open = (sealed: string | null) => (sealed ? h.appliance.ctx.secrets.open(sealed) : null);

  /** A pending row as a discovery sweep records it. */
  const discovered = (snmp: boolean, extra: Record<string, unknown> = {}) => {
    const ip = `127.0.2.${ipCounter++}`;
    const net = db()
      .prepare(
        `INSERT INTO local_networks (label, network, broadcast, network_num, broadcast_num, interval, created_at, updated_at) VALUES ('n', '127.0.2.0', '127.0.2.255', 2130706944, 2130707199, 3600, 0, 0)`,
      )
      .run();
    recordDiscoveredHosts(
      db(),
      [
        {
          ip,
          netId: Number(net.lastInsertRowid),
          label: `host-${ip}`,
          profile: 'dash_linux_snmp',
          snmp: snmp
            ? {
                snmp_version: 2,
                snmp_port: 16100,
                snmp_community: h.appliance.ctx.secrets.seal('community-s3cret'),
                snmp_v3_security: null,
                authuser: null,
                authpass: null,
                authprot: null,
                privpass: null,
                privprot: null,
              }
            : null,
          sysDescr: snmp ? 'Linux test' : null,
          openPorts: [22],
          ...extra,
        },
      ],
      Date.now(),
    );
    return (
      db().prepare('SELECT id FROM pending_devices WHERE ip_address = ?').get(ip) as { id: number }
    ).id;
  };
  const pendingList = async () => (await post('/api/getDevicesPending', undefined)).body;

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    reader = (await h.userWith(['devices'])).token;
  });
  afterAll(() => h?.close());

  // spec: part2 > Autodiscovery credentials
  describe('credentials', () => {
    it('creates a set (201 {status: 201, hasError: false, credential: {id, label}}) and lists it with secrets masked', async () => {
      const res = await post('/api/addEditCredential', {
        action: 'addedit',
        label: 'lab v3',
        authuser: 'mon',
        snmp_authprot: 'sha-256',
        snmp_privprot: 'aes',
        authpass: 'auth-s3cret',
        snmp_privpass: 'priv-s3cret',
        snmp_community: 'comm-s3cret',
        snmp_port: 16161,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        credential: { id: expect.any(Number), label: 'lab v3' },
      });
      const id = res.body.credential.id as number;
      const row = db().prepare('SELECT * FROM snmp_credentials WHERE id = ?').get(id) as Record<
        string,
        string
      >;
      expect([open(row.snmp_community!), open(row.authpass!), open(row.snmp_privpass!)]).toEqual([
        'comm-s3cret',
        'auth-s3cret',
        'priv-s3cret',
      ]);
      expect(JSON.stringify(row)).not.toMatch(/s3cret/);
      const list = await req('GET', '/api/getCredentials', { token: admin });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({
        status: 201,
        hasError: false,
        data: [
          {
            id,
            label: 'lab v3',
            authuser: 'mon',
            snmp_authprot: 'SHA256',
            snmp_privprot: 'AES',
            snmp_community: SENTINEL,
            authpass: SENTINEL,
            snmp_privpass: SENTINEL,
            snmp_port: 16161,
          },
        ],
      });
    });

    it('updates with id, keeping secrets for the sentinel, empty or omitted and replacing them with plaintext', async () => {
      const created = await post('/api/addEditCredential', {
        action: 'addedit',
        label: 'edit me',
        authuser: 'u',
        snmp_authprot: 'SHA',
        snmp_privprot: 'AES',
        authpass: 'first-s3cret',
        snmp_community: 'c-s3cret',
      });
      const id = created.body.credential.id as number;
      const updated = await post('/api/addEditCredential', {
        action: 'addedit',
        id,
        label: 'edited',
        authuser: 'u2',
        snmp_authprot: 'MD5',
        snmp_privprot: 'DES',
        authpass: SENTINEL,
        snmp_community: '',
      });
      expect(updated.body).toEqual({
        status: 201,
        hasError: false,
        credential: { id, label: 'edited' },
      });
      let row = db().prepare('SELECT * FROM snmp_credentials WHERE id = ?').get(id) as Record<
        string,
        string | null
      >;
      expect(row).toMatchObject({
        label: 'edited',
        authuser: 'u2',
        snmp_authprot: 'MD5',
        snmp_privprot: 'DES',
        snmp_privpass: null,
        snmp_port: 161,
      });
      expect([open(row.authpass as string), open(row.snmp_community as string)]).toEqual([
        'first-s3cret',
        'c-s3cret',
      ]);
      await post('/api/addEditCredential', {
        action: 'addedit',
        id,
        label: 'edited',
        authuser: 'u2',
        snmp_authprot: 'MD5',
        snmp_privprot: 'DES',
        authpass: 'second-s3cret',
      });
      row = db().prepare('SELECT * FROM snmp_credentials WHERE id = ?').get(id) as Record<
        string,
        string | null
      >;
      expect(open(row.authpass as string)).toBe('second-s3cret');
    });

    it('deletes with action delete: 201 {status: 201, hasError: false, message}', async () => {
      const created = await post('/api/addEditCredential', {
        action: 'addedit',
        label: 'doomed',
        authuser: 'u',
        snmp_authprot: 'SHA',
        snmp_privprot: 'AES',
      });
      const id = created.body.credential.id as number;
      const res = await post('/api/addEditCredential', { action: 'delete', id });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 201, hasError: false, message: 'Credential deleted' });
      expect(db().prepare('SELECT 1 FROM snmp_credentials WHERE id = ?').get(id)).toBeUndefined();
    });

    it('answers the legacy failure (HTTP 200 {status: false, hasError: true, message}) for every bad request, changing nothing', async () => {
      const before = (
        db().prepare('SELECT count(*) AS n FROM snmp_credentials').get() as { n: number }
      ).n;
      const base = {
        action: 'addedit',
        label: 'x',
        authuser: 'u',
        snmp_authprot: 'SHA',
        snmp_privprot: 'AES',
      };
      const cases: [unknown, string][] = [
        [{ ...base, action: 'rename' }, 'Unknown action'],
        [{ ...base, action: undefined }, 'The action field is required.'],
        [{ ...base, label: undefined }, 'The label field is required.'],
        [{ ...base, label: '  ' }, 'The label field is required.'],
        [{ ...base, authuser: undefined }, 'The authuser field is required.'],
        [{ ...base, snmp_authprot: undefined }, 'The snmp authprot field is required.'],
        [{ ...base, snmp_privprot: '' }, 'The snmp privprot field is required.'],
        [
          { ...base, snmp_authprot: 'SHA3' },
          'The snmp authprot must be one of MD5, SHA, SHA224, SHA256, SHA384, SHA512.',
        ],
        [
          { ...base, snmp_privprot: 'BLOWFISH' },
          'The snmp privprot must be one of DES, AES, AES256B, AES256R.',
        ],
        [{ ...base, authpass: 'short' }, 'The authpass must be at least 8 characters.'],
        [{ ...base, snmp_privpass: '1234567' }, 'The snmp privpass must be at least 8 characters.'],
        [{ ...base, snmp_port: 0 }, 'The snmp port field must be at least 1.'],
        [{ ...base, id: 999_999 }, 'Credential not found'],
        [{ action: 'delete' }, 'The id field is required.'],
        [{ action: 'delete', id: 999_999 }, 'Credential not found'],
      ];
      for (const [body, message] of cases) {
        const res = await post('/api/addEditCredential', body);
        expect(res.status, JSON.stringify(body)).toBe(200);
        expect(res.body, JSON.stringify(body)).toEqual({ status: false, hasError: true, message });
      }
      expect(
        (db().prepare('SELECT count(*) AS n FROM snmp_credentials').get() as { n: number }).n,
      ).toBe(before);
      expect((await req('GET', '/api/getCredentials', { token: reader })).body).toEqual(DENIED);
    });
  });

  // spec: part2 > Pending devices
  describe('pending devices', () => {
    it('lists pending devices with masked secrets and the latest discovery per network: 200 {status: 201, hasError: false, devices, discovery_status}', async () => {
      const id = discovered(true);
      const netId = (
        db().prepare('SELECT net_id FROM pending_devices WHERE id = ?').get(id) as {
          net_id: number;
        }
      ).net_id;
      db()
        .prepare('INSERT INTO discovery_status (net_id, start_time, end_time) VALUES (?, ?, ?)')
        .run(netId, Date.UTC(2026, 10, 21, 10), Date.UTC(2026, 10, 21, 10, 5));
      db()
        .prepare('INSERT INTO discovery_status (net_id, start_time) VALUES (?, ?)')
        .run(netId, Date.UTC(2026, 10, 21, 11));
      const body = await pendingList();
      expect(body).toMatchObject({ status: 201, hasError: false });
      const row = body.devices.find((d: { id: number }) => d.id === id);
      expect(row).toEqual({
        id,
        label: expect.stringMatching(/^host-127\.0\.2\./),
        ip_address: expect.stringMatching(/^127\.0\.2\./),
        profile: 'dash_linux_snmp',
        enable_snmp: true,
        enable_agent: false,
        agent_uuid: null,
        last_checkin_at: null,
        agent_version: null,
        os_version: null,
        tags: [],
        snmpconfig: {
          snmp_version: 2,
          snmp_port: 16100,
          snmp_community: SENTINEL,
          snmp_v3_security: null,
          authuser: null,
          authpass: null,
          authprot: null,
          privpass: null,
          privprot: null,
        },
        open_ports: [22],
      });
      expect(body.discovery_status).toContainEqual({
        id: expect.any(Number),
        net_id: netId,
        start_time: '2026-11-21 11:00:00',
        end_time: null,
      });
      expect(
        body.discovery_status.filter((s: { net_id: number }) => s.net_id === netId),
      ).toHaveLength(1);
    });

    it('imports a pending device (201), creating the device with its SNMP settings and tags and removing the row', async () => {
      const id = discovered(true);
      const ip = (
        db().prepare('SELECT ip_address FROM pending_devices WHERE id = ?').get(id) as {
          ip_address: string;
        }
      ).ip_address;
      const res = await post('/api/importPending', {
        id,
        tags: [{ slug: 'imported', name: 'Imported', type: 'device' }],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        message: expect.stringMatching(/^Device \d+ created from the pending device$/),
      });
      const device = db().prepare('SELECT * FROM devices WHERE ip_address = ?').get(ip) as {
        id: number;
        label: string;
        enable_snmp: number;
        profile: string;
      };
      expect(device).toMatchObject({
        label: `host-${ip}`,
        enable_snmp: 1,
        profile: 'dash_linux_snmp',
      });
      const snmp = db()
        .prepare('SELECT snmp_port, snmp_community FROM device_snmp WHERE device_id = ?')
        .get(device.id) as { snmp_port: number; snmp_community: string };
      expect(snmp.snmp_port).toBe(16100);
      expect(open(snmp.snmp_community)).toBe('community-s3cret');
      const tags = await req('GET', `/api/device/${device.id}/tags`, { token: admin });
      expect(tags.body.tags).toEqual([{ name: 'Imported', slug: 'imported', type: 'device' }]);
      expect(db().prepare('SELECT 1 FROM pending_devices WHERE id = ?').get(id)).toBeUndefined();
    });

    it('refuses to import an address a device holds: {status: false, hasError: true, message}', async () => {
      const id = discovered(false);
      const ip = (
        db().prepare('SELECT ip_address FROM pending_devices WHERE id = ?').get(id) as {
          ip_address: string;
        }
      ).ip_address;
      db()
        .prepare(
          `INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES ('taken', ?, 'dash_generic', 0, 0)`,
        )
        .run(ip);
      const res = await post('/api/importPending', { id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: false,
        hasError: true,
        message: `A device with the IP address ${ip} already exists.`,
      });
      expect(db().prepare('SELECT 1 FROM pending_devices WHERE id = ?').get(id)).toBeDefined();
    });

    it('hides (kept, out of the default list) and removes (gone; a later sweep may bring it back)', async () => {
      const hidden = discovered(false);
      const hide = await post('/api/hidePendingDevice', { id: hidden });
      expect(hide.status).toBe(201);
      expect(hide.body).toEqual({ status: 201, hasError: false, message: 'Pending device hidden' });
      expect((await pendingList()).devices.map((d: { id: number }) => d.id)).not.toContain(hidden);
      expect(db().prepare('SELECT hidden FROM pending_devices WHERE id = ?').get(hidden)).toEqual({
        hidden: 1,
      });

      const removed = discovered(false);
      const ip = (
        db().prepare('SELECT ip_address FROM pending_devices WHERE id = ?').get(removed) as {
          ip_address: string;
        }
      ).ip_address;
      const res = await post('/api/removePendingDevice', { id: removed });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 201, hasError: false, message: 'Pending device removed' });
      expect(
        db().prepare('SELECT 1 FROM pending_devices WHERE id = ?').get(removed),
      ).toBeUndefined();
      recordDiscoveredHosts(
        db(),
        [
          {
            ip,
            netId: 1,
            label: ip,
            profile: 'dash_generic',
            snmp: null,
            sysDescr: null,
            openPorts: null,
          },
        ].map((host) => ({
          ...host,
          netId: (db().prepare('SELECT max(id) AS id FROM local_networks').get() as { id: number })
            .id,
        })),
        Date.now(),
      );
      expect(
        db().prepare('SELECT 1 FROM pending_devices WHERE ip_address = ?').get(ip),
      ).toBeDefined();
    });

    it('updates one field (secret fields sealed, the sentinel keeps) or answers 422 {status: false, hasError: true, message: {value: [...]}}', async () => {
      const id = discovered(true);
      const row = () =>
        db().prepare('SELECT * FROM pending_devices WHERE id = ?').get(id) as Record<
          string,
          string | number | null
        >;
      const set = (field: string, value: unknown) =>
        post('/api/updatePendingDeviceField', { id, field, value });
      const ok = async (field: string, value: unknown) => {
        const res = await set(field, value);
        expect(res.status, `${field}=${JSON.stringify(value)}`).toBe(201);
        expect(res.body).toEqual({
          status: 201,
          hasError: false,
          message: `Pending device ${field} updated`,
        });
      };
      await ok('label', 'renamed');
      await ok('profile', 'dash_network_snmp');
      await ok('enable_agent', true);
      await ok('enable_snmp', '0');
      await ok('snmp_port', '1161');
      await ok('snmp_version', '2c');
      await ok('snmp_version', 3);
      await ok('snmp_v3_security', 'authPriv');
      await ok('authuser', 'monitor');
      await ok('authprot', 'sha-512');
      await ok('privprot', 'aes-256');
      await ok('authpass', 'auth-s3cret-1');
      await ok('privpass', 'priv-s3cret-1');
      await ok('snmp_community', SENTINEL);
      expect(row()).toMatchObject({
        label: 'renamed',
        profile: 'dash_network_snmp',
        enable_agent: 1,
        enable_snmp: 0,
        snmp_port: 1161,
        snmp_version: 3,
        snmp_v3_security: 'authPriv',
        authuser: 'monitor',
        authprot: 'SHA512',
        privprot: 'AES256B',
      });
      expect([
        open(row().authpass as string),
        open(row().privpass as string),
        open(row().snmp_community as string),
      ]).toEqual(['auth-s3cret-1', 'priv-s3cret-1', 'community-s3cret']);
      await ok('authpass', '');
      expect(open(row().authpass as string)).toBe('auth-s3cret-1');

      const before = row();
      const bad: [string, unknown, string][] = [
        ['label', '', 'The label must be a non-empty string of at most 255 characters.'],
        ['profile', 'nope', 'The selected profile is invalid.'],
        ['enable_snmp', 'maybe', 'The enable snmp value must be true or false.'],
        ['snmp_port', 0, 'The snmp port must be an integer from 1 to 65535.'],
        ['snmp_port', '80x', 'The snmp port must be an integer from 1 to 65535.'],
        ['snmp_version', 4, 'The snmp version must be 1, 2 or 3.'],
        [
          'snmp_v3_security',
          'authOnly',
          'The snmp v3 security must be one of noAuthNoPriv, authNoPriv, authPriv.',
        ],
        [
          'authprot',
          'SHA3',
          'The authprot must be one of MD5, SHA, SHA224, SHA256, SHA384, SHA512.',
        ],
        ['privprot', '3DES', 'The privprot must be one of DES, AES, AES256B, AES256R.'],
        ['authpass', 'short', 'The authpass must be at least 8 characters.'],
        ['snmp_community', 12, 'The snmp community must be a string.'],
      ];
      for (const [field, value, message] of bad) {
        const res = await set(field, value);
        expect(res.status, field).toBe(422);
        expect(res.body, field).toEqual({
          status: false,
          hasError: true,
          message: { value: [message] },
        });
      }
      const badField = await set('ip_address', '10.0.0.1');
      expect(badField.status).toBe(422);
      expect(badField.body).toEqual({
        status: false,
        hasError: true,
        message: { field: ['The selected field is invalid.'] },
      });
      const missing = await post('/api/updatePendingDeviceField', { id, field: 'label' });
      expect(missing.body).toEqual({
        status: false,
        hasError: true,
        message: { value: ['The value field is required.'] },
      });
      expect(row()).toEqual(before);
    });

    it('replaces the tag set (201), creating missing tags', async () => {
      const id = discovered(false);
      const res = await post('/api/updatePendingDeviceTags', {
        id,
        tags: [{ slug: 'p-one', name: 'P One', type: 'device' }, 'p-two'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        message: 'Pending device tags updated',
      });
      await post('/api/updatePendingDeviceTags', { id, tags: ['p-two'] });
      expect((await pendingList()).devices.find((d: { id: number }) => d.id === id).tags).toEqual([
        { slug: 'p-two', name: 'p-two', type: 'device' },
      ]);
      const bad = await post('/api/updatePendingDeviceTags', { id });
      expect(bad.body).toEqual({
        status: false,
        hasError: true,
        message: 'The tags field is required.',
      });
    });

    it('answers 404 with the legacy body for an unknown id on every row endpoint', async () => {
      for (const [path, body] of [
        ['/api/importPending', { id: 999_999 }],
        ['/api/hidePendingDevice', { id: 999_999 }],
        ['/api/removePendingDevice', { id: 999_999 }],
        ['/api/updatePendingDeviceField', { id: 999_999, field: 'label', value: 'x' }],
        ['/api/updatePendingDeviceTags', { id: 999_999, tags: [] }],
      ] as const) {
        const res = await post(path, body);
        expect(res.status, path).toBe(404);
        expect(res.body, path).toEqual(NOT_FOUND);
      }
      const missingId = await post('/api/hidePendingDevice', {});
      expect(missingId.status).toBe(200);
      expect(missingId.body).toEqual({
        status: false,
        hasError: true,
        message: 'The id field is required.',
      });
      expect((await post('/api/getDevicesPending', undefined, reader)).body).toEqual(DENIED);
    });

    it('keeps what an operator set when a sweep finds the host again; a hidden row stays hidden', async () => {
      const id = discovered(false);
      const ip = db()
        .prepare('SELECT ip_address, net_id FROM pending_devices WHERE id = ?')
        .get(id) as { ip_address: string; net_id: number };
      await post('/api/updatePendingDeviceField', { id, field: 'label', value: 'operator label' });
      await post('/api/hidePendingDevice', { id });
      const created = recordDiscoveredHosts(
        db(),
        [
          {
            ip: ip.ip_address,
            netId: ip.net_id,
            label: 'sysname',
            profile: 'dash_linux_snmp',
            snmp: {
              snmp_version: 2,
              snmp_port: 161,
              snmp_community: h.appliance.ctx.secrets.seal('new-s3cret'),
              snmp_v3_security: null,
              authuser: null,
              authpass: null,
              authprot: null,
              privpass: null,
              privprot: null,
            },
            sysDescr: 'Linux',
            openPorts: null,
          },
        ],
        Date.now(),
      );
      expect(created).toBe(0);
      const row = db()
        .prepare('SELECT label, hidden, enable_snmp, open_ports FROM pending_devices WHERE id = ?')
        .get(id);
      expect(row).toEqual({
        label: 'operator label',
        hidden: 1,
        enable_snmp: 1,
        open_ports: '[22]',
      });
    });
  });
});
