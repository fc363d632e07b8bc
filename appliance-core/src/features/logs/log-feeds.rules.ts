/**
 * The log feeds' rules, pure and free of I/O (spec part 3 "Log rows", "Shared log-feed rules"):
 * the keys each feed's `filters` and saved filters accept, the severity scales with their names,
 * and the reading of a `filters` JSON object into criteria (each key: a list of values, OR-matched;
 * keys AND-matched). The repository turns criteria into SQL with values as parameters only.
 *
 * Decisions (docs/spec-decisions.md):
 * - Severity accepts the scale's names (case-insensitive) as well as numbers, in `filters` and in
 *   saved filters: syslog `emergency`..`debug` (`info` too), Windows `information`/`info` 0,
 *   `critical` 1, `error` 2, `warning` 3, `verbose` 5, IDS `high` 1, `med`/`medium` 2, `low` 3.
 * - `message` is a case-insensitive substring (never a pattern: `%`, `_` and `\` match
 *   themselves); other text keys match exactly; an empty string, null or [] carries no value and
 *   is ignored.
 * - `timestamp` takes a date-time in the API's forms and matches its whole precision: a date its
 *   day, `HH:MM` its minute, `HH:MM:SS` its second.
 */
import { parseDateTime } from '../../platform/time/datetime.js';

export type Feed = 'syslog' | 'eventlog' | 'eve';

export type KeyKind = 'integer' | 'text' | 'substring' | 'severity' | 'timestamp' | 'ip';

export interface FeedDefinition {
  feed: Feed;
  /** Keys of the list's `filters`. */
  listKeys: Readonly<Record<string, KeyKind>>;
  /** Keys a saved filter may hold. */
  savedKeys: readonly string[];
  severityNames: Readonly<Record<string, number>>;
  /** Levels of the summary, zero-filled. */
  summaryLevels: readonly number[];
  /** Range of stored severities (names and numbers outside it are refused). */
  severityRange: readonly [number, number];
}

const SYSLOG_SEVERITIES: Record<string, number> = {
  emergency: 0,
  emerg: 0,
  alert: 1,
  critical: 2,
  crit: 2,
  error: 3,
  err: 3,
  warning: 4,
  warn: 4,
  notice: 5,
  informational: 6,
  info: 6,
  debug: 7,
};

export const FEEDS: Readonly<Record<Feed, FeedDefinition>> = {
  syslog: {
    feed: 'syslog',
    listKeys: {
      device_id: 'integer',
      timestamp: 'timestamp',
      facility: 'integer',
      severity: 'severity',
      source: 'text',
      message: 'substring',
    },
    savedKeys: ['device_id', 'severity', 'facility', 'message', 'source'],
    severityNames: SYSLOG_SEVERITIES,
    summaryLevels: [0, 1, 2, 3, 4, 5, 6, 7],
    severityRange: [0, 7],
  },
  eventlog: {
    feed: 'eventlog',
    listKeys: {
      device_id: 'integer',
      event_id: 'integer',
      timestamp: 'timestamp',
      log: 'text',
      source: 'text',
      severity: 'severity',
      message: 'substring',
    },
    savedKeys: ['event_id', 'severity', 'timestamp', 'device_id', 'log', 'source', 'message'],
    severityNames: { information: 0, info: 0, critical: 1, error: 2, warning: 3, verbose: 5 },
    summaryLevels: [0, 1, 2, 3, 4, 5, 6, 7],
    severityRange: [0, 5],
  },
  eve: {
    feed: 'eve',
    listKeys: {
      signature_id: 'integer',
      severity: 'severity',
      proto: 'text',
      iface: 'text',
      timestamp: 'timestamp',
      vlan: 'integer',
      src_ip: 'ip',
      dst_ip: 'ip',
      src_port: 'integer',
      dst_port: 'integer',
      device_id: 'integer',
      ip: 'ip',
      port: 'integer',
      id: 'integer',
    },
    savedKeys: [
      'id',
      'signature_id',
      'severity',
      'src_ip',
      'src_port',
      'dst_ip',
      'dst_port',
      'proto',
      'iface',
      'vlan',
      'ip',
      'port',
    ],
    severityNames: { high: 1, med: 2, medium: 2, low: 3 },
    summaryLevels: [1, 2, 3],
    severityRange: [1, 3],
  },
};

/** One key's accepted values (OR); a timestamp value is a [from, to) range in UTC ms. */
export type CriterionValue = number | string | { from: number; to: number };
export type Criteria = Map<string, CriterionValue[]>;

export class FilterError extends Error {
  constructor(
    message: string,
    /** The key at fault, when one is. */
    readonly key?: string,
  ) {
    super(message);
  }
}

const MAX_VALUES = 100;
const MAX_TEXT = 1024;

/** The range a date-time value of `timestamp` stands for (its own precision), or null. */
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

/** A severity value (a number in range, or a name of the feed's scale), or null. */
export function severityOf(feed: FeedDefinition, value: unknown): number | null {
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value))) {
    const n = Number(value);
    return Number.isInteger(n) && n >= feed.severityRange[0] && n <= feed.severityRange[1]
      ? n
      : null;
  }
  if (typeof value !== 'string') return null;
  const named = feed.severityNames[value.trim().toLowerCase()];
  return named === undefined ? null : named;
}

function valueOf(feed: FeedDefinition, kind: KeyKind, value: unknown): CriterionValue | null {
  switch (kind) {
    case 'severity':
      return severityOf(feed, value);
    case 'integer': {
      const n =
        typeof value === 'string' && /^\s*-?\d{1,16}\s*$/.test(value) ? Number(value) : value;
      return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
    }
    case 'timestamp':
      return typeof value === 'string' ? timestampRange(value) : null;
    case 'text':
    case 'substring':
    case 'ip':
      if (typeof value === 'number') return String(value);
      return typeof value === 'string' && value.length <= MAX_TEXT ? value : null;
  }
}

/** True when a filter value carries nothing (ignored): null, '' or []. */
export const isBlank = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.every(isBlank));

/**
 * Reads a filters object into criteria for `keys` (the list's or a saved filter's). Throws a
 * FilterError naming the key for an unknown key or a value the key cannot take.
 */
export function criteriaOf(
  feed: FeedDefinition,
  filters: Record<string, unknown>,
  keys: readonly string[] = Object.keys(feed.listKeys),
): Criteria {
  const criteria: Criteria = new Map();
  for (const [key, raw] of Object.entries(filters)) {
    if (!keys.includes(key)) throw new FilterError(`Invalid filter key: ${key}`, key);
    if (isBlank(raw)) continue;
    const kind = feed.listKeys[key] as KeyKind;
    const list = Array.isArray(raw) ? raw : [raw];
    if (list.length > MAX_VALUES)
      throw new FilterError(`Too many values for ${key} (at most ${MAX_VALUES})`, key);
    const values: CriterionValue[] = [];
    for (const item of list) {
      if (isBlank(item)) continue;
      const value = valueOf(feed, kind, item);
      if (value === null) throw new FilterError(`Invalid value for filter ${key}`, key);
      values.push(value);
    }
    if (values.length > 0) criteria.set(key, values);
  }
  return criteria;
}

/** Parses the `filters` query parameter (a JSON object); undefined or '' is no filter. */
export function parseFilters(feed: FeedDefinition, text: string | undefined): Criteria {
  if (text === undefined || text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FilterError('Invalid filters: not a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new FilterError('Invalid filters: not a JSON object');
  return criteriaOf(feed, parsed as Record<string, unknown>);
}

export interface Window {
  start: number;
  end: number;
}

export const DEFAULT_HOURS = 24;
export const MAX_HOURS = 24 * 366;

/**
 * The window of a list or summary: startTime (+ endTime, default now) or the last `hours`
 * (default 24) before endTime or now. Throws a FilterError with the caller's message.
 */
export function windowOf(
  query: { startTime?: string; endTime?: string; hours?: string | number },
  now: number,
): Window {
  const read = (name: string, text: string | undefined): number | null => {
    if (text === undefined || text === '') return null;
    const ms = parseDateTime(text);
    if (ms === null)
      throw new FilterError(
        `Invalid ${name}: use a date-time such as 2026-11-21 10:20:30 or 2026-11-21T10:20:30Z`,
      );
    return ms;
  };
  const start = read('startTime', query.startTime);
  const end = read('endTime', query.endTime) ?? now;
  if (start !== null) {
    if (start >= end) throw new FilterError('startTime must precede endTime');
    return { start, end };
  }
  let hours = DEFAULT_HOURS;
  if (query.hours !== undefined && query.hours !== '') {
    hours = Number(query.hours);
    if (!Number.isFinite(hours) || hours <= 0 || hours > MAX_HOURS)
      throw new FilterError(`Invalid hours: a number above 0 and at most ${MAX_HOURS}`);
  }
  return { start: end - Math.round(hours * 3_600_000), end };
}
