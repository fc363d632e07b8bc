/**
 * Target validation for the on-box tools, and address classification.
 *
 * Invariant: a value that is not an RFC 1123 hostname or an IPv4/IPv6 literal is refused before
 * any process starts, so nothing a caller types can reach a command line as an option (a target
 * never begins with '-'), as shell syntax, or as a second argument (no spaces).
 */
import net from 'node:net';

export type TargetKind = 'ipv4' | 'ipv6' | 'hostname';

export interface Target {
  /** The target as the tools receive it (hostnames lower-cased, a trailing dot dropped). */
  value: string;
  kind: TargetKind;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * RFC 1123 host name: dot-separated labels of 1 to 63 letters, digits and hyphens, neither
 * starting nor ending with a hyphen, at most 253 characters in all (one trailing dot allowed).
 * The last label must not be all digits (RFC 1123 2.1), so `127.1` or `2130706433` are never
 * read by a tool as a numeric address.
 */
export function isHostname(input: string): boolean {
  const name = input.endsWith('.') ? input.slice(0, -1) : input;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.toLowerCase().split('.');
  if (!labels.every((label) => LABEL.test(label))) return false;
  return !/^\d+$/.test(labels[labels.length - 1] as string);
}

/** 4 or 6 for an IP literal (IPv6 without a zone index), otherwise 0. */
export function ipVersion(input: string): 0 | 4 | 6 {
  if (input.includes('%')) return 0;
  const version = net.isIP(input);
  return version === 4 || version === 6 ? version : 0;
}

export function isIpLiteral(input: string): boolean {
  return ipVersion(input) !== 0;
}

/** A hostname or an IP literal, or null for anything else. */
export function parseTarget(input: unknown): Target | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > 253) return null;
  const version = ipVersion(input);
  if (version === 4) return { value: input, kind: 'ipv4' };
  if (version === 6) return { value: input.toLowerCase(), kind: 'ipv6' };
  if (!isHostname(input)) return null;
  const value = input.toLowerCase().replace(/\.$/, '');
  return { value, kind: 'hostname' };
}

// --- classification ----------------------------------------------------------------------------

export type AddressClass =
  | 'global'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'carrier-grade-nat'
  | 'multicast'
  | 'documentation'
  | 'unspecified'
  | 'broadcast'
  | 'reserved';

/** The 16 bytes of an IPv6 literal (embedded IPv4 allowed), or the 4 bytes of an IPv4 literal. */
export function addressBytes(ip: string): Uint8Array | null {
  const version = ipVersion(ip);
  if (version === 4) return Uint8Array.from(ip.split('.').map(Number));
  if (version !== 6) return null;
  let text = ip.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    const word = (a: number, b: number) => ((a << 8) | b).toString(16);
    text = `${text.slice(0, lastColon + 1)}${word(v4[0]!, v4[1]!)}:${word(v4[2]!, v4[3]!)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const words = (part: string | undefined) =>
    part ? part.split(':').map((w) => parseInt(w, 16)) : [];
  const left = words(head);
  const right = words(rest);
  const fill = rest === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const all = [...left, ...fill, ...right];
  const bytes = new Uint8Array(16);
  all.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

interface Range {
  bytes: Uint8Array;
  prefix: number;
  kind: AddressClass;
}

function range(cidr: string, kind: AddressClass): Range {
  const [address, prefix] = cidr.split('/') as [string, string];
  return { bytes: addressBytes(address) as Uint8Array, prefix: Number(prefix), kind };
}

function inRange(bytes: Uint8Array, r: Range): boolean {
  if (bytes.length !== r.bytes.length) return false;
  const full = r.prefix >> 3;
  for (let i = 0; i < full; i++) if (bytes[i] !== r.bytes[i]) return false;
  const bits = r.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((bytes[full] as number) & mask) === ((r.bytes[full] as number) & mask);
}

/** IANA special-purpose IPv4 ranges (RFC 6890 and successors) that are not globally routable. */
const V4_RANGES: Range[] = [
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'carrier-grade-nat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.0.2.0/24', 'documentation'),
  range('192.31.196.0/24', 'reserved'),
  range('192.52.193.0/24', 'reserved'),
  range('192.88.99.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('192.175.48.0/24', 'reserved'),
  range('198.18.0.0/15', 'reserved'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('255.255.255.255/32', 'broadcast'),
  range('240.0.0.0/4', 'reserved'),
];

/** IANA special-purpose IPv6 ranges; anything outside 2000::/3 is not globally routable either. */
const V6_RANGES: Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'reserved'),
  range('100::/64', 'reserved'),
  range('2001:db8::/32', 'documentation'),
  range('2001::/23', 'reserved'),
  range('2002::/16', 'reserved'),
  range('3fff::/20', 'documentation'),
  range('fc00::/7', 'private'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'reserved'),
  range('ff00::/8', 'multicast'),
];
const V6_GLOBAL_UNICAST = range('2000::/3', 'global');
const V4_MAPPED = range('::ffff:0:0/96', 'reserved');
const NAT64 = range('64:ff9b::/96', 'reserved');

/** What kind of address an IP literal is; null when the input is not an IP literal. */
export function classifyAddress(ip: string): AddressClass | null {
  const bytes = addressBytes(ip);
  if (!bytes) return null;
  if (bytes.length === 4) return V4_RANGES.find((r) => inRange(bytes, r))?.kind ?? 'global';
  // IPv4-mapped and NAT64 well-known-prefix addresses carry an IPv4 address: judge that one.
  if (inRange(bytes, V4_MAPPED) || inRange(bytes, NAT64))
    return classifyAddress(Array.from(bytes.subarray(12)).join('.'));
  const special = V6_RANGES.find((r) => inRange(bytes, r));
  if (special) return special.kind;
  return inRange(bytes, V6_GLOBAL_UNICAST) ? 'global' : 'reserved';
}

/** True only for a globally routable unicast IP literal. */
export function isGloballyRoutable(ip: string): boolean {
  return classifyAddress(ip) === 'global';
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(ip: string): boolean {
  return classifyAddress(ip) === 'loopback';
}
