/**
 * A real SNMP agent (Debian's snmpd) for tests: started on a free UDP port of one or more
 * loopback addresses, with a v1/v2c community and SNMPv3 users, waited for until it answers,
 * and stopped by its process id. Guard tests with `havePeer('snmpd', 'snmpd')`; starting one also
 * requires the net-snmp command-line clients (`snmpget`, `snmpwalk`: Debian package `snmp`).
 *
 *   const agent = await startSnmpd({ users: [{ name: 'monuser', level: 'authPriv', auth: 'SHA', authPass: 'authpass123', priv: 'AES', privPass: 'privpass123' }] });
 *   ... agent.port, agent.community ...
 *   await agent.stop();
 *
 * snmpd runs in the foreground (-f) with no MIB files (-M /dev/null, numeric OIDs only), no
 * AgentX/SMUX (-I -smux, so it never binds tcp/199), its persistent state in a fresh temp dir
 * (SNMP_PERSISTENT_DIR: localized v3 keys and engineBoots are written there), and its log in
 * that dir too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findProgram } from './peers.js';

export interface SnmpdUser {
  name: string;
  /** Security level the agent grants the user (rouser ... noauth|auth|priv). */
  level: 'noAuthNoPriv' | 'authNoPriv' | 'authPriv';
  /** Net-SNMP names: MD5, SHA, SHA-224, SHA-256, SHA-384, SHA-512. */
  auth?: string;
  authPass?: string;
  /** Net-SNMP names: DES, AES, AES-192, AES-256. */
  priv?: string;
  privPass?: string;
}

export interface SnmpdOptions {
  /** Loopback addresses to listen on (default ['127.0.0.1']); all on the same port. */
  addresses?: string[];
  /** UDP port (default: a free one). */
  port?: number;
  /** Read-only v1/v2c community (default 'public123'); null for none. */
  community?: string | null;
  users?: SnmpdUser[];
  sysName?: string;
  /** More snmpd.conf lines (for example `extend` or `view` directives). */
  extraConfig?: string[];
  /** How long to wait for the first answer (default 10 s). */
  readyTimeoutMs?: number;
}

export interface Snmpd {
  addresses: string[];
  host: string;
  port: number;
  community: string | null;
  users: SnmpdUser[];
  sysName: string;
  dir: string;
  logFile: string;
  pid: number;
  /** Runs an snmp* command-line tool (snmpwalk, snmpget) against this agent as an independent client. */
  cli(tool: 'snmpwalk' | 'snmpget' | 'snmpbulkwalk', args: string[]): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function freeUdpPort(address: string): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, address, () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

function levelWord(level: SnmpdUser['level']): string {
  return level === 'authPriv' ? 'priv' : level === 'authNoPriv' ? 'auth' : 'noauth';
}

function configOf(
  options: Required<Pick<SnmpdOptions, 'addresses' | 'sysName'>> & SnmpdOptions,
  port: number,
): string {
  const lines = [
    `agentAddress ${options.addresses.map((a) => `udp:${a}:${port}`).join(',')}`,
    'sysLocation test-lab',
    'sysContact ci@example.org',
    `sysName ${options.sysName}`,
  ];
  if (options.community) lines.push(`rocommunity ${options.community} 127.0.0.0/8`);
  for (const user of options.users ?? []) {
    const auth =
      user.level === 'noAuthNoPriv' ? '' : ` ${user.auth ?? 'SHA'} "${user.authPass ?? ''}"`;
    const priv = user.level === 'authPriv' ? ` ${user.priv ?? 'AES'} "${user.privPass ?? ''}"` : '';
    lines.push(`createUser ${user.name}${auth}${priv}`);
    lines.push(`rouser ${user.name} ${levelWord(user.level)}`);
  }
  lines.push(...(options.extraConfig ?? []));
  return `${lines.join('\n')}\n`;
}

function cliArgs(agent: Pick<Snmpd, 'community' | 'host' | 'port'>): string[] {
  return [
    '-v2c',
    '-c',
    agent.community ?? '',
    '-On',
    '-t',
    '2',
    '-r',
    '1',
    `${agent.host}:${agent.port}`,
  ];
}

function answers(
  host: string,
  port: number,
  community: string | null,
  users: SnmpdUser[],
): boolean {
  const target = `${host}:${port}`;
  const args = community
    ? ['-v2c', '-c', community, '-t', '0.3', '-r', '0', target, '1.3.6.1.2.1.1.5.0']
    : (() => {
        const user = users[0] as SnmpdUser;
        const base = ['-v3', '-u', user.name, '-l', user.level, '-t', '0.3', '-r', '0'];
        if (user.level !== 'noAuthNoPriv')
          base.push('-a', user.auth ?? 'SHA', '-A', user.authPass ?? '');
        if (user.level === 'authPriv')
          base.push('-x', user.priv ?? 'AES', '-X', user.privPass ?? '');
        return [...base, target, '1.3.6.1.2.1.1.5.0'];
      })();
  const result = spawnSync('snmpget', args, {
    encoding: 'utf8',
    timeout: 3000,
    env: { ...process.env, MIBS: '' },
  });
  return result.status === 0;
}

export async function startSnmpd(options: SnmpdOptions = {}): Promise<Snmpd> {
  const program = findProgram('snmpd');
  if (!program) throw new Error('snmpd is not installed (Debian package: snmpd)');
  // The harness waits for the agent with snmpget and tests read it back with snmpwalk: a missing
  // client is named here rather than failing later as "agent did not answer".
  for (const client of ['snmpget', 'snmpwalk'])
    if (!findProgram(client))
      throw new Error(
        `${client} is not installed (Debian package: snmp; run npm run setup:debian)`,
      );
  const addresses = options.addresses ?? ['127.0.0.1'];
  for (const address of addresses)
    if (!address.startsWith('127.'))
      throw new Error(`snmpd harness listens on loopback only, not ${address}`);
  const community = options.community === undefined ? 'public123' : options.community;
  const users = options.users ?? [];
  if (!community && users.length === 0)
    throw new Error('snmpd harness needs a community or a v3 user');
  const sysName = options.sysName ?? 'snmp-peer';
  const host = addresses[0] as string;

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freeUdpPort(host));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snmpd-test-'));
    fs.mkdirSync(path.join(dir, 'persist'));
    const conf = path.join(dir, 'snmpd.conf');
    const logFile = path.join(dir, 'snmpd.log');
    fs.writeFileSync(conf, configOf({ ...options, addresses, sysName, community, users }, port));
    const child = spawn(
      program,
      ['-f', '-C', '-c', conf, '-M', '/dev/null', '-I', '-smux', '-Lf', logFile],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/sbin:/usr/bin',
          MIBS: '',
          SNMP_PERSISTENT_DIR: path.join(dir, 'persist'),
          SNMPCONFPATH: dir,
        },
        stdio: 'ignore',
      },
    );
    running.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let alive = true;
    void exited.then(() => {
      alive = false;
      running.delete(child);
    });

    const stop = async () => {
      if (alive) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    };

    const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
    let ready = false;
    while (alive && Date.now() < deadline) {
      if (answers(host, port, community, users)) {
        ready = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (ready) {
      const agent: Snmpd = {
        addresses,
        host,
        port,
        community,
        users,
        sysName,
        dir,
        logFile,
        pid: child.pid as number,
        cli(tool, args) {
          // A whole-tree walk prints ~1 MB: spawnSync's default maxBuffer (1 MiB) would cut it off.
          const result = spawnSync(tool, [...cliArgs(agent), ...args], {
            encoding: 'utf8',
            timeout: 30_000,
            maxBuffer: 64 * 1024 * 1024,
            env: { ...process.env, MIBS: '' },
          });
          if (result.status !== 0)
            throw new Error(
              `${tool} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}`,
            );
          return result.stdout;
        },
        stop,
      };
      return agent;
    }
    const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
    await stop();
    // Another program may have taken the free port between probing and binding: try another.
    if (attempt >= 3 || options.port !== undefined)
      throw new Error(`snmpd did not answer on ${host}:${port}: ${log.slice(-2000)}`);
  }
}
