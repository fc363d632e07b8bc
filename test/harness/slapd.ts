/**
 * A real OpenLDAP server (Debian's slapd) for tests: its own config (slapd.conf, `-f`) and
 * database in a fresh temp dir, the memberOf overlay (groupOfNames), plain LDAP with StartTLS and
 * LDAPS on free loopback ports with a self-signed certificate the harness makes, waited for until
 * it answers, and stopped by its process id. Guard tests with `havePeer('slapd', 'slapd')`;
 * loading and changing entries also needs the OpenLDAP clients (`ldapadd`, `ldapmodify`,
 * `ldapdelete`, `slappasswd`: Debian package `ldap-utils`, and `slapd` for slappasswd).
 *
 *   const ldap = await startSlapd();
 *   ldap.add(`dn: uid=alice,ou=people,${ldap.suffix}\nobjectClass: inetOrgPerson\n...`);
 *   ... ldap.port (ldap + StartTLS), ldap.ldapsPort, ldap.adminDn, ldap.adminPassword ...
 *   await ldap.stop();
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findProgram } from './peers.js';
import { makeSelfSigned } from './tls-certs.js';

export interface SlapdOptions {
  /** Default dc=example,dc=org. */
  suffix?: string;
  /** Password of the root DN cn=admin,<suffix> (default 'adminpw'). */
  adminPassword?: string;
  /** How long to wait for the first answer (default 10 s). */
  readyTimeoutMs?: number;
}

export interface Slapd {
  host: string;
  /** Plain LDAP (StartTLS offered). */
  port: number;
  /** LDAPS. */
  ldapsPort: number;
  suffix: string;
  adminDn: string;
  adminPassword: string;
  /** PEM of the server's self-signed certificate. */
  certificate: string;
  dir: string;
  pid: number;
  /** ldapadd of an LDIF text (as the root DN); throws with the tool's output on failure. */
  add(ldif: string): void;
  /** ldapmodify of an LDIF text (changetype records). */
  modify(ldif: string): void;
  /** ldapdelete of one DN. */
  remove(dn: string): void;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function tool(name: string): string {
  const found = findProgram(name);
  if (!found) throw new Error(`${name} is not installed (Debian package ldap-utils / slapd)`);
  return found;
}

function run(program: string, args: string[], input?: string): string {
  const result = spawnSync(tool(program), args, {
    input,
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.status !== 0)
    throw new Error(`${program} ${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function startSlapd(options: SlapdOptions = {}): Promise<Slapd> {
  const slapd = tool('slapd');
  const suffix = options.suffix ?? 'dc=example,dc=org';
  const adminDn = `cn=admin,${suffix}`;
  const adminPassword = options.adminPassword ?? 'adminpw';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slapd-test-'));
  fs.mkdirSync(path.join(dir, 'db'));
  const cert = await makeSelfSigned(['127.0.0.1', 'localhost']);
  fs.writeFileSync(path.join(dir, 'cert.pem'), cert.cert);
  fs.writeFileSync(path.join(dir, 'key.pem'), cert.key, { mode: 0o600 });
  const hash = run('slappasswd', ['-s', adminPassword]).trim();
  const conf = [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    'include /etc/ldap/schema/nis.schema',
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${dir}/slapd.pid`,
    `argsfile ${dir}/slapd.args`,
    `TLSCertificateFile ${dir}/cert.pem`,
    `TLSCertificateKeyFile ${dir}/key.pem`,
    'database mdb',
    'maxsize 104857600',
    `suffix "${suffix}"`,
    `rootdn "${adminDn}"`,
    `rootpw ${hash}`,
    `directory ${dir}/db`,
    'index objectClass eq',
    'index uid,cn,member,uniqueMember eq',
    'overlay memberof',
    'access to attrs=userPassword by self write by anonymous auth by * none',
    'access to * by users read by * none',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'slapd.conf'), conf);
  const port = await freeTcpPort();
  const ldapsPort = await freeTcpPort();
  const log = fs.openSync(path.join(dir, 'slapd.log'), 'a');
  const child = spawn(
    slapd,
    [
      '-d',
      process.env.SLAPD_DEBUG ?? '0',
      '-f',
      path.join(dir, 'slapd.conf'),
      '-h',
      `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${ldapsPort}/`,
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  running.add(child);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    }),
  );
  const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
  for (let attempt = 0; attempt < 400; attempt++) {
    if (exited || Date.now() > deadline) break;
    if ((await canConnect(port)) && (await canConnect(ldapsPort))) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  if (exited || !(await canConnect(port))) {
    child.kill('SIGKILL');
    throw new Error(
      `slapd did not start: ${fs.readFileSync(path.join(dir, 'slapd.log'), 'utf8').slice(-2000)}`,
    );
  }
  const url = `ldap://127.0.0.1:${port}`;
  const auth = ['-x', '-H', url, '-D', adminDn, '-w', adminPassword];
  const server: Slapd = {
    host: '127.0.0.1',
    port,
    ldapsPort,
    suffix,
    adminDn,
    adminPassword,
    certificate: cert.cert,
    dir,
    pid: child.pid as number,
    add: (ldif) => void run('ldapadd', auth, ldif),
    modify: (ldif) => void run('ldapmodify', auth, ldif),
    remove: (dn) => void run('ldapdelete', [...auth, dn]),
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exitedPromise;
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  // The base entry and the two organisational units every test directory has.
  server.add(
    [
      `dn: ${suffix}`,
      'objectClass: dcObject',
      'objectClass: organization',
      `dc: ${/^dc=([^,]+)/.exec(suffix)?.[1] ?? 'example'}`,
      'o: Test Directory',
      '',
      `dn: ou=people,${suffix}`,
      'objectClass: organizationalUnit',
      'ou: people',
      '',
      `dn: ou=groups,${suffix}`,
      'objectClass: organizationalUnit',
      'ou: groups',
      '',
    ].join('\n'),
  );
  return server;
}

/** LDIF of an inetOrgPerson under ou=people. */
export function personLdif(
  suffix: string,
  p: { uid: string; password: string; mail?: string; givenName?: string; sn?: string },
): string {
  return [
    `dn: uid=${p.uid},ou=people,${suffix}`,
    'objectClass: inetOrgPerson',
    `uid: ${p.uid}`,
    `cn: ${p.givenName ?? p.uid} ${p.sn ?? 'Tester'}`,
    `sn: ${p.sn ?? 'Tester'}`,
    `givenName: ${p.givenName ?? p.uid}`,
    ...(p.mail ? [`mail: ${p.mail}`] : []),
    `userPassword: ${p.password}`,
    '',
  ].join('\n');
}

/** LDIF of a groupOfNames with its members' DNs (`cn` is written as given: escape it yourself). */
export function groupLdif(dn: string, cn: string, members: string[]): string {
  return [
    `dn: ${dn}`,
    'objectClass: groupOfNames',
    `cn: ${cn}`,
    ...members.map((m) => `member: ${m}`),
    '',
  ].join('\n');
}
