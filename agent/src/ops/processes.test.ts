import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { listProcesses, MAX_COMMAND, parseStat } from './processes.js';

describe('processes from /proc', () => {
  it("includes the test's own pid with its parent, command and memory", () => {
    const rows = listProcesses();
    const own = rows.find((row) => row.pid === process.pid);
    expect(own).toBeDefined();
    expect(own?.ppid).toBe(process.ppid);
    const cmdline = readFileSync('/proc/self/cmdline', 'utf8')
      .replace(/\0+$/, '')
      .replace(/\0/g, ' ');
    expect(own?.command).toBe(cmdline.slice(0, MAX_COMMAND));
    expect(own?.memory_bytes).toBeGreaterThan(1024 * 1024);
    expect(own?.state).toMatch(/running|sleeping/);
    expect(rows.every((row) => row.command.length <= MAX_COMMAND)).toBe(true);
    for (let i = 1; i < rows.length; i++)
      expect((rows[i - 1]?.memory_bytes ?? 0) >= (rows[i]?.memory_bytes ?? 0)).toBe(true);
  });

  it('reads a name with spaces and parentheses from stat', () => {
    const stat = parseStat(
      '42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 500 0 0',
    );
    expect(stat).toMatchObject({
      name: 'a) b (c)',
      state: 'S',
      ppid: 1,
      utime: 7,
      stime: 3,
      starttime: 500,
    });
  });
});
