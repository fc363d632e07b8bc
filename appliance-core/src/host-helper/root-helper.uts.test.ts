/**
 * The hostname really set, in a UTS namespace of its own (issue 18, "Hostname tests that really
 * set a name run inside their own UTS namespace"): the built root helper
 * (`dist/host-helper/root-helper.main.js`, its real runner: the platform's spawn helper) runs
 * under `unshare -u` on a socket in a temporary directory; an appliance in apply mode sends
 * `POST /api/setHostname` through it. The name is read back inside the helper's namespace
 * (`nsenter --uts`), and this machine's hostname (os.hostname() and `hostname` outside) is
 * unchanged. This machine has no running systemd, so the helper takes its `hostname NAME`
 * (sethostname) path and the answer says the name was not persisted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../test/harness/appliance.js';
import { buildCore } from '../../../test/harness/build-core.js';
import { havePeer } from '../../../test/harness/peers.js';
import { RootHelperClient } from '../platform/host/root-helper.client.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HELPER_MAIN = path.join(ROOT, 'appliance-core/dist/host-helper/root-helper.main.js');
const PEERS =
  havePeer('unshare', 'util-linux') &&
  havePeer('nsenter', 'util-linux') &&
  havePeer('hostname', 'hostname');

/** Whether this process may make a UTS namespace (root, or user namespaces); why not otherwise. */
function utsProbe(): string | null {
  const probe = spawnSync('unshare', ['-u', '--', 'hostname', 'uts-probe'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (probe.status === 0) return null;
  return `unshare -u is not allowed here (${(probe.error?.message ?? probe.stderr ?? '').trim() || `exit ${String(probe.status)}`})`;
}
const NO_UTS = PEERS ? utsProbe() : 'unshare, nsenter or hostname is missing';
if (NO_UTS && PEERS && process.env.REQUIRE_PEERS === '1')
  throw new Error(`REQUIRE_PEERS=1: ${NO_UTS}`);
if (NO_UTS && PEERS) console.warn(`skipping the UTS namespace hostname test: ${NO_UTS}`);

const hostnameOutside = () =>
  spawnSync('hostname', [], { encoding: 'utf8', timeout: 5000 }).stdout.trim();

describe.runIf(PEERS && !NO_UTS)('hostname.set in a UTS namespace of its own', () => {
  let dir: string;
  let socketPath: string;
  let child: ChildProcess;
  let stderr = '';
  let h: Harness;
  let admin: string;
  const before = os.hostname();
  const beforeCommand = hostnameOutside();

  /** The name the helper's namespace has now. */
  const insideName = () => {
    const run = spawnSync('nsenter', ['--target', String(child.pid), '--uts', 'hostname'], {
      encoding: 'utf8',
      timeout: 5000,
    });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim();
  };

  beforeAll(async () => {
    buildCore();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uts-helper-'));
    socketPath = path.join(dir, 'root-helper.sock');
    // unshare without --fork execs node in place: child.pid is the helper in its namespace.
    child = spawn('unshare', ['-u', '--', process.execPath, HELPER_MAIN], {
      env: { ...process.env, APPLIANCE_ROOT_HELPER_SOCKET: socketPath },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    for (let i = 0; i < 100 && !stderr.includes('root helper listening'); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stderr).toContain('root helper listening');
    h = await startAppliance({
      APPLIANCE_NETWORK_MODE: 'apply',
      APPLIANCE_ROOT_HELPER_SOCKET: socketPath,
    });
    admin = await h.login();
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the helper starts with the host name copied into its own namespace', () => {
    expect(insideName()).toBe(before);
  });

  it('POST /api/setHostname in apply mode sets the name inside the namespace only', async () => {
    const name = `uts-${process.pid}-a.example.test`;
    const res = await h.request('POST', '/api/setHostname', {
      token: admin,
      body: { hostname: name },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 201, hostname: name, dry_run: false });
    // No systemd here: sethostname for the running system, /etc/hostname not written.
    expect(res.body.message).toMatch(/no systemd/);
    expect(insideName()).toBe(name);
    expect(os.hostname()).toBe(before);
    expect(hostnameOutside()).toBe(beforeCommand);
    // The appliance (outside the namespace) still reports this machine's name.
    const read = await h.request('GET', '/api/getHostname', { token: admin });
    expect(JSON.stringify(read.body)).toContain(before);
    expect(JSON.stringify(read.body)).not.toContain(name);
  });

  it('the helper itself answers hostname.set with the name applied, and refuses a bad one', async () => {
    const client = new RootHelperClient({ socketPath, timeoutMs: 10_000 });
    const name = `uts-${process.pid}-b`;
    expect(await client.call({ v: 1, op: 'hostname.set', args: { hostname: name } })).toEqual({
      ok: true,
      output: { method: 'sethostname', persisted: false },
    });
    expect(insideName()).toBe(name);
    const refused = await client.call({ v: 1, op: 'hostname.set', args: { hostname: '-n;id' } });
    expect(refused.ok).toBe(false);
    expect(insideName()).toBe(name);
    expect(os.hostname()).toBe(before);
    expect(hostnameOutside()).toBe(beforeCommand);
  });
});
