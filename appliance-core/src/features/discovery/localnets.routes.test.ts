/**
 * HTTP-level tests of local networks (spec part 3 > Appliance settings: getLocalnets,
 * updateLocalnet, resetDiscoveryTs, deleteLocalnet). Every range here is loopback and discovery
 * stays disabled, so these tests send no traffic (the sweeps are in discovery.engine.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

describe('local networks (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let writer: string;
  let credA: number;
  let credB: number;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const post = (path: string, body: unknown, token = admin) => req('POST', path, { token, body });
  const count = () =>
    (h.appliance.db.prepare('SELECT count(*) AS n FROM local_networks').get() as { n: number }).n;

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    writer = (await h.userWith(['devices', 'write_devices'])).token;
    const cred = async (label: string) =>
      (
        await post('/api/addEditCredential', {
          action: 'addedit',
          label,
          authuser: 'u',
          snmp_authprot: 'SHA',
          snmp_privprot: 'AES',
        })
      ).body.credential.id as number;
    credA = await cred('a');
    credB = await cred('b');
  });
  afterAll(() => h?.close());

  it('answers false while there are none', async () => {
    const res = await req('GET', '/api/getLocalnets', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toBe(false);
    expect((await req('GET', '/api/getLocalnets', { token: writer })).body).toEqual(DENIED);
  });

  it('creates and updates networks in one batch and lists them: {data: [local network]}', async () => {
    const res = await post('/api/updateLocalnet', {
      data: [
        {
          label: 'lab',
          network: '127.0.0.0',
          broadcast: '127.0.0.255',
          interval: 3600,
          enable_portscan: true,
          cred_ids: [credB, credA],
        },
        {
          label: 'wide',
          network: '127.16.0.0',
          broadcast: '127.16.255.255',
          enable_discovery: false,
          alerts: 1,
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 201,
      hasError: false,
      message: 'Local networks saved',
      data: [
        {
          id: expect.any(Number),
          label: 'lab',
          network: '127.0.0.0',
          broadcast: '127.0.0.255',
          interval: 3600,
          enable_discovery: false,
          enable_portscan: true,
          cred_ids: [credB, credA],
          alerts: false,
          timestamp: null,
        },
        {
          id: expect.any(Number),
          label: 'wide',
          network: '127.16.0.0',
          broadcast: '127.16.255.255',
          interval: 21600,
          enable_discovery: false,
          enable_portscan: false,
          cred_ids: [],
          alerts: true,
          timestamp: null,
        },
      ],
    });
    const [lab] = res.body.data;
    const updated = await post('/api/updateLocalnet', {
      data: [
        {
          id: lab.id,
          label: 'lab-2',
          network: '127.0.0.0',
          broadcast: '127.0.0.127',
          cred_ids: [credA],
        },
      ],
    });
    expect(updated.body.data).toEqual([
      { ...lab, label: 'lab-2', broadcast: '127.0.0.127', cred_ids: [credA] },
    ]);
    const list = await req('GET', '/api/getLocalnets', { token: admin });
    expect(list.body.data).toHaveLength(2);
    expect(list.body.data[0]).toEqual(updated.body.data[0]);
  });

  it('rejects the whole batch for one bad row with 422 {status: false, hasError: true, message}', async () => {
    const before = count();
    const good = { label: 'ok', network: '127.0.5.0', broadcast: '127.0.5.255' };
    const cases: [unknown, string][] = [
      [{ data: [] }, 'The data field must have at least 1 items.'],
      [{}, 'The data field is required.'],
      [{ data: [good, { ...good, label: undefined }] }, 'The data.1.label field is required.'],
      [{ data: [good, { ...good, label: ' ' }] }, 'data.1.label: The label field is required.'],
      [
        { data: [good, { ...good, network: '127.0.5' }] },
        'data.1.network: The network must be a valid IPv4 address.',
      ],
      [
        { data: [good, { ...good, network: 'fd00::1' }] },
        'data.1.network: The network must be a valid IPv4 address.',
      ],
      [
        { data: [good, { ...good, broadcast: '127.0.300.1' }] },
        'data.1.broadcast: The broadcast must be a valid IPv4 address.',
      ],
      [
        { data: [good, { ...good, network: '127.0.6.0', broadcast: '127.0.5.255' }] },
        'data.1.broadcast: The broadcast must not be lower than the network.',
      ],
      [
        { data: [good, { ...good, network: '127.0.0.0', broadcast: '127.1.0.0' }] },
        'data.1.broadcast: A local network holds at most 65536 addresses (a /16).',
      ],
      [
        { data: [good, { ...good, cred_ids: [credA, 999_999] }] },
        'data.1.cred_ids: The selected credential 999999 is invalid.',
      ],
      [{ data: [good, { ...good, id: 999_999 }] }, 'data.1.id: The selected id is invalid.'],
      [
        { data: [good, { ...good, interval: 59 }] },
        'The data.1.interval field must be at least 60.',
      ],
      [
        { data: [good, { ...good, interval: 2_592_001 }] },
        'The data.1.interval field must not be greater than 2592000.',
      ],
      [
        { data: [good, { ...good, enable_discovery: 'on' }] },
        'The selected data.1.enable discovery is invalid.',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post('/api/updateLocalnet', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body, JSON.stringify(body)).toEqual({ status: false, hasError: true, message });
    }
    const existing = (await req('GET', '/api/getLocalnets', { token: admin })).body.data[0];
    const dup = await post('/api/updateLocalnet', {
      data: [
        { ...good, id: existing.id },
        { ...good, id: existing.id },
      ],
    });
    expect(dup.body).toEqual({
      status: false,
      hasError: true,
      message: 'data.1.id: The id appears twice in the batch.',
    });
    expect(count()).toBe(before);
    expect((await req('GET', '/api/getLocalnets', { token: admin })).body.data[0]).toEqual(
      existing,
    );
  });

  it('accepts exactly a /16 and a single address', async () => {
    const res = await post('/api/updateLocalnet', {
      data: [
        { label: 'sixteen', network: '127.20.0.0', broadcast: '127.20.255.255' },
        { label: 'one', network: '127.0.9.9', broadcast: '127.0.9.9' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((n: { label: string }) => n.label)).toEqual(['sixteen', 'one']);
  });

  it('resetDiscoveryTs makes a network due now: {status: 201, hasError: false, message}', async () => {
    const [net] = (await req('GET', '/api/getLocalnets', { token: admin })).body.data;
    h.appliance.db
      .prepare('UPDATE local_networks SET last_discovery_at = ? WHERE id = ?')
      .run(Date.UTC(2026, 10, 21, 12), net.id);
    expect((await req('GET', '/api/getLocalnets', { token: admin })).body.data[0].timestamp).toBe(
      Date.UTC(2026, 10, 21, 12) / 1000,
    );
    const res = await post('/api/resetDiscoveryTs', { id: net.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 201,
      hasError: false,
      message: 'Discovery timestamp reset (discovery is disabled for this network)',
    });
    expect(
      (await req('GET', '/api/getLocalnets', { token: admin })).body.data[0].timestamp,
    ).toBeNull();
    expect((await post('/api/resetDiscoveryTs', { id: 999_999 })).body).toEqual({
      status: false,
      hasError: true,
      message: 'Local network not found',
    });
    expect((await post('/api/resetDiscoveryTs', {})).body).toEqual({
      status: false,
      hasError: true,
      message: 'The id field is required.',
    });
  });

  it('deleteLocalnet removes a network and its credential links; pending devices found there stay', async () => {
    const created = await post('/api/updateLocalnet', {
      data: [{ label: 'gone', network: '127.0.7.0', broadcast: '127.0.7.255', cred_ids: [credA] }],
    });
    const id = created.body.data[0].id as number;
    const now = Date.now();
    h.appliance.db
      .prepare(
        `INSERT INTO pending_devices (label, ip_address, profile, source, net_id, first_seen_at, last_seen_at) VALUES ('p', '127.0.7.7', 'dash_generic', 'discovery', ?, ?, ?)`,
      )
      .run(id, now, now);
    h.appliance.db
      .prepare('INSERT INTO discovery_status (net_id, start_time, end_time) VALUES (?, ?, ?)')
      .run(id, now, now);
    const res = await post('/api/deleteLocalnet', { id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 201, hasError: false, message: 'Local network deleted' });
    expect(
      h.appliance.db
        .prepare('SELECT count(*) AS n FROM local_network_credentials WHERE net_id = ?')
        .get(id),
    ).toEqual({ n: 0 });
    expect(
      h.appliance.db.prepare('SELECT count(*) AS n FROM discovery_status WHERE net_id = ?').get(id),
    ).toEqual({ n: 0 });
    expect(
      h.appliance.db
        .prepare(`SELECT net_id FROM pending_devices WHERE ip_address = '127.0.7.7'`)
        .get(),
    ).toEqual({ net_id: null });
    expect((await post('/api/deleteLocalnet', { id })).body).toEqual({
      status: false,
      hasError: true,
      message: 'Local network not found',
    });
    expect((await post('/api/deleteLocalnet', { id: 0 })).body).toEqual({
      status: false,
      hasError: true,
      message: 'The id field must be at least 1.',
    });
  });

  it('deleting a credential set removes it from the networks that used it', async () => {
    const created = await post('/api/updateLocalnet', {
      data: [
        {
          label: 'creds',
          network: '127.0.8.0',
          broadcast: '127.0.8.255',
          cred_ids: [credA, credB],
        },
      ],
    });
    await post('/api/addEditCredential', { action: 'delete', id: credA });
    const list = (await req('GET', '/api/getLocalnets', { token: admin })).body.data;
    expect(list.find((n: { id: number }) => n.id === created.body.data[0].id).cred_ids).toEqual([
      credB,
    ]);
  });
});
