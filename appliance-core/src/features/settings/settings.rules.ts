/**
 * The field rules of the settings endpoints (spec part 3, "Appliance settings"), free of I/O.
 *
 * Invariant: every value that may reach the root helper (and from it a host configuration file
 * or a program's argument list) passes one of these allowlist patterns first. None of them admits
 * a blank, a control character (newline, NUL), shell syntax, or a leading `-`, so a value can be
 * neither a second line of a file nor an option of a program.
 */
import net from 'node:net';
import { createHash } from 'node:crypto';
import { isHostname } from '../../platform/net/targets.js';
import { parseDateTime } from '../../platform/time/datetime.js';
import type { NetworkConfigType } from '../../platform/host/root-helper.protocol.js';

export const NETWORK_TYPES: readonly NetworkConfigType[] = [
  'static',
  'dhcp',
  'manual',
  'unconfigured',
];
export const SERVICE_ACTIONS = ['start', 'stop', 'restart', 'reload'] as const;
export type ServiceActionName = (typeof SERVICE_ACTIONS)[number];

/** Host map `host_name_type`: the kind of name an entry gives its address. */
export const HOST_NAME_TYPES = ['hostname', 'fqdn', 'alias'] as const;
/** Host map `node_type`: what the addressed node is. */
export const NODE_TYPES = [
  'host',
  'server',
  'workstation',
  'router',
  'switch',
  'firewall',
  'access_point',
  'printer',
  'other',
] as const;

/** Interface names: max 15 (the kernel's IFNAMSIZ - 1) of letters, digits, `_ . -`, not starting with `-` or `.`. */
const INTERFACE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$/;
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const LICENSE_KEY = /^[0-9A-Fa-f]{6}(?:-[0-9A-Fa-f]{6}){5}$/;
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;
export const MAX_NTP_SERVERS = 8;

export function isInterfaceName(name: unknown): name is string {
  return typeof name === 'string' && INTERFACE_NAME.test(name);
}

export function isIPv4(text: unknown): text is string {
  return typeof text === 'string' && net.isIPv4(text) && !/^0\d|\.0\d/.test(text);
}

/** Dotted netmask with contiguous ones: its prefix length, or null. */
export function netmaskPrefix(mask: unknown): number | null {
  if (!isIPv4(mask)) return null;
  const value = mask
    .split('.')
    .reduce((acc, octet) => ((acc << 8) | Number(octet)) >>> 0, 0 as number);
  const inverted = ~value >>> 0;
  if ((inverted & (inverted + 1)) !== 0) return null;
  return 32 - Math.log2(inverted + 1);
}

export function prefixToNetmask(prefix: number): string {
  const value = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

/** `a.b.c.d` or `a.b.c.d/n` (n 0-32): the address and its prefix (null without one), or null. */
export function parseIPv4WithPrefix(
  text: unknown,
): { address: string; prefix: number | null } | null {
  if (typeof text !== 'string') return null;
  const [address, prefix, extra] = text.split('/');
  if (extra !== undefined || !isIPv4(address)) return null;
  if (prefix === undefined) return { address, prefix: null };
  if (!/^(?:[0-9]|[12][0-9]|3[0-2])$/.test(prefix)) return null;
  return { address, prefix: Number(prefix) };
}

/** A host name as setHostname takes it: DNS labels joined by dots, at most 255 characters. */
export function hostnameErrors(hostname: unknown): string[] {
  if (hostname === undefined || hostname === null || hostname === '')
    return ['The hostname field is required.'];
  if (typeof hostname !== 'string') return ['The hostname must be a string.'];
  if (hostname.length > 255) return ['The hostname may not be greater than 255 characters.'];
  const labels = hostname.split('.');
  if (!labels.every((label) => DNS_LABEL.test(label)))
    return [
      'The hostname must be a valid DNS name: labels of 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen, separated by dots.',
    ];
  return [];
}

/** Space-separated host names or IP literals; null when one is not. */
export function parseNtpServers(text: unknown): string[] | null {
  if (typeof text !== 'string') return null;
  const servers = text.split(' ').filter((s) => s !== '');
  if (servers.length === 0 || servers.length > MAX_NTP_SERVERS) return null;
  for (const server of servers)
    if (!(net.isIP(server) !== 0 && !server.includes('%')) && !isHostname(server)) return null;
  return servers;
}

export function isZoneName(tz: unknown, zones: ReadonlySet<string>): tz is string {
  return typeof tz === 'string' && tz.length <= 64 && ZONE_NAME.test(tz) && zones.has(tz);
}

/** UTC ms of an ISO 8601 timestamp as the API accepts it (platform/time), or null. */
export function parseManualTime(text: unknown): number | null {
  if (typeof text !== 'string' || text.length > 40) return null;
  return parseDateTime(text);
}

/**
 * Registration keys: six dash-separated groups of six hex digits; the sixth group is the first
 * six hex digits of SHA-256 over the first five groups (upper case, dashes kept), so a mistyped
 * key is refused instead of activated. Answers the normalised key, or why it is refused.
 */
export function checkRegistrationKey(
  key: unknown,
): { ok: true; key: string } | { ok: false; message: string } {
  if (typeof key !== 'string' || !LICENSE_KEY.test(key))
    return {
      ok: false,
      message:
        'The registration key must be six dash-separated groups of six hexadecimal characters.',
    };
  const normalised = key.toUpperCase();
  const body = normalised.slice(0, 34);
  if (registrationCheckGroup(body) !== normalised.slice(35))
    return { ok: false, message: 'The registration key is not valid (check group mismatch).' };
  return { ok: true, key: normalised };
}

/** The sixth group of a registration key whose first five groups are `body` (`XXXXXX-...`, 34 characters). */
export function registrationCheckGroup(body: string): string {
  return createHash('sha256').update(body.toUpperCase()).digest('hex').slice(0, 6).toUpperCase();
}

/** The canonical form of an IP literal for the host map (IPv6 compressed, lower case), or null. */
export function canonicalIp(ip: unknown): string | null {
  if (typeof ip !== 'string' || ip.length > 45 || ip.includes('%')) return null;
  const version = net.isIP(ip);
  if (version === 4) return isIPv4(ip) ? ip : null;
  if (version === 6) {
    try {
      return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
  }
  return null;
}

/** A host map name: a DNS name (lower case, trailing dot dropped); `fqdn` needs at least two labels. */
export function hostMapName(hostname: unknown, type: string): string | null {
  if (typeof hostname !== 'string' || hostname.length > 253) return null;
  const name = (hostname.endsWith('.') ? hostname.slice(0, -1) : hostname).toLowerCase();
  if (!name.split('.').every((label) => DNS_LABEL.test(label))) return null;
  if (type === 'fqdn' && !name.includes('.')) return null;
  return name;
}
