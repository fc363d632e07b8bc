import { describe, expect, it } from 'vitest';

import {
  adoptionKeyProblem,
  baseName,
  ipProblem,
  isAbsolutePath,
  isUnavailable,
  labelProblem,
  pathProblem,
  processView,
  tagsProblem,
  ttlProblem,
  ttlSeconds,
  usageRoots,
  visibleProcesses,
} from './agent-model.js';

describe('agent field rules (spec part 2, Agent administration)', () => {
  it('bounds the TTL to 60 s .. 30 days in any unit', () => {
    expect(ttlSeconds(1, 'days')).toBe(86_400);
    expect(ttlSeconds(1, 'minutes')).toBe(60);
    expect(ttlProblem(ttlSeconds(1, 'minutes'))).toBeNull();
    expect(ttlProblem(59)).toMatch(/60 s/);
    expect(ttlProblem(ttlSeconds(30, 'days'))).toBeNull();
    expect(ttlProblem(ttlSeconds(30, 'days') + 1)).toMatch(/30 days/);
    expect(ttlProblem(ttlSeconds(721, 'hours'))).toMatch(/30 days/);
    expect(ttlProblem(Number.NaN)).toBeTruthy();
  });

  it('checks label length and tag slug length', () => {
    expect(labelProblem('x'.repeat(255))).toBeNull();
    expect(labelProblem('x'.repeat(256))).toBeTruthy();
    expect(tagsProblem(['a'.repeat(64)])).toBeNull();
    expect(tagsProblem(['ok', 'a'.repeat(65)])).toBeTruthy();
  });

  it('accepts adoption keys of 10 to 64 letters, digits, _ and - only', () => {
    expect(adoptionKeyProblem('abcDEF_12-')).toBeNull();
    expect(adoptionKeyProblem('a'.repeat(64))).toBeNull();
    expect(adoptionKeyProblem('a'.repeat(9))).toMatch(/10 to 64/);
    expect(adoptionKeyProblem('a'.repeat(65))).toMatch(/10 to 64/);
    expect(adoptionKeyProblem('abcdefghij;id')).toMatch(/letters/);
    expect(adoptionKeyProblem('abcdefghij k')).toMatch(/letters/);
    expect(adoptionKeyProblem('')).toBe('Required.');
  });

  it('accepts IPv4 and IPv6 addresses only', () => {
    expect(ipProblem('192.0.2.10')).toBeNull();
    expect(ipProblem('2001:db8::1')).toBeNull();
    expect(ipProblem('::ffff:192.0.2.1')).toBeNull();
    expect(ipProblem('256.1.1.1')).toBeTruthy();
    expect(ipProblem('host.example')).toBeTruthy();
    expect(ipProblem('1.2.3')).toBeTruthy();
    expect(ipProblem('')).toBe('Required.');
  });

  it('accepts absolute POSIX, drive and UNC paths; refuses relative, ~ and NUL', () => {
    expect(isAbsolutePath('/var/log/old.log')).toBe(true);
    expect(isAbsolutePath('C:\\Temp\\old.log')).toBe(true);
    expect(isAbsolutePath('c:/Temp')).toBe(true);
    expect(isAbsolutePath('\\\\server\\share\\x')).toBe(true);
    expect(isAbsolutePath('var/log')).toBe(false);
    expect(isAbsolutePath('~/x')).toBe(false);
    expect(isAbsolutePath('-rf')).toBe(false);
    expect(isAbsolutePath('/tmp/a\0b')).toBe(false);
    expect(pathProblem('')).toBe('Required.');
    expect(pathProblem('tmp')).toMatch(/absolute/);
    expect(baseName('/var/log/')).toBe('log');
    expect(baseName('C:\\Users\\bob')).toBe('bob');
    expect(baseName('/')).toBe('/');
  });
});

describe('probe answers', () => {
  const rows = [
    {
      pid: 1,
      name: 'init',
      user: 'root',
      cpu_percent: 0.1,
      memory_bytes: 10_000,
      command: '/sbin/init',
    },
    {
      pid: 200,
      name: 'postgres',
      user: 'postgres',
      cpu_percent: 12.5,
      memory_bytes: 900_000,
      command: 'postgres -D /data',
    },
    {
      pid: 300,
      name: 'node',
      user: 'app',
      cpu_percent: 55,
      memory_bytes: 400_000,
      command: 'node server.js',
    },
    { pid: 400, name: 'odd', user: 'x', cpu_percent: 'n/a', memory_bytes: null, command: '' },
  ].map(processView);

  it('sorts by memory or CPU, missing values last, both directions', () => {
    expect(visibleProcesses(rows, '', 'memory', true).map((p) => p.pid)).toEqual([
      200, 300, 1, 400,
    ]);
    expect(visibleProcesses(rows, '', 'memory', false).map((p) => p.pid)).toEqual([
      1, 300, 200, 400,
    ]);
    expect(visibleProcesses(rows, '', 'cpu', true).map((p) => p.pid)).toEqual([300, 200, 1, 400]);
  });

  it('filters on name, command, user and exact pid', () => {
    expect(visibleProcesses(rows, 'POST', 'memory', true).map((p) => p.pid)).toEqual([200]);
    expect(visibleProcesses(rows, 'server.js', 'memory', true).map((p) => p.pid)).toEqual([300]);
    expect(visibleProcesses(rows, '300', 'memory', true).map((p) => p.pid)).toEqual([300]);
    expect(visibleProcesses(rows, 'nothing', 'memory', true)).toEqual([]);
  });

  it('reads Windows-style process fields too, and never stringifies objects', () => {
    expect(processView({ ProcessId: 4, Name: 'System', WorkingSetSize: '2048' })).toMatchObject({
      pid: 4,
      name: 'System',
      memory: 2048,
    });
    expect(processView({ name: { evil: true } }).name).toBe('');
    expect(processView(null).pid).toBeNull();
  });

  it('reads the disk report as roots of {path, size, children}, depth-bounded', () => {
    const roots = usageRoots([
      { path: '/', size: 1000, children: [{ path: '/var', size: 600, children: null }] },
    ]);
    expect(roots[0]!.children[0]).toEqual({ path: '/var', size: 600, children: [] });
    expect(usageRoots({ path: '/home', size: 5, children: [] })).toHaveLength(1);
    expect(usageRoots('no report')).toEqual([]);
    let deep: Record<string, unknown> = { path: '/d', size: 1, children: [] };
    for (let i = 0; i < 100; i++) deep = { path: `/d${i}`, size: 1, children: [deep] };
    let depth = 0;
    for (let n = usageRoots([deep])[0]; n && n.children.length; n = n.children[0]) depth++;
    expect(depth).toBeLessThanOrEqual(32);
  });

  it('recognises the agent saying services are unavailable', () => {
    expect(isUnavailable('services unavailable: no systemd')).toBe(true);
    expect(isUnavailable('Agent did not answer')).toBe(false);
  });
});
