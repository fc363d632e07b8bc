/**
 * What differs between the three log feeds (spec part 3, Log rows and Shared log-feed rules): the
 * endpoint family, the keys `filters` and saved filters accept, the severity scale and its names.
 * Pure: the explorer, the overview panels and the tests share it.
 */

export type FeedId = 'syslog' | 'eventlog' | 'eve';

/** `filters` as the list endpoints take it: a key's value is a scalar or an array (OR). */
export type LogFilters = Record<string, string | number | (string | number)[]>;

export interface SeverityLevel {
  value: number;
  /** The name the appliance accepts in `filters` (spec part 3, Severity scales). */
  name: string;
  label: string;
  color: string;
}

export interface FeedDef {
  id: FeedId;
  title: string;
  /** What the rows are called in a sentence. */
  noun: string;
  path: string;
  /** Keys of the list's `filters` besides severity (in the order the form offers them). */
  filterKeys: string[];
  /** Keys a saved filter may carry. */
  savedKeys: string[];
  /** Keys that take integers. */
  integerKeys: string[];
  levels: SeverityLevel[];
  /** Summary buckets shown in the chart (Windows adds 6 and 7, always 0: not drawn). */
  chartLevels: number[];
}

const SYSLOG_LEVELS: SeverityLevel[] = [
  { value: 0, name: 'emergency', label: 'Emergency', color: 'red.9' },
  { value: 1, name: 'alert', label: 'Alert', color: 'red.7' },
  { value: 2, name: 'critical', label: 'Critical', color: 'red.6' },
  { value: 3, name: 'error', label: 'Error', color: 'orange.6' },
  { value: 4, name: 'warning', label: 'Warning', color: 'yellow.6' },
  { value: 5, name: 'notice', label: 'Notice', color: 'blue.5' },
  { value: 6, name: 'informational', label: 'Info', color: 'teal.6' },
  { value: 7, name: 'debug', label: 'Debug', color: 'gray.6' },
];

const WINDOWS_LEVELS: SeverityLevel[] = [
  { value: 0, name: 'information', label: 'Information', color: 'teal.6' },
  { value: 1, name: 'critical', label: 'Critical', color: 'red.7' },
  { value: 2, name: 'error', label: 'Error', color: 'orange.6' },
  { value: 3, name: 'warning', label: 'Warning', color: 'yellow.6' },
  { value: 5, name: 'verbose', label: 'Verbose', color: 'gray.6' },
];

const IDS_LEVELS: SeverityLevel[] = [
  { value: 1, name: 'high', label: 'High', color: 'red.7' },
  { value: 2, name: 'medium', label: 'Medium', color: 'orange.6' },
  { value: 3, name: 'low', label: 'Low', color: 'yellow.6' },
];

export const FEEDS: Record<FeedId, FeedDef> = {
  syslog: {
    id: 'syslog',
    title: 'Syslog',
    noun: 'syslog messages',
    path: '/logs/syslog',
    filterKeys: ['message', 'source', 'device_id', 'facility', 'timestamp'],
    savedKeys: ['message', 'source', 'device_id', 'facility', 'severity'],
    integerKeys: ['device_id', 'facility'],
    levels: SYSLOG_LEVELS,
    chartLevels: [0, 1, 2, 3, 4, 5, 6, 7],
  },
  eventlog: {
    id: 'eventlog',
    title: 'Windows events',
    noun: 'Windows events',
    path: '/logs/windows',
    filterKeys: ['message', 'source', 'log', 'event_id', 'device_id', 'timestamp'],
    savedKeys: ['message', 'source', 'log', 'event_id', 'device_id', 'timestamp', 'severity'],
    integerKeys: ['device_id', 'event_id'],
    levels: WINDOWS_LEVELS,
    chartLevels: [0, 1, 2, 3, 5],
  },
  eve: {
    id: 'eve',
    title: 'IDS events',
    noun: 'IDS events',
    path: '/logs/ids',
    filterKeys: [
      'ip',
      'port',
      'signature_id',
      'src_ip',
      'dst_ip',
      'src_port',
      'dst_port',
      'proto',
      'iface',
      'vlan',
      'device_id',
      'timestamp',
    ],
    savedKeys: [
      'ip',
      'port',
      'signature_id',
      'src_ip',
      'dst_ip',
      'src_port',
      'dst_port',
      'proto',
      'iface',
      'vlan',
      'id',
      'severity',
    ],
    integerKeys: ['signature_id', 'src_port', 'dst_port', 'port', 'vlan', 'device_id', 'id'],
    levels: IDS_LEVELS,
    chartLevels: [1, 2, 3],
  },
};

/** The human label of a filter key. */
export const KEY_LABELS: Record<string, string> = {
  message: 'Message contains',
  source: 'Source',
  device_id: 'Device id',
  facility: 'Facility',
  timestamp: 'Time (date, minute or second)',
  log: 'Log',
  event_id: 'Event id',
  ip: 'Either address',
  port: 'Either port',
  signature_id: 'Signature id',
  src_ip: 'Source address',
  dst_ip: 'Destination address',
  src_port: 'Source port',
  dst_port: 'Destination port',
  proto: 'Protocol',
  iface: 'Interface',
  vlan: 'VLAN',
  id: 'Event id',
  severity: 'Severity',
};

export function levelOf(feed: FeedDef, value: number | null | undefined): SeverityLevel | null {
  return feed.levels.find((l) => l.value === value) ?? null;
}

export function severityLabel(feed: FeedDef, value: number | null | undefined): string {
  return levelOf(feed, value)?.label ?? (value === null || value === undefined ? '–' : `${value}`);
}

/**
 * One filter value as typed: integer keys take numbers (several separated by commas are an OR);
 * a text key keeps the text whole (a message may contain commas). Empty: null.
 */
export function parseFilterValue(
  feed: FeedDef,
  key: string,
  text: string,
): string | number | (string | number)[] | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (!feed.integerKeys.includes(key)) return key === 'message' ? text : trimmed;
  const parts = trimmed
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => (/^-?\d+$/.test(p) ? Number(p) : p));
  return parts.length === 1 ? parts[0]! : parts;
}

/** The filters to send: the typed keys plus severity by name (an OR of the chosen levels). */
export function buildFilters(
  feed: FeedDef,
  values: Record<string, string>,
  severities: number[],
): LogFilters {
  const out: LogFilters = {};
  for (const key of feed.filterKeys) {
    const value = parseFilterValue(feed, key, values[key] ?? '');
    if (value !== null) out[key] = value;
  }
  if (severities.length) {
    const names = severities
      .slice()
      .sort((a, b) => a - b)
      .map((s) => levelOf(feed, s)?.name ?? String(s));
    out.severity = names.length === 1 ? names[0]! : names;
  }
  return out;
}

/**
 * The part of the current filters a saved exclusion may carry (saved filters accept fewer keys
 * than lists: no time on syslog, no device id on IDS), and the keys it had to leave out.
 */
export function savableFilter(
  feed: Pick<FeedDef, 'savedKeys'>,
  filters: LogFilters,
): { filter: LogFilters; dropped: string[] } {
  const filter: LogFilters = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(filters)) {
    if (feed.savedKeys.includes(key)) filter[key] = value;
    else dropped.push(key);
  }
  return { filter, dropped };
}

/** A saved filter's criteria in one line (`message: "link down" · severity: error`). */
export function describeFilter(filter: Record<string, unknown>): string {
  return Object.entries(filter)
    .map(([key, value]) => {
      const text = Array.isArray(value)
        ? value.map((v) => JSON.stringify(v)).join(' or ')
        : JSON.stringify(value);
      return `${key}: ${text}`;
    })
    .join(' · ');
}

/** Pages for a total: a capped total is a lower bound, so a full page always offers one more. */
export function pageCount(
  total: number,
  limit: number,
  capped: boolean,
  page: number,
  rows: number,
): number {
  const known = Math.max(1, Math.ceil(total / limit));
  return capped && rows === limit ? Math.max(known, page + 1) : Math.max(known, page);
}

/** The filters encoded in the page's URL (`?filters=<json>`); anything unreadable is no filter. */
export function filtersFromParam(text: string | null): LogFilters {
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: LogFilters = {};
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof value === 'string' || typeof value === 'number') out[key] = value;
      else if (
        Array.isArray(value) &&
        value.every((v) => typeof v === 'string' || typeof v === 'number')
      )
        out[key] = value;
    }
    return out;
  } catch {
    return {};
  }
}

/** The form's state for a set of filters (inverse of buildFilters). */
export function formOf(
  feed: FeedDef,
  filters: LogFilters,
): { values: Record<string, string>; severities: number[] } {
  const values: Record<string, string> = {};
  for (const key of feed.filterKeys) {
    const v = filters[key];
    if (v === undefined) continue;
    values[key] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  const sev = filters.severity;
  const list = sev === undefined ? [] : Array.isArray(sev) ? sev : [sev];
  const severities = list
    .map((s) =>
      typeof s === 'number'
        ? s
        : (feed.levels.find((l) => l.name === s.toLowerCase())?.value ??
          (/^\d+$/.test(s) ? Number(s) : null)),
    )
    .filter((s): s is number => s !== null);
  return { values, severities };
}
