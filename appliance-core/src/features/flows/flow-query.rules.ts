/**
 * The flow lists' rules, pure and free of I/O (spec part 3 "Flow record", "Flow explorer"): the
 * keys each list's `filters` and the saved filters accept, the reading of a filters object into
 * criteria (each key: a list of values OR-matched; keys AND-matched), the windows, the sort
 * allowlist, protocol names and bits per second. The repository turns criteria into SQL with
 * values as parameters only.
 *
 * Decisions (docs/spec-decisions.md):
 * - Active flows (no window): end time within the last ACTIVE_MS (60 s): exporters send a flow
 *   once it has ended (or hit its active timeout), so "end time now or later" would be empty.
 * - A window is `startTime` (+ `endTime`, default now) or `hours` (before `endTime` or now);
 *   `endTime` alone is the 24 hours before it. The aggregated list without any of them covers
 *   the last 24 hours (the rollup has no notion of active).
 * - `protocol` takes a number or a name (`tcp`, `udp`, `icmp` ...); `ip` matches either
 *   endpoint; `port` matches either endpoint's port in the flow list and `dst_port` in the
 *   aggregated list (the spec's words); `src_port` in the aggregated list matches within
 *   `src_ports`. Text keys match exactly; `start_time`/`end_time` take a date-time and match its
 *   precision (a day, a minute, a second).
 */
import { isIP } from 'node:net';
import { parseDateTime } from '../../platform/time/datetime.js';

export const ACTIVE_MS = 60_000;
export const DEFAULT_HOURS = 24;
export const MAX_HOURS = 24 * 366;
export const WINDOW_INVERTED = 'startTime must be before endTime.';
const MAX_VALUES = 100;
const MAX_TEXT = 64;

export type KeyKind = 'integer' | 'ip' | 'timestamp' | 'protocol';

export const FLOW_LIST_KEYS: Readonly<Record<string, KeyKind>> = {
  src_ip: 'ip',
  src_port: 'integer',
  dst_ip: 'ip',
  dst_port: 'integer',
  bytes: 'integer',
  packets: 'integer',
  start_time: 'timestamp',
  end_time: 'timestamp',
  protocol: 'protocol',
  in_iface: 'integer',
  out_iface: 'integer',
  flow_src: 'ip',
  vlan: 'integer',
  ip: 'ip',
  port: 'integer',
};

export const AGG_LIST_KEYS: Readonly<Record<string, KeyKind>> = {
  src_ip: 'ip',
  dst_ip: 'ip',
  dst_port: 'integer',
  bytes: 'integer',
  start_time: 'timestamp',
  end_time: 'timestamp',
  protocol: 'protocol',
  in_iface: 'integer',
  out_iface: 'integer',
  flow_src: 'ip',
  vlan: 'integer',
  ip: 'ip',
  port: 'integer',
  src_port: 'integer',
};

/** Keys a saved flow filter may hold (one set serves both lists). */
export const SAVED_KEYS = [
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'protocol',
  'in_iface',
  'out_iface',
  'flow_src',
  'vlan',
  'ip',
  'port',
] as const;

const PROTOCOLS: Readonly<Record<number, string>> = {
  1: 'icmp',
  2: 'igmp',
  4: 'ipip',
  6: 'tcp',
  17: 'udp',
  41: 'ipv6',
  47: 'gre',
  50: 'esp',
  51: 'ah',
  58: 'ipv6-icmp',
  88: 'eigrp',
  89: 'ospf',
  103: 'pim',
  112: 'vrrp',
  132: 'sctp',
};
const PROTOCOL_NUMBERS = new Map(Object.entries(PROTOCOLS).map(([n, name]) => [name, Number(n)]));
PROTOCOL_NUMBERS.set('icmpv6', 58);

/** The protocol's IANA keyword, or its number as text when it has none here. */
export function protocolName(protocol: number): string {
  return PROTOCOLS[protocol] ?? String(protocol);
}

/** Bits per second over the flow's duration; a flow shorter than 1 ms counts as 1 s. */
export function bitsPerSecond(bytes: number, start: number, end: number): number {
  const ms = end - start;
  return Math.round(ms >= 1 ? (bytes * 8 * 1000) / ms : bytes * 8);
}

export class FlowQueryError extends Error {
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

export type CriterionValue = number | string | { from: number; to: number };
export type Criteria = Map<string, CriterionValue[]>;

const isBlank = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.every(isBlank));

function timestampRange(text: string): { from: number; to: number } | null {
  const from = parseDateTime(text);
  if (from === null) return null;
  const t = text.trim();
  const span = /^\d{4}-\d{2}-\d{2}$/.test(t)
    ? 86_400_000
    : /[Tt ]\d{2}:\d{2}(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?$/.test(t)
      ? 60_000
      : /:\d{2}\.\d+/.test(t)
        ? 1
        : 1000;
  return { from, to: from + span };
}

function valueOf(kind: KeyKind, value: unknown): CriterionValue | null {
  switch (kind) {
    case 'integer': {
      const n = typeof value === 'string' && /^\s*\d{1,16}\s*$/.test(value) ? Number(value) : value;
      return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
    }
    case 'protocol': {
      if (typeof value === 'string' && !/^\s*\d+\s*$/.test(value))
        return PROTOCOL_NUMBERS.get(value.trim().toLowerCase()) ?? null;
      const n = typeof value === 'string' ? Number(value) : value;
      return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 255 ? n : null;
    }
    case 'timestamp':
      return typeof value === 'string' ? timestampRange(value) : null;
    case 'ip':
      // Addresses compare as stored (canonical text); anything else can match nothing.
      return typeof value === 'string' && value.length <= MAX_TEXT && isIP(value.trim()) !== 0
        ? value.trim().toLowerCase()
        : null;
  }
}

/** Reads a filters object for `keys`; throws FlowQueryError naming the key at fault. */
export function criteriaOf(
  keys: Readonly<Record<string, KeyKind>>,
  filters: Record<string, unknown>,
  allowed: readonly string[] = Object.keys(keys),
): Criteria {
  const criteria: Criteria = new Map();
  for (const [key, raw] of Object.entries(filters)) {
    if (!allowed.includes(key) || keys[key] === undefined)
      throw new FlowQueryError(`Invalid filter key: ${key}`, key);
    if (isBlank(raw)) continue;
    const list = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    if (list.length > MAX_VALUES)
      throw new FlowQueryError(`Too many values for ${key} (at most ${MAX_VALUES})`, key);
    const values: CriterionValue[] = [];
    for (const item of list) {
      if (isBlank(item)) continue;
      const value = valueOf(keys[key], item);
      if (value === null) throw new FlowQueryError(`Invalid value for filter ${key}`, key);
      values.push(value);
    }
    if (values.length > 0) criteria.set(key, values);
  }
  return criteria;
}

/** Parses the `filters` query parameter (a JSON object); undefined or '' is no filter. */
export function parseFilters(
  keys: Readonly<Record<string, KeyKind>>,
  text: string | undefined,
): Criteria {
  if (text === undefined || text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FlowQueryError('Invalid filters: not a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new FlowQueryError('Invalid filters: not a JSON object');
  return criteriaOf(keys, parsed as Record<string, unknown>);
}

export interface WindowQuery {
  startTime?: string;
  endTime?: string;
  hours?: string;
}

/** A window [start, end] (ms), or null when the query gives none (active flows). */
export function windowOf(query: WindowQuery, now: number): { start: number; end: number } | null {
  const read = (name: string, text: string | undefined): number | null => {
    if (text === undefined || text === '') return null;
    const ms = parseDateTime(text);
    if (ms === null)
      throw new FlowQueryError(
        `Invalid ${name}: use a date-time such as 2026-11-21 10:20:30 or 2026-11-21T10:20:30Z`,
      );
    return ms;
  };
  const start = read('startTime', query.startTime);
  const endGiven = read('endTime', query.endTime);
  const hoursGiven = query.hours !== undefined && query.hours !== '';
  if (start === null && endGiven === null && !hoursGiven) return null;
  const end = endGiven ?? now;
  if (start !== null) {
    if (start >= end) throw new FlowQueryError(WINDOW_INVERTED);
    return { start, end };
  }
  let hours = DEFAULT_HOURS;
  if (hoursGiven) {
    hours = Number(query.hours);
    if (!Number.isFinite(hours) || hours <= 0 || hours > MAX_HOURS)
      throw new FlowQueryError(`Invalid hours: a number above 0 and at most ${MAX_HOURS}`);
  }
  return { start: end - Math.round(hours * 3_600_000), end };
}

/** Sort columns of the aggregated list (always descending); anything else is start_time. */
export const AGG_SORTS = { start_time: 'start_time', bytes: 'bytes' } as const;
export function aggSortOf(sort: unknown): keyof typeof AGG_SORTS {
  return sort === 'bytes' ? 'bytes' : 'start_time';
}
