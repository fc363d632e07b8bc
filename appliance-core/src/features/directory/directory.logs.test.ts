/**
 * Process-level: the built appliance (`appliance-core/dist/server.js`, debug logging) with a real
 * slapd. A canary bind password goes through every directory route and sign-in, successes and
 * failures (wrong password, bad body, a directory that refuses the connection); it must appear
 * in no response, error body, /openapi.json, nor anywhere in the appliance's stdout and stderr.
 * Also: `verify_tls` succeeds once the directory's certificate is trusted (NODE_EXTRA_CA_CERTS).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCore } from '../../../../test/harness/build-core.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { startServer, stopServer, type Started } from '../../../../test/harness/process.js';
import { groupLdif, personLdif, startSlapd, type Slapd } from '../../../../test/harness/slapd.js';

const HAVE = havePeer('slapd', 'slapd') && havePeer('ldapadd', 'ldap-utils');
const CANARY = 'Canary-Bind-Pw-logs-5d21';
const ADMIN = 'Logs-Passw0rd';
const agent = new Agent({ connect: { rejectUnauthorized: false } });

describe.skipIf(!HAVE)('the bind password never reaches the logs', () => {
  let ldap: Slapd;
  let server: Started;
  let dataDir: string;
  let token: string;
  const texts: string[] = [];

  const call = async (method: string, urlPath: string, body?: unknown, auth = true) => {
    const res = await request(`${server.url}${urlPath}`, {
      method: method as never,
      dispatcher: agent,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(auth && token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    texts.push(text);
    return { status: res.statusCode, text, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    buildCore();
    ldap = await startSlapd({ adminPassword: CANARY });
    ldap.add(
      [
        personLdif(ldap.suffix, { uid: 'alice', password: 'alice-Pw1', mail: 'alice@example.org' }),
        groupLdif(`cn=netops,ou=groups,${ldap.suffix}`, 'netops', [
          `uid=alice,ou=people,${ldap.suffix}`,
        ]),
      ].join('\n'),
    );
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-ldap-logs-'));
    server = await startServer({
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_ADMIN_PASSWORD: ADMIN,
      APPLIANCE_LOG_LEVEL: 'debug',
      // The operator's way to trust a private directory CA (verify_tls, below).
      NODE_EXTRA_CA_CERTS: path.join(ldap.dir, 'cert.pem'),
    });
    const login = await call('POST', '/api/login', { email: 'admin', password: ADMIN }, false);
    token = login.body.access_token;
  }, 180_000);

  afterAll(async () => {
    if (server) await stopServer(server);
    await ldap?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('through config, test, groups, sign-in and sync', async () => {
    const config = {
      enabled: true,
      host: '127.0.0.1',
      port: ldap.port,
      use_tls: true,
      verify_tls: false,
      base_dn: ldap.suffix,
      bind_dn: ldap.adminDn,
      bind_password: CANARY,
      auto_provision: true,
      timeout: 2,
    };
    expect((await call('POST', '/api/ldap/config', config)).body.status).toBe(201);
    expect((await call('POST', '/api/ldap/test', config)).body.status).toBe(201);
    // verify_tls with the directory's certificate trusted through NODE_EXTRA_CA_CERTS.
    const verified = await call('POST', '/api/ldap/test', { ...config, verify_tls: true });
    expect(verified.body).toMatchObject({ status: 201, groups_found: 1 });
    const ldaps = {
      ...config,
      verify_tls: true,
      use_tls: false,
      use_ssl: true,
      port: ldap.ldapsPort,
    };
    expect((await call('POST', '/api/ldap/test', ldaps)).body.status).toBe(201);
    // Failures: wrong-typed body holding the canary, bad length, a refused connection.
    await call('POST', '/api/ldap/test', { ...config, port: 'x' });
    await call('POST', '/api/ldap/config', { ...config, host: 'h'.repeat(300) });
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(
      (await call('POST', '/api/ldap/test', { ...config, port: closedPort })).body.status,
    ).toBe(false);
    expect((await call('GET', '/api/ldap/groups?search=net')).body.groups).toHaveLength(1);
    expect((await call('GET', '/api/ldap/config')).text).not.toContain('bind_password');
    const signIn = await call(
      'POST',
      '/api/login',
      { email: 'alice', password: 'alice-Pw1' },
      false,
    );
    expect(signIn.body.status).toBe(201);
    await call('POST', '/api/login', { email: 'alice', password: CANARY }, false);
    expect((await call('POST', '/api/ldap/sync')).body.status).toBe(201);
    // A directory that refuses the connection during sign-in (logged as a warning).
    await call('POST', '/api/ldap/config', { ...config, port: closedPort });
    await call('POST', '/api/login', { email: 'alice', password: 'alice-Pw1' }, false);
    const openapi = await call('GET', '/openapi.json', undefined, false);
    expect(openapi.text).toContain('/api/ldap/test');

    for (const text of texts) expect(text).not.toContain(CANARY);
    const logs = server.stdout() + server.stderr();
    expect(logs).toContain('directory sign-in');
    expect(logs).not.toContain(CANARY);
  });
});
