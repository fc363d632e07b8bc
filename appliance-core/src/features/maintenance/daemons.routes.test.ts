/**
 * The daemon endpoints over HTTP (spec part 3, "Data maintenance") against a real appliance and
 * its real engine registry: the `sa` gate, lookup by id or name (404 `{message}`, shared
 * resources are not daemons), a configuration round trip with a canary secret masked by the
 * sentinel (kept by the sentinel or an empty value, removed when omitted), every validation rule
 * and injection string refused whole or stored literally, the live reload (the engine really
 * restarts) and `reload_failed` when the engine does not come back, and `start`.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { EngineRegistry } from '../../platform/engines/engine-registry.js';
import { REDACT_PATHS } from '../../platform/logging/logger.js';
import { SecretBox } from '../../platform/security/secret-box.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { varsOf } from './daemons.catalog.js';
import { startsAutomatically } from './daemons.repository.js';
import { DaemonsService } from './daemons.service.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const CANARY = 'canary-daemon-secret-7f3e9a';
const SENTINEL = { __encrypted__: true };

let h: Harness;
let admin: string;
let system: string;

const get = (identifier: string, token = admin) =>
  h.request('GET', `/api/daemon/${encodeURIComponent(identifier)}`, { token });
const configure = (id: string | number, config: unknown, token = admin) =>
  h.request('POST', `/api/daemon/${id}/config`, { token, body: { config } });
const vars = (name: string) =>
  h.appliance.db
    .prepare(
      'SELECT v.var, v.value, v.sealed FROM daemon_vars v JOIN daemons d ON d.id = v.daemon_id WHERE d.name = ? ORDER BY v.var',
    )
    .all(name) as { var: string; value: string; sealed: number }[];

beforeAll(async () => {
  h = await startAppliance();
  admin = await h.login();
  system = (await h.userWith(['system'])).token;
});
afterAll(async () => {
  await h.close();
});

describe('the sa gate', () => {
  it('denies every daemon endpoint to a caller without sa (system is not enough)', async () => {
    for (const [method, url, body] of [
      ['GET', '/api/daemon/syslog', undefined],
      ['GET', '/api/daemons', undefined],
      ['POST', '/api/daemon/1/config', { config: [] }],
      ['POST', '/api/daemon/1/start', { start_auto: true }],
    ] as const) {
      const res = await h.request(method, url, { token: system, body });
      expect(res.status, url).toBe(401);
      expect(res.body, url).toEqual(DENIED);
    }
  });
});

describe('GET /api/daemon/{identifier}', () => {
  it('finds a daemon by name and by numeric id; every non-shared engine is one', async () => {
    const byName = await get('discovery');
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual({
      id: expect.any(Number),
      name: 'discovery',
      start_auto: true,
      config: [],
    });
    const byId = await get(String(byName.body.id));
    expect(byId.body).toEqual(byName.body);
    const engines = h.appliance.registry.list().filter((e) => !e.shared);
    for (const engine of engines) expect((await get(engine.name)).status, engine.name).toBe(200);
  });

  it('answers 404 {message} for an unknown id or name and for the shared resources', async () => {
    for (const identifier of ['nope', '999999', '0', '-1', 'storage-writer', 'scheduler', '1e3']) {
      const res = await get(identifier);
      expect(res.status, identifier).toBe(404);
      expect(res.body, identifier).toEqual({ message: 'Daemon not found' });
    }
    expect((await get('x'.repeat(65))).status).toBe(422);
  });
});

describe('GET /api/daemons (designed)', () => {
  it('lists every daemon once, by id, as GET /api/daemon gives it, with the variables it accepts', async () => {
    const res = await h.request('GET', '/api/daemons', { token: admin });
    expect(res.status).toBe(200);
    const daemons = res.body.daemons as {
      id: number;
      name: string;
      vars: { var: string; secret: boolean; description: string }[];
    }[];
    const engines = h.appliance.registry.list().filter((e) => !e.shared);
    expect(daemons.map((d) => d.name).sort()).toEqual(engines.map((e) => e.name).sort());
    expect(daemons.map((d) => d.id)).toEqual([...daemons.map((d) => d.id)].sort((a, b) => a - b));
    for (const daemon of daemons) {
      const { vars: accepted, ...view } = daemon;
      expect(view, daemon.name).toEqual((await get(daemon.name)).body);
      expect(accepted, daemon.name).toEqual(
        varsOf(daemon.name).map((v) => ({
          var: v.var,
          secret: v.secret === true,
          description: v.description,
        })),
      );
    }
    const delivery = daemons.find((d) => d.name === 'alert-delivery')!;
    expect(delivery.vars).toContainEqual(
      expect.objectContaining({ var: 'proxy_password', secret: true }),
    );
    expect(delivery.vars).toContainEqual(
      expect.objectContaining({ var: 'proxy_url', secret: false }),
    );
    const openapi = await h.request('GET', '/openapi.json');
    expect(openapi.text).toContain('"/api/daemons"');
  });
});

describe('POST /api/daemon/{id}/config', () => {
  it('round-trips a configuration with the secret masked, kept by the sentinel or empty, removed when omitted', async () => {
    const id = (await get('alert-delivery')).body.id as number;
    const before = h.appliance.registry.status('alert-delivery');
    expect(before.state).toBe('running');
    h.clock.advance(1000);
    const saved = await configure(id, [
      { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
      { var: 'proxy_password', value: CANARY },
    ]);
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({
      message: 'Configuration of alert-delivery saved and the daemon restarted',
    });
    expect(saved.text).not.toContain(CANARY);
    // The engine really restarted through the registry.
    const after = h.appliance.registry.status('alert-delivery');
    expect(after.state).toBe('running');
    expect(after.startedAt as number).toBeGreaterThan(before.startedAt as number);
    const read = await get('alert-delivery');
    expect(read.body.config).toEqual([
      { var: 'proxy_password', value: SENTINEL },
      { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
    ]);
    expect(read.text).not.toContain(CANARY);
    const stored = vars('alert-delivery');
    const sealed = stored.find((v) => v.var === 'proxy_password');
    expect(sealed?.sealed).toBe(1);
    expect(sealed?.value).not.toContain(CANARY);
    // The sentinel keeps the secret, an empty value too.
    for (const keep of [SENTINEL, '', null]) {
      const res = await configure(id, [
        { var: 'proxy_url', value: 'http://127.0.0.1:3129' },
        { var: 'proxy_password', value: keep },
      ]);
      expect(res.status).toBe(200);
      expect(vars('alert-delivery').find((v) => v.var === 'proxy_password')?.value).toBe(
        sealed?.value,
      );
    }
    // Complete replacement: the omitted secret is removed.
    await configure(id, [{ var: 'proxy_url', value: 'http://127.0.0.1:3130' }]);
    expect((await get(String(id))).body.config).toEqual([
      { var: 'proxy_url', value: 'http://127.0.0.1:3130' },
    ]);
    await configure(id, []);
    expect((await get(String(id))).body.config).toEqual([]);
    // The list masks it the same way.
    await configure(id, [{ var: 'proxy_password', value: CANARY }]);
    const listed = await h.request('GET', '/api/daemons', { token: admin });
    expect(listed.text).not.toContain(CANARY);
    expect(
      (listed.body.daemons as { name: string; config: unknown }[]).find(
        (d) => d.name === 'alert-delivery',
      )?.config,
    ).toEqual([{ var: 'proxy_password', value: SENTINEL }]);
    await configure(id, []);
    // The canary never reached the audit log or the OpenAPI document.
    const audit = h.appliance.db.prepare('SELECT * FROM audit_log').all();
    expect(JSON.stringify(audit)).not.toContain(CANARY);
    expect(JSON.stringify(audit)).toContain('daemon.configure');
    const openapi = await h.request('GET', '/openapi.json');
    expect(openapi.text).not.toContain(CANARY);
    expect(openapi.text).toContain('/api/daemon/{identifier}');
  });

  it('refuses bad configurations and injection strings whole (422 {message}), changing nothing', async () => {
    const id = (await get('captures')).body.id as number;
    await configure(id, [{ var: 'max_active', value: '4' }]);
    const before = vars('captures');
    const bad: [unknown, RegExp][] = [
      [undefined, /config/],
      ['x', /config/],
      [[{ var: 'nope', value: '1' }], /captures has no variable of that name/],
      [[{ value: '1' }], /var/],
      [
        [
          { var: 'max_active', value: '1' },
          { var: 'max_active', value: '2' },
        ],
        /more than once/,
      ],
      [[{ var: 'max_active', value: '0' }], /at least 1/],
      [[{ var: 'max_active', value: ';id' }], /at least 1/],
      [[{ var: 'max_active', value: '$(id)' }], /at least 1/],
      [[{ var: 'max_active', value: '`id`' }], /at least 1/],
      [[{ var: 'max_active', value: '-1' }], /at least 1/],
      [[{ var: 'max_active', value: '4\nid' }], /control characters/],
      [[{ var: 'max_active', value: '4\u0000' }], /control characters/],
      [[{ var: 'max_active', value: 'x'.repeat(10_240) }], /1024/],
      [[{ var: 'max_active', value: { a: 1 } }], /./],
      [[{ var: 'max_active', value: SENTINEL }], /not a secret/],
      // One bad element rejects the good one with it.
      [
        [
          { var: 'idle_seconds', value: '30' },
          { var: 'disk_max_bytes', value: '%0aid' },
        ],
        /at least 1/,
      ],
    ];
    for (const [config, message] of bad) {
      const res = await configure(id, config);
      expect(res.status, JSON.stringify(config)).toBe(422);
      expect(Object.keys(res.body), JSON.stringify(config)).toEqual(['message']);
      expect(res.body.message, JSON.stringify(config)).toMatch(message);
    }
    expect(vars('captures')).toEqual(before);
    // Paths and ports follow their rules; shell metacharacters are refused there too.
    // ids-intake is always a daemon (idle without an eve file).
    expect((await get('ids-intake')).status).toBe(200);
    for (const value of ['/var/log/x;id', 'relative/eve.json', '/var/log/$(id)', '/a b'])
      expect((await configure('ids-intake', [{ var: 'eve_file', value }])).status, value).toBe(422);
    const port = await configure('syslog', [{ var: 'port', value: '70000' }]);
    expect(port.status).toBe(422);
    expect(port.body.message).toMatch(/port number/);
    for (const value of ['70000', '-1', '161;id', 'x'])
      expect(
        (await configure('discovery', [{ var: 'snmp_port', value }])).status,
        `snmp_port ${value}`,
      ).toBe(422);
    // The proxy URL may name a user, never a password; no shell syntax, no other scheme.
    for (const value of [
      'http://user:pass@127.0.0.1:3128',
      'ftp://127.0.0.1',
      'http://127.0.0.1:3128/$(id)',
      'http://127.0.0.1;id',
      '-http://127.0.0.1',
    ])
      expect((await configure('alert-delivery', [{ var: 'proxy_url', value }])).status, value).toBe(
        422,
      );
    const user = await configure('alert-delivery', [
      { var: 'proxy_url', value: 'http://alerts@127.0.0.1:3128' },
    ]);
    expect(user.status).toBe(200);
    await configure('alert-delivery', []);
    // A secret without a rule stores injection text literally (sealed), never interpreted.
    const discovery = await configure('discovery', [
      { var: 'snmp_community', value: '$(id);`id` -x' },
    ]);
    expect(discovery.status).toBe(200);
    expect((await get('discovery')).body.config).toEqual([
      { var: 'snmp_community', value: SENTINEL },
    ]);
    await configure('discovery', []);
  });

  it('answers 404 {message} for an unknown daemon', async () => {
    const res = await configure(999_999, []);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Daemon not found' });
  });
});

describe('POST /api/daemon/{id}/start', () => {
  it('requires start_auto as a boolean, stores it and starts the daemon', async () => {
    const id = (await get('url-monitors')).body.id as number;
    for (const body of [{}, { start_auto: 'yes' }, { start_auto: 1 }, { start_auto: null }]) {
      const res = await h.request('POST', `/api/daemon/${id}/start`, { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body)).toEqual(['message']);
    }
    expect((await get(String(id))).body.start_auto).toBe(true);
    await h.appliance.registry.stop('url-monitors');
    const res = await h.request('POST', `/api/daemon/${id}/start`, {
      token: admin,
      body: { start_auto: false },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'url-monitors is running' });
    expect(h.appliance.registry.status('url-monitors').state).toBe('running');
    expect((await get(String(id))).body.start_auto).toBe(false);
    const missing = await h.request('POST', '/api/daemon/999999/start', {
      token: admin,
      body: { start_auto: true },
    });
    expect(missing.status).toBe(404);
  });
});

describe('reload_failed and log redaction (DaemonsService over a real registry)', () => {
  it('saves the configuration and reports reload_failed when the engine does not restart', async () => {
    const db = openDatabase(':memory:');
    migrate(db, 0);
    const registry = new EngineRegistry();
    let starts = 0;
    registry.register({
      name: 'syslog',
      start: async () => {
        if (++starts > 1) throw new Error('port in use');
      },
      stop: async () => {},
    });
    registry.register({
      name: 'scheduler',
      shared: true,
      start: async () => {},
      stop: async () => {},
    });
    await registry.startAll();
    const box = new SecretBox(Buffer.alloc(32, 7));
    const service = new DaemonsService(db, { now: () => 1 }, box, registry);
    expect(service.find('scheduler')).toBeUndefined();
    const row = service.find('syslog');
    expect(row).toBeDefined();
    const result = await service.configure(row!, [{ var: 'port', value: '5514' }]);
    expect(result).toMatchObject({ ok: true, reloaded: false, error: 'port in use' });
    expect(service.view(row!).config).toEqual([{ var: 'port', value: '5514' }]);
    db.close();
  });

  it('a daemon with start_auto off stays stopped at the next boot; start starts it', async () => {
    const db = openDatabase(':memory:');
    migrate(db, 0);
    const boot = async () => {
      const registry = new EngineRegistry();
      registry.register({ name: 'url-monitors', start: async () => {}, stop: async () => {} });
      await registry.startAll((name) => startsAutomatically(db, name));
      return registry;
    };
    const box = new SecretBox(Buffer.alloc(32, 7));
    const first = await boot();
    const service = new DaemonsService(db, { now: () => 1 }, box, first);
    expect(first.status('url-monitors').state).toBe('running');
    const row = service.find('url-monitors')!;
    await service.start(row, false);
    const second = await boot();
    expect(second.status('url-monitors').state).toBe('stopped');
    const again = new DaemonsService(db, { now: () => 2 }, box, second);
    expect((await again.start(again.find('url-monitors')!, true)).state).toBe('running');
    expect((await boot()).status('url-monitors').state).toBe('running');
    db.close();
  });

  it('never writes a daemon value to the log', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    log.info({ config: [{ var: 'proxy_password', value: CANARY }] }, 'a');
    log.info({ body: { config: [{ var: 'proxy_password', value: CANARY }] } }, 'b');
    log.info({ vars: { proxy_password: CANARY } }, 'c');
    expect(lines.join('')).not.toContain(CANARY);
    expect(lines).toHaveLength(3);
  });
});
