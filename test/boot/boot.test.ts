/**
 * The boot contract (ARCHITECTURE.md), exercised on the real `appliance-core/dist/server.js`:
 * first start, the ready line, SIGTERM within 5 s, data kept across starts, and one-line
 * errors with exit code 1 for a corrupt or unusable data dir, bad configuration or a busy port.
 */
import { fork } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import dgram from 'node:dgram';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../appliance-core/src/platform/db/database.js';
import { buildCore } from '../harness/build-core.js';
import { findProgram, havePeer } from '../harness/peers.js';
import { ROOT, runServer, SERVER, startServer, stopServer } from '../harness/process.js';

const agent = new Agent({ connect: { rejectUnauthorized: false } });
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-boot-'));
  dirs.push(dir);
  return dir;
};
beforeAll(() => buildCore(), 120_000);
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function call(url: string, method: string, urlPath: string, body?: unknown, token?: string) {
  const res = await request(`${url}${urlPath}`, {
    method: method as never,
    dispatcher: agent,
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
}

/** Exits 1 with one line on stderr that names the problem, and no stack trace. */
async function expectOneLineFailure(run: ReturnType<typeof runServer>, pattern: RegExp) {
  const { code } = await run.exited;
  const stderr = run.stderr().trim();
  expect(code).toBe(1);
  expect(stderr.split('\n')).toHaveLength(1);
  expect(stderr).toMatch(/^appliance: /);
  expect(stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at |\.js:\d+/);
}

describe('first start on an empty data dir', () => {
  it('creates everything, prints the ready line and the generated admin password, answers, and stops on SIGTERM', async () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const server = await startServer({ APPLIANCE_DATA_DIR: dataDir });
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
      expect(server.stdout()).toContain(password);
      expect(fs.statSync(path.join(dataDir, 'initial-admin-password')).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
      expect(fs.existsSync(path.join(dataDir, 'appliance.db'))).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'tls', 'cert.pem'))).toBe(true);
      // Everything the appliance creates is private, whatever the umask (the test runs with 022).
      for (const file of [
        'appliance.db',
        'appliance.db-wal',
        'appliance.db-shm',
        'tls/cert.pem',
        'tls/key.sealed',
      ])
        expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
      for (const dir of ['.', 'tls'])
        expect(fs.statSync(path.join(dataDir, dir)).mode & 0o777, dir).toBe(0o700);

      const info = await call(server.url, 'POST', '/api/information');
      expect(info.status).toBe(200);
      expect(info.body).toMatchObject({ status: 201, hasError: false });
      const login = await call(server.url, 'POST', '/api/login', {
        email: 'admin@appliance.local',
        password,
      });
      expect(login.body.status).toBe(201);
      const me = await call(server.url, 'GET', '/api/me', undefined, login.body.access_token);
      expect(me.body).toMatchObject({
        id: 1,
        username: 'admin',
        email: 'admin@appliance.local',
        active: true,
      });
    } finally {
      const stopped = await stopServer(server);
      expect(stopped.code).toBe(0);
      expect(stopped.ms).toBeLessThan(5000);
    }
  });
});

describe('an older data dir', () => {
  it('is tightened at start: database, WAL and directories back to 0600 / 0700', async () => {
    const dataDir = tempDir();
    const env = { APPLIANCE_DATA_DIR: dataDir, APPLIANCE_ADMIN_PASSWORD: 'Modes-Passw0rd' };
    const first = await startServer(env);
    expect((await stopServer(first)).code).toBe(0);
    fs.chmodSync(dataDir, 0o755);
    fs.chmodSync(path.join(dataDir, 'appliance.db'), 0o644);
    fs.chmodSync(path.join(dataDir, 'secret.key'), 0o644);
    const second = await startServer(env);
    try {
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const file of ['appliance.db', 'appliance.db-wal', 'appliance.db-shm', 'secret.key'])
        expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
    } finally {
      expect((await stopServer(second)).code).toBe(0);
    }
  });
});

describe('the ready report', () => {
  it('prints the collector ports after the ready line and posts {type, url, certSha256, ports} to a forked parent', async () => {
    const dataDir = tempDir();
    let out = '';
    const child = fork(SERVER, [], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        APPLIANCE_DATA_DIR: dataDir,
        APPLIANCE_BIND: '127.0.0.1',
        APPLIANCE_HTTPS_PORT: '0',
        APPLIANCE_SYSLOG_PORT: 'auto',
        APPLIANCE_NETFLOW_PORT: 'auto',
        APPLIANCE_LOG_LEVEL: 'warn',
        APPLIANCE_ADMIN_PASSWORD: 'Ready-Passw0rd',
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const ready = await new Promise<any>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no ready message within 20 s')), 20_000);
        child.on('message', (message) => {
          clearTimeout(timer);
          resolve(message);
        });
      });
      const cert = new X509Certificate(fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem')));
      expect(ready).toEqual({
        type: 'ready',
        url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
        certSha256: cert.fingerprint256,
        // Syslog (features/logs) on UDP and TCP, NetFlow/IPFIX (features/flows) on UDP.
        ports: {
          syslog: { udp: expect.any(Number), tcp: expect.any(Number) },
          netflow: { udp: expect.any(Number) },
        },
      });
      expect(ready.ports.syslog.tcp).toBe(ready.ports.syslog.udp);
      expect(ready.certSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      // The served certificate is the one announced.
      const served = await new Promise<string>((resolve, reject) => {
        const { port } = new URL(ready.url);
        const socket = tls.connect(
          { host: '127.0.0.1', port: Number(port), rejectUnauthorized: false },
          () => {
            resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
            socket.end();
          },
        );
        socket.on('error', reject);
      });
      expect(served).toBe(ready.certSha256);
      expect(out).toContain(
        `appliance listening on ${ready.url}\ncollector ports: ${JSON.stringify(ready.ports)}\n`,
      );
      // The host-change mode is printed at start (docs/features/settings.md).
      expect(out).toContain('network mode: dry-run\n');
    } finally {
      child.kill('SIGTERM');
      expect((await exited).code).toBe(0);
    }
  });
});

describe('second start on the same data dir', () => {
  it('keeps users, tokens (with the last use SIGTERM flushed) and the admin password, and prints no new password', async () => {
    const dataDir = tempDir();
    const env = { APPLIANCE_DATA_DIR: dataDir, APPLIANCE_ADMIN_PASSWORD: 'First-Passw0rd' };
    const first = await startServer(env);
    let pat: string;
    try {
      expect(fs.existsSync(path.join(dataDir, 'initial-admin-password'))).toBe(false);
      const login = await call(first.url, 'POST', '/api/login', {
        email: 'admin',
        password: 'First-Passw0rd',
      });
      const created = await call(
        first.url,
        'POST',
        '/api/tokens',
        { name: 'kept across restarts' },
        login.body.access_token,
      );
      expect(created.status).toBe(201);
      pat = created.body.access_token;
      const user = await call(
        first.url,
        'POST',
        '/api/createUser',
        {
          first_name: 'Kay',
          last_name: 'Lee',
          email: 'kay@example.test',
          username: 'kay',
          password: 'Kay-Passw0rd',
        },
        login.body.access_token,
      );
      expect(user.body).toEqual({ status: 201 });
      // A use of the token right before SIGTERM: its last_used_at is batched in memory (written
      // every 5 s), so only the flush at shutdown can have stored it.
      expect((await call(first.url, 'GET', '/api/me', undefined, pat)).status).toBe(200);
    } finally {
      expect((await stopServer(first)).code).toBe(0);
    }
    const db = openDatabase(path.join(dataDir, 'appliance.db'), { readonly: true });
    try {
      const row = db
        .prepare("SELECT last_used_at FROM access_tokens WHERE name = 'kept across restarts'")
        .get() as { last_used_at: number | null };
      expect(row.last_used_at).toEqual(expect.any(Number));
    } finally {
      db.close();
    }
    const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');

    const second = await startServer({
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_ADMIN_PASSWORD: 'Ignored-Passw0rd',
    });
    try {
      expect(second.stdout()).not.toMatch(/initial admin password/);
      expect((await call(second.url, 'GET', '/api/me', undefined, pat)).body.username).toBe(
        'admin',
      );
      expect(
        (
          await call(second.url, 'POST', '/api/login', {
            email: 'admin',
            password: 'First-Passw0rd',
          })
        ).body.status,
      ).toBe(201);
      expect(
        (await call(second.url, 'POST', '/api/login', { email: 'kay', password: 'Kay-Passw0rd' }))
          .body.status,
      ).toBe(201);
      expect(fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8')).toBe(cert);
    } finally {
      expect((await stopServer(second)).code).toBe(0);
    }
  });
});

describe('TLS', () => {
  it('offers TLS 1.2 and 1.3, refuses 1.1, and sends HSTS', async () => {
    const server = await startServer({
      APPLIANCE_DATA_DIR: tempDir(),
      APPLIANCE_ADMIN_PASSWORD: 'Tls-Passw0rd',
    });
    try {
      const port = Number(new URL(server.url).port);
      const handshake = (options: tls.ConnectionOptions) =>
        new Promise<string>((resolve, reject) => {
          const socket = tls.connect(
            { host: '127.0.0.1', port, rejectUnauthorized: false, ...options },
            () => {
              resolve(socket.getProtocol() ?? '');
              socket.end();
            },
          );
          socket.on('error', reject);
        });
      expect(await handshake({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).toBe('TLSv1.2');
      expect(await handshake({})).toBe('TLSv1.3');
      await expect(
        handshake({ minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' }),
      ).rejects.toMatchObject({ code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' }); // the server's refusal, not any failure
      const info = await call(server.url, 'POST', '/api/information');
      expect(info.headers['strict-transport-security']).toMatch(/max-age=/);
    } finally {
      await stopServer(server);
    }
  });
});

describe('start-up failures give one clear line and exit code 1', () => {
  it('a corrupt database', async () => {
    const dataDir = tempDir();
    fs.writeFileSync(
      path.join(dataDir, 'appliance.db'),
      'this is not a database, just some text that is long enough '.repeat(100),
    );
    await expectOneLineFailure(
      runServer({ APPLIANCE_DATA_DIR: dataDir }),
      /cannot open database .*appliance\.db/,
    );
  });

  it('a data dir that cannot be created', async () => {
    const file = path.join(tempDir(), 'a-file');
    fs.writeFileSync(file, 'x');
    await expectOneLineFailure(
      runServer({ APPLIANCE_DATA_DIR: path.join(file, 'data') }),
      /data directory .* is not usable \(ENOTDIR\)/,
    );
  });

  // As root the appliance could write anywhere, so the check runs it as `nobody`; as another
  // user it runs directly against a directory that user may not write (never skipped).
  it('a data dir the appliance user may not write', async () => {
    const dataDir = tempDir();
    const asRoot = process.getuid?.() === 0;
    if (asRoot && !havePeer('runuser', 'util-linux'))
      throw new Error('runuser (util-linux) is needed to run this check as nobody');
    fs.chmodSync(dataDir, asRoot ? 0o755 : 0o555);
    try {
      const run = runServer(
        { APPLIANCE_DATA_DIR: dataDir },
        [],
        asRoot ? { command: [findProgram('runuser') as string, '-u', 'nobody', '--'] } : {},
      );
      await expectOneLineFailure(run, /data directory .* is not usable \(EACCES\)/);
    } finally {
      fs.chmodSync(dataDir, 0o700);
    }
  });

  it('a tablespace directory that does not exist', async () => {
    const missing = path.join(tempDir(), 'no-such-disk');
    await expectOneLineFailure(
      runServer({ APPLIANCE_DATA_DIR: tempDir(), APPLIANCE_TABLESPACES: `archive=${missing}` }),
      /tablespace archive: directory .*no-such-disk does not exist/,
    );
  });

  it('bad configuration lists every bad key', async () => {
    const run = runServer({ APPLIANCE_DATA_DIR: tempDir(), APPLIANCE_HTTPS_PORT: 'https' }, [
      '--bogus-flag',
      '1',
    ]);
    await expectOneLineFailure(
      run,
      /APPLIANCE_HTTPS_PORT.*not a whole number.*unknown option --bogus-flag|unknown option --bogus-flag.*APPLIANCE_HTTPS_PORT/,
    );
  });

  it('a port already in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await expectOneLineFailure(
        runServer({
          APPLIANCE_DATA_DIR: tempDir(),
          APPLIANCE_HTTPS_PORT: String(port),
          APPLIANCE_ADMIN_PASSWORD: 'Port-Passw0rd',
        }),
        /already in use/,
      );
    } finally {
      blocker.close();
    }
  });

  it('a syslog port already in use (UDP)', async () => {
    const blocker = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => blocker.bind(0, '127.0.0.1', resolve));
    const port = blocker.address().port;
    try {
      await expectOneLineFailure(
        runServer({
          APPLIANCE_DATA_DIR: tempDir(),
          APPLIANCE_SYSLOG_PORT: String(port),
          APPLIANCE_ADMIN_PASSWORD: 'Port-Passw0rd',
        }),
        new RegExp(`^appliance: syslog: UDP 127\\.0\\.0\\.1:${port} is already in use$`),
      );
    } finally {
      blocker.close();
    }
  });
});
