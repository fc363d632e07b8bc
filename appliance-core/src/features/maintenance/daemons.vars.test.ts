/**
 * How engines read daemon variables (features/maintenance daemon catalogue): the variables as an
 * engine gets them (secrets opened, empty values and unopenable secrets left out, another
 * daemon's never mixed in), and each engine's reading of its own: a collector port (a variable
 * left out falls back to the env/CLI setting), the discovery fallback community, the delivery
 * proxy and its Proxy-Authorization.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { portSettingOf } from '../../platform/net/collector-ports.js';
import { SecretBox } from '../../platform/security/secret-box.js';
import { proxyOfVars } from '../alerts/delivery/delivery.service.js';
import { proxyTargetOf } from '../alerts/delivery/outlet-http.service.js';
import { fallbackCommunityOf } from '../discovery/discovery.engine.js';
import { daemonVarsForEngine, ensureDaemons, replaceDaemonVars } from './daemons.repository.js';

let dir: string;
let db: DB;
const box = new SecretBox(Buffer.alloc(32, 3));

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daemon-vars-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, Date.now());
  ensureDaemons(db, ['alert-delivery', 'syslog'], 0);
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const idOf = (name: string) =>
  db.prepare('SELECT id FROM daemons WHERE name = ?').pluck().get(name) as number;

describe('daemonVarsForEngine', () => {
  it('opens secrets, leaves out empty values and secrets that no longer open, and keeps daemons apart', () => {
    replaceDaemonVars(
      db,
      idOf('alert-delivery'),
      [
        { var: 'proxy_url', value: 'http://u@127.0.0.1:3128', sealed: 0 },
        { var: 'proxy_password', value: box.seal('pw-1'), sealed: 1 },
      ],
      1,
    );
    replaceDaemonVars(db, idOf('syslog'), [{ var: 'port', value: '', sealed: 0 }], 1);
    expect(daemonVarsForEngine(db, box, 'alert-delivery')).toEqual({
      proxy_url: 'http://u@127.0.0.1:3128',
      proxy_password: 'pw-1',
    });
    expect(daemonVarsForEngine(db, box, 'syslog')).toEqual({});
    expect(daemonVarsForEngine(db, box, 'unknown')).toEqual({});
    // Another data dir's key: the secret is left out (the engine falls back), never thrown.
    const otherBox = new SecretBox(Buffer.alloc(32, 4));
    expect(daemonVarsForEngine(db, otherBox, 'alert-delivery')).toEqual({
      proxy_url: 'http://u@127.0.0.1:3128',
    });
  });
});

describe('portSettingOf', () => {
  it('takes the variable when it is a port, else the configured setting', () => {
    expect(portSettingOf('5514', 514)).toBe(5514);
    expect(portSettingOf('0', 514)).toBe(0);
    expect(portSettingOf(undefined, 'auto')).toBe('auto');
    expect(portSettingOf('', 514)).toBe(514);
    for (const bad of ['65536', '99999', '-1', '01', '1e3', ' 514', '514;id'])
      expect(portSettingOf(bad, 2055), bad).toBe(2055);
    expect(portSettingOf('65535', 2055)).toBe(65535);
  });
});

describe('fallbackCommunityOf', () => {
  it('needs a community; the port defaults to 161', () => {
    expect(fallbackCommunityOf({})).toBeNull();
    expect(fallbackCommunityOf({ snmp_port: '1161' })).toBeNull();
    expect(fallbackCommunityOf({ snmp_community: 'c' })).toEqual({ community: 'c', port: 161 });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '1161' })).toEqual({
      community: 'c',
      port: 1161,
    });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '0' })).toEqual({
      community: 'c',
      port: 161,
    });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '70000' })).toEqual({
      community: 'c',
      port: 161,
    });
  });
});

describe('the delivery proxy', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

  it('is null without a URL, and carries the password when one is set', () => {
    expect(proxyOfVars({})).toBeNull();
    expect(proxyOfVars({ proxy_password: 'p' })).toBeNull();
    expect(proxyOfVars({ proxy_url: 'http://127.0.0.1:3128' })).toEqual({
      url: 'http://127.0.0.1:3128',
    });
    expect(proxyOfVars({ proxy_url: 'http://127.0.0.1:3128', proxy_password: 'p' })).toEqual({
      url: 'http://127.0.0.1:3128',
      password: 'p',
    });
  });

  it('connects to the proxy host and port, with Basic credentials of the URL user and the password', () => {
    expect(proxyTargetOf({ url: 'http://127.0.0.1:3128' })).toEqual({
      secure: false,
      host: '127.0.0.1',
      port: 3128,
      authorization: null,
    });
    expect(proxyTargetOf({ url: 'http://alerts@proxy.example.test', password: 'pw' })).toEqual({
      secure: false,
      host: 'proxy.example.test',
      port: 80,
      authorization: basic('alerts:pw'),
    });
    expect(proxyTargetOf({ url: 'https://[::1]', password: 'pw' })).toEqual({
      secure: true,
      host: '::1',
      port: 443,
      authorization: basic(':pw'),
    });
    expect(proxyTargetOf({ url: 'ftp://127.0.0.1' })).toBeNull();
    expect(proxyTargetOf({ url: 'not a url' })).toBeNull();
  });
});
