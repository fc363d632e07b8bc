import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseListUnits } from './services.js';
import {
  parsePsDate,
  parseWindowsEvents,
  parseWindowsProcesses,
  parseWindowsServices,
} from './windows.js';

const fixtures = path.resolve(import.meta.dirname, '../../test/fixtures');

// Recorded PowerShell output: the Windows code paths that run PowerShell are untested here.
describe('Windows sources (recorded fixtures)', () => {
  it('maps Get-Service status codes onto the protocol states', () => {
    const rows = parseWindowsServices(
      readFileSync(path.join(fixtures, 'windows-services.json'), 'utf8'),
    );
    expect(rows.map((r) => [r.Name, r.State])).toEqual([
      ['Dnscache', 'Running'],
      ['Spooler', 'Stopped'],
      ['wuauserv', 'Starting'],
      ['BITS', 'Stopping'],
      ['Odd', 'Unknown'],
    ]);
    expect(parseWindowsServices('{"Name":"One","DisplayName":"Only","Status":"Running"}')).toEqual([
      { Name: 'One', DisplayName: 'Only', State: 'Running' },
    ]);
  });

  it('maps Windows levels onto the event-log scale, oldest first', () => {
    const rows = parseWindowsEvents(
      readFileSync(path.join(fixtures, 'windows-events.json'), 'utf8'),
    );
    expect(rows.map((r) => [r.record_id, r.severity])).toEqual([
      [1001, 1],
      [1002, 0],
      [1003, 2],
      [1004, 3],
      [1005, 0],
      [1006, 5],
    ]);
    expect(rows[0]).toMatchObject({
      timestamp: 1764800000000,
      event_id: 41,
      log: 'System',
      source: 'Microsoft-Windows-Kernel-Power',
    });
    expect(parsePsDate('2026-12-04T00:00:00Z')).toBe(Date.UTC(2026, 11, 4));
  });
});

describe('Windows processes (recorded fixture)', () => {
  it('maps Win32_Process rows, largest memory first, with a lifetime CPU share', () => {
    const json = readFileSync(path.join(fixtures, 'windows-processes.json'), 'utf8');
    const rows = parseWindowsProcesses(json, 1764800000000);
    expect(rows).toEqual([
      {
        pid: 4312,
        ppid: 812,
        name: 'svchost.exe',
        user: '',
        state: 'running',
        cpu_percent: 10, // 1 s of CPU over 100 s
        memory_bytes: 52428800,
        command: 'C:\\Windows\\system32\\svchost.exe -k netsvcs -p',
      },
      {
        pid: 4,
        ppid: 0,
        name: 'System',
        user: '',
        state: 'running',
        cpu_percent: 360, // 3,600 s over 1,000 s: several cores
        memory_bytes: 151552,
        command: 'System',
      },
    ]);
  });
});

describe('systemd services', () => {
  it('parses systemctl list-units and maps active states', () => {
    const rows = parseListUnits(
      [
        'cron.service loaded active running Regular background program processing daemon',
        '● nginx.service loaded failed failed A high performance web server',
        'ssh.service loaded inactive dead OpenBSD Secure Shell server',
        'x.service loaded activating start Starting one',
        'y.service loaded deactivating stop-sigterm Stopping one',
        'z.service not-found inactive dead z.service',
      ].join('\n'),
    );
    expect(rows.map((r) => [r.Name, r.State])).toEqual([
      ['cron', 'Running'],
      ['nginx', 'Failed'],
      ['ssh', 'Stopped'],
      ['x', 'Starting'],
      ['y', 'Stopping'],
      ['z', 'Stopped'],
    ]);
    expect(rows[0]?.DisplayName).toBe('Regular background program processing daemon');
  });
});
