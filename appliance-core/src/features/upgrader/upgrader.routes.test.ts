/**
 * The OS upgrade bootstrap endpoints over HTTP against a real appliance whose root helper is the
 * real helper server (host-helper/) on a temp Unix socket, with its command runner injected and
 * its host files in a temp directory: no workflow, package install or unit ever runs. A second
 * appliance points at a socket nobody serves (a laptop, CI): the honest status and the spec's
 * failure shapes. The token never reaches the appliance's log (captured at trace level) or the
 * audit log.
 */
import fs from 'node:fs';
import type { Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import {
  listenRootHelper,
  RootHelper,
  serveRootHelper,
  type CommandResult,
  type HelperPaths,
} from '../../host-helper/root-helper.server.js';
import { REDACT_PATHS } from '../../platform/logging/logger.js';
import { APPLIANCE_PACKAGE_VERSION } from './index.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const TOKEN_OF = () =>
  `tok_${'x'.repeat(8)}${Math.random().toString(36).slice(2, 12)}${'Q'.repeat(24)}`;

let dir: string;
let paths: HelperPaths;
let server: Server;
let h: Harness;
let bare: Harness;
let sa: string;
let system: string;
const logLines: string[] = [];
let calls: { program: string; args: readonly string[] }[] = [];
/** The host as the injected runner sees it. */
const host = {
  installed: false,
  active: false,
  startFails: false,
  writesToken: true,
  tokens: [] as string[],
};
const helperLog: string[] = [];

const run = async (program: string, args: readonly string[]): Promise<CommandResult> => {
  calls.push({ program, args });
  if (program === 'dpkg-query')
    return host.installed
      ? { code: 0, stdout: 'install ok installed', stderr: '' }
      : { code: 1, stdout: '', stderr: 'no packages found' };
  if (program === 'apt-get') {
    host.installed = true;
    return { code: 0, stdout: '', stderr: '' };
  }
  if (program === 'systemctl' && args[0] === 'start') {
    if (host.startFails)
      return { code: 1, stdout: '', stderr: 'Job for netmon-appliance-upgrader.service failed.' };
    // What the upgrader does when it starts: a fresh token in its token file (starting an active
    // unit is a no-op for systemd).
    if (host.active) return { code: 0, stdout: '', stderr: '' };
    host.active = true;
    if (host.writesToken) {
      const token = TOKEN_OF();
      host.tokens.push(token);
      fs.mkdirSync(path.dirname(paths.upgraderTokenFile), { recursive: true });
      fs.writeFileSync(paths.upgraderTokenFile, `${token}\n`, { mode: 0o600 });
    }
    return { code: 0, stdout: '', stderr: '' };
  }
  if (program === 'systemctl' && args[0] === 'stop') host.active = false;
  if (program === 'systemctl' && args[0] === 'is-active')
    return { code: 3, stdout: 'inactive\n', stderr: '' };
  if (program === 'systemctl' && args[0] === 'is-enabled')
    return { code: 1, stdout: 'disabled\n', stderr: '' };
  return { code: 0, stdout: '', stderr: '' };
};

const bundle = () => {
  fs.mkdirSync(paths.upgraderPackageDir, { recursive: true });
  fs.writeFileSync(
    path.join(paths.upgraderPackageDir, 'netmon-appliance-upgrader_0.1.0_all.deb'),
    'deb',
  );
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrader-routes-'));
  paths = {
    networkFile: path.join(dir, 'network'),
    timesyncdFile: path.join(dir, 'timesyncd.conf'),
    upgraderPackageDir: path.join(dir, 'upgrader'),
    upgraderTokenFile: path.join(dir, 'run/token'),
    upgraderEnvFile: path.join(dir, 'upgrader.env'),
    osRelease: path.join(dir, 'os-release'),
    zoneinfo: path.join(dir, 'zoneinfo'),
  };
  fs.writeFileSync(paths.osRelease, 'VERSION_CODENAME=trixie\n');
  const socketPath = path.join(dir, 'root-helper.sock');
  server = serveRootHelper(
    new RootHelper({
      run,
      paths,
      tokenWait: { attempts: 3, intervalMs: 5 },
      log: (line) => helperLog.push(line),
    }),
  );
  await listenRootHelper(server, { socketPath });
  const logger = pino(
    { level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => void logLines.push(line) },
  );
  h = await startAppliance({ APPLIANCE_ROOT_HELPER_SOCKET: socketPath }, { logger });
  bare = await startAppliance({ APPLIANCE_ROOT_HELPER_SOCKET: path.join(dir, 'nobody.sock') });
  sa = await h.login();
  system = (await h.userWith(['system', 'users', 'api'])).token;
});
afterAll(async () => {
  await h.close();
  await bare.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  calls = [];
  host.startFails = false;
  host.writesToken = true;
});

describe('the sa gate', () => {
  it('denies every route to a caller without sa (401, legacy body) and runs nothing', async () => {
    for (const [method, url] of [
      ['GET', '/api/osUpgrade/info'],
      ['POST', '/api/osUpgrade/install'],
      ['POST', '/api/osUpgrade/start'],
      ['POST', '/api/osUpgrade/stop'],
    ] as const) {
      const res = await h.request(method, url, { token: system });
      expect(res.status, url).toBe(401);
      expect(res.body, url).toEqual(DENIED);
      expect((await h.request(method, url, { token: null })).status, url).toBe(401);
    }
    expect(calls).toEqual([]);
  });
});

describe('on a host with the package', () => {
  it('info: the status resource, database_clusters empty, the version of the package', async () => {
    const res = await h.request('GET', '/api/osUpgrade/info', { token: sa });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      codename: 'trixie',
      appliance_version: APPLIANCE_PACKAGE_VERSION,
      database_clusters: [],
      upgrader_installed: false,
      upgrader_active: 'inactive',
      upgrader_enabled: 'disabled',
      upgrader_package_available: false,
    });
    expect(APPLIANCE_PACKAGE_VERSION).toBe(
      JSON.parse(fs.readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'))
        .version,
    );
  });

  it('install: 404 without a bundled package, then installs it, then answers already_installed', async () => {
    const missing = await h.request('POST', '/api/osUpgrade/install', { token: sa });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      status: 404,
      message: 'No upgrader package is bundled with this appliance',
    });
    bundle();
    expect(
      (await h.request('GET', '/api/osUpgrade/info', { token: sa })).body
        .upgrader_package_available,
    ).toBe(true);
    const first = await h.request('POST', '/api/osUpgrade/install', {
      token: sa,
      body: { ignored: true },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true });
    expect(calls.filter((c) => c.program === 'apt-get')).toHaveLength(1);
    const again = await h.request('POST', '/api/osUpgrade/install', { token: sa });
    expect(again.body).toEqual({ ok: true, already_installed: true });
    expect(calls.filter((c) => c.program === 'apt-get')).toHaveLength(1);
    expect(
      (await h.request('GET', '/api/osUpgrade/info', { token: sa })).body.upgrader_installed,
    ).toBe(true);
  });

  it('start: the URL on the host the caller used and a fresh one-time token; stop invalidates it', async () => {
    host.installed = true;
    const res = await h.request('POST', '/api/osUpgrade/start', { token: sa });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const token = host.tokens.at(-1) as string;
    expect(res.body).toEqual({ url: 'https://127.0.0.1:8444/', token });
    // Returned once: the token file is gone, a second start answers the spec's 500.
    expect(fs.existsSync(paths.upgraderTokenFile)).toBe(false);
    const twice = await h.request('POST', '/api/osUpgrade/start', { token: sa });
    expect(twice.status).toBe(500);
    expect(twice.body).toEqual({ status: 500, message: 'The upgrader token file is unreadable' });
    const stop = await h.request('POST', '/api/osUpgrade/stop', { token: sa });
    expect(stop.status).toBe(200);
    expect(stop.body).toEqual({ ok: true });
    expect(calls.at(-1)).toEqual({
      program: 'systemctl',
      args: ['stop', 'netmon-appliance-upgrader.service'],
    });
    expect((await h.request('POST', '/api/osUpgrade/stop', { token: sa })).body).toEqual({
      ok: true,
    });
    const fresh = await h.request('POST', '/api/osUpgrade/start', { token: sa });
    expect(fresh.body.token).toBe(host.tokens.at(-1));
    expect(fresh.body.token).not.toBe(token);
    await h.request('POST', '/api/osUpgrade/stop', { token: sa });
  });

  it('start: 500 when the unit fails to start or writes no token', async () => {
    host.installed = true;
    host.startFails = true;
    const failed = await h.request('POST', '/api/osUpgrade/start', { token: sa });
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({
      status: 500,
      message:
        'The upgrader service failed to start: Job for netmon-appliance-upgrader.service failed.',
    });
    host.startFails = false;
    host.writesToken = false;
    host.active = false;
    const noToken = await h.request('POST', '/api/osUpgrade/start', { token: sa });
    expect(noToken.status).toBe(500);
    expect(noToken.body).toEqual({ status: 500, message: 'The upgrader token file is unreadable' });
  });

  it('never writes a token to the log or the audit log, and audits each action', async () => {
    expect(host.tokens.length).toBeGreaterThan(0);
    const log = logLines.join('\n');
    // Request logging is off; the log holds the boot lines (and any error) at trace level.
    expect(log).toContain('Server listening');
    expect(helperLog.join('\n')).toContain('upgrader.start: ok');
    const audit = JSON.stringify(h.appliance.db.prepare('SELECT * FROM audit_log').all());
    for (const token of host.tokens) {
      expect(log).not.toContain(token);
      expect(helperLog.join('\n')).not.toContain(token);
      expect(audit).not.toContain(token);
    }
    const actions = h.appliance.db
      .prepare("SELECT action, outcome FROM audit_log WHERE action LIKE 'upgrader.%' ORDER BY id")
      .all();
    expect(actions).toContainEqual({ action: 'upgrader.start', outcome: 'success' });
    expect(actions).toContainEqual({ action: 'upgrader.start', outcome: 'failure' });
    expect(actions).toContainEqual({ action: 'upgrader.install', outcome: 'success' });
    expect(actions).toContainEqual({ action: 'upgrader.stop', outcome: 'success' });
  });
});

describe('on a host without the mechanism (no root helper)', () => {
  it('says so in the status and answers the spec failure shapes', async () => {
    const token = await bare.login();
    const info = await bare.request('GET', '/api/osUpgrade/info', { token });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      appliance_version: APPLIANCE_PACKAGE_VERSION,
      database_clusters: [],
      upgrader_installed: false,
      upgrader_active: 'unavailable',
      upgrader_enabled: 'unavailable',
      upgrader_package_available: false,
    });
    expect(typeof info.body.codename).toBe('string');
    const install = await bare.request('POST', '/api/osUpgrade/install', { token });
    expect(install.status).toBe(404);
    expect(install.body).toEqual({
      status: 404,
      message: 'No upgrader package is bundled with this appliance',
    });
    const start = await bare.request('POST', '/api/osUpgrade/start', { token });
    expect(start.status).toBe(500);
    expect(start.body).toEqual({
      status: 500,
      message: `The upgrader service failed to start: the root helper is not reachable at ${path.join(dir, 'nobody.sock')} (ENOENT)`,
    });
    const stop = await bare.request('POST', '/api/osUpgrade/stop', { token });
    expect(stop.status).toBe(500);
    expect(stop.body).toEqual({
      status: 500,
      message: `The upgrader service failed to stop: the root helper is not reachable at ${path.join(dir, 'nobody.sock')} (ENOENT)`,
    });
  });
});

describe('the logger', () => {
  it('redacts a token logged as a field, at any of the first three levels', () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
      { write: (line: string) => void lines.push(line) },
    );
    log.info({ token: 'canary-1' }, 'top');
    log.info({ answer: { url: 'https://x:8444/', token: 'canary-2' } }, 'nested');
    log.info({ reply: { body: { token: 'canary-3' } } }, 'deeper');
    expect(lines.join('\n')).not.toMatch(/canary-[123]/);
    expect(lines.join('\n')).toContain('https://x:8444/');
  });
});
