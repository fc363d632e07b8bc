/**
 * Route snapshots: the exact answers (status, content type, body bytes) of every route of the
 * devices, pending, credentials, walks, local networks, dashboards, trackers and URL-monitor
 * families, over a deterministic fixture set, compared with `route-snapshots.json`. The file was
 * recorded from the code before the devices/trackers seam was re-cut (issue 10): a difference is
 * a change of behaviour, a bug unless the commit that changes the file says why.
 *
 * Determinism: the appliance is built with a fixed clock (every timestamp it writes or answers is
 * derived from NOW) and its engines are never started (no poller, crawl or sweep runs); tracker
 * samples, rollups, walks, pending devices and discovery sweeps are inserted with SQL at fixed
 * times and values. Ids follow from the fixed order of the steps. Nothing in these answers is
 * random except the port of the test's snmpd in one message (see `normalise`); access tokens
 * are used in requests and never answered here.
 *
 * The cases that need a real SNMP agent (testSnmp success) run only where snmpd is installed.
 *
 * Regenerate (only when a change of an answer is intended, and say why in the commit):
 *   UPDATE_ROUTE_SNAPSHOTS=1 npx vitest run test/contract/route-snapshots.test.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Appliance } from '../../appliance-core/src/app.js';
import { loadConfig } from '../../appliance-core/src/platform/config/config.js';
import type { Clock } from '../../appliance-core/src/platform/time/time.js';
import { havePeer } from '../harness/peers.js';
import { startSnmpd, type Snmpd } from '../harness/snmpd.js';

const SNAPSHOT_FILE = new URL('./route-snapshots.json', import.meta.url);
const UPDATE = process.env.UPDATE_ROUTE_SNAPSHOTS === '1';
const ADMIN_PASSWORD = 'Admin-Passw0rd';
/** Marks the cases that run only where snmpd is installed. */
const NEEDS_SNMPD = '(snmpd)';
const FAMILIES = new Set(['devices', 'trackers', 'dashboards', 'url-monitors', 'discovery']);

const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
const fixedClock: Clock = { now: () => NOW };

type Who = 'admin' | 'scoped' | 'viewer' | 'nobody' | 'anonymous';

interface Recorded {
  name: string;
  status: number;
  contentType: string | null;
  /** The parsed JSON body, when the raw body is exactly JSON.stringify of it. */
  body?: unknown;
  /** The raw body otherwise (empty bodies, text, JSON with other formatting). */
  text?: string;
}

interface SnapshotFile {
  cases: Recorded[];
  /** `METHOD path` of every operation in /openapi.json (schemas change; routes must not vanish). */
  openapi: string[];
}

const spec = JSON.parse(
  fs.readFileSync(new URL('./spec-endpoints.json', import.meta.url), 'utf8'),
) as { method: string; path: string; feature: string }[];

let appliance: Appliance;
let dataDir: string;
let snmpd: Snmpd | null = null;
const tokens: Partial<Record<Who, string>> = {};
const recorded: Recorded[] = [];
/** `METHOD /api/route/:pattern` of every case, for the coverage check. */
const hit = new Set<string>();
let declared: { method: string; url: string }[] = [];

/**
 * The one nondeterministic value in these answers: the UDP port of the test's snmpd (a free
 * port picked at start) in an SNMP timeout message.
 */
function normalise(text: string): string {
  return snmpd ? text.split(`:${snmpd.port}`).join(':<snmpd-port>') : text;
}

function routeOf(method: string, url: string): string | null {
  const pathOnly = url.split('?')[0] as string;
  const candidates = declared.filter((r) => r.method === method);
  const exact = candidates.find((r) => r.url === pathOnly);
  if (exact) return `${method} ${exact.url}`;
  const param = candidates.find((r) =>
    new RegExp(`^${r.url.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`).test(pathOnly),
  );
  return param ? `${method} ${param.url}` : null;
}

async function call(
  name: string,
  who: Who,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = who === 'anonymous' ? undefined : tokens[who];
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await appliance.app.inject({
    method: method as never,
    url,
    headers,
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  const route = routeOf(method, url);
  if (route) hit.add(route);
  const base = `${method} ${url} [${who}]${name ? ` ${name}` : ''}`;
  const seen = recorded.filter((r) => r.name === base || r.name.startsWith(`${base} #`)).length;
  const key = seen === 0 ? base : `${base} #${seen + 1}`;
  const contentType = (res.headers['content-type'] as string | undefined) ?? null;
  const text = normalise(res.body);
  let json: any = undefined;
  const entry: Recorded = { name: key, status: res.statusCode, contentType };
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (json !== undefined && JSON.stringify(json) === text) entry.body = json;
  else entry.text = text;
  recorded.push(entry);
  return { status: res.statusCode, json };
}

const get = (who: Who, url: string, name = '') => call(name, who, 'GET', url);
const post = (who: Who, url: string, body?: unknown, name = '') =>
  call(name, who, 'POST', url, body);
const del = (who: Who, url: string, body?: unknown, name = '') =>
  call(name, who, 'DELETE', url, body);

// --- fixture helpers (SQL at fixed times and values) -------------------------------------------

const db = () => appliance.db;
const sql = (text: string, ...params: unknown[]) =>
  db()
    .prepare(text)
    .run(...params);

type Kind = 'latency' | 'port' | 'disk' | 'interface' | 'oid';
const SAMPLE_INSERT: Record<Kind, string> = {
  latency: 'INSERT INTO latency_samples (tracker_id, ts, latency, loss) VALUES (?, ?, ?, ?)',
  port: 'INSERT INTO port_samples (tracker_id, ts, latency) VALUES (?, ?, ?)',
  disk: 'INSERT INTO disk_samples (tracker_id, ts, available, total) VALUES (?, ?, ?, ?)',
  interface:
    'INSERT INTO interface_samples (tracker_id, ts, in_bps, out_bps, oper_status) VALUES (?, ?, ?, ?, ?)',
  oid: 'INSERT INTO oid_samples (tracker_id, ts, value) VALUES (?, ?, ?)',
};

/** A raw sample and (numeric kinds) its 5-minute and 1-hour rollup buckets, as the pollers write them. */
function sample(
  kind: Kind,
  trackerId: number,
  ts: number,
  a: number,
  b = 0,
  extra?: string | number,
) {
  const answered = !(kind === 'latency' || kind === 'port') || a >= 0;
  if (kind === 'port') b = a < 0 ? 1 : 0;
  if (kind === 'latency' || kind === 'disk') sql(SAMPLE_INSERT[kind], trackerId, ts, a, b);
  else if (kind === 'port') sql(SAMPLE_INSERT[kind], trackerId, ts, a);
  else if (kind === 'interface') sql(SAMPLE_INSERT[kind], trackerId, ts, a, b, extra ?? null);
  else sql(SAMPLE_INSERT[kind], trackerId, ts, String(extra ?? a));
  if (kind === 'oid' && typeof extra === 'string' && !/^-?\d+(\.\d+)?$/.test(extra)) return;
  for (const resolution of [5 * MIN, HOUR]) {
    sql(
      `INSERT INTO sample_rollups (kind, tracker_id, resolution, ts, n, sum_a, n_a, sum_b) VALUES (?, ?, ?, ?, 1, ?, ?, ?)
       ON CONFLICT (kind, tracker_id, resolution, ts) DO UPDATE SET n = n + 1, sum_a = sum_a + excluded.sum_a, n_a = n_a + excluded.n_a, sum_b = sum_b + excluded.sum_b`,
      kind,
      trackerId,
      resolution,
      ts - (ts % resolution),
      answered ? a : 0,
      answered ? 1 : 0,
      b,
    );
  }
}

async function createUser(username: string, permissions: string[], tags?: string[]) {
  const admin = tokens.admin as string;
  const created = await appliance.app.inject({
    method: 'POST',
    url: '/api/createUser',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    payload: JSON.stringify({
      first_name: 'Snap',
      last_name: username,
      email: `${username}@example.test`,
      username,
      password: `Passw0rd-${username}`,
    }),
  });
  if (created.json().status !== 201) throw new Error(`createUser: ${created.body}`);
  const id = (
    db().prepare('SELECT id FROM users WHERE username = ?').get(username) as { id: number }
  ).id;
  const saved = await appliance.app.inject({
    method: 'POST',
    url: '/api/saveUser',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    payload: JSON.stringify({
      user: id,
      permissions,
      ...(tags ? { tags: tags.map((value) => ({ value })) } : {}),
    }),
  });
  if (saved.json().status !== 201) throw new Error(`saveUser: ${saved.body}`);
  return login(username, `Passw0rd-${username}`);
}

async function login(email: string, password: string): Promise<string> {
  const res = await appliance.app.inject({
    method: 'POST',
    url: '/api/login',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password }),
  });
  const token = res.json().access_token as string | undefined;
  if (!token) throw new Error(`login failed: ${res.body}`);
  return token;
}

// --- the scenario ------------------------------------------------------------------------------

async function scenario(): Promise<void> {
  const secrets = appliance.ctx.secrets;

  // Empty states first.
  await get('admin', '/api/getLocalnets', 'none yet');
  await get('admin', '/api/getCredentials', 'none yet');
  await get('admin', '/api/getDashboards', 'none yet');
  await get('admin', '/api/getUrls', 'none yet');
  await get('admin', '/api/disk/all', 'none yet');
  await get('admin', '/api/latency/all', 'only the appliance');
  await post('admin', '/api/getDevicesPending', undefined, 'none yet');

  // Devices: SNMP v2c (east), SNMP v3 authPriv (west), IPv6 without SNMP (east + core), untagged.
  await post('admin', '/api/device/set', {
    ip_address: '127.0.5.2',
    label: 'east-router',
    profile: 'dash_network_snmp',
    enable_snmp: true,
    snmpconfig: { snmp_version: '2c', snmp_port: 16161, snmp_community: 'east-community' },
    tags: [{ slug: 'east', name: 'East site', type: 'device' }],
  });
  await post('admin', '/api/device/set', {
    ip_address: '127.0.5.3',
    label: 'west-server',
    profile: 'dash_linux_snmp',
    enable_snmp: 1,
    snmpconfig: {
      snmp_version: 3,
      snmp_v3_security: 'authPriv',
      authuser: 'monitor',
      authpass: 'auth-secret-1',
      authprot: 'sha-256',
      privpass: 'priv-secret-1',
      privprot: 'AES',
    },
    tags: ['west'],
  });
  await post('admin', '/api/device/set', {
    ip_address: '::0001',
    label: 'v6-host',
    profile: 'dash_generic',
    enable_agent: 'true',
    agent_uuid: 'agent-6',
    tags: ['east', { slug: 'core' }],
  });
  await post('admin', '/api/device/set', {
    ip_address: '127.0.5.5',
    label: 'untagged',
    profile: 'dash_windows_wmi',
  });
  // Validation, duplicates and updates.
  await post(
    'admin',
    '/api/device/set',
    { ip_address: 'not-an-ip', label: ' ', profile: 'nope' },
    'invalid',
  );
  await post('admin', '/api/device/set', { label: 'x', profile: 'dash_generic' }, 'schema');
  await post(
    'admin',
    '/api/device/set',
    { ip_address: '127.0.5.2', label: 'dup', profile: 'dash_generic' },
    'duplicate ip',
  );
  await post(
    'admin',
    '/api/device/set',
    {
      id: 3,
      ip_address: '127.0.5.3',
      label: 'west-server',
      profile: 'dash_linux_snmp',
      enable_snmp: true,
      snmpconfig: { authpass: { __encrypted__: true }, privpass: '' },
    },
    'update keeps secrets',
  );
  await post(
    'admin',
    '/api/device/set',
    { id: 1, ip_address: '127.0.0.2', label: 'appliance', profile: 'dash_appliance' },
    'appliance ip',
  );
  await post(
    'admin',
    '/api/device/set',
    {
      ip_address: '127.0.5.9',
      label: 'v3-incomplete',
      profile: 'dash_generic',
      enable_snmp: true,
      snmpconfig: { snmp_version: 3 },
    },
    'v3 incomplete',
  );

  tokens.scoped = await createUser(
    'scoped',
    ['devices', 'write_devices', 'tools', 'urls', 'system'],
    ['east'],
  );
  tokens.viewer = await createUser('viewer', ['devices']);
  tokens.nobody = await createUser('nobody', []);

  await post(
    'scoped',
    '/api/device/set',
    { ip_address: '127.0.5.6', label: 'scoped-made', profile: 'dash_generic', tags: ['east'] },
    'in scope',
  );
  await post(
    'scoped',
    '/api/device/set',
    { ip_address: '127.0.5.7', label: 'scoped-untagged', profile: 'dash_generic' },
    'no tag',
  );
  await post(
    'scoped',
    '/api/device/set',
    { ip_address: '127.0.5.8', label: 'scoped-west', profile: 'dash_generic', tags: ['west'] },
    'other tag',
  );
  await post(
    'scoped',
    '/api/device/set',
    { id: 3, ip_address: '127.0.5.3', label: 'steal', profile: 'dash_generic' },
    'out of scope id',
  );

  // Reachability as the latency poller records it.
  sql("UPDATE devices SET reachability = 'up', reachability_at = ? WHERE id = 2", NOW - 2 * MIN);
  sql("UPDATE devices SET reachability = 'down', reachability_at = ? WHERE id = 3", NOW - 3 * MIN);

  // SNMP configuration and crawl results the crawl would have written.
  sql(
    "UPDATE device_snmp SET sys_name = 'east-router.lab', sys_descr = 'Linux east 6.1', sys_object_id = '1.3.6.1.4.1.8072.3.2.10', last_crawl_at = ?, last_crawl_status = 'ok' WHERE device_id = 2",
    NOW - HOUR,
  );
  // Interface trackers (crawl-created): full data, nulls, a loopback without logging.
  const iface = (device: number, index: number, name: string, extra: Record<string, unknown>) =>
    Number(
      sql(
        `INSERT INTO interface_trackers (device_id, interface, name, description, interval, enable_logging, if_descr, if_alias, if_type, mtu, speed, mac, admin_status, oper_status, last_seen_at, created_at, updated_at, in_bps, out_bps)
         VALUES (@device, @index, @name, @description, 300, @logging, @descr, NULL, @type, 1500, @speed, @mac, @admin, @oper, @seen, @seen, @seen, @in_bps, @out_bps)`,
        {
          device,
          index,
          name,
          description: `${name} uplink`,
          logging: 1,
          descr: name,
          type: 6,
          speed: 1_000_000_000,
          mac: '52:54:00:12:34:56',
          admin: 1,
          oper: 1,
          seen: NOW - HOUR,
          in_bps: 1234.5,
          out_bps: 678.25,
          ...extra,
        },
      ).lastInsertRowid,
    );
  const eth0 = iface(2, 2, 'eth0', {});
  const lo = iface(2, 1, 'lo', {
    logging: 0,
    type: 24,
    speed: 10_000_000,
    mac: null,
    description: '',
  });
  const ethNull = iface(2, 3, 'eth1', {
    type: null,
    speed: null,
    mac: null,
    admin: null,
    oper: null,
    in_bps: null,
    out_bps: null,
  });
  const westIf = iface(3, 2, 'ens3', { oper: 2 });
  // Disk trackers (crawl-created with readings).
  const disk = (
    device: number,
    index: number,
    name: string,
    available: number | null,
    total: number | null,
  ) =>
    Number(
      sql(
        `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, interval, enable_logging, available, total, storage_type, allocation_units, source, last_seen_at, created_at, updated_at, first_sample_at)
         VALUES (?, ?, ?, ?, 600, 1, ?, ?, '1.3.6.1.2.1.25.2.1.4', 4096, 'crawl', ?, ?, ?, ?)`,
        device,
        name,
        index,
        `1.3.6.1.2.1.25.2.3.1.6.${index}`,
        available,
        total,
        NOW - HOUR,
        NOW - 3 * 24 * HOUR,
        NOW - HOUR,
        NOW - 3 * 24 * HOUR,
      ).lastInsertRowid,
    );
  const rootDisk = disk(2, 31, '/', 21_474_836_480, 53_687_091_200);
  const dataDisk = disk(2, 32, '/data', null, null);
  const westDisk = disk(3, 31, 'C:\\', 1_000_000_000, 2_000_000_000);

  // Walks (crawl and live).
  const walk = (device: number, ts: number, kind: string, varbinds: unknown[]) =>
    sql(
      `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, truncated, walk) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      device,
      ts,
      kind,
      varbinds.length,
      1234,
      kind === 'live' ? 1 : 0,
      JSON.stringify(varbinds),
    );
  walk(2, NOW - 2 * HOUR, 'crawl', [
    { oid: '1.3.6.1.2.1.1.5.0', type: 'OctetString', value: 'east-router.lab' },
    { oid: '1.3.6.1.2.1.1.3.0', type: 'TimeTicks', value: 123456 },
  ]);
  walk(2, NOW - HOUR, 'live', [
    { oid: '1.3.6.1.2.1.2.2.1.6.2', type: 'Hex-STRING', value: '52 54 00 12 34 56' },
    { oid: '1.3.6.1.2.1.1.1.0', type: 'OctetString', value: '<b>device text</b>' },
  ]);
  walk(3, NOW - 5 * HOUR, 'crawl', []);

  // Trackers through their routes (answers recorded), then readings and samples with SQL.
  await post(
    'admin',
    '/api/latency/set',
    { label: 'east ping', deviceId: 2, interval: 30, timeout: 500, lossout: 50 },
    'create',
  );
  await post('admin', '/api/latency/set', { label: 'west ping', deviceId: 3 }, 'create defaults');
  await post('admin', '/api/latency/set', { label: 'again', deviceId: 2 }, 'duplicate');
  await post('admin', '/api/latency/set', { deviceId: 4 }, 'no label');
  await post('admin', '/api/latency/set', { label: 'x' }, 'no device');
  await post('admin', '/api/latency/set', { label: 'x', deviceId: 999 }, 'missing device');
  await post('admin', '/api/latency/set', { id: 3, timeout: 750 }, 'update');
  await post('admin', '/api/latency/set', { id: 999, timeout: 750 }, 'update missing');
  await post('admin', '/api/latency/set', { label: 'x', deviceId: 2, timeout: 0 }, 'schema');
  await post('scoped', '/api/latency/set', { label: 'scoped ping', deviceId: 4 }, 'in scope');
  await post('scoped', '/api/latency/set', { label: 'west', deviceId: 5 }, 'out of scope device');
  await post('scoped', '/api/latency/set', { id: 3, label: 'steal' }, 'out of scope id');

  await post(
    'admin',
    '/api/port/set',
    { deviceId: 2, port: 22, label: 'ssh', interval: 30 },
    'create',
  );
  await post(
    'admin',
    '/api/port/set',
    { deviceId: 2, port: 443, name: 'https' },
    'create with name',
  );
  await post(
    'admin',
    '/api/port/set',
    { deviceId: 2, port: 22, interval: 45 },
    'natural key update',
  );
  await post('admin', '/api/port/set', { deviceId: 3, port: 3389 }, 'create west');
  await post('admin', '/api/port/set', { deviceId: 2 }, 'no port');
  await post('admin', '/api/port/set', { id: 2, enable_logging: '0' }, 'update by id');
  await post('admin', '/api/port/set', { id: 99, label: 'x' }, 'update missing');
  await post('admin', '/api/port/set', { deviceId: 2, port: 70000 }, 'schema');
  await post('scoped', '/api/port/set', { deviceId: 3, port: 80 }, 'out of scope device');

  await post(
    'admin',
    '/api/oid/set',
    { deviceId: 2, oid: '.1.3.6.1.2.1.1.3.0', datatype: 'I', label: 'uptime', interval: 60 },
    'create integer',
  );
  await post(
    'admin',
    '/api/oid/set',
    { deviceId: 2, oid: '1.3.6.1.2.1.1.5.0', datatype: 'S' },
    'create string no label',
  );
  await post(
    'admin',
    '/api/oid/set',
    { deviceId: 3, oid: '1.3.6.1.4.1.2021.10.1.3.1', datatype: 'S', label: 'load' },
    'create west',
  );
  await post('admin', '/api/oid/set', { deviceId: 2, datatype: 'S' }, 'no oid');
  await post('admin', '/api/oid/set', { deviceId: 2, oid: '1.3.6' }, 'no datatype');
  await post(
    'admin',
    '/api/oid/set',
    { id: 1, label: 'system uptime', enable_logging: false },
    'update',
  );
  await post('admin', '/api/oid/set', { deviceId: 2, oid: 'abc', datatype: 'X' }, 'schema');

  await post('admin', '/api/service/set', { deviceId: 3, name: 'Spooler' }, 'create');
  await post(
    'admin',
    '/api/service/set',
    { deviceId: 3, name: 'W32Time', oid: 'custom.oid', interval: 300, enable_logging: 0 },
    'create with oid',
  );
  await post('admin', '/api/service/set', { deviceId: 2, name: 'sshd' }, 'create east');
  await post('admin', '/api/service/set', { deviceId: 3 }, 'no name');
  await post('admin', '/api/service/set', { id: 4, label: 'Print spooler' }, 'update label');
  await post('admin', '/api/service/set', { id: 1, label: 'not a service' }, 'update an oid id');
  await post('admin', '/api/service/set', { deviceId: 3, name: 'bad!name' }, 'schema');

  await post(
    'admin',
    '/api/disk/set',
    {
      deviceId: 2,
      path: '1.3.6.1.2.1.25.2.3.1.6.40',
      name: 'manual disk',
      interval: 900,
      enable_logging: 'false',
    },
    'create',
  );
  await post(
    'admin',
    '/api/disk/set',
    { deviceId: 2, path: '1.3.6.1.2.1.25.2.3.1.6.31', name: 'dup index' },
    'duplicate index',
  );
  await post('admin', '/api/disk/set', { deviceId: 2, name: 'x' }, 'no path');
  await post(
    'admin',
    '/api/disk/set',
    { deviceId: 2, path: '1.3.6.1.2.1.25.2.3.1.6.41' },
    'no name',
  );
  await post('admin', '/api/disk/set', { id: rootDisk, name: 'root', interval: 1200 }, 'update');
  await post('admin', '/api/disk/set', { id: 999, name: 'x' }, 'update missing');
  await post('admin', '/api/disk/set', { deviceId: 2, path: 'not.an.oid', name: 'x' }, 'schema');
  await post('scoped', '/api/disk/set', { id: westDisk, name: 'steal' }, 'out of scope id');

  await post(
    'admin',
    '/api/interfaces/set',
    { id: eth0, description: 'Uplink to core', interval: 60 },
    'update',
  );
  await post('admin', '/api/interfaces/set', { id: lo, enable_logging: true }, 'enable logging');
  await post('admin', '/api/interfaces/set', { id: 999 }, 'missing');
  await post('admin', '/api/interfaces/set', {}, 'schema');
  await post('scoped', '/api/interfaces/set', { id: westIf, description: 'x' }, 'out of scope');

  await post('admin', '/api/interfaces/toggleupdown', { id: eth0 }, 'create alert');
  await post('admin', '/api/interfaces/toggleupdown', { id: westIf }, 'create west alert');
  await post('admin', '/api/interfaces/toggleupdown', { id: westIf }, 'flip');
  await post('admin', '/api/interfaces/toggleupdown', { id: 999 }, 'missing');
  await post('scoped', '/api/interfaces/toggleupdown', { id: westIf }, 'out of scope');

  // Ids: latency 1 (appliance), 2 (east), 3 (west), 4 (scoped device 4); ports 1 (22), 2 (443),
  // 3 (3389); oids 1, 2 (east), 3 (west); services 4, 5 (west), 6 (east); disks rootDisk,
  // dataDisk, westDisk, 4 (manual).
  sql(
    'UPDATE latency_trackers SET latency = 0.123, loss = 0, last_polled_at = ?, first_sample_at = ? WHERE id = 2',
    NOW - MIN,
    NOW - 72 * HOUR,
  );
  sql(
    'UPDATE latency_trackers SET latency = -1, loss = 100, last_polled_at = ? WHERE id = 1',
    NOW - MIN,
  );
  sql(
    "UPDATE port_trackers SET state = 'open', latency = 0.5, last_polled_at = ? WHERE id = 1",
    NOW - MIN,
  );
  sql(
    "UPDATE port_trackers SET state = 'closed', latency = -1, last_polled_at = ? WHERE id = 2",
    NOW - MIN,
  );
  sql("UPDATE oid_trackers SET value = '123456', last_polled_at = ? WHERE id = 1", NOW - 2 * MIN);
  sql(
    "UPDATE oid_trackers SET value = 'east-router.lab', last_polled_at = ? WHERE id = 2",
    NOW - 2 * MIN,
  );
  sql("UPDATE oid_trackers SET value = 'Running', last_polled_at = ? WHERE id = 4", NOW - 2 * MIN);
  for (let i = 0; i < 72; i++) {
    const ts = NOW - i * HOUR - 7 * MIN;
    sample(
      'latency',
      2,
      ts,
      i % 9 === 0 ? -1 : 0.1 + (i % 5) * 0.0375,
      i % 9 === 0 ? 100 : (i % 4) * 12.5,
    );
  }
  for (let i = 0; i < 30; i++) {
    const ts = NOW - i * 20 * MIN - MIN;
    sample('latency', 2, ts, 0.25 + (i % 3) * 0.333333, 0);
    sample('port', 1, ts, i % 7 === 3 ? -1 : 0.4 + (i % 4) * 0.1111);
    sample('port', 2, ts, -1, 0);
    sample('disk', rootDisk, ts, 21_474_836_480 - i * 10_485_760, 53_687_091_200);
    sample('interface', eth0, ts, 1000.4 + i * 10.25, 500.6 + i * 3.3, i === 5 ? 2 : 1);
    sample('oid', 1, ts, 123456 - i * 1200, 0, String(123456 - i * 1200));
    sample('oid', 2, ts, 0, 0, i % 2 ? 'east-router.lab' : 'east-router');
    sample('oid', 4, ts, 0, 0, 'Running');
  }
  for (let i = 0; i < 10; i++) {
    const ts = NOW - i * 24 * HOUR - 30 * MIN;
    sample('disk', rootDisk, ts - 3 * HOUR, 20_000_000_000 - i * 500_000_000, 53_687_091_200);
  }
  sample('disk', westDisk, NOW - 5 * MIN, 1_000_000_000, 2_000_000_000);
  // Legacy alerts on other tracker kinds (alerting fills these later).
  const alert = (
    device: number,
    kind: string,
    tracker: number,
    fired: number | null,
    count: number,
    active: number,
  ) =>
    sql(
      `INSERT INTO legacy_alerts (device_id, tracker_kind, tracker_id, alert_type, active, last_state, last_fired_at, fired_count, created_at, updated_at) VALUES (?, ?, ?, 'threshold', ?, 3, ?, ?, ?, ?)`,
      device,
      kind,
      tracker,
      active,
      fired,
      count,
      NOW - 10 * HOUR,
      NOW - HOUR,
    );
  alert(2, 'latency', 2, NOW - 30 * MIN, 4, 1);
  alert(2, 'disk', rootDisk, null, 0, 0);
  alert(2, 'port', 1, NOW - 2 * HOUR, 1, 1);
  alert(2, 'oid', 1, null, 0, 1);
  alert(3, 'service', 4, NOW - 3 * HOUR, 2, 1);

  // Credentials.
  await post(
    'admin',
    '/api/addEditCredential',
    {
      action: 'addedit',
      label: 'lab v3',
      authuser: 'monitor',
      snmp_authprot: 'SHA',
      snmp_privprot: 'aes128',
      authpass: 'auth-secret-2',
      snmp_privpass: 'priv-secret-2',
      snmp_community: 'public',
    },
    'create',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    {
      action: 'addedit',
      label: 'second',
      authuser: 'ops',
      snmp_authprot: 'sha512',
      snmp_privprot: 'AES256',
      snmp_port: 1161,
    },
    'create second',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    {
      action: 'addedit',
      id: 1,
      label: 'lab v3 (edited)',
      authuser: 'monitor',
      snmp_authprot: 'SHA',
      snmp_privprot: 'AES',
      authpass: { __encrypted__: true },
    },
    'update',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    { action: 'addedit', label: '', authuser: 'x', snmp_authprot: 'SHA', snmp_privprot: 'AES' },
    'no label',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    { action: 'addedit', label: 'x', authuser: 'x', snmp_authprot: 'SHA3', snmp_privprot: 'AES' },
    'bad authprot',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    {
      action: 'addedit',
      label: 'x',
      authuser: 'x',
      snmp_authprot: 'SHA',
      snmp_privprot: 'AES',
      authpass: 'short',
    },
    'short pass',
  );
  await post(
    'admin',
    '/api/addEditCredential',
    {
      action: 'addedit',
      id: 99,
      label: 'x',
      authuser: 'x',
      snmp_authprot: 'SHA',
      snmp_privprot: 'AES',
    },
    'update missing',
  );
  await post('admin', '/api/addEditCredential', { action: 'frobnicate' }, 'unknown action');
  await post('admin', '/api/addEditCredential', { action: 'delete' }, 'delete without id');
  await post('admin', '/api/addEditCredential', {}, 'schema');
  await post('viewer', '/api/addEditCredential', { action: 'delete', id: 1 }, 'denied');

  // Local networks and discovery sweeps.
  await post(
    'admin',
    '/api/updateLocalnet',
    {
      data: [
        {
          label: 'lab',
          network: '10.20.0.0',
          broadcast: '10.20.0.255',
          interval: 3600,
          enable_discovery: true,
          enable_portscan: '1',
          cred_ids: [2, 1],
        },
        { label: 'dmz', network: '192.168.50.0', broadcast: '192.168.50.127' },
      ],
    },
    'create two',
  );
  await post(
    'admin',
    '/api/updateLocalnet',
    {
      data: [
        {
          id: 2,
          label: 'dmz (renamed)',
          network: '192.168.50.0',
          broadcast: '192.168.50.255',
          alerts: 1,
        },
      ],
    },
    'update',
  );
  await post(
    'admin',
    '/api/updateLocalnet',
    {
      data: [
        { label: 'ok', network: '10.0.0.0', broadcast: '10.0.0.1' },
        { label: 'too big', network: '10.0.0.0', broadcast: '10.2.0.0' },
      ],
    },
    'batch with one bad row',
  );
  await post(
    'admin',
    '/api/updateLocalnet',
    { data: [{ label: 'x', network: '10.0.0.9', broadcast: '10.0.0.1' }] },
    'reversed',
  );
  await post(
    'admin',
    '/api/updateLocalnet',
    { data: [{ label: 'x', network: '10.0.0.0', broadcast: '10.0.0.1', cred_ids: [77] }] },
    'unknown credential',
  );
  await post(
    'admin',
    '/api/updateLocalnet',
    { data: [{ id: 42, label: 'x', network: '10.0.0.0', broadcast: '10.0.0.1' }] },
    'unknown id',
  );
  await post('admin', '/api/updateLocalnet', { data: 'nope' }, 'schema');
  sql('UPDATE local_networks SET last_discovery_at = ? WHERE id = 1', NOW - 30 * MIN);
  sql(
    'INSERT INTO discovery_status (net_id, start_time, end_time, addresses, alive, snmp_responders, new_pending) VALUES (1, ?, ?, 254, 3, 1, 2)',
    NOW - 2 * HOUR,
    NOW - 2 * HOUR + 40_000,
  );
  sql(
    'INSERT INTO discovery_status (net_id, start_time, end_time, addresses, alive, snmp_responders, new_pending) VALUES (1, ?, ?, 254, 4, 2, 1)',
    NOW - 30 * MIN,
    NOW - 30 * MIN + 35_000,
  );
  sql(
    'INSERT INTO discovery_status (net_id, start_time, end_time, addresses, alive) VALUES (2, ?, NULL, 128, 0)',
    NOW - 5 * MIN,
  );

  // Pending devices (found by discovery, announced by an agent, hidden).
  const pending = (fields: Record<string, unknown>) =>
    Number(
      sql(
        `INSERT INTO pending_devices (label, ip_address, profile, enable_snmp, enable_agent, agent_uuid, last_checkin_at, agent_version, os_version, snmp_version, snmp_port, snmp_community, snmp_v3_security, authuser, authpass, authprot, privpass, privprot, hidden, source, net_id, open_ports, sys_descr, first_seen_at, last_seen_at)
         VALUES (@label, @ip, @profile, @snmp, @agent, @uuid, @checkin, @agent_version, @os_version, @version, 161, @community, @security, @authuser, @authpass, @authprot, @privpass, @privprot, @hidden, @source, @net, @ports, @descr, @seen, @seen)`,
        {
          profile: 'dash_generic',
          snmp: 0,
          agent: 0,
          uuid: null,
          checkin: null,
          agent_version: null,
          os_version: null,
          version: 2,
          community: null,
          security: null,
          authuser: null,
          authpass: null,
          authprot: null,
          privpass: null,
          privprot: null,
          hidden: 0,
          source: 'discovery',
          net: 1,
          ports: null,
          descr: null,
          seen: NOW - HOUR,
          ...fields,
        },
      ).lastInsertRowid,
    );
  const pendingSnmp = pending({
    label: 'switch-1',
    ip: '10.20.0.7',
    profile: 'dash_network_snmp',
    snmp: 1,
    community: secrets.seal('public'),
    ports: '[22,161]',
    descr: 'Cisco IOS',
  });
  const pendingV3 = pending({
    label: 'router-v3',
    ip: '10.20.0.8',
    snmp: 1,
    version: 3,
    security: 'authPriv',
    authuser: 'monitor',
    authpass: secrets.seal('auth-secret-3'),
    authprot: 'SHA',
    privpass: secrets.seal('priv-secret-3'),
    privprot: 'AES',
  });
  const pendingAgent = pending({
    label: 'WIN-HOST',
    ip: '10.20.0.9',
    profile: 'dash_windows_wmi',
    agent: 1,
    uuid: 'a6f1c3d2',
    checkin: NOW - 10 * MIN,
    agent_version: '2.1.0',
    os_version: 'Windows Server 2022',
    source: 'agent',
    net: null,
  });
  const pendingHidden = pending({ label: 'hidden-host', ip: '10.20.0.10', hidden: 1 });
  const pendingRemove = pending({ label: 'to-remove', ip: '10.20.0.11' });
  const eastTag = (db().prepare("SELECT id FROM tags WHERE slug = 'east'").get() as { id: number })
    .id;
  sql('INSERT INTO pending_device_tags (pending_id, tag_id) VALUES (?, ?)', pendingSnmp, eastTag);
  sql('INSERT INTO pending_device_tags (pending_id, tag_id) VALUES (?, ?)', pendingRemove, eastTag);

  // URL trackers and their checks.
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { url: 'https://intranet.example.test/health', pattern: 'OK', interval: '120' } },
    'create',
  );
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { url: 'http://127.0.0.1:9/', pattern: 'x' } },
    'create default interval',
  );
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { id: 2, url: 'http://127.0.0.1:9/status', pattern: 'up', interval: 60 } },
    'update',
  );
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { url: 'ftp://x', pattern: 'y' } },
    'bad scheme',
  );
  await post('admin', '/api/saveUrl', { newtracker: { url: '', pattern: '' } }, 'missing');
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { url: 'http://[bad', pattern: 'y' } },
    'not a url',
  );
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { url: 'http://x.test', pattern: 'y', interval: -5 } },
    'bad interval',
  );
  await post(
    'admin',
    '/api/saveUrl',
    { newtracker: { id: 77, url: 'http://x.test', pattern: 'y' } },
    'unknown id',
  );
  await post('admin', '/api/saveUrl', {}, 'no tracker');
  sql(
    "UPDATE url_trackers SET timestamp = ?, latency = 42.5, message = 'OK', status = 200, ssldate = '2026-06-01 00:00:00', ok = 1 WHERE id = 1",
    Math.floor((NOW - MIN) / 1000),
  );
  sql(
    "UPDATE url_trackers SET timestamp = ?, latency = -1, message = 'connect ECONNREFUSED', status = NULL, ok = 0 WHERE id = 2",
    Math.floor((NOW - MIN) / 1000),
  );
  for (let i = 0; i < 20; i++) {
    const ts = NOW - i * 30 * MIN - MIN;
    sql(
      'INSERT INTO url_samples (tracker_id, ts, ok, latency, http_status, ssl_expires_at) VALUES (1, ?, ?, ?, ?, ?)',
      ts,
      i % 6 === 0 ? 0 : 1,
      i % 6 === 0 ? -1 : 40 + (i % 5) * 3.25,
      i % 6 === 0 ? null : 200,
      Date.UTC(2026, 5, 1),
    );
    sql(
      'INSERT INTO url_samples (tracker_id, ts, ok, latency, http_status, ssl_expires_at) VALUES (2, ?, 0, -1, NULL, NULL)',
      ts,
    );
  }

  // Dashboards.
  await post(
    'admin',
    '/api/setDashboards',
    {
      dashboards: { Main: [{ widgetId: 1, deviceId: 2 }] },
      layouts: { Main: { lg: [{ i: 'a', x: 0, y: 0, w: 4, h: 2 }] } },
    },
    'save',
  );
  await post('admin', '/api/setDashboards', { dashboards: [] }, 'schema');
  await post(
    'admin',
    '/api/addWidgetToDash',
    { dashboardName: 'Main', widget: { widgetId: 3, deviceId: 3 } },
    'append',
  );
  await post(
    'admin',
    '/api/addWidgetToDash',
    { dashboardName: 'Network', widget: { widgetId: 2, device_id: 2 } },
    'new dashboard',
  );
  await post(
    'admin',
    '/api/addWidgetToDash',
    { dashboardName: 'Main', widget: { widgetId: 0 } },
    'bad widget',
  );
  await post('admin', '/api/addWidgetToDash', { widget: { widgetId: 1 } }, 'no name');
  await post(
    'scoped',
    '/api/addWidgetToDash',
    { dashboardName: 'Mine', widget: { widgetId: 1, deviceId: 3 } },
    'out of scope device',
  );
  await post(
    'scoped',
    '/api/addWidgetToDash',
    { dashboardName: 'Mine', widget: { widgetId: 1, deviceId: 2, note: 'kept' } },
    'in scope',
  );
  await post(
    'admin',
    '/api/setDeviceLayouts',
    { deviceId: 2, layouts: { lg: [{ i: 'latency', x: 0, y: 0, w: 6, h: 3 }] } },
    'save',
  );
  await post(
    'admin',
    '/api/setDevicePinnedWidgets',
    { deviceId: 2, pinnedWidgets: [1, 3] },
    'save',
  );
  await post(
    'admin',
    '/api/setDevicePinnedWidgets',
    { deviceId: 3, pinnedWidgets: ['ports'] },
    'save west',
  );
  await post('admin', '/api/setDeviceLayouts', { deviceId: 999, layouts: {} }, 'missing device');
  await post('admin', '/api/setDeviceLayouts', { layouts: {} }, 'no device');
  await post('scoped', '/api/setDeviceLayouts', { deviceId: 3, layouts: {} }, 'out of scope');
  await post(
    'scoped',
    '/api/setDevicePinnedWidgets',
    { deviceId: 2, pinnedWidgets: { a: 1 } },
    'in scope',
  );

  // --- reads --------------------------------------------------------------------------------
  const everyone: Who[] = ['admin', 'scoped'];
  for (const who of everyone) {
    await get(who, '/api/devices');
    await get(
      who,
      '/api/devices?alerts=1&ping=true&oids=1&walks=1&interfaces=1&ports=1&disks=1',
      'all relations',
    );
    for (const relation of ['alerts', 'ping', 'oids', 'walks', 'interfaces', 'ports', 'disks'])
      await get(who, `/api/devices?${relation}=1`);
    await get(who, '/api/devices?tag=east');
    await get(who, '/api/devices?status=up');
    await get(who, '/api/devices?status=down');
    await get(who, '/api/devices?search=EAST');
    await get(who, '/api/devices?search=%25');
    await get(who, '/api/devices/status');
    await get(who, '/api/devices/status?status=down&tag=east');
    await get(who, '/api/devices/status?search=EAST');
    await get(who, '/api/tags');
    await get(who, '/api/device/profiles');
    for (const id of [1, 2, 3, 4, 5, 999]) {
      await get(who, `/api/device/${id}`);
      await get(who, `/api/device/${id}/stats`);
      await get(who, `/api/device/${id}/tags`);
      await get(who, `/api/getLastWalk/${id}`);
      await post(who, '/api/getLatencyTracker', { deviceId: id });
      await post(who, '/api/getTCPTracker', { deviceId: id, id: 1 });
      await get(who, `/api/getDeviceTrackers?deviceId=${id}`);
      await get(who, `/api/device/${id}/disks`);
      await get(who, `/api/device/${id}/interfaces`);
      await get(who, `/api/device/${id}/interfaces/connections`);
      await get(who, `/api/device/${id}/latency`);
      await get(who, `/api/device/${id}/port`);
      await get(who, `/api/service/getAll/${id}`);
    }
    await get(who, '/api/device/2?hours=24', 'rollups');
    await get(who, '/api/device/2?hours=72', 'hourly');
    await get(
      who,
      '/api/device/2?start_time=2026-03-10 08:00:00&end_time=2026-03-10T11:30:00Z',
      'explicit window',
    );
    await get(who, '/api/device/2?start_time=2026-03-10 08:00:00', 'half window');
    await get(who, '/api/device/2?start_time=yesterday&end_time=today', 'bad window');
    await get(
      who,
      '/api/device/2?start_time=2026-03-10 12:00:00&end_time=2026-03-10 08:00:00',
      'reversed window',
    );
    await get(who, '/api/device/abc', 'not a number');
    await get(who, '/api/getLastWalk/abc', 'not a number');
    await post(who, '/api/getLatencyTracker', { deviceId: 2, hours: 24 }, 'rollups');
    await post(who, '/api/getLatencyTracker', { deviceId: 2, hours: 72 }, 'hourly');
    await post(who, '/api/getLatencyTracker', {}, 'schema');
    await post(who, '/api/getTCPTracker', { deviceId: 2, id: 2, hours: 12 }, 'closed port');
    await post(who, '/api/getTCPTracker', { deviceId: 2 }, 'no id');
    await post(who, '/api/getTCPTracker', { deviceId: 3, id: 1 }, 'other device');
    await get(who, '/api/getDeviceTrackers', 'no device');
    await get(who, '/api/getDeviceTrackers?deviceId=x', 'not a number');

    await get(who, '/api/disk/all');
    await get(who, '/api/interfaces/all');
    await get(who, '/api/latency/all');
    await get(who, '/api/port/all');
    for (const id of [rootDisk, dataDisk, westDisk, 4, 999]) {
      await get(who, `/api/disk/get/${id}`);
      await get(who, `/api/disk/stats/${id}`);
      await post(who, '/api/disk/stats', { diskId: id });
    }
    await get(who, `/api/disk/get/${rootDisk}?hours=24`, 'rollups');
    await get(who, `/api/disk/get/${rootDisk}?hours=240`, 'hourly');
    await post(who, '/api/disk/stats', { diskId: String(rootDisk) }, 'string id');
    await post(who, '/api/disk/stats', {}, 'no id');
    await post(who, '/api/disk/stats', { diskId: 'abc' }, 'not a number');
    for (const id of [eth0, lo, ethNull, westIf, 999]) {
      await get(who, `/api/interfaces/get/${id}`);
      await get(who, `/api/interfaces/stats/${id}`);
    }
    await get(who, `/api/interfaces/get/${eth0}?hours=24`, 'rollups');
    await get(who, '/api/interfaces/get/0', 'schema');
    for (const id of [1, 2, 3, 4, 999]) {
      await get(who, `/api/latency/get/${id}`);
      await get(who, `/api/latency/stats/${id}`);
      await post(who, '/api/latency/stats', { icmpingId: id });
    }
    await get(who, '/api/latency/get/2?hours=72', 'hourly');
    await get(who, '/api/latency/get/2?hours=9000', 'too many hours');
    await post(who, '/api/latency/stats', { icmpingId: '2' }, 'string id');
    await post(who, '/api/latency/stats', { icmpingId: '' }, 'empty id');
    for (const id of [1, 2, 3, 4, 999]) {
      await get(who, `/api/oid/get/${id}`);
      await get(who, `/api/service/get/${id}`);
      await get(who, `/api/service/statsOf/${id}`);
    }
    await get(who, '/api/oid/get/1?hours=24', 'rollups');
    await get(who, '/api/oid/get/2?hours=24', 'text rollups');
    for (const id of [1, 2, 3, 999]) {
      await get(who, `/api/port/get/${id}`);
      await get(who, `/api/port/stats/${id}`);
    }
    await get(who, '/api/port/get/1?hours=24', 'rollups');

    await get(who, '/api/getDashboards');
    await get(who, '/api/getCredentials');
    await post(who, '/api/getDevicesPending');
    await get(who, '/api/getLocalnets');
    await get(who, '/api/getUrls');
    await get(who, '/api/getAllUrls');
    await get(who, '/api/urlTracker');
    await get(who, '/api/urlTracker?hours=2', 'short window');
    await get(who, '/api/urlTracker?hours=721', 'too long');
  }

  // Permissions and authentication failures (one per family of answers).
  for (const who of ['viewer', 'nobody', 'anonymous'] as Who[]) {
    await get(who, '/api/devices');
    await get(who, '/api/device/2');
    await get(who, '/api/device/2/stats');
    await post(who, '/api/device/set', {
      ip_address: '127.0.9.1',
      label: 'x',
      profile: 'dash_generic',
    });
    await post(who, '/api/testSnmp', { ip: '127.0.0.1', snmpconfig: {} });
    await get(who, '/api/disk/all');
    await get(who, `/api/disk/get/${rootDisk}`);
    await post(who, '/api/disk/stats', { diskId: rootDisk });
    await post(who, '/api/getLatencyTracker', { deviceId: 2 });
    await get(who, '/api/getDashboards');
    await get(who, '/api/getDeviceTrackers?deviceId=2');
    await get(who, '/api/getCredentials');
    await post(who, '/api/getDevicesPending');
    await get(who, '/api/getLocalnets');
    await get(who, '/api/getUrls');
    await get(who, '/api/getLastWalk/2');
    await post(who, '/api/getSNMPWalkInfo/2');
  }

  // Bodies that are JSON but not objects, on routes whose bodies are read loosely or whose
  // answers share HTTP 200 with the legacy failure.
  for (const body of [[1], 'text', null]) {
    for (const url of [
      '/api/disk/stats',
      '/api/latency/stats',
      '/api/getLatencyTracker',
      '/api/getTCPTracker',
      '/api/saveUrl',
      '/api/deleteUrl',
      '/api/addWidgetToDash',
      '/api/addEditCredential',
      '/api/updateLocalnet',
      '/api/device/set',
      '/api/disk/set',
      '/api/updatePendingDeviceField',
    ])
      await post('admin', url, body, `body ${JSON.stringify(body)}`);
  }

  // SNMP probes (no agent needed for the failures).
  await post(
    'admin',
    '/api/testSnmp',
    { ip: 'nope', snmpconfig: { snmp_community: 'x' } },
    'bad ip',
  );
  await post(
    'admin',
    '/api/testSnmp',
    { ip: '127.0.0.1', snmpconfig: { snmp_version: 3 } },
    'v3 incomplete',
  );
  await post(
    'admin',
    '/api/testSnmp',
    { ip: '127.0.0.1', snmpconfig: { snmp_community: { __encrypted__: true } } },
    'sentinel without device',
  );
  await post(
    'admin',
    '/api/testSnmp',
    { ip: '127.0.0.1', snmpconfig: { authprot: 'SHA3' } },
    'bad protocol',
  );
  await post('admin', '/api/testSnmp', { ip: '127.0.0.1' }, 'schema');
  await post(
    'admin',
    '/api/testSnmp',
    { ip: '127.0.0.1', snmpconfig: {}, device_id: 999 },
    'missing device',
  );
  await post(
    'scoped',
    '/api/testSnmp',
    { ip: '127.0.0.1', snmpconfig: {}, device_id: 3 },
    'out of scope device',
  );
  if (snmpd) {
    await post(
      'admin',
      '/api/testSnmp',
      {
        ip: '127.0.0.1',
        snmpconfig: { snmp_version: 2, snmp_port: snmpd.port, snmp_community: snmpd.community },
      },
      `v2c answers ${NEEDS_SNMPD}`,
    );
    await post(
      'admin',
      '/api/testSnmp',
      {
        ip: '127.0.0.1',
        snmpconfig: { snmp_version: 2, snmp_port: snmpd.port, snmp_community: 'wrong' },
        device_id: null,
      },
      `wrong community ${NEEDS_SNMPD}`,
    );
  }
  await post('admin', '/api/getSNMPWalkInfo/4', undefined, 'snmp disabled');
  await post('admin', '/api/getSNMPWalkInfo/999', undefined, 'missing');
  await post('admin', '/api/getSNMPWalkInfo/abc', undefined, 'not a number');
  await post('scoped', '/api/getSNMPWalkInfo/3', undefined, 'out of scope');

  // Recrawl.
  await post('admin', '/api/device/2/recrawl', undefined, 'snmp');
  await post('admin', '/api/device/4/recrawl', undefined, 'no snmp');
  await post('scoped', '/api/device/3/recrawl', undefined, 'out of scope');

  // Tags on devices.
  await post(
    'admin',
    '/api/device/5/tags',
    { tags: [{ slug: 'lab', name: 'Lab' }, { slug: 'east' }] },
    'add',
  );
  await del('admin', '/api/device/5/tags', { tags: [{ slug: 'lab' }] }, 'remove');
  await del('admin', '/api/device/5/tags', { tags: [{ slug: 'nope' }] }, 'remove unknown');
  await post('scoped', '/api/device/2/tags', { tags: [{ slug: 'west' }] }, 'outside scope');
  await del('scoped', '/api/device/2/tags', { tags: [{ slug: 'east' }] }, 'last own tag');
  await post('scoped', '/api/device/3/tags', { tags: [{ slug: 'east' }] }, 'out of scope device');
  await post('admin', '/api/device/2/tags', { tags: [] }, 'schema');
  await get('admin', '/api/device/5/tags', 'after');
  await get('admin', '/api/tags', 'after');

  // Pending devices: field and tag updates, hide, import, remove.
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'label', value: '  core-router  ' },
    'label',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'authpass', value: 'new-auth-secret' },
    'secret',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'privpass', value: 'short' },
    'short secret',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'snmp_port', value: '70000' },
    'bad port',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'privprot', value: 'aes-256' },
    'privprot',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'profile', value: 'nope' },
    'bad profile',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'nope', value: 1 },
    'schema',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceField',
    { id: 999, field: 'label', value: 'x' },
    'missing',
  );
  await post(
    'scoped',
    '/api/updatePendingDeviceField',
    { id: pendingV3, field: 'label', value: 'x' },
    'out of scope',
  );
  await post(
    'admin',
    '/api/updatePendingDeviceTags',
    { id: pendingAgent, tags: ['east', { slug: 'windows', name: 'Windows' }] },
    'replace',
  );
  await post(
    'scoped',
    '/api/updatePendingDeviceTags',
    { id: pendingSnmp, tags: ['west'] },
    'outside scope',
  );
  await post('admin', '/api/hidePendingDevice', { id: pendingAgent }, 'hide');
  await post('admin', '/api/hidePendingDevice', { id: 999 }, 'missing');
  await post('admin', '/api/importPending', { id: pendingSnmp }, 'snmp v2');
  await post('admin', '/api/importPending', { id: pendingHidden, tags: ['west'] }, 'with tags');
  await post('admin', '/api/importPending', { id: pendingSnmp }, 'again');
  await post('scoped', '/api/removePendingDevice', { id: pendingV3 }, 'out of scope');
  await post('scoped', '/api/removePendingDevice', { id: pendingRemove }, 'in scope');
  await post('admin', '/api/removePendingDevice', {}, 'schema');
  await post('admin', '/api/getDevicesPending', undefined, 'after');
  await post('scoped', '/api/getDevicesPending', undefined, 'after');
  await get('admin', '/api/devices', 'after import');

  // Local networks: reset and delete.
  await post('admin', '/api/resetDiscoveryTs', { id: 1 }, 'enabled');
  await post('admin', '/api/resetDiscoveryTs', { id: 2 }, 'disabled');
  await post('admin', '/api/resetDiscoveryTs', { id: 99 }, 'missing');
  await post('admin', '/api/resetDiscoveryTs', {}, 'schema');
  await get('admin', '/api/getLocalnets', 'after reset');
  await post('admin', '/api/deleteLocalnet', { id: 2 }, 'delete');
  await post('admin', '/api/deleteLocalnet', { id: 2 }, 'again');
  await get('admin', '/api/getLocalnets', 'after delete');
  await post('admin', '/api/addEditCredential', { action: 'delete', id: 2 }, 'delete');
  await post('admin', '/api/addEditCredential', { action: 'delete', id: 2 }, 'delete again');
  await get('admin', '/api/getCredentials', 'after delete');
  await get('admin', '/api/getLocalnets', 'after credential delete');

  // Dashboards: delete layouts.
  await post('admin', '/api/deleteDeviceLayouts', { deviceId: 2 }, 'delete');
  await post('admin', '/api/deleteDeviceLayouts', { deviceId: 2 }, 'again');
  await post('admin', '/api/deleteDeviceLayouts', {}, 'schema');
  await post('scoped', '/api/deleteDeviceLayouts', { deviceId: 3 }, 'out of scope');
  await get('admin', '/api/getDeviceTrackers?deviceId=2', 'after delete');

  // URL trackers: delete.
  await post('admin', '/api/deleteUrl', { id: '2' }, 'delete');
  await post('admin', '/api/deleteUrl', { id: 2 }, 'again');
  await post('admin', '/api/deleteUrl', {}, 'no id');
  await get('admin', '/api/getAllUrls', 'after delete');

  // Tracker deletes (out of scope and missing first).
  await post('scoped', '/api/disk/delete', { id: westDisk }, 'out of scope');
  await post('admin', '/api/disk/delete', { id: 999 }, 'missing');
  await post('admin', '/api/disk/delete', { id: dataDisk }, 'delete');
  await post('scoped', '/api/interfaces/delete', { id: westIf }, 'out of scope');
  await post('admin', '/api/interfaces/delete', { id: 999 }, 'missing');
  await post('admin', '/api/interfaces/delete', { id: ethNull }, 'delete');
  await post('scoped', '/api/latency/delete', { id: 3 }, 'out of scope');
  await post('admin', '/api/latency/delete', { id: 999 }, 'missing');
  await post('admin', '/api/latency/delete', { id: 4 }, 'delete');
  await post('scoped', '/api/oid/delete', { id: 3 }, 'out of scope');
  await post('admin', '/api/oid/delete', { id: 4 }, 'a service id');
  await post('admin', '/api/oid/delete', { id: 2 }, 'delete');
  await post('scoped', '/api/service/delete', { id: 5 }, 'out of scope');
  await post('admin', '/api/service/delete', { id: 999 }, 'missing');
  await post('admin', '/api/service/delete', { id: 5 }, 'delete');
  await post('scoped', '/api/port/delete', { id: 3 }, 'out of scope');
  await post('admin', '/api/port/delete', { id: 999 }, 'missing');
  await post('admin', '/api/port/delete', { id: 2 }, 'delete');
  await post('admin', '/api/port/delete', {}, 'schema');
  for (const url of ['/api/disk/all', '/api/interfaces/all', '/api/latency/all', '/api/port/all'])
    await get('admin', url, 'after deletes');
  await get('admin', '/api/service/getAll/3', 'after deletes');
  await get('admin', '/api/device/2', 'after deletes');
  await get('admin', '/api/getDeviceTrackers?deviceId=2', 'after deletes');

  // Device deletes.
  await del('admin', '/api/device/1', undefined, 'appliance');
  await del('scoped', '/api/device/3', undefined, 'out of scope');
  await del('admin', '/api/device/999', undefined, 'missing');
  await del('admin', '/api/device/3', undefined, 'delete');
  await post('admin', '/api/deleteDevice', { device: 1 }, 'appliance');
  await post('admin', '/api/deleteDevice', { device: 3 }, 'already deleted');
  await post('admin', '/api/deleteDevice', { device: 5 }, 'delete');
  await post('admin', '/api/deleteDevice', {}, 'schema');
  await get(
    'admin',
    '/api/devices?alerts=1&ping=1&oids=1&walks=1&interfaces=1&ports=1&disks=1',
    'after deletes',
  );
  await get('admin', '/api/getDashboards', 'after deletes');
  await get('scoped', '/api/getDashboards', 'after deletes');
  await get('admin', '/api/latency/all', 'after device deletes');
  await get('admin', '/api/service/getAll/3', 'after device delete');
}

function openapiOperations(): string[] {
  const doc = appliance.app.swagger() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'route-snapshots-'));
  const config = loadConfig({
    APPLIANCE_DATA_DIR: dataDir,
    APPLIANCE_BIND: '127.0.0.1',
    APPLIANCE_HTTPS_PORT: '0',
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
    APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
    APPLIANCE_LOG_LEVEL: 'silent',
  });
  // Engines are not started: nothing polls, crawls or sweeps while the snapshot is taken.
  appliance = await buildApp(config, { clock: fixedClock, insecureHttp: true });
  declared = appliance.app.declaredRoutes.map((r) => ({ method: r.method, url: r.url }));
  if (havePeer('snmpd', 'snmpd')) snmpd = await startSnmpd({ sysName: 'snapshot-agent' });
  tokens.admin = await login('admin', ADMIN_PASSWORD);
  await scenario();
}, 120_000);

afterAll(async () => {
  await snmpd?.stop();
  await appliance?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('route snapshots (devices, trackers, dashboards, url monitors, local networks)', () => {
  it('covers every route of these families', () => {
    const families = spec
      .filter((e) => FAMILIES.has(e.feature))
      .map((e) => `${e.method} ${e.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1')}`);
    const registered = new Set(declared.map((r) => `${r.method} ${r.url}`));
    const missing = families.filter((key) => registered.has(key) && !hit.has(key));
    expect(missing).toEqual([]);
  });

  it('answers exactly as recorded', () => {
    const current: SnapshotFile = { cases: recorded, openapi: openapiOperations() };
    if (UPDATE || !fs.existsSync(SNAPSHOT_FILE)) {
      // One case per line: a changed answer shows as one changed line in a diff.
      const lines = (items: unknown[]) => items.map((item) => JSON.stringify(item)).join(',\n');
      fs.writeFileSync(
        SNAPSHOT_FILE,
        `{"cases": [\n${lines(current.cases)}\n],\n"openapi": [\n${lines(current.openapi)}\n]}\n`,
      );
      return;
    }
    const saved = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8')) as SnapshotFile;
    const byName = new Map(recorded.map((r) => [r.name, r]));
    const differences: string[] = [];
    for (const expected of saved.cases) {
      if (expected.name.includes(NEEDS_SNMPD) && !snmpd) continue;
      const actual = byName.get(expected.name);
      if (!actual) {
        differences.push(`${expected.name}: not called`);
        continue;
      }
      // Byte for byte: the raw body of the recorded answer against the raw body now.
      const rawOf = (r: Recorded) => (r.text !== undefined ? r.text : JSON.stringify(r.body));
      if (
        actual.status !== expected.status ||
        actual.contentType !== expected.contentType ||
        rawOf(actual) !== rawOf(expected)
      )
        differences.push(expected.name);
      expect
        .soft(
          { status: actual.status, contentType: actual.contentType, body: rawOf(actual) },
          expected.name,
        )
        .toEqual({
          status: expected.status,
          contentType: expected.contentType,
          body: rawOf(expected),
        });
    }
    const known = new Set(saved.cases.map((c) => c.name));
    const added = recorded.filter((r) => !known.has(r.name)).map((r) => r.name);
    expect(added, 'cases not in the snapshot file (record them)').toEqual([]);
    expect(differences).toEqual([]);
  });

  it('keeps every operation of /openapi.json', () => {
    const saved = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8')) as SnapshotFile;
    const now = new Set(openapiOperations());
    expect(saved.openapi.filter((op) => !now.has(op))).toEqual([]);
  });
});
