/**
 * The `processes` op on Linux: every process from /proc (docs/agent-protocol.md §4), at most 5,000,
 * largest memory first, `command` at most 1,024 characters. `cpu_percent` is the process's CPU time
 * over its lifetime (one read, no sampling delay).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessRow {
  pid: number;
  ppid: number;
  name: string;
  user: string;
  state: string;
  cpu_percent: number;
  memory_bytes: number;
  command: string;
}

export const MAX_PROCESSES = 5000;
export const MAX_COMMAND = 1024;
const CLOCK_TICKS = 100;

function userNames(procRoot: string): Map<number, string> {
  const names = new Map<number, string>();
  try {
    const passwd = readFileSync(
      procRoot === '/proc' ? '/etc/passwd' : `${procRoot}/../passwd`,
      'utf8',
    );
    for (const line of passwd.split('\n')) {
      const [name, , uid] = line.split(':');
      if (name && uid && /^\d+$/.test(uid)) names.set(Number(uid), name);
    }
  } catch {
    // no passwd: users are shown by uid
  }
  return names;
}

const STATES: Record<string, string> = {
  R: 'running',
  S: 'sleeping',
  D: 'disk-sleep',
  Z: 'zombie',
  T: 'stopped',
  t: 'tracing-stop',
  X: 'dead',
  I: 'idle',
  P: 'parked',
};

/** Parses /proc/<pid>/stat: the name is between the first '(' and the LAST ')'. */
export function parseStat(text: string): {
  name: string;
  state: string;
  ppid: number;
  utime: number;
  stime: number;
  starttime: number;
} | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3 (state); field n is rest[n - 3].
  return {
    name: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: Number(rest[1]),
    utime: Number(rest[11]),
    stime: Number(rest[12]),
    starttime: Number(rest[19]),
  };
}

export function listProcesses(procRoot = '/proc'): ProcessRow[] {
  const users = userNames(procRoot);
  let uptime = 0;
  try {
    uptime = Number(readFileSync(`${procRoot}/uptime`, 'utf8').split(' ')[0]);
  } catch {
    uptime = 0;
  }
  const rows: ProcessRow[] = [];
  for (const entry of readdirSync(procRoot)) {
    if (!/^\d+$/.test(entry)) continue;
    const dir = `${procRoot}/${entry}`;
    try {
      const stat = parseStat(readFileSync(`${dir}/stat`, 'utf8'));
      if (!stat) continue;
      const status = readFileSync(`${dir}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
      const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      let command = '';
      try {
        command = readFileSync(`${dir}/cmdline`)
          .toString('utf8')
          .replace(/\0+$/, '')
          .replace(/\0/g, ' ');
      } catch {
        command = '';
      }
      const elapsed = uptime - stat.starttime / CLOCK_TICKS;
      const cpu = elapsed > 0 ? ((stat.utime + stat.stime) / CLOCK_TICKS / elapsed) * 100 : 0;
      rows.push({
        pid: Number(entry),
        ppid: stat.ppid,
        name: stat.name,
        user: users.get(uid) ?? String(uid),
        state: STATES[stat.state] ?? stat.state,
        cpu_percent: Math.round(cpu * 100) / 100,
        memory_bytes: rssKb * 1024,
        command: (command || `[${stat.name}]`).slice(0, MAX_COMMAND),
      });
    } catch {
      // the process ended while we read it
    }
  }
  rows.sort((a, b) => b.memory_bytes - a.memory_bytes || a.pid - b.pid);
  return rows.slice(0, MAX_PROCESSES);
}
