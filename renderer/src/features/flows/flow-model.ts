/**
 * The flow explorer's rules for the console (spec part 3, Flow explorer; docs/features/flows.md):
 * the filter keys each list and saved filters accept, how typed text becomes a `filters` value,
 * the window a page asks for, and how the top-talkers answer becomes bars and points. Pure: the
 * pages and the tests share it.
 */
import type { LogFilters } from '../logs/log-model.js';

export type FlowFilters = LogFilters;

/** Keys the flow list's form offers (the spec's keys but the measures and times). */
export const LIST_KEYS = [
  'ip',
  'port',
  'protocol',
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'flow_src',
  'in_iface',
  'out_iface',
  'vlan',
] as const;

/** The aggregated list's keys (`src_port` matches within `src_ports`, `port` is `dst_port`). */
export const AGG_KEYS = LIST_KEYS;

/** Keys a saved flow filter may carry (one set serves both lists). */
export const SAVED_KEYS: string[] = [
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
];

/** Keys whose values are integers (several separated by commas are an OR). */
export const INTEGER_KEYS = ['src_port', 'dst_port', 'port', 'in_iface', 'out_iface', 'vlan'];

/** Always-visible fields of the filter form; the rest are added through "More filters". */
export const PRIMARY_KEYS = ['ip', 'port', 'protocol'];

export const FLOW_KEY_LABELS: Record<string, string> = {
  ip: 'Either address',
  port: 'Port',
  protocol: 'Protocol',
  src_ip: 'Source address',
  src_port: 'Source port',
  dst_ip: 'Destination address',
  dst_port: 'Destination port',
  flow_src: 'Exporter',
  in_iface: 'In interface',
  out_iface: 'Out interface',
  vlan: 'VLAN',
};

/**
 * One typed value: integer keys and `protocol` split on commas (an OR; a protocol is a number or
 * a name such as `tcp`), addresses split on commas too. Empty: null.
 */
export function parseFlowValue(
  key: string,
  text: string,
): string | number | (string | number)[] | null {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) =>
      (INTEGER_KEYS.includes(key) || key === 'protocol') && /^\d+$/.test(p)
        ? Number(p)
        : key === 'protocol'
          ? p.toLowerCase()
          : p,
    );
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : parts;
}

/** The filters to send from the form's texts (keys without a value are left out). */
export function buildFlowFilters(
  keys: readonly string[],
  values: Record<string, string>,
): FlowFilters {
  const out: FlowFilters = {};
  for (const key of keys) {
    const value = parseFlowValue(key, values[key] ?? '');
    if (value !== null) out[key] = value;
  }
  return out;
}

/** The form's texts for a set of filters (inverse of buildFlowFilters). */
export function flowFormOf(keys: readonly string[], filters: FlowFilters): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of keys) {
    const v = filters[key];
    if (v !== undefined) values[key] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return values;
}

/**
 * The window the flow list asks for. `startTime`/`endTime` in the page's URL (a link from
 * elsewhere) win and are sent as they are (an inverted pair earns the appliance's 400 message);
 * otherwise `?window=1` uses the console's shared window and its absence means active flows.
 */
export type FlowWindow =
  | { kind: 'active' }
  | { kind: 'relative'; hours: number }
  | { kind: 'range'; start: string; end: string };

export function flowWindowOf(
  params: URLSearchParams,
  shared: { kind: 'relative'; hours: number } | { kind: 'custom'; start: string; end: string },
  activeByDefault: boolean,
): FlowWindow {
  const start = params.get('startTime');
  const end = params.get('endTime');
  if (start && end) return { kind: 'range', start, end };
  if (activeByDefault && params.get('window') !== '1') return { kind: 'active' };
  return shared.kind === 'relative'
    ? { kind: 'relative', hours: shared.hours }
    : { kind: 'range', start: shared.start, end: shared.end };
}

/** The query parameters of a window (none for active flows). */
export function flowWindowQuery(w: FlowWindow): Record<string, string | number> {
  if (w.kind === 'active') return {};
  if (w.kind === 'relative') return { hours: w.hours };
  return { startTime: w.start, endTime: w.end };
}

export function flowWindowKey(w: FlowWindow): string {
  return w.kind === 'active'
    ? 'active'
    : w.kind === 'relative'
      ? `h${w.hours}`
      : `${w.start}/${w.end}`;
}

/** The flow list's URL for a set of filters (the device page's link, the top-talkers bars). */
export function flowListHref(filters: FlowFilters, window = false): string {
  const p = new URLSearchParams();
  if (window) p.set('window', '1');
  if (Object.keys(filters).length) p.set('filters', JSON.stringify(filters));
  const qs = p.toString();
  return `/flows${qs ? `?${qs}` : ''}`;
}

/** Bars of a top list: each entry's share of the largest, on a square-root scale (as the severity chart). */
export function barWidths(values: readonly number[]): number[] {
  const max = Math.max(1, ...values);
  return values.map((v) => (v <= 0 ? 0 : Math.max(2, Math.sqrt(v / max) * 100)));
}

/** The top route's hourly series as chart points (`t` in ms, bits per second and bytes). */
export function seriesPoints(
  series: readonly { time: string; bps: number; bytes: number }[],
): { t: number; bps: number; bytes: number }[] {
  return series
    .map((s) => ({ t: Date.parse(s.time), bps: s.bps, bytes: s.bytes }))
    .filter((p) => Number.isFinite(p.t))
    .sort((a, b) => a.t - b.t);
}

/** An endpoint's name: the device's host when the appliance knows one, else the address. */
export function endpointName(ip: string, host: string | null | undefined): string {
  return host ? `${host} (${ip})` : ip;
}
