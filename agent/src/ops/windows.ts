/**
 * Windows sources of the `services` and `eventlog.read` ops. UNTESTED HERE: the tests parse
 * recorded PowerShell output (agent/test/fixtures/windows-*.json); running PowerShell itself is
 * exercised only on a Windows host. The PowerShell scripts are constants: arguments from the
 * appliance are passed as numbers in the script, never as text.
 */
import { type EventQuery, type EventRow } from './eventlog.js';
import { OpError } from './paths.js';
import { runProgram } from './run.js';
import { MAX_COMMAND, MAX_PROCESSES, type ProcessRow } from './processes.js';
import { type ServiceRow } from './services.js';

/** Windows event levels onto the event-log scale: LogAlways 0 and Information 4 are info 0. */
export function severityOfLevel(level: unknown): number {
  switch (level) {
    case 1:
      return 1;
    case 2:
      return 2;
    case 3:
      return 3;
    case 5:
      return 5;
    default:
      return 0;
  }
}

/** `/Date(1700000000000)/` (Windows PowerShell 5.1) or an ISO date (PowerShell 7). */
export function parsePsDate(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const legacy = /^\/Date\((-?\d+)\)\/$/.exec(value);
  if (legacy) return Number(legacy[1]);
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function asArray(parsed: unknown): Record<string, unknown>[] {
  const list = Array.isArray(parsed) ? parsed : parsed ? [parsed] : [];
  return list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null);
}

const SERVICE_STATUS: Record<string, ServiceRow['State']> = {
  '1': 'Stopped',
  '2': 'Starting',
  '3': 'Stopping',
  '4': 'Running',
  Stopped: 'Stopped',
  StartPending: 'Starting',
  StopPending: 'Stopping',
  Running: 'Running',
};

/** Parses `Get-Service | Select-Object Name,DisplayName,Status | ConvertTo-Json`. */
export function parseWindowsServices(json: string): ServiceRow[] {
  return asArray(JSON.parse(json) as unknown).map((s) => ({
    Name: typeof s.Name === 'string' ? s.Name : '',
    DisplayName: typeof s.DisplayName === 'string' ? s.DisplayName : '',
    State: SERVICE_STATUS[String(s.Status)] ?? 'Unknown',
  }));
}

/** Parses `Get-WinEvent ... | Select-Object RecordId,TimeCreated,Id,LogName,ProviderName,Level,Message | ConvertTo-Json`. */
export function parseWindowsEvents(json: string): EventRow[] {
  const rows: EventRow[] = [];
  for (const e of asArray(json.trim() ? (JSON.parse(json) as unknown) : [])) {
    const timestamp = parsePsDate(e.TimeCreated);
    if (timestamp === null || typeof e.RecordId !== 'number') continue;
    rows.push({
      record_id: e.RecordId,
      timestamp,
      event_id: typeof e.Id === 'number' ? e.Id : 0,
      log: typeof e.LogName === 'string' ? e.LogName : '',
      source: typeof e.ProviderName === 'string' ? e.ProviderName : '',
      severity: severityOfLevel(e.Level),
      data: typeof e.Message === 'string' ? e.Message : '',
    });
  }
  return rows.sort((a, b) => a.timestamp - b.timestamp || a.record_id - b.record_id);
}

export async function listWindowsServices(): Promise<ServiceRow[]> {
  const result = await runProgram('powershell.exe', [
    '-NoProfile',
    '-NonInteractive',
    '-Command',
    'Get-Service | Select-Object Name,DisplayName,Status | ConvertTo-Json -Compress',
  ]);
  if (result.code !== 0) throw new OpError('services unavailable: Get-Service failed');
  return parseWindowsServices(result.stdout);
}

/**
 * The query's channel, levels and event ids reach PowerShell as environment variables, never as
 * script text: the script is a constant apart from validated numbers.
 */
export async function readWindowsEvents(query: EventQuery): Promise<EventRow[]> {
  const since = Math.floor(query.since);
  const until = Math.ceil(query.until);
  const max = Math.floor(query.max);
  const script =
    `$s=[DateTimeOffset]::FromUnixTimeMilliseconds(${since}).UtcDateTime;` +
    `$u=[DateTimeOffset]::FromUnixTimeMilliseconds(${until}).UtcDateTime;` +
    '$f=@{LogName=$env:NETMON_EVENTLOG_CHANNEL;StartTime=$s;EndTime=$u};' +
    "if ($env:NETMON_EVENTLOG_LEVELS) { $f.Level=[int[]]($env:NETMON_EVENTLOG_LEVELS -split ',') };" +
    "if ($env:NETMON_EVENTLOG_IDS) { $f.Id=[int[]]($env:NETMON_EVENTLOG_IDS -split ',') };" +
    `Get-WinEvent -FilterHashtable $f -MaxEvents ${max} -Oldest -ErrorAction SilentlyContinue | ` +
    'Select-Object RecordId,TimeCreated,Id,LogName,ProviderName,Level,Message | ConvertTo-Json -Compress';
  const result = await runProgram(
    'powershell.exe',
    ['-NoProfile', '-NonInteractive', '-Command', script],
    {
      env: {
        NETMON_EVENTLOG_CHANNEL: query.channel || 'System',
        NETMON_EVENTLOG_LEVELS: query.levels.join(','),
        NETMON_EVENTLOG_IDS: query.event_ids.join(','),
      },
    },
  );
  if (result.code !== 0) throw new OpError('event log unavailable: Get-WinEvent failed');
  return parseWindowsEvents(result.stdout).slice(0, query.max);
}

/**
 * Parses `Get-CimInstance Win32_Process | Select-Object ProcessId,ParentProcessId,Name,CommandLine,
 * WorkingSetSize,UserModeTime,KernelModeTime,CreationDate | ConvertTo-Json` (times in 100 ns
 * units; CreationDate as PowerShell prints a date). `cpu_percent` is the lifetime average, as on
 * Linux; the owner is not read (it needs a call per process), so `user` is empty.
 */
export function parseWindowsProcesses(json: string, now = Date.now()): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const p of asArray(json.trim() ? (JSON.parse(json) as unknown) : [])) {
    if (typeof p.ProcessId !== 'number') continue;
    const name = typeof p.Name === 'string' ? p.Name : '';
    const created = parsePsDate(p.CreationDate);
    const cpuSeconds =
      ((typeof p.UserModeTime === 'number' ? p.UserModeTime : 0) +
        (typeof p.KernelModeTime === 'number' ? p.KernelModeTime : 0)) /
      1e7;
    const elapsed = created === null ? 0 : (now - created) / 1000;
    rows.push({
      pid: p.ProcessId,
      ppid: typeof p.ParentProcessId === 'number' ? p.ParentProcessId : 0,
      name,
      user: '',
      state: 'running',
      cpu_percent: elapsed > 0 ? Math.round((cpuSeconds / elapsed) * 10_000) / 100 : 0,
      memory_bytes: typeof p.WorkingSetSize === 'number' ? p.WorkingSetSize : 0,
      command: (typeof p.CommandLine === 'string' && p.CommandLine ? p.CommandLine : name).slice(
        0,
        MAX_COMMAND,
      ),
    });
  }
  rows.sort((a, b) => b.memory_bytes - a.memory_bytes || a.pid - b.pid);
  return rows.slice(0, MAX_PROCESSES);
}

export async function listWindowsProcesses(): Promise<ProcessRow[]> {
  const result = await runProgram('powershell.exe', [
    '-NoProfile',
    '-NonInteractive',
    '-Command',
    'Get-CimInstance Win32_Process | Select-Object ProcessId,ParentProcessId,Name,CommandLine,WorkingSetSize,UserModeTime,KernelModeTime,CreationDate | ConvertTo-Json -Compress',
  ]);
  if (result.code !== 0) throw new OpError('processes unavailable: Win32_Process failed');
  return parseWindowsProcesses(result.stdout);
}
