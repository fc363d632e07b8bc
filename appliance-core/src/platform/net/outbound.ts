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
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressBytes, classifyAddress, ipVersion } from './targets.js';

export interface OutboundPolicy {
  /** Loopback, private and carrier-grade NAT addresses allowed (APPLIANCE_URL_ALLOW_PRIVATE). */
  allowPrivate: boolean;
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
  if (isMetadataName(host))
    return `${host.toLowerCase().replace(/\.+$/, '')} is a cloud metadata name`;
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
    if (isMetadataName(hostname)) {
      done(new AddressRefusedError(`${hostname.toLowerCase()} is a cloud metadata name`), '');
      return;
    }
    inner(hostname, options, (err, address, family) => {
      if (err) return done(err, address, family);
      const list =
        typeof address === 'string' ? [{ address, family: family ?? ipVersion(address) }] : address;
      for (const entry of list) {
        const refusal = addressRefusal(entry.address, policy);
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
