/**
 * The root helper against a temp Unix socket and a temp directory standing in for /etc, /run and
 * /usr/lib, with its command runner INJECTED (a recorder): nothing on this host changes. Proves
 * strict validation, refusal of unknown ops and fields, injection strings refused (or used
 * literally as one argument), the unit allowlist, the network rollback timer, and the upgrader ops.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT_HELPER_MAX_REQUEST } from '../platform/host/root-helper.protocol.js';
import {
  listenRootHelper,
  RootHelper,
  serveRootHelper,
  UPGRADER_UNIT,
  type CommandResult,
  type HelperPaths,
} from './root-helper.server.js';

interface Call {
  program: string;
  args: readonly string[];
}

let dir: string;
let calls: Call[];
let answers: Map<string, CommandResult>;
let paths: HelperPaths;
let logLines: string[];

const OK: CommandResult = { code: 0, stdout: '', stderr: '' };
const FAIL = (stderr: string): CommandResult => ({ code: 1, stdout: '', stderr });

/** The answer of a program (by "program verb" or program alone), else success. */
const run = async (program: string, args: readonly string[]) => {
  calls.push({ program, args: [...args] });
  return answers.get(`${program} ${args[0] ?? ''}`) ?? answers.get(program) ?? OK;
};

const helper = (options: Partial<ConstructorParameters<typeof RootHelper>[0]> = {}) =>
  new RootHelper({
    run,
    paths,
    secondMs: 5,
    tokenWait: { attempts: 3, intervalMs: 5 },
    log: (line) => logLines.push(line),
    systemdBooted: () => true,
    ...options,
  });

const req = (op: string, args: unknown = {}) => ({ v: 1, op, args });

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'root-helper-'));
  calls = [];
  answers = new Map();
  logLines = [];
  paths = {
    networkFile: path.join(dir, 'etc/network/interfaces.d/netmon-appliance'),
    timesyncdFile: path.join(dir, 'etc/systemd/timesyncd.conf.d/netmon-appliance.conf'),
    upgraderPackageDir: path.join(dir, 'usr/lib/netmon-appliance/upgrader'),
    upgraderTokenFile: path.join(dir, 'run/netmon-appliance-upgrader/token'),
    upgraderEnvFile: path.join(dir, 'etc/netmon-appliance/upgrader.env'),
    osRelease: path.join(dir, 'etc/os-release'),
    zoneinfo: path.join(dir, 'usr/share/zoneinfo'),
  };
  fs.mkdirSync(path.join(paths.zoneinfo, 'Europe'), { recursive: true });
  fs.writeFileSync(path.join(paths.zoneinfo, 'Europe/Paris'), 'TZif');
  fs.mkdirSync(path.dirname(paths.osRelease), { recursive: true });
  fs.writeFileSync(
    paths.osRelease,
    'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_CODENAME=trixie\n',
  );
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const INJECTIONS = [
  ';id',
  '$(id)',
  '`id`',
  'a%0aid',
  'a\nid',
  '-rf',
  '--help',
  'a b',
  'a\u0000b',
  'x'.repeat(10_240),
  '../../etc/passwd',
];

describe('the request envelope', () => {
  it('refuses unknown ops, versions, fields and shapes, and runs nothing', async () => {
    const h = helper();
    const bad: unknown[] = [
      null,
      [],
      'hostname.set',
      { v: 1, op: 'shell.exec', args: { cmd: 'id' } },
      { v: 1, op: 'constructor', args: {} },
      { v: 1, op: '__proto__', args: {} },
      { v: 2, op: 'upgrader.status', args: {} },
      { v: '1', op: 'upgrader.status', args: {} },
      { v: 1, op: 'upgrader.status' },
      { v: 1, op: 'upgrader.status', args: { extra: true } },
      { v: 1, op: 'upgrader.status', args: {}, extra: 1 },
      { v: 1, op: 'hostname.set', args: { hostname: 'ok', also: 'x' } },
      { v: 1, op: 'hostname.set', args: [] },
      JSON.parse('{"v":1,"op":"upgrader.status","args":{"__proto__":{"x":1}}}'),
    ];
    for (const request of bad) {
      const answer = await h.handle(request);
      expect(answer, JSON.stringify(request)).toMatchObject({ ok: false, code: 'refused' });
    }
    expect(calls).toEqual([]);
  });
});

describe('hostname, time, timezone, ntp', () => {
  it('sets a valid hostname with one argument array', async () => {
    expect(await helper().handle(req('hostname.set', { hostname: 'NMS-1.example.net' }))).toEqual({
      ok: true,
    });
    expect(calls).toEqual([
      { program: 'hostnamectl', args: ['set-hostname', 'nms-1.example.net'] },
    ]);
  });

  it('without systemd sets the running name with hostname (sethostname) and says it was not persisted', async () => {
    const h = helper({ systemdBooted: () => false });
    expect(await h.handle(req('hostname.set', { hostname: 'NMS-2' }))).toEqual({
      ok: true,
      output: { method: 'sethostname', persisted: false },
    });
    expect(calls).toEqual([{ program: 'hostname', args: ['nms-2'] }]);
    answers.set('hostname', FAIL('hostname: you must be root to change the host name'));
    expect(await h.handle(req('hostname.set', { hostname: 'nms-3' }))).toEqual({
      ok: false,
      code: 'failed',
      message: 'hostname: hostname: you must be root to change the host name',
    });
  });

  it('refuses every injection string as a hostname and runs nothing', async () => {
    const h = helper();
    for (const hostname of [...INJECTIONS, '', 'a-', '-a', 'a..b', `${'a'.repeat(64)}.x`, 42])
      expect(
        await h.handle(req('hostname.set', { hostname })),
        String(hostname).slice(0, 30),
      ).toMatchObject({
        ok: false,
        code: 'refused',
      });
    expect(calls).toEqual([]);
  });

  it('sets the time from whole unix seconds in range only', async () => {
    const h = helper();
    expect(await h.handle(req('time.set', { unix: 1_700_000_000 }))).toEqual({ ok: true });
    expect(calls).toEqual([{ program: 'date', args: ['-u', '--set=@1700000000'] }]);
    for (const unix of ['1700000000', 1.5, -1, 0, 5_000_000_000, '$(id)', null])
      expect(await h.handle(req('time.set', { unix }))).toMatchObject({ code: 'refused' });
    expect(calls).toHaveLength(1);
  });

  it('sets a timezone only when the host has it', async () => {
    const h = helper();
    expect(await h.handle(req('timezone.set', { tz: 'Europe/Paris' }))).toEqual({ ok: true });
    expect(calls).toEqual([{ program: 'timedatectl', args: ['set-timezone', 'Europe/Paris'] }]);
    for (const tz of [...INJECTIONS, 'Europe/Nowhere', 'Europe/../../os-release'])
      expect(await h.handle(req('timezone.set', { tz }))).toMatchObject({ code: 'refused' });
    expect(calls).toHaveLength(1);
  });

  it('writes the timesyncd drop-in, restarts timesyncd, and removes it for an empty list', async () => {
    const h = helper();
    expect(
      await h.handle(req('ntp.set', { servers: ['pool.ntp.org', '192.0.2.1', '2001:db8::1'] })),
    ).toEqual({
      ok: true,
    });
    expect(fs.readFileSync(paths.timesyncdFile, 'utf8')).toContain(
      '[Time]\nNTP=pool.ntp.org 192.0.2.1 2001:db8::1\n',
    );
    expect(calls).toEqual([
      { program: 'systemctl', args: ['restart', 'systemd-timesyncd.service'] },
    ]);
    for (const servers of [
      ['pool.ntp.org\nFallbackNTP=evil'],
      [';id'],
      'pool.ntp.org',
      Array(9).fill('a.b'),
    ])
      expect(await h.handle(req('ntp.set', { servers }))).toMatchObject({ code: 'refused' });
    expect(fs.readFileSync(paths.timesyncdFile, 'utf8')).not.toContain('evil');
    expect(await h.handle(req('ntp.set', { servers: [] }))).toEqual({ ok: true });
    expect(fs.existsSync(paths.timesyncdFile)).toBe(false);
  });

  it('reports a failing program as failed with its first stderr line', async () => {
    answers.set('hostnamectl', FAIL('Could not set hostname: Access denied\nmore'));
    expect(await helper().handle(req('hostname.set', { hostname: 'nms' }))).toEqual({
      ok: false,
      code: 'failed',
      message: 'hostnamectl: Could not set hostname: Access denied',
    });
  });
});

describe('service.action', () => {
  it('acts on allowlisted units only, by exact name', async () => {
    const h = helper();
    expect(
      await h.handle(req('service.action', { unit: 'ssh.service', action: 'restart' })),
    ).toEqual({
      ok: true,
    });
    expect(
      await h.handle(
        req('service.action', { unit: 'netmon-appliance.service', action: 'restart' }),
      ),
    ).toEqual({
      ok: true,
    });
    expect(calls).toEqual([
      { program: 'systemctl', args: ['restart', 'ssh.service'] },
      { program: 'systemctl', args: ['--no-block', 'restart', 'netmon-appliance.service'] },
    ]);
    for (const [unit, action] of [
      ['sshd.service', 'restart'],
      ['ssh.service;id', 'restart'],
      ['ssh', 'restart'],
      ['../ssh.service', 'restart'],
      ['ssh.service', 'kill'],
      ['ssh.service', 'mask'],
      ['ssh.service', '--force'],
    ])
      expect(
        await h.handle(req('service.action', { unit, action })),
        `${unit} ${action}`,
      ).toMatchObject({
        ok: false,
        code: 'refused',
      });
    expect(calls).toHaveLength(2);
  });
});

describe('network.apply with its confirm window', () => {
  const staticEth0 = {
    name: 'eth0',
    type: 'static',
    address: '192.0.2.10',
    netmask: '255.255.255.0',
    gateway: '192.0.2.1',
    dns: ['192.0.2.53'],
  };
  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };

  it('writes the interfaces file, restarts networking, and rolls back by itself when not confirmed', async () => {
    fs.mkdirSync(path.dirname(paths.networkFile), { recursive: true });
    fs.writeFileSync(paths.networkFile, 'auto eth0\niface eth0 inet dhcp\n');
    const h = helper();
    const answer = await h.handle(
      req('network.apply', { interfaces: [staticEth0], confirmSeconds: 10 }),
    );
    expect(answer).toEqual({ ok: true, output: { pending: true, confirmSeconds: 10 } });
    expect(fs.readFileSync(paths.networkFile, 'utf8')).toContain(
      'auto eth0\niface eth0 inet static\n    address 192.0.2.10\n    netmask 255.255.255.0\n    gateway 192.0.2.1\n    dns-nameservers 192.0.2.53\n',
    );
    expect(h.networkPending).toBe(true);
    // 10 "seconds" of 5 ms: the timer restores the previous file and restarts networking again.
    await waitFor(() => h.lastRollback !== null);
    expect(await h.lastRollback).toEqual({ ok: true });
    expect(fs.readFileSync(paths.networkFile, 'utf8')).toBe('auto eth0\niface eth0 inet dhcp\n');
    expect(h.networkPending).toBe(false);
    expect(calls).toEqual([
      { program: 'systemctl', args: ['restart', 'networking.service'] },
      { program: 'systemctl', args: ['restart', 'networking.service'] },
    ]);
  });

  it('keeps the change when confirmed in time, and refuses a confirm with nothing pending', async () => {
    const h = helper({ secondMs: 20 });
    await h.handle(
      req('network.apply', { interfaces: [{ name: 'eth1', type: 'dhcp' }], confirmSeconds: 10 }),
    );
    expect(
      await h.handle(
        req('network.apply', { interfaces: [{ name: 'eth1', type: 'dhcp' }], confirmSeconds: 10 }),
      ),
    ).toMatchObject({
      code: 'refused',
      message: 'a network change is waiting for confirmation',
    });
    expect(await h.handle(req('network.confirm'))).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 400));
    expect(h.lastRollback).toBeNull();
    expect(fs.readFileSync(paths.networkFile, 'utf8')).toContain('iface eth1 inet dhcp');
    expect(await h.handle(req('network.confirm'))).toMatchObject({ code: 'refused' });
    expect(calls).toHaveLength(1);
  });

  it('rolls back at once on network.rollback (no previous file: the file is removed)', async () => {
    const h = helper({ secondMs: 1000 });
    await h.handle(
      req('network.apply', { interfaces: [{ name: 'eth1', type: 'manual' }], confirmSeconds: 600 }),
    );
    expect(fs.existsSync(paths.networkFile)).toBe(true);
    expect(await h.handle(req('network.rollback'))).toEqual({ ok: true });
    expect(fs.existsSync(paths.networkFile)).toBe(false);
    expect(h.networkPending).toBe(false);
    expect(await h.handle(req('network.rollback'))).toMatchObject({ code: 'refused' });
  });

  it('restores the previous file at once when networking fails to restart', async () => {
    answers.set('systemctl restart', FAIL('Job for networking.service failed.'));
    const h = helper();
    const answer = await h.handle(
      req('network.apply', { interfaces: [staticEth0], confirmSeconds: 10 }),
    );
    expect(answer).toMatchObject({ ok: false, code: 'failed' });
    expect(fs.existsSync(paths.networkFile)).toBe(false);
    expect(h.networkPending).toBe(false);
  });

  it('refuses injection strings and bad values in every field, writing nothing', async () => {
    const h = helper();
    const bad: unknown[] = [
      ...INJECTIONS.map((name) => ({ name, type: 'dhcp' })),
      { name: 'eth0', type: 'ppp' },
      { ...staticEth0, address: '192.0.2.10; id' },
      { ...staticEth0, address: '192.0.2.10\n    up id' },
      { ...staticEth0, address: '192.0.2.10/33' },
      { ...staticEth0, netmask: '255.0.255.0' },
      { ...staticEth0, gateway: '$(id)' },
      { ...staticEth0, dns: ['192.0.2.53 evil'] },
      { ...staticEth0, dns: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4'] },
      { ...staticEth0, extra: 'x' },
      { name: 'eth0', type: 'dhcp', address: '192.0.2.10' },
      { name: 'eth0', type: 'static' },
    ];
    for (const iface of bad)
      expect(
        await h.handle(req('network.apply', { interfaces: [iface], confirmSeconds: 30 })),
        JSON.stringify(iface).slice(0, 60),
      ).toMatchObject({
        code: 'refused',
      });
    for (const confirmSeconds of [9, 601, 30.5, '30'])
      expect(
        await h.handle(req('network.apply', { interfaces: [staticEth0], confirmSeconds })),
      ).toMatchObject({
        code: 'refused',
      });
    expect(
      await h.handle(req('network.apply', { interfaces: [], confirmSeconds: 30 })),
    ).toMatchObject({ code: 'refused' });
    expect(
      await h.handle(
        req('network.apply', { interfaces: [staticEth0, staticEth0], confirmSeconds: 30 }),
      ),
    ).toMatchObject({ code: 'refused' });
    expect(fs.existsSync(paths.networkFile)).toBe(false);
    expect(calls).toEqual([]);
  });
});

describe('upgrader ops', () => {
  const installed = () =>
    answers.set('dpkg-query', { code: 0, stdout: 'install ok installed', stderr: '' });
  const notInstalled = () =>
    answers.set('dpkg-query', {
      code: 1,
      stdout: '',
      stderr: 'dpkg-query: no packages found matching netmon-appliance-upgrader',
    });
  const bundle = () => {
    fs.mkdirSync(paths.upgraderPackageDir, { recursive: true });
    fs.writeFileSync(
      path.join(paths.upgraderPackageDir, 'netmon-appliance-upgrader_0.1.0_all.deb'),
      'deb',
    );
    fs.writeFileSync(path.join(paths.upgraderPackageDir, 'README; rm -rf .deb'), 'x');
  };
  const TOKEN = 'A'.repeat(20) + '_-' + 'b'.repeat(21);

  it('status: codename, installed, unit state and whether a package is bundled', async () => {
    notInstalled();
    expect(await helper().handle(req('upgrader.status'))).toEqual({
      ok: true,
      output: {
        codename: 'trixie',
        upgrader_installed: false,
        upgrader_active: 'inactive',
        upgrader_enabled: 'disabled',
        upgrader_package_available: false,
        upgrader_port: 8444,
      },
    });
    installed();
    bundle();
    answers.set('systemctl is-active', { code: 3, stdout: 'inactive\n', stderr: '' });
    answers.set('systemctl is-enabled', { code: 0, stdout: 'static\n', stderr: '' });
    fs.mkdirSync(path.dirname(paths.upgraderEnvFile), { recursive: true });
    fs.writeFileSync(paths.upgraderEnvFile, 'UPGRADER_PORT=9443\n');
    expect(await helper().handle(req('upgrader.status'))).toMatchObject({
      output: {
        upgrader_installed: true,
        upgrader_active: 'inactive',
        upgrader_enabled: 'static',
        upgrader_package_available: true,
        upgrader_port: 9443,
      },
    });
  });

  it('install: unsupported without a bundled package, apt-get of the bundled file, idempotent once installed', async () => {
    notInstalled();
    expect(await helper().handle(req('upgrader.install'))).toEqual({
      ok: false,
      code: 'unsupported',
      message: 'No upgrader package is bundled with this appliance',
    });
    bundle();
    expect(await helper().handle(req('upgrader.install'))).toEqual({
      ok: true,
      output: { already_installed: false },
    });
    expect(calls.at(-1)).toEqual({
      program: 'apt-get',
      args: [
        'install',
        '-y',
        '--no-install-recommends',
        path.join(paths.upgraderPackageDir, 'netmon-appliance-upgrader_0.1.0_all.deb'),
      ],
    });
    answers.set('apt-get', FAIL('E: Unmet dependencies.'));
    expect(await helper().handle(req('upgrader.install'))).toEqual({
      ok: false,
      code: 'failed',
      message: 'Installing the upgrader failed: E: Unmet dependencies.',
    });
    installed();
    calls = [];
    expect(await helper().handle(req('upgrader.install'))).toEqual({
      ok: true,
      output: { already_installed: true },
    });
    expect(calls.map((c) => c.program)).toEqual(['dpkg-query']);
  });

  it('start: starts the unit, hands the token out once (the file is removed) and never logs it', async () => {
    installed();
    fs.mkdirSync(path.dirname(paths.upgraderTokenFile), { recursive: true });
    fs.writeFileSync(paths.upgraderTokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const h = helper();
    expect(await h.handle(req('upgrader.start'))).toEqual({
      ok: true,
      output: { token: TOKEN, port: 8444 },
    });
    expect(calls).toContainEqual({ program: 'systemctl', args: ['start', UPGRADER_UNIT] });
    expect(fs.existsSync(paths.upgraderTokenFile)).toBe(false);
    // A second start while it runs: no token to hand out again.
    expect(await h.handle(req('upgrader.start'))).toEqual({
      ok: false,
      code: 'failed',
      message: 'The upgrader token file is unreadable',
    });
    expect(logLines.join('\n')).not.toContain(TOKEN);
  });

  it('start: failed when the unit fails, when the token file is garbage, unsupported when not installed', async () => {
    notInstalled();
    expect(await helper().handle(req('upgrader.start'))).toMatchObject({ code: 'unsupported' });
    installed();
    answers.set('systemctl start', FAIL('Job for netmon-appliance-upgrader.service failed.'));
    expect(await helper().handle(req('upgrader.start'))).toEqual({
      ok: false,
      code: 'failed',
      message:
        'The upgrader service failed to start: Job for netmon-appliance-upgrader.service failed.',
    });
    answers.delete('systemctl start');
    fs.mkdirSync(path.dirname(paths.upgraderTokenFile), { recursive: true });
    fs.writeFileSync(paths.upgraderTokenFile, 'short\n');
    expect(await helper().handle(req('upgrader.start'))).toMatchObject({
      code: 'failed',
      message: 'The upgrader token file is unreadable',
    });
  });

  it('stop: removes any token file, stops the unit, and is a no-op when not installed', async () => {
    installed();
    fs.mkdirSync(path.dirname(paths.upgraderTokenFile), { recursive: true });
    fs.writeFileSync(paths.upgraderTokenFile, TOKEN);
    expect(await helper().handle(req('upgrader.stop'))).toEqual({ ok: true });
    expect(calls.at(-1)).toEqual({ program: 'systemctl', args: ['stop', UPGRADER_UNIT] });
    expect(fs.existsSync(paths.upgraderTokenFile)).toBe(false);
    notInstalled();
    calls = [];
    expect(await helper().handle(req('upgrader.stop'))).toEqual({ ok: true });
    expect(calls.map((c) => c.program)).toEqual(['dpkg-query']);
  });
});

describe('the Unix socket', () => {
  let server: net.Server;
  let socketPath: string;
  const send = (data: string | Buffer) =>
    new Promise<unknown>((resolve, reject) => {
      const socket = net.createConnection(socketPath);
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(JSON.parse(text)));
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error('no answer')));
      socket.write(data);
    });

  beforeEach(async () => {
    socketPath = path.join(dir, 'run/netmon-appliance/root-helper.sock');
    server = serveRootHelper(helper(), { idleMs: 300 });
    await listenRootHelper(server, { socketPath, gid: process.getgid?.() ?? 0 });
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is a 0660 socket that answers one JSON line per connection', async () => {
    expect(fs.statSync(socketPath).mode & 0o777).toBe(0o660);
    notInstalledAnswer();
    expect(await send(`${JSON.stringify(req('upgrader.stop'))}\n`)).toEqual({ ok: true });
    expect(await send(`${JSON.stringify(req('shell.exec', { cmd: 'id' }))}\n`)).toMatchObject({
      ok: false,
      code: 'refused',
      message: 'unknown op "shell.exec"',
    });
  });

  it('refuses a line that is not JSON, a request past the size limit, and a request without its newline', async () => {
    expect(await send('{"v":1,\n')).toMatchObject({
      code: 'refused',
      message: 'request is not JSON',
    });
    expect(await send(Buffer.alloc(ROOT_HELPER_MAX_REQUEST + 10, 0x61))).toMatchObject({
      code: 'refused',
      message: 'request too large',
    });
    expect(await send('{"v":1}')).toMatchObject({ code: 'refused', message: 'request timed out' });
    expect(calls).toEqual([]);
  });

  function notInstalledAnswer() {
    answers.set('dpkg-query', { code: 1, stdout: '', stderr: '' });
  }
});
