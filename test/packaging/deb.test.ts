/**
 * The Debian host package (npm run package:deb): built here with build/scripts/package-deb.mjs
 * (gzip for speed), inspected with dpkg-deb -I/-c/-x only (never installed on this machine),
 * checked by lintian (no error) and by systemd-analyze verify (its units load without a warning),
 * and the extracted tree really runs: the appliance boots from /usr/lib/netmon-appliance on
 * loopback and the root helper answers on a temp socket.
 *
 * Needs dpkg-deb, lintian, systemd-analyze and strip (Debian packages dpkg, lintian, systemd,
 * binutils) and the build (npm run build): without them the tests skip saying why, and fail
 * under REQUIRE_PEERS=1.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_HELPER_DEFAULT_SOCKET } from '../../appliance-core/src/platform/host/root-helper.protocol.js';
import { SYSTEM_TOOLS } from '../../appliance-core/src/platform/process/system-tools.js';
import { buildCore } from '../harness/build-core.js';
import { havePeer } from '../harness/peers.js';
import { ROOT } from '../harness/process.js';

const version = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const peers =
  havePeer('dpkg-deb', 'dpkg') &&
  havePeer('lintian', 'lintian') &&
  havePeer('systemd-analyze', 'systemd') &&
  havePeer('strip', 'binutils');
const consoleBuilt = fs.existsSync(path.join(ROOT, 'renderer/dist/index.html'));
if (!consoleBuilt) {
  const message = 'renderer/dist is missing (npm run build)';
  if (process.env.REQUIRE_PEERS === '1') throw new Error(`REQUIRE_PEERS=1: ${message}`);
  console.warn(`skipping the Debian package tests: ${message}`);
}

let out: string;
let tree: string;
let deb: string;
let upgraderDeb: string;

function run(program: string, args: string[], timeout = 120_000) {
  const result = spawnSync(program, args, {
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return result;
}

/** The same, without blocking the test worker (lintian and the build take a minute). */
function runAsync(program: string, args: string[], timeout = 300_000) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      program,
      args,
      { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({
          status: err ? (typeof err.code === 'number' ? err.code : null) : 0,
          stdout,
          stderr: stderr || (err && typeof err.code !== 'number' ? err.message : ''),
        }),
    );
  });
}

describe.runIf(peers && consoleBuilt)('the Debian host package', () => {
  beforeAll(async () => {
    buildCore();
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'deb-test-'));
    const built = await runAsync(
      process.execPath,
      [path.join(ROOT, 'build/scripts/package-deb.mjs'), '--out', out, '--fast'],
      300_000,
    );
    expect(built.status, built.stderr).toBe(0);
    const arch = run('dpkg', ['--print-architecture']).stdout.trim();
    deb = path.join(out, `netmon-appliance_${version}_${arch}.deb`);
    upgraderDeb = path.join(out, `netmon-appliance-upgrader_${version}_all.deb`);
    tree = path.join(out, 'tree');
    expect(run('dpkg-deb', ['-x', deb, tree]).status).toBe(0);
  }, 360_000);
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  it('declares node 20, its system user tools and the tools the appliance spawns', () => {
    const info = run('dpkg-deb', ['-f', deb, 'Package', 'Version', 'Depends']).stdout;
    expect(info).toContain('Package: netmon-appliance\n');
    expect(info).toContain(`Version: ${version}\n`);
    const depends = (/^Depends: (.*)$/m.exec(info)?.[1] ?? '').split(', ');
    expect(depends).toContain('nodejs (>= 20)');
    for (const tool of Object.values(SYSTEM_TOOLS))
      expect(depends, tool.program).toContain(tool.debianPackage);
    for (const other of ['adduser', 'systemd', 'libpcap0.8']) expect(depends).toContain(other);
    const conffiles = run('dpkg-deb', ['--ctrl-tarfile', deb]).status;
    expect(conffiles).toBe(0);
    expect(run('dpkg-deb', ['-I', deb, 'conffiles']).stdout.split('\n')).toEqual(
      expect.arrayContaining([
        '/etc/netmon-appliance/appliance.env',
        '/etc/netmon-appliance/upgrader.env',
      ]),
    );
  });

  it('puts the appliance under /usr/lib, units under /usr/lib/systemd, nothing under /opt, all owned by root', () => {
    const listing = run('dpkg-deb', ['-c', deb]).stdout.trim().split('\n');
    const paths = listing.map((line) => line.split(/\s+/).slice(5).join(' '));
    expect(paths.some((p) => p.startsWith('./opt'))).toBe(false);
    for (const p of paths)
      expect(
        ['./', './etc/', './usr/'].some((prefix) => p.startsWith(prefix)),
        p,
      ).toBe(true);
    expect(listing.every((line) => line.split(/\s+/)[1] === 'root/root')).toBe(true);
    for (const file of [
      './usr/lib/netmon-appliance/appliance-core/dist/server.js',
      './usr/lib/netmon-appliance/appliance-core/dist/host-helper/root-helper.main.js',
      './usr/lib/netmon-appliance/renderer/dist/index.html',
      './usr/lib/netmon-appliance/node_modules/fastify/package.json',
      `./usr/lib/netmon-appliance/upgrader/netmon-appliance-upgrader_${version}_all.deb`,
      './usr/lib/systemd/system/netmon-appliance.service',
      './usr/lib/systemd/system/netmon-appliance-root-helper.socket',
      './usr/lib/systemd/system/netmon-appliance-root-helper.service',
      './usr/lib/systemd/system/netmon-appliance-upgrader.service',
      './etc/netmon-appliance/appliance.env',
      './usr/share/doc/netmon-appliance/copyright',
    ])
      expect(paths, file).toContain(file);
    // Dev-only packages stay out.
    expect(paths.some((p) => p.includes('/node_modules/vitest/'))).toBe(false);
    expect(paths.some((p) => p.includes('/node_modules/electron/'))).toBe(false);
    const upgrader = run('dpkg-deb', ['-c', upgraderDeb]).stdout;
    expect(upgrader).toContain('./usr/lib/netmon-appliance-upgrader/os-upgrader.mjs');
  });

  it('passes lintian with no error', async () => {
    const result = await runAsync('lintian', ['--no-tag-display-limit', deb, upgraderDeb], 300_000);
    const errors = result.stdout.split('\n').filter((line) => line.startsWith('E:'));
    expect(errors).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  }, 320_000);

  it('has units systemd-analyze verify loads without a warning, hardened as documented', () => {
    const units = path.join(tree, 'usr/lib/systemd/system');
    const names = fs.readdirSync(units).sort();
    expect(names).toEqual([
      'netmon-appliance-root-helper.service',
      'netmon-appliance-root-helper.socket',
      'netmon-appliance-upgrader.service',
      'netmon-appliance.service',
    ]);
    const verify = run('systemd-analyze', ['verify', ...names.map((n) => path.join(units, n))]);
    expect(verify.stderr.trim()).toBe('');
    expect(verify.status).toBe(0);
    const service = fs.readFileSync(path.join(units, 'netmon-appliance.service'), 'utf8');
    for (const line of [
      'User=netmon-appliance',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/netmon-appliance',
      'NoNewPrivileges=yes',
      'Environment=APPLIANCE_NETWORK_MODE=apply',
      'Environment=APPLIANCE_DATA_DIR=/var/lib/netmon-appliance',
      'EnvironmentFile=/etc/netmon-appliance/appliance.env',
      'ExecStart=/usr/bin/node /usr/lib/netmon-appliance/appliance-core/dist/server.js',
    ])
      expect(service.split('\n'), line).toContain(line);
    expect(service).toMatch(/^AmbientCapabilities=.*\bCAP_NET_RAW\b/m);
    const socket = fs.readFileSync(path.join(units, 'netmon-appliance-root-helper.socket'), 'utf8');
    expect(socket.split('\n')).toEqual(
      expect.arrayContaining([
        `ListenStream=${ROOT_HELPER_DEFAULT_SOCKET}`,
        'SocketMode=0660',
        'SocketGroup=netmon-appliance',
      ]),
    );
    const upgrader = fs.readFileSync(path.join(units, 'netmon-appliance-upgrader.service'), 'utf8');
    expect(upgrader).toContain('RuntimeDirectory=netmon-appliance-upgrader');
    expect(upgrader).not.toMatch(/^WantedBy=/m);
  });

  it('has maintainer scripts that parse and create the system user', () => {
    const control = path.join(out, 'control');
    expect(run('dpkg-deb', ['-e', deb, control]).status).toBe(0);
    for (const script of ['postinst', 'prerm', 'postrm']) {
      const file = path.join(control, script);
      expect(fs.statSync(file).mode & 0o111, script).not.toBe(0);
      expect(run('sh', ['-n', file]).status, script).toBe(0);
    }
    expect(fs.readFileSync(path.join(control, 'postinst'), 'utf8')).toMatch(
      /adduser --system --group --home "\$DATA_DIR"/,
    );
  });

  it('runs from the extracted tree: the appliance boots, the root helper answers', async () => {
    const lib = path.join(tree, 'usr/lib/netmon-appliance');
    const dataDir = path.join(out, 'data');
    const socketPath = path.join(out, 'helper/root-helper.sock');
    const children = [
      spawn(process.execPath, [path.join(lib, 'appliance-core/dist/server.js')], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          APPLIANCE_DATA_DIR: dataDir,
          APPLIANCE_BIND: '127.0.0.1',
          APPLIANCE_HTTPS_PORT: '0',
          APPLIANCE_SYSLOG_PORT: '0',
          APPLIANCE_NETFLOW_PORT: '0',
          APPLIANCE_LOG_LEVEL: 'warn',
          APPLIANCE_ADMIN_PASSWORD: 'Admin-Passw0rd',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      spawn(
        process.execPath,
        [path.join(lib, 'appliance-core/dist/host-helper/root-helper.main.js')],
        {
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            APPLIANCE_ROOT_HELPER_SOCKET: socketPath,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      ),
    ];
    try {
      const [appliance, helper] = children as [ReturnType<typeof spawn>, ReturnType<typeof spawn>];
      const waitFor = (
        child: ReturnType<typeof spawn>,
        stream: 'stdout' | 'stderr',
        text: RegExp,
      ) =>
        new Promise<string>((resolve, reject) => {
          let seen = '';
          const timer = setTimeout(
            () => reject(new Error(`no ${String(text)} in 20 s: ${seen}`)),
            20_000,
          );
          child[stream]?.on('data', (d: Buffer) => {
            seen += d.toString();
            const match = text.exec(seen);
            if (match) {
              clearTimeout(timer);
              resolve(match[0]);
            }
          });
        });
      await Promise.all([
        waitFor(appliance, 'stdout', /appliance listening on https:\/\/127\.0\.0\.1:\d+/),
        waitFor(helper, 'stderr', /root helper listening/),
      ]);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.createConnection(socketPath);
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.setTimeout(5000, () => reject(new Error('no answer')));
        socket.write('{"v":1,"op":"shell.exec","args":{}}\n');
      });
      expect(JSON.parse(answer)).toEqual({
        ok: false,
        code: 'refused',
        message: 'unknown op "shell.exec"',
      });
      expect(fs.statSync(socketPath).mode & 0o777).toBe(0o660);
    } finally {
      for (const child of children) child.kill('SIGTERM');
    }
  }, 60_000);
});
