/**
 * One line of Suricata's eve.json, read as an IDS event of spec part 3 ("Log rows", IDS event):
 * pure, free of I/O, and total: every input gives a typed result (`alert`, `ignored` for the
 * other event types, or `error` with a code), never a throw (eve-line.property.test.ts: random
 * bytes, truncation at every offset, over-long fields, each under 100 ms).
 *
 * Field rules (docs/features/ids-intake.md):
 * - `timestamp`: Suricata's `2026-11-26T10:00:00.123456+0000` (also `Z` and `+00:00`), to UTC
 *   milliseconds (microseconds truncated); a date that does not exist is an error.
 * - `alert.severity`: an integer >= 1; above 3 is stored as 3 (the spec's scale is 1 to 3).
 * - `alert.signature_id`: an integer 0 to 2^32-1 (Suricata's sid is 32-bit). `alert.signature`
 *   (required) and `alert.category` are kept to MAX_TEXT characters: the raw line keeps them whole.
 * - `src_ip` / `dest_ip`: IP literals, stored canonical (IPv4 dotted, IPv6 compressed lower
 *   case, an IPv4-mapped IPv6 address as its IPv4) like the devices' addresses, so that filters
 *   and the device map match. Ports 0 to 65535 or absent (ICMP); `vlan`: the first entry, 0 to
 *   4095; `in_iface` and `proto` kept to MAX_SHORT characters.
 * - `flow_id`: Suricata's 64-bit id, exact (a bigint when beyond 2^53, read from the text because
 *   JSON numbers lose those digits); null when absent or not a non-negative 64-bit integer.
 * - Non-alert events are recognised without a full parse: Suricata writes compact JSON, so a line
 *   whose text has no `"event_type":"alert"` member is not an alert. It is `ignored` when it looks
 *   like one JSON object (`{...}`), else an error.
 */
import net from 'node:net';

/** Lines longer than this (UTF-16 code units; the follower caps bytes the same) are refused. */
export const MAX_EVE_LINE = 256 * 1024;
/** Signature text and category are kept to this many characters. */
export const MAX_TEXT = 1024;
/** `in_iface` and `proto` are kept to this many characters. */
export const MAX_SHORT = 64;

/** An alert event, in the columns of `eve_log_latest` (before device enrichment). */
export interface EveAlert {
  /** UTC milliseconds. */
  timestamp: number;
  signatureId: number;
  signature: string;
  category: string | null;
  /** 1 to 3 (Suricata's severity, above 3 stored as 3). */
  severity: 1 | 2 | 3;
  proto: string | null;
  iface: string | null;
  vlan: number | null;
  srcIp: string;
  srcPort: number | null;
  dstIp: string;
  dstPort: number | null;
  flowId: number | bigint | null;
  /** The line as read. */
  raw: string;
}

export type EveLineErrorCode =
  'too-long' | 'not-json' | 'not-object' | 'missing-field' | 'bad-field';

export interface EveLineError {
  code: EveLineErrorCode;
  /** The eve field at fault (`alert.severity`, `src_ip` ...), when one is. */
  field?: string;
  message: string;
}

export type EveLineResult =
  | { kind: 'alert'; alert: EveAlert }
  | { kind: 'ignored'; eventType: string }
  | { kind: 'error'; error: EveLineError };

const ALERT_MEMBER = /"event_type"\s*:\s*"alert"/;
const EVENT_TYPE = /"event_type"\s*:\s*"([a-z0-9_-]{1,32})"/;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;
const UINT32_MAX = 4_294_967_295;
const INT64_MAX = 9_223_372_036_854_775_807n;

const fail = (code: EveLineErrorCode, message: string, field?: string): EveLineResult => ({
  kind: 'error',
  error: field === undefined ? { code, message } : { code, field, message },
});

/** Reads one eve line (without its newline). Never throws. */
export function parseEveLine(line: string): EveLineResult {
  try {
    return parse(line);
  } catch {
    // Nothing below is expected to throw; this keeps the promise of the header regardless.
    return fail('not-json', 'the line could not be read');
  }
}

function parse(line: string): EveLineResult {
  if (line.length > MAX_EVE_LINE)
    return fail('too-long', `the line is longer than ${MAX_EVE_LINE} characters`);
  const text = line.trim();
  if (!ALERT_MEMBER.test(text)) {
    if (!text.startsWith('{') || !text.endsWith('}'))
      return fail('not-json', 'the line is not a JSON object');
    return { kind: 'ignored', eventType: EVENT_TYPE.exec(text)?.[1] ?? 'unknown' };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return fail('not-json', 'the line is not valid JSON');
  }
  if (!isObject(doc)) return fail('not-object', 'the line is not a JSON object');
  if (doc.event_type !== 'alert')
    return {
      kind: 'ignored',
      eventType: typeof doc.event_type === 'string' ? doc.event_type.slice(0, 32) : 'unknown',
    };
  const alert = doc.alert;
  if (!isObject(alert)) return fail('missing-field', 'an alert event has no alert object', 'alert');

  if (typeof doc.timestamp !== 'string')
    return fail('missing-field', 'timestamp is missing', 'timestamp');
  const timestamp = parseEveTimestamp(doc.timestamp);
  if (timestamp === null)
    return fail('bad-field', 'timestamp is not an eve date-time', 'timestamp');

  const severity = alert.severity;
  if (severity === undefined)
    return fail('missing-field', 'alert.severity is missing', 'alert.severity');
  if (!Number.isSafeInteger(severity) || (severity as number) < 1)
    return fail('bad-field', 'alert.severity is not an integer of at least 1', 'alert.severity');

  const sid = alert.signature_id;
  if (sid === undefined)
    return fail('missing-field', 'alert.signature_id is missing', 'alert.signature_id');
  if (!Number.isSafeInteger(sid) || (sid as number) < 0 || (sid as number) > UINT32_MAX)
    return fail('bad-field', 'alert.signature_id is not a 32-bit integer', 'alert.signature_id');

  if (typeof alert.signature !== 'string')
    return fail('missing-field', 'alert.signature is missing', 'alert.signature');
  const category = optionalText(alert.category, MAX_TEXT);
  if (category === false)
    return fail('bad-field', 'alert.category is not a string', 'alert.category');

  const srcIp = endpoint(doc.src_ip);
  if (srcIp === null) return fail('bad-field', 'src_ip is not an IP address', 'src_ip');
  const dstIp = endpoint(doc.dest_ip);
  if (dstIp === null) return fail('bad-field', 'dest_ip is not an IP address', 'dest_ip');
  const srcPort = port(doc.src_port);
  if (srcPort === false) return fail('bad-field', 'src_port is not a port', 'src_port');
  const dstPort = port(doc.dest_port);
  if (dstPort === false) return fail('bad-field', 'dest_port is not a port', 'dest_port');

  const proto = protoText(doc.proto);
  if (proto === false) return fail('bad-field', 'proto is not a string', 'proto');
  const iface = optionalText(doc.in_iface, MAX_SHORT);
  if (iface === false) return fail('bad-field', 'in_iface is not a string', 'in_iface');
  const vlan = firstVlan(doc.vlan);
  if (vlan === false) return fail('bad-field', 'vlan is not a list of VLAN ids', 'vlan');

  return {
    kind: 'alert',
    alert: {
      timestamp,
      signatureId: sid as number,
      signature: alert.signature.slice(0, MAX_TEXT),
      category,
      severity: Math.min(severity as number, 3) as 1 | 2 | 3,
      proto,
      iface,
      vlan,
      srcIp,
      srcPort,
      dstIp,
      dstPort,
      flowId: flowId(doc.flow_id, text),
      raw: line,
    },
  };
}

/**
 * Suricata's timestamp (`2026-11-26T10:00:00.123456+0000`; `Z` and `+00:00` too) to UTC
 * milliseconds, or null when it is not one or names a date that does not exist.
 */
export function parseEveTimestamp(text: string): number | null {
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  const fraction = m[7] ?? '';
  const ms = fraction === '' ? 0 : Math.floor(Number(fraction.padEnd(3, '0').slice(0, 3)));
  const zone = m[8] as string;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (hours * 60 + minutes) * (digits[0] === '-' ? -1 : 1);
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  // Date.UTC maps years 0-99 to 1900-1999; such a year is no eve timestamp.
  return year < 1970 || !Number.isFinite(utc) ? null : utc;
}

/** Canonical IP text (IPv4 dotted, IPv6 compressed lower case, IPv4-mapped as IPv4), or null. */
export function canonicalIp(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  if (net.isIPv4(value)) return value;
  if (!net.isIPv6(value)) return null;
  const canonical = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const hi = parseInt(mapped[1] as string, 16);
  const lo = parseInt(mapped[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function endpoint(value: unknown): string | null {
  return canonicalIp(value);
}

function port(value: unknown): number | null | false {
  if (value === undefined || value === null) return null;
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 65535
    ? (value as number)
    : false;
}

function optionalText(value: unknown, max: number): string | null | false {
  if (value === undefined || value === null || value === '') return null;
  return typeof value === 'string' ? value.slice(0, max) : false;
}

/** Suricata writes `TCP`, `UDP`, `ICMP` ... or the protocol number for others. */
function protoText(value: unknown): string | null | false {
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && value >= 0 && value <= 255 ? String(value) : false;
  return optionalText(value, MAX_SHORT);
}

function firstVlan(value: unknown): number | null | false {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return false;
  if (value.length === 0) return null;
  const first: unknown = value[0];
  return Number.isSafeInteger(first) && (first as number) >= 0 && (first as number) <= 4095
    ? (first as number)
    : false;
}

/**
 * The exact flow id: JSON.parse rounds integers beyond 2^53, so the digits are read from the
 * text (the first `"flow_id":` member whose value equals the parsed one: the top-level member).
 */
function flowId(parsed: unknown, text: string): number | bigint | null {
  if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < 0) return null;
  if (Number.isSafeInteger(parsed)) return parsed;
  for (const m of text.matchAll(/"flow_id"\s*:\s*(\d{1,20})(?=[\s,}])/g)) {
    const digits = m[1] as string;
    if (Number(digits) !== parsed) continue;
    const exact = BigInt(digits);
    return exact <= INT64_MAX ? exact : null;
  }
  return null;
}
