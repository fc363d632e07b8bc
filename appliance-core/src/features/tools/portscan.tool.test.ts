import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import {
  nmapArgs,
  normalizeTiming,
  parsePortList,
  portscan,
  wantsServiceDetection,
} from './portscan.tool.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { ScriptedRunner } from './testing/scripted-runner.js';

describe('port lists', () => {
  it.each([
    ['22', '22'],
    ['22,80,443', '22,80,443'],
    [' 22 , 80 ', '22,80'],
    ['1-1024', '1-1024'],
    ['8000 - 8100', '8000-8100'],
    ['5-5', '5'],
    ['1-65535', '1-65535'],
    ['65535', '65535'],
  ])('accepts %j as %j', (input, normalized) => {
    expect(parsePortList(input)).toBe(normalized);
  });

  it.each([
    '',
    '0',
    '65536',
    '99999',
    '-1',
    '1-',
    '-22',
    '5-1',
    '1-2-3',
    '22,',
    ',22',
    '22;80',
    '22 80',
    'http',
    'T:22',
    '1e3',
    '0x16',
    `${'1,'.repeat(100)}1`,
  ])('refuses %j', (input) => {
    expect(parsePortList(input)).toBeNull();
  });

  it('allows at most 100 items', () => {
    expect(parsePortList(Array.from({ length: 100 }, (_, i) => i + 1).join(','))).not.toBeNull();
  });
});

describe('timing and service', () => {
  it.each([
    [3, 3],
    ['3', 3],
    [4, 4],
    [5, 5],
    ['5', 5],
    [0, 4],
    [1, 4],
    [2, 4],
    [6, 4],
    ['insane', 4],
    [null, 4],
    [undefined, 4],
    [true, 4],
    [[5], 4],
  ])('timing %j becomes %j', (input, expected) => {
    expect(normalizeTiming(input)).toBe(expected);
  });

  it('reads service detection flags', () => {
    for (const yes of [true, 1, 'true', '1']) expect(wantsServiceDetection(yes)).toBe(true);
    for (const no of [false, 0, 'false', '0', undefined, null])
      expect(wantsServiceDetection(no)).toBe(false);
  });

  it('builds nmap arguments: -n and -Pn always, -6 for IPv6, target after --', () => {
    expect(nmapArgs(parseTarget('127.0.0.1') as Target, '22,80', 4, false)).toEqual([
      '-n',
      '-Pn',
      '-T4',
      '-p',
      '22,80',
      '--',
      '127.0.0.1',
    ]);
    expect(nmapArgs(parseTarget('::1') as Target, '1-10', 5, true)).toEqual([
      '-n',
      '-Pn',
      '-T5',
      '-p',
      '1-10',
      '-sV',
      '-6',
      '--',
      '::1',
    ]);
  });
});

describe('port scan outcomes', () => {
  const host = parseTarget('nowhere.example') as Target;

  it('a target nmap could not resolve is a failure, although nmap exits 0', async () => {
    const runner = new ScriptedRunner({
      code: 0,
      lines: [
        'Starting Nmap 7.93 ( https://nmap.org ) at 2026-11-21 19:59 UTC',
        'WARNING: No targets were specified, so 0 hosts scanned.',
        'Nmap done: 0 IP addresses (0 hosts up) scanned in 0.02 seconds',
      ],
      stderr: 'Failed to resolve "nowhere.example".\n',
    });
    const failed = portscan(runner, host, '22', 4, false);
    await expect(failed).rejects.toBeInstanceOf(ToolFailure);
    await expect(failed).rejects.toThrow('Failed to resolve "nowhere.example".');
  });

  it('a non-zero exit is a failure with what nmap said', async () => {
    const runner = new ScriptedRunner({
      code: 1,
      stderr: 'Ports specified must be between 0 and 65535 inclusive\nQUITTING!\n',
    });
    await expect(portscan(runner, host, '22', 4, false)).rejects.toThrow(
      new ToolFailure('Ports specified must be between 0 and 65535 inclusive'),
    );
  });

  it('a scan that ran answers its raw output', async () => {
    const runner = new ScriptedRunner({
      lines: ['Nmap scan report for 192.0.2.1', 'PORT   STATE SERVICE', '22/tcp open  ssh'],
    });
    expect(await portscan(runner, parseTarget('192.0.2.1') as Target, '22', 3, false)).toEqual({
      kind: 'done',
      output: 'Nmap scan report for 192.0.2.1\nPORT   STATE SERVICE\n22/tcp open  ssh',
    });
    expect(runner.calls).toEqual([
      { program: 'nmap', args: ['-n', '-Pn', '-T3', '-p', '22', '--', '192.0.2.1'] },
    ]);
  });
});
