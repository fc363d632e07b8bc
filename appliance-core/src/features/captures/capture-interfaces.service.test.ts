/**
 * The capturable interfaces come from the network namespace's /proc/net/dev (not /sys/class/net,
 * which shows the host's under `unshare -n`): parsed from a written file, and, where `unshare -n`
 * can run, read inside a fresh namespace, which has `lo` only.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CaptureInterfaces, namespaceInterfaces } from './capture-interfaces.service.js';

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  123456     100    0    0    0     0          0         0   123456     100    0    0    0     0       0          0
  eth1: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0
veth-a@if3: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
`;

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('capturable interfaces', () => {
  it('are the names of /proc/net/dev, sorted, then any', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'netdev-'));
    const file = path.join(dir, 'dev');
    fs.writeFileSync(file, NET_DEV);
    expect(namespaceInterfaces(file)).toEqual(['lo', 'eth1', 'veth-a@if3']);
    expect(new CaptureInterfaces(undefined, file).list()).toEqual([
      'eth1',
      'lo',
      'veth-a@if3',
      'any',
    ]);
  });

  it('is null (and the list only any) when the file cannot be read', () => {
    expect(namespaceInterfaces('/nonexistent/net/dev')).toBeNull();
    expect(new CaptureInterfaces(undefined, '/nonexistent/net/dev').list()).toEqual(['any']);
  });

  const unshare = spawnSync('unshare', ['-n', 'true']).status === 0;
  it.runIf(unshare)('inside unshare -n: lo only, though /sys/class/net shows the host', () => {
    // The namespace's own /proc/net/dev, read by a process inside it, parsed by the function.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'netdev-'));
    const file = path.join(dir, 'dev');
    const inside = spawnSync('unshare', ['-n', 'cat', '/proc/net/dev'], { encoding: 'utf8' });
    fs.writeFileSync(file, inside.stdout);
    expect(namespaceInterfaces(file)).toEqual(['lo']);
    // sysfs is the host's there (not asserted beyond lo: a host may have lo alone).
    const sys = spawnSync('unshare', ['-n', 'ls', '/sys/class/net'], { encoding: 'utf8' });
    expect(sys.stdout.split('\n')).toContain('lo');
  });
});
