/**
 * The agent pages' rules and shapes, without React: the enrollment token and adopt-by-key field
 * rules of spec part 2 (Agent administration), the TTL in a unit a person picks, and the probe
 * answers (process rows, the disk-usage tree) read defensively, since an agent is a separate
 * program that may be older or newer than the appliance (docs/agent-protocol.md, Operations).
 */

export const TTL_MIN_SECONDS = 60;
export const TTL_MAX_SECONDS = 2_592_000;
export const TTL_DEFAULT_SECONDS = 86_400;
export const LABEL_MAX = 255;
export const TAG_SLUG_MAX = 64;
export const DEFAULT_PROFILE = 'dash_windows_wmi';

export type TtlUnit = 'minutes' | 'hours' | 'days';
export const TTL_UNITS: Record<TtlUnit, number> = { minutes: 60, hours: 3_600, days: 86_400 };

export function ttlSeconds(amount: number, unit: TtlUnit): number {
  return Math.round(amount * TTL_UNITS[unit]);
}

/** Why a TTL cannot be sent (60 s to 30 days), or null. */
export function ttlProblem(seconds: number): string | null {
  if (!Number.isFinite(seconds)) return 'Enter a number.';
  if (seconds < TTL_MIN_SECONDS) return 'At least 1 minute (60 s).';
  if (seconds > TTL_MAX_SECONDS) return 'At most 30 days.';
  return null;
}

export function labelProblem(label: string): string | null {
  return label.length > LABEL_MAX ? `At most ${LABEL_MAX} characters.` : null;
}

export function tagsProblem(slugs: string[]): string | null {
  const long = slugs.find((s) => s.length > TAG_SLUG_MAX);
  return long === undefined ? null : `Tag slugs have at most ${TAG_SLUG_MAX} characters.`;
}

/** The adoption key the agent printed at install time: 10 to 64 of letters, digits, `_`, `-`. */
export const ADOPTION_KEY = /^[A-Za-z0-9_-]{10,64}$/;

export function adoptionKeyProblem(key: string): string | null {
  if (key === '') return 'Required.';
  if (key.length < 10 || key.length > 64) return 'The key has 10 to 64 characters.';
  if (!ADOPTION_KEY.test(key)) return 'Only letters, digits, _ and - are allowed.';
  return null;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isIp(value: string): boolean {
  if (IPV4.test(value)) return true;
  if (!value.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(value)) return false;
  try {
    // The URL parser knows IPv6 (compressed forms and embedded IPv4 included).
    return new URL(`http://[${value}]/`).hostname !== '';
  } catch {
    return false;
  }
}

export function ipProblem(value: string): string | null {
  if (value === '') return 'Required.';
  return isIp(value) ? null : 'Enter an IPv4 or IPv6 address.';
}

/** An absolute path as the agent accepts it: `/…`, `C:\…` (or `C:/…`), or `\\server\share…`. */
export function isAbsolutePath(path: string): boolean {
  if (path.includes('\0')) return false;
  return /^\//.test(path) || /^[A-Za-z]:[\\/]/.test(path) || /^\\\\[^\\]/.test(path);
}

export function pathProblem(path: string): string | null {
  if (path === '') return 'Required.';
  return isAbsolutePath(path)
    ? null
    : 'An absolute path: /var/log/old.log or C:\\Temp\\old.log (no ~, no relative paths).';
}

/** The last segment of a path, for the tree (the root keeps its whole path). */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const parts = trimmed.split(/[\\/]/);
  const last = parts[parts.length - 1];
  return last && trimmed !== '' ? last : path;
}

// ---- processes ----

export interface ProcessView {
  pid: number | null;
  name: string;
  user: string;
  state: string;
  cpu: number | null;
  memory: number | null;
  command: string;
}

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};
const str = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';

/** One process object of `getDeviceProcesses` (protocol names first, Windows-style names after). */
export function processView(raw: unknown): ProcessView {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  return {
    pid: num(r.pid ?? r.ProcessId),
    name: str(r.name ?? r.Name),
    user: str(r.user ?? r.User),
    state: str(r.state ?? r.Status),
    cpu: num(r.cpu_percent ?? r.cpu),
    memory: num(r.memory_bytes ?? r.memory ?? r.WorkingSetSize),
    command: str(r.command ?? r.CommandLine),
  };
}

export type ProcessSort = 'memory' | 'cpu';

/** Filters by name, command, user or pid, then sorts (missing values last in both directions). */
export function visibleProcesses(
  rows: ProcessView[],
  filter: string,
  sort: ProcessSort,
  descending: boolean,
): ProcessView[] {
  const f = filter.trim().toLowerCase();
  const matching = f
    ? rows.filter(
        (p) =>
          p.name.toLowerCase().includes(f) ||
          p.command.toLowerCase().includes(f) ||
          p.user.toLowerCase().includes(f) ||
          String(p.pid ?? '') === f,
      )
    : rows;
  const key = (p: ProcessView) => (sort === 'memory' ? p.memory : p.cpu);
  return [...matching].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === null && y === null) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return descending ? y - x : x - y;
  });
}

// ---- services ----

export interface ServiceView {
  Name: string;
  State: string;
  DisplayName: string;
}

export function serviceView(raw: unknown): ServiceView {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  return { Name: str(r.Name), State: str(r.State), DisplayName: str(r.DisplayName) };
}

/** The agent's own words when it has no service manager ("services unavailable: no systemd"). */
export function isUnavailable(message: string): boolean {
  return /unavailable/i.test(message);
}

// ---- disk usage ----

export interface UsageNode {
  path: string;
  size: number | null;
  children: UsageNode[];
}

/** A `{path, size, children}` node, at most `depth` levels deep (a hostile agent cannot nest forever). */
export function usageNode(raw: unknown, depth = 32): UsageNode {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const children = Array.isArray(r.children) && depth > 0 ? r.children : [];
  return {
    path: str(r.path),
    size: num(r.size),
    children: children.map((c) => usageNode(c, depth - 1)),
  };
}

export function usageRoots(raw: unknown): UsageNode[] {
  if (Array.isArray(raw)) return raw.map((r) => usageNode(r));
  if (raw && typeof raw === 'object') return [usageNode(raw)];
  return [];
}
