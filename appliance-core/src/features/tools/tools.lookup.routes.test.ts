/**
 * HTTP-level tests of whois, geoip and the port service names (spec part 2 > Network tools).
 * whois asks a fake whois server on loopback (APPLIANCE_WHOIS_SERVER); geoip reads a small
 * database file this test writes, and its external lookup is a fake service on loopback
 * (APPLIANCE_GEOIP_URL). Nothing leaves the machine.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { onToolSpawn, type LiveToolProcess } from '../../platform/process/spawn.js';
import { buildMmdb } from './testing/mmdb-writer.js';
import { INVALID_IP, notRoutableMessage, PORT_NAME_NOT_FOUND } from './tools.routes.js';
import type { ToolsEngine } from './index.js';

const HAVE_WHOIS = havePeer('whois', 'whois');
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

// --- fake peers ---------------------------------------------------------------------------------

let whoisAnswer = '';
const whoisQueries: string[] = [];
const whoisServer = net.createServer((socket) => {
  socket.on('error', () => {});
  socket.once('data', (query) => {
    whoisQueries.push(query.toString('utf8'));
    socket.end(whoisAnswer);
  });
});

let geoAnswer: { status: number; body: string } = { status: 200, body: '{}' };
const geoRequests: string[] = [];
const geoService = http.createServer((request, response) => {
  geoRequests.push(request.url ?? '');
  response.writeHead(geoAnswer.status, { 'content-type': 'application/json' });
  response.end(geoAnswer.body);
});

const listen = (server: net.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );

let h: Harness;
let engine: ToolsEngine;
let token: string;
let admin: string;
let outsider: string;
let spawned: LiveToolProcess[] = [];
let stopSpying: () => void;
let geoPort: number;

beforeAll(async () => {
  const whoisPort = await listen(whoisServer);
  geoPort = await listen(geoService);
  h = await startAppliance({
    APPLIANCE_WHOIS_SERVER: `127.0.0.1:${whoisPort}`,
    APPLIANCE_GEOIP_URL: `http://127.0.0.1:${geoPort}/json/{ip}?fields=all`,
  });
  engine = h.appliance.engines.find((e) => e.name === 'tools') as ToolsEngine;
  engine.service.configure({ reverseDns: null });
  token = (await h.userWith(['tools'])).token;
  outsider = (await h.userWith(['devices', 'system'])).token;
  admin = await h.login();
  // The appliance's own latency poller (device 1's tracker) runs fping in the background; the
  // tools never do, so only the tools' processes are recorded.
  stopSpying = onToolSpawn((p) => {
    if (p.program !== 'fping') spawned.push(p);
  });
});

afterAll(async () => {
  stopSpying();
  await h.close();
  whoisServer.close();
  geoService.close();
});

afterEach(() => {
  spawned = [];
  engine.service.configure({ searchPath: undefined });
});

const enc = encodeURIComponent;
const NOT_IPS = [
  'example.com',
  'localhost',
  '-oX /tmp/appliance-injection-probe',
  '127.0.0.1;id',
  '$(id)',
  '999.1.1.1',
  '1.2.3',
  '8.8.8.8/32',
  'fe80::1%eth0',
  '--help',
];

// --- whois ----------------------------------------------------------------------------------------

describe('GET /api/tools/whois/{ip}: refusals (whois is never started)', () => {
  it.each(NOT_IPS)('answers Invalid IP address format for %j and starts nothing', async (ip) => {
    const res = await h.request('GET', `/api/tools/whois/${enc(ip)}`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message: INVALID_IP });
    expect(spawned).toEqual([]);
    expect(fs.existsSync('/tmp/appliance-injection-probe')).toBe(false);
  });

  it('names the missing program', async () => {
    engine.service.configure({ searchPath: [fs.mkdtempSync(path.join(os.tmpdir(), 'no-tools-'))] });
    const res = await h.request('GET', '/api/tools/whois/8.8.8.8', { token });
    expect(res.body).toEqual({
      status: false,
      message: 'whois is not installed (Debian package whois)',
    });
  });

  it('refuses callers without the tools permission', async () => {
    const res = await h.request('GET', '/api/tools/whois/8.8.8.8', { token: outsider });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
  });
});

describe.runIf(HAVE_WHOIS)('GET /api/tools/whois/{ip}: runs whois', () => {
  it('answers the registry record as key/value pairs', async () => {
    whoisAnswer = [
      '% This is a comment',
      '# and this too',
      'NetRange:       8.8.8.0 - 8.8.8.255',
      'CIDR:           8.8.8.0/24',
      'OrgName:        Google LLC',
      'Comment:        first line',
      'Comment:        second line',
      'Empty:',
      'not a key value line',
      '',
    ].join('\r\n');
    const res = await h.request('GET', '/api/tools/whois/8.8.8.8', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 201,
      message: {
        NetRange: '8.8.8.0 - 8.8.8.255',
        CIDR: '8.8.8.0/24',
        OrgName: 'Google LLC',
        Comment: 'first line\nsecond line',
      },
    });
    expect(whoisQueries.at(-1)).toBe('8.8.8.8\r\n');
    expect(spawned.map((p) => [p.program, p.args])).toEqual([
      [
        'whois',
        [
          '-h',
          '127.0.0.1',
          '-p',
          String((whoisServer.address() as net.AddressInfo).port),
          '--',
          '8.8.8.8',
        ],
      ],
    ]);
  });

  it('accepts IPv6 literals', async () => {
    whoisAnswer = 'inet6num: 2001:4860::/32\nnetname: EXAMPLE-V6\n';
    const res = await h.request('GET', `/api/tools/whois/${enc('2001:4860:4860::8888')}`, {
      token,
    });
    expect(res.body).toEqual({
      status: 201,
      message: { inet6num: '2001:4860::/32', netname: 'EXAMPLE-V6' },
    });
    expect(whoisQueries.at(-1)).toBe('2001:4860:4860::8888\r\n');
  });

  it('answers the failure shape when the registry has no record', async () => {
    whoisAnswer = '% No entries found for the selected source(s).\n';
    const res = await h.request('GET', '/api/tools/whois/8.8.4.4', { token });
    expect(res.body).toEqual({ status: false, message: 'No whois record found for 8.8.4.4' });
  });

  it('answers the failure shape when the whois server cannot be reached', async () => {
    const closed = net.createServer();
    const closedPort = await listen(closed);
    await new Promise((r) => closed.close(r));
    engine.service.configure({ whoisServer: { host: '127.0.0.1', port: closedPort } });
    try {
      const res = await h.request('GET', '/api/tools/whois/8.8.8.8', { token });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(false);
      expect(res.body.message).toMatch(/^Whois lookup failed: .*Connection refused/);
    } finally {
      engine.service.configure({
        whoisServer: { host: '127.0.0.1', port: (whoisServer.address() as net.AddressInfo).port },
      });
    }
  });
});

// --- geoip ----------------------------------------------------------------------------------------

describe('GET /api/tools/geoip/{ip}', () => {
  const geoDir = () => path.join(h.dataDir, 'geoip');
  const CITY = {
    city: { names: { en: 'Mountain View' } },
    country: { iso_code: 'US', names: { en: 'United States' } },
    location: { latitude: 37.386, longitude: -122.0838, time_zone: 'America/Los_Angeles' },
    subdivisions: [{ iso_code: 'CA', names: { en: 'California' } }],
  };

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['192.168.0.10', 'private'],
    ['172.20.0.1', 'private'],
    ['100.64.1.1', 'carrier-grade-nat'],
    ['169.254.1.1', 'link-local'],
    ['224.0.0.251', 'multicast'],
    ['192.0.2.1', 'documentation'],
    ['240.0.0.1', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:10.0.0.1', 'private'],
  ] as const)('refuses %s (%s) with the failure shape', async (ip, kind) => {
    const before = geoRequests.length;
    const res = await h.request('GET', `/api/tools/geoip/${enc(ip)}`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message: notRoutableMessage(ip, kind) });
    expect(geoRequests.length).toBe(before);
  });

  it('says which kind of address it refused', () => {
    expect(notRoutableMessage('10.0.0.1', 'private')).toBe(
      'Only globally routable IP addresses can be located (10.0.0.1 is a private address)',
    );
  });

  it.each(NOT_IPS)('answers Invalid IP address format for %j', async (ip) => {
    const res = await h.request('GET', `/api/tools/geoip/${enc(ip)}`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: false, message: INVALID_IP });
  });

  it('serves a stored database when one is installed, and picks up a replaced file', async () => {
    // The appliance makes the folder at start, for operators to drop databases into.
    expect(fs.statSync(geoDir()).isDirectory()).toBe(true);
    const file = path.join(geoDir(), 'GeoLite2-City.mmdb');
    fs.writeFileSync(
      file,
      buildMmdb({
        '8.8.8.0/24': CITY,
        '2001:4860::/32': { country: { iso_code: 'US', names: { en: 'United States' } } },
      }),
    );
    const before = geoRequests.length;
    const res = await h.request('GET', '/api/tools/geoip/8.8.8.8', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 201,
      message: {
        ip: '8.8.8.8',
        countryName: 'United States',
        countryCode: 'US',
        regionName: 'California',
        cityName: 'Mountain View',
        latitude: 37.386,
        longitude: -122.0838,
        timeZone: 'America/Los_Angeles',
      },
    });
    const v6 = await h.request('GET', `/api/tools/geoip/${enc('2001:4860:4860::8888')}`, { token });
    expect(v6.body.message).toMatchObject({
      countryName: 'United States',
      cityName: null,
      latitude: null,
    });
    expect(geoRequests.length).toBe(before);

    // An update: a new file moved into place (as geoipupdate does) is served without a restart.
    const staged = path.join(geoDir(), '.GeoLite2-City.mmdb.tmp');
    fs.writeFileSync(
      staged,
      buildMmdb({ '8.8.8.0/24': { ...CITY, city: { names: { en: 'Updated City' } } } }),
    );
    fs.renameSync(staged, file);
    const updated = await h.request('GET', '/api/tools/geoip/8.8.8.8', { token });
    expect(updated.body.message.cityName).toBe('Updated City');
    expect(geoRequests.length).toBe(before);
  });

  it('skips a database file it cannot read', async () => {
    fs.mkdirSync(geoDir(), { recursive: true });
    fs.writeFileSync(path.join(geoDir(), 'AAA-broken.mmdb'), 'not a database');
    const res = await h.request('GET', '/api/tools/geoip/8.8.8.8', { token });
    expect(res.body.status).toBe(201);
    expect(res.body.message.countryCode).toBe('US');
    fs.rmSync(path.join(geoDir(), 'AAA-broken.mmdb'));
  });

  it('asks the external lookup for an address the database does not know, once, then serves it from the cache', async () => {
    geoAnswer = {
      status: 200,
      body: JSON.stringify({
        ipVersion: 4,
        ipAddress: '1.1.1.1',
        latitude: -27.4766,
        longitude: 153.0166,
        countryName: 'Australia',
        countryCode: 'AU',
        timeZone: '+10:00',
        cityName: 'South Brisbane',
        regionName: 'Queensland',
      }),
    };
    const before = geoRequests.length;
    const expected = {
      status: 201,
      message: {
        ip: '1.1.1.1',
        countryName: 'Australia',
        countryCode: 'AU',
        regionName: 'Queensland',
        cityName: 'South Brisbane',
        latitude: -27.4766,
        longitude: 153.0166,
        timeZone: '+10:00',
      },
    };
    const first = await h.request('GET', '/api/tools/geoip/1.1.1.1', { token });
    expect(first.body).toEqual(expected);
    expect(geoRequests.slice(before)).toEqual(['/json/1.1.1.1?fields=all']);
    const second = await h.request('GET', '/api/tools/geoip/1.1.1.1', { token });
    expect(second.body).toEqual(expected);
    expect(geoRequests.length).toBe(before + 1);
    const row = h.appliance.db
      .prepare('SELECT ip, fetched_at FROM geoip_cache WHERE ip = ?')
      .get('1.1.1.1') as { ip: string; fetched_at: number };
    expect(row.ip).toBe('1.1.1.1');

    // Past the cache's lifetime (30 days) the address is looked up again.
    h.appliance.db
      .prepare('UPDATE geoip_cache SET fetched_at = fetched_at - ? WHERE ip = ?')
      .run(31 * 86_400_000, '1.1.1.1');
    await h.request('GET', '/api/tools/geoip/1.1.1.1', { token });
    expect(geoRequests.length).toBe(before + 2);
  });

  it.each([
    [{ status: 500, body: '{"message":"boom"}' }, 'Geolocation lookup failed: HTTP 500'],
    [{ status: 200, body: '<html>' }, 'Geolocation lookup failed: the service did not answer JSON'],
    [
      { status: 200, body: '{"status":"fail","message":"reserved range"}' },
      'Geolocation lookup failed: reserved range',
    ],
    [{ status: 200, body: '{"unrelated":true}' }, 'No geolocation data for 9.9.9.9'],
  ])(
    'answers the failure shape when the lookup answers %j, and caches nothing',
    async (answer, message) => {
      geoAnswer = answer;
      const res = await h.request('GET', '/api/tools/geoip/9.9.9.9', { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: false, message });
      expect(
        h.appliance.db.prepare('SELECT count(*) AS n FROM geoip_cache WHERE ip = ?').get('9.9.9.9'),
      ).toEqual({ n: 0 });
    },
  );

  it('answers the failure shape when the lookup service cannot be reached, or external lookups are off', async () => {
    const closed = net.createServer();
    const closedPort = await listen(closed);
    await new Promise((r) => closed.close(r));
    engine.service.configure({ geoipUrl: `http://127.0.0.1:${closedPort}/{ip}` });
    const unreachable = await h.request('GET', '/api/tools/geoip/9.9.9.10', { token });
    expect(unreachable.body).toEqual({
      status: false,
      message: 'Geolocation lookup failed: ECONNREFUSED',
    });
    engine.service.configure({ geoipUrl: null });
    const off = await h.request('GET', '/api/tools/geoip/9.9.9.10', { token });
    expect(off.body).toEqual({
      status: false,
      message: `No geolocation data for 9.9.9.10: no database in ${path.join(h.dataDir, 'geoip')} knows it and external lookups are off`,
    });
    engine.service.configure({ geoipUrl: `http://127.0.0.1:${geoPort}/json/{ip}?fields=all` });
  });

  it('refuses callers without the tools permission', async () => {
    const res = await h.request('GET', '/api/tools/geoip/8.8.8.8', { token: outsider });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(DENIED);
  });
});

// --- port service names ---------------------------------------------------------------------------

describe('port service names', () => {
  it('GET /api/getPortServiceNames answers the sparse map, seeded with common names', async () => {
    const res = await h.request('GET', '/api/getPortServiceNames', { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['status', 'services']);
    expect(res.body.status).toBe(200);
    expect(res.body.services).toMatchObject({
      '22': 'ssh',
      '80': 'http',
      '443': 'https',
      '161': 'snmp',
      '5201': 'iperf3',
    });
    expect(res.body.services['4']).toBeUndefined();
  });

  it('an operator (system) sets, renames and removes names; the tools user sees the result', async () => {
    const saved = await h.request('PUT', '/api/port-service-names/8291', {
      token: admin,
      body: { name: 'winbox' },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ status: 200, port: 8291, name: 'winbox' });
    const renamed = await h.request('PUT', '/api/port-service-names/22', {
      token: admin,
      body: { name: 'ssh (jump host)' },
    });
    expect(renamed.body).toEqual({ status: 200, port: 22, name: 'ssh (jump host)' });
    let list = await h.request('GET', '/api/getPortServiceNames', { token });
    expect(list.body.services['8291']).toBe('winbox');
    expect(list.body.services['22']).toBe('ssh (jump host)');

    const removed = await h.request('DELETE', '/api/port-service-names/8291', { token: admin });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ status: 200, port: 8291 });
    list = await h.request('GET', '/api/getPortServiceNames', { token });
    expect(list.body.services['8291']).toBeUndefined();

    const again = await h.request('DELETE', '/api/port-service-names/8291', { token: admin });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: PORT_NAME_NOT_FOUND });
  });

  it.each([
    ['/api/port-service-names/0', { name: 'x' }, 'port', 'The port field must be at least 1.'],
    [
      '/api/port-service-names/65536',
      { name: 'x' },
      'port',
      'The port field must not be greater than 65535.',
    ],
    ['/api/port-service-names/abc', { name: 'x' }, 'port', 'The port field must be an integer.'],
    ['/api/port-service-names/22', {}, 'name', 'The name field is required.'],
    [
      '/api/port-service-names/22',
      { name: '' },
      'name',
      'The name must be 1 to 64 printable ASCII characters.',
    ],
    [
      '/api/port-service-names/22',
      { name: 'x'.repeat(65) },
      'name',
      'The name must be 1 to 64 printable ASCII characters.',
    ],
    [
      '/api/port-service-names/22',
      { name: 'tab\there' },
      'name',
      'The name must be 1 to 64 printable ASCII characters.',
    ],
    [
      '/api/port-service-names/22',
      { name: ' padded' },
      'name',
      'The name must be 1 to 64 printable ASCII characters.',
    ],
    [
      '/api/port-service-names/22',
      { name: 42 },
      'name',
      'The name must be 1 to 64 printable ASCII characters.',
    ],
  ])('PUT %s %j is refused with 400 {errors}', async (url, body, field, message) => {
    const res = await h.request('PUT', url, { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: { [field]: [message] } });
    const list = await h.request('GET', '/api/getPortServiceNames', { token });
    expect(list.body.services['22']).not.toBe('x');
  });

  it('maintaining the map needs the system permission; reading it needs tools', async () => {
    const put = await h.request('PUT', '/api/port-service-names/22', {
      token,
      body: { name: 'nope' },
    });
    expect(put.status).toBe(401);
    expect(put.body).toEqual(DENIED);
    const del = await h.request('DELETE', '/api/port-service-names/22', { token });
    expect(del.status).toBe(401);
    expect(del.body).toEqual(DENIED);
    const get = await h.request('GET', '/api/getPortServiceNames', { token: outsider });
    expect(get.status).toBe(401);
    expect(get.body).toEqual(DENIED);
  });
});
