/**
 * Which addresses the appliance may connect to on a user's behalf (URL monitoring), and a name
 * resolver that enforces it on the address the connection will use.
 *
 * Invariants:
 * - Link-local addresses (169.254.0.0/16, fe80::/10, IPv4-mapped forms included) and cloud
 *   metadata endpoints (by address, and by well-known name without any lookup) are never
 *   reached; neither are addresses that are not a single host (unspecified, multicast,
 *   broadcast: `0.0.0.0` reaches the appliance itself).
 * - With private targets turned off, loopback, private (RFC 1918, fc00::/7) and carrier-grade
 *   NAT (100.64.0.0/10) addresses are refused too.
 * - `guardLookup` checks every address a name resolves to inside the lookup the socket itself
 *   uses: the connection goes to an address that was checked, and a name is resolved once per
 *   connection (no window between a check and a second resolution: DNS rebinding gains nothing).
 *   One refused address refuses the whole answer.
 * - Outlets (alert delivery) use the same machinery under a stricter policy (`outletPolicy`):
 *   private, loopback and carrier-grade NAT addresses, `localhost` names and punycode
 *   (internationalised) names are refused too, unless the operator allowlists the host, address
 *   or CIDR (APPLIANCE_OUTLET_ALLOW). Hosts are judged as URL parsing leaves them (decimal, octal
 *   and hex IPv4 spellings are already dotted quads there), never as the text was typed.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressBytes, classifyAddress, ipVersion } from './targets.js';

export interface OutboundPolicy {
  /** Loopback, private and carrier-grade NAT addresses allowed (APPLIANCE_URL_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Hosts, addresses and CIDRs allowed despite every rule (APPLIANCE_OUTLET_ALLOW). */
  allow?: AllowList;
  /** Refuse `localhost` names and punycode names without a lookup (outlets). */
  strictNames?: boolean;
}

/** An operator's allowlist: exact host names, `*.suffix` names, addresses and CIDRs. */
export interface AllowList {
  names: readonly string[];
  suffixes: readonly string[];
  ranges: readonly { bytes: Uint8Array; prefix: number }[];
}

export const EMPTY_ALLOW_LIST: AllowList = Object.freeze({ names: [], suffixes: [], ranges: [] });

const HOST_NAME =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Parses allowlist entries (`hooks.example.net`, `*.example.net`, `10.1.2.3`, `[::1]`,
 * `10.0.0.0/8`, `fd00::/8`). Throws with the entry when one is neither.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const names: string[] = [];
  const suffixes: string[] = [];
  const ranges: { bytes: Uint8Array; prefix: number }[] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase().replace(/\.+$/, '');
    if (entry === '') continue;
    const [address, prefixText] = entry.replace(/^\[|\]$/g, '').split('/') as [string, string?];
    const bytes = addressBytes(unmapped(address));
    if (bytes) {
      const max = bytes.length * 8;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (!/^\d{1,3}$/.test(prefixText ?? '0') || prefix > max)
        throw new Error(`outlet allowlist entry ${raw} has a bad prefix length`);
      ranges.push({ bytes, prefix });
    } else if (entry.startsWith('*.') && HOST_NAME.test(entry.slice(2))) {
      suffixes.push(entry.slice(1));
    } else if (HOST_NAME.test(entry)) {
      names.push(entry);
    } else throw new Error(`outlet allowlist entry ${raw} is not a host, an address or a CIDR`);
  }
  return { names, suffixes, ranges };
}

function prefixMatches(bytes: Uint8Array, range: { bytes: Uint8Array; prefix: number }): boolean {
  if (bytes.length !== range.bytes.length) return false;
  const full = range.prefix >> 3;
  for (let i = 0; i < full; i++) if (bytes[i] !== range.bytes[i]) return false;
  const bits = range.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((bytes[full] as number) & mask) === ((range.bytes[full] as number) & mask);
}

/** Is this address (any spelling, IPv4-mapped included) inside an allowlisted address or CIDR? */
export function isAllowedAddress(ip: string, allow: AllowList | undefined): boolean {
  if (!allow || allow.ranges.length === 0) return false;
  const bytes = addressBytes(unmapped(ip));
  return bytes !== null && allow.ranges.some((r) => prefixMatches(bytes, r));
}

/** Is this host name (as URL parsing leaves it) allowlisted by name or by `*.suffix`? */
export function isAllowedName(host: string, allow: AllowList | undefined): boolean {
  if (!allow) return false;
  const name = host.toLowerCase().replace(/\.+$/, '');
  return allow.names.includes(name) || allow.suffixes.some((suffix) => name.endsWith(suffix));
}

/**
 * The policy of every outlet destination (webhook, Slack, Teams, Discord): only globally
 * routable addresses, by name or address, unless allowlisted (`entries`: APPLIANCE_OUTLET_ALLOW).
 */
export function outletPolicy(entries: readonly string[] = []): OutboundPolicy {
  return { allowPrivate: false, strictNames: true, allow: parseAllowList(entries) };
}

/** Metadata services of cloud platforms, by address (compared as bytes, any spelling). */
export const METADATA_ADDRESSES = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean ...
  'fd00:ec2::254', // AWS over IPv6
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (classic)
] as const;

/** Well-known names of metadata services, refused as written (never looked up). */
export const METADATA_NAMES = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
] as const;

const metadataBytes = METADATA_ADDRESSES.map((ip) => addressBytes(ip) as Uint8Array);

/** The IPv4 address an IPv4-mapped IPv6 literal carries, else the input. */
function unmapped(ip: string): string {
  const bytes = addressBytes(ip);
  if (!bytes || bytes.length !== 16) return ip;
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff;
  return mapped && bytes[11] === 0xff ? Array.from(bytes.subarray(12)).join('.') : ip;
}

export function isMetadataAddress(ip: string): boolean {
  const bytes = addressBytes(unmapped(ip));
  if (!bytes) return false;
  return metadataBytes.some((m) => m.length === bytes.length && m.every((b, i) => b === bytes[i]));
}

export function isMetadataName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return (METADATA_NAMES as readonly string[]).includes(name);
}

/**
 * What makes `ip` refused under `policy` ("a link-local address"), or null when it may be
 * connected to.
 */
export function addressRefusal(ip: string, policy: OutboundPolicy): string | null {
  if (isAllowedAddress(ip, policy.allow)) return null;
  if (isMetadataAddress(ip)) return 'a cloud metadata address';
  const kind = classifyAddress(ip);
  if (kind === null) return 'not an IP address';
  if (kind === 'link-local') return 'a link-local address';
  if (kind === 'unspecified' || kind === 'multicast' || kind === 'broadcast')
    return "not a single host's address";
  if (!policy.allowPrivate) {
    if (kind === 'loopback') return 'a loopback address';
    if (kind === 'private' || kind === 'carrier-grade-nat') return 'a private address';
  }
  return null;
}

/**
 * Why the host of a URL (`URL.hostname`, brackets allowed) may not be monitored, judged without
 * any lookup: IP literals by address, names only against the well-known metadata names.
 */
export function hostRefusal(hostname: string, policy: OutboundPolicy): string | null {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (ipVersion(host) !== 0) {
    const refusal = addressRefusal(host, policy);
    return refusal === null ? null : `${host} is ${refusal}`;
  }
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (isAllowedName(name, policy.allow)) return null;
  if (isMetadataName(host)) return `${name} is a cloud metadata name`;
  if (policy.strictNames) {
    if (name === 'localhost' || name.endsWith('.localhost')) return `${name} is a loopback name`;
    if (name.split('.').some((label) => label.startsWith('xn--')))
      return `${name} is a punycode (internationalised) name`;
  }
  return null;
}

/** The error a guarded lookup fails with (code ERR_ADDRESS_REFUSED, message says why). */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_ADDRESS_REFUSED';
}

/**
 * A lookup for `http.request`/`net.connect` that refuses (AddressRefusedError) when any address
 * the name resolves to is refused by `policy`. `inner` resolves (default: dns.lookup).
 */
export function guardLookup(
  policy: OutboundPolicy,
  inner: LookupFunction = dns.lookup,
): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback;
    const nameRefusal = hostRefusal(hostname, policy);
    if (nameRefusal) {
      done(new AddressRefusedError(nameRefusal), '');
      return;
    }
    // An allowlisted name may resolve to private and loopback addresses (the operator named it);
    // link-local, metadata and non-host addresses stay refused unless allowlisted by address.
    const effective = isAllowedName(hostname, policy.allow)
      ? { ...policy, allowPrivate: true }
      : policy;
    inner(hostname, options, (err, address, family) => {
      if (err) return done(err, address, family);
      const list =
        typeof address === 'string' ? [{ address, family: family ?? ipVersion(address) }] : address;
      for (const entry of list) {
        const refusal = addressRefusal(entry.address, effective);
        if (refusal)
          return done(
            new AddressRefusedError(`${hostname} resolves to ${entry.address}, ${refusal}`),
            '',
          );
      }
      done(null, address, family);
    });
  };
}
