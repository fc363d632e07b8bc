/**
 * The root helper's validation: every field of every request checked again against the helper's
 * own rules (the appliance's checks are never trusted), and the host files it writes rendered
 * from validated values only. Pure functions; root-helper.server.ts runs them.
 */
import net from 'node:net';
import {
  ROOT_HELPER_OPS,
  ROOT_HELPER_PROTOCOL_VERSION,
  type NetworkInterfaceConfig,
  type RootHelperRequest,
  type ServiceAction,
} from '../platform/host/root-helper.protocol.js';

export class Refusal extends Error {}

const refuse = (message: string): never => {
  throw new Refusal(message);
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function exactKeys(
  value: unknown,
  required: readonly string[],
  optional: readonly string[] = [],
  what = 'args',
): Record<string, unknown> {
  if (!isObject(value)) return refuse(`${what} must be an object`);
  for (const key of Object.keys(value))
    if (!required.includes(key) && !optional.includes(key))
      refuse(`${what} has an unknown field ${JSON.stringify(key.slice(0, 40))}`);
  for (const key of required) if (!(key in value)) refuse(`${what}.${key} is required`);
  return value;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`, 'i');

/** An RFC 1123 host name (letters, digits, inner hyphens; labels of 1 to 63; at most 253). */
export function isHostname(value: unknown): value is string {
  return typeof value === 'string' && HOSTNAME.test(value);
}

/** Earliest and latest instant time.set accepts (2000-01-01 and 2100-01-01, UTC). */
export const TIME_MIN = 946_684_800;
export const TIME_MAX = 4_102_444_800;

const TZ = /^[A-Za-z][A-Za-z0-9_+-]{0,30}(?:\/[A-Za-z0-9][A-Za-z0-9_+-]{0,30}){0,2}$/;
export function isTimezoneName(value: unknown): value is string {
  return typeof value === 'string' && TZ.test(value);
}

const IFACE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$/;
export const NETWORK_TYPES = ['static', 'dhcp', 'manual', 'unconfigured'] as const;
export const SERVICE_ACTIONS: readonly ServiceAction[] = ['start', 'stop', 'restart', 'reload'];
export const CONFIRM_MIN_SECONDS = 10;
export const CONFIRM_MAX_SECONDS = 600;
export const MAX_INTERFACES = 16;
export const MAX_DNS = 3;
export const MAX_NTP_SERVERS = 8;

function isNetmask(value: string): boolean {
  if (!net.isIPv4(value)) return false;
  const bits = value
    .split('.')
    .map((octet) => Number(octet).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits);
}

function isIPv4OrCidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || !address || !net.isIPv4(address)) return false;
  return prefix === undefined || (/^\d{1,2}$/.test(prefix) && Number(prefix) <= 32);
}

function checkInterface(value: unknown, index: number): NetworkInterfaceConfig {
  const what = `interfaces[${index}]`;
  const i = exactKeys(value, ['name', 'type'], ['address', 'netmask', 'gateway', 'dns'], what);
  if (typeof i.name !== 'string' || !IFACE.test(i.name))
    refuse(`${what}.name is not an interface name`);
  if (!NETWORK_TYPES.includes(i.type as never))
    refuse(`${what}.type is not one of ${NETWORK_TYPES.join(', ')}`);
  const out: NetworkInterfaceConfig = {
    name: i.name as string,
    type: i.type as NetworkInterfaceConfig['type'],
  };
  const isStatic = out.type === 'static';
  for (const key of ['address', 'netmask', 'gateway', 'dns'] as const)
    if (!isStatic && i[key] !== undefined) refuse(`${what}.${key} is only for a static interface`);
  if (!isStatic) return out;
  if (typeof i.address !== 'string' || !isIPv4OrCidr(i.address))
    refuse(`${what}.address is not an IPv4 address (or address/prefix)`);
  out.address = i.address as string;
  if (i.netmask !== undefined) {
    if (typeof i.netmask !== 'string' || !isNetmask(i.netmask))
      refuse(`${what}.netmask is not a dotted IPv4 netmask`);
    if (out.address.includes('/')) refuse(`${what}: give a prefix or a netmask, not both`);
    out.netmask = i.netmask as string;
  }
  if (i.gateway !== undefined) {
    if (typeof i.gateway !== 'string' || !net.isIPv4(i.gateway))
      refuse(`${what}.gateway is not an IPv4 address`);
    out.gateway = i.gateway as string;
  }
  if (i.dns !== undefined) {
    if (!Array.isArray(i.dns) || i.dns.length > MAX_DNS)
      refuse(`${what}.dns is a list of at most ${MAX_DNS} addresses`);
    for (const server of i.dns as unknown[])
      if (typeof server !== 'string' || net.isIP(server) === 0)
        refuse(`${what}.dns holds something that is not an IP address`);
    out.dns = [...(i.dns as string[])];
  }
  return out;
}

const NONE: Record<string, never> = {};

/**
 * The request as a typed value, or a Refusal naming the first rule it breaks. Unknown ops,
 * unknown fields, wrong versions and wrong types are all refused; nothing is coerced.
 */
export function parseRequest(value: unknown): RootHelperRequest {
  const r = exactKeys(value, ['v', 'op', 'args'], [], 'request');
  if (r.v !== ROOT_HELPER_PROTOCOL_VERSION) refuse(`unsupported protocol version`);
  if (typeof r.op !== 'string' || !ROOT_HELPER_OPS.includes(r.op as never))
    refuse(`unknown op ${JSON.stringify(String(r.op).slice(0, 40))}`);
  const op = r.op as RootHelperRequest['op'];
  const v = 1 as const;
  switch (op) {
    case 'hostname.set': {
      const a = exactKeys(r.args, ['hostname']);
      if (!isHostname(a.hostname)) refuse('hostname is not an RFC 1123 host name');
      return { v, op, args: { hostname: (a.hostname as string).toLowerCase() } };
    }
    case 'time.set': {
      const a = exactKeys(r.args, ['unix']);
      if (
        !Number.isInteger(a.unix) ||
        (a.unix as number) < TIME_MIN ||
        (a.unix as number) > TIME_MAX
      )
        refuse('unix is not a whole number of seconds between 2000 and 2100');
      return { v, op, args: { unix: a.unix as number } };
    }
    case 'timezone.set': {
      const a = exactKeys(r.args, ['tz']);
      if (!isTimezoneName(a.tz)) refuse('tz is not a time zone name');
      return { v, op, args: { tz: a.tz as string } };
    }
    case 'ntp.set': {
      const a = exactKeys(r.args, ['servers']);
      if (!Array.isArray(a.servers) || a.servers.length > MAX_NTP_SERVERS)
        refuse(`servers is a list of at most ${MAX_NTP_SERVERS} names`);
      const servers = a.servers as unknown[];
      for (const s of servers)
        if (!(isHostname(s) || (typeof s === 'string' && net.isIP(s) !== 0)))
          refuse('servers holds something that is neither a host name nor an IP address');
      return { v, op, args: { servers: [...(servers as string[])] } };
    }
    case 'network.apply': {
      const a = exactKeys(r.args, ['interfaces', 'confirmSeconds']);
      if (
        !Array.isArray(a.interfaces) ||
        a.interfaces.length < 1 ||
        a.interfaces.length > MAX_INTERFACES
      )
        refuse(`interfaces is a list of 1 to ${MAX_INTERFACES} interfaces`);
      const interfaces = (a.interfaces as unknown[]).map(checkInterface);
      if (new Set(interfaces.map((i) => i.name)).size !== interfaces.length)
        refuse('interfaces names an interface twice');
      const seconds = a.confirmSeconds;
      if (
        !Number.isInteger(seconds) ||
        (seconds as number) < CONFIRM_MIN_SECONDS ||
        (seconds as number) > CONFIRM_MAX_SECONDS
      )
        refuse(
          `confirmSeconds is a whole number from ${CONFIRM_MIN_SECONDS} to ${CONFIRM_MAX_SECONDS}`,
        );
      return { v, op, args: { interfaces, confirmSeconds: seconds as number } };
    }
    case 'service.action': {
      const a = exactKeys(r.args, ['unit', 'action']);
      if (typeof a.unit !== 'string') refuse('unit must be a string');
      if (!SERVICE_ACTIONS.includes(a.action as ServiceAction))
        refuse(`action is not one of ${SERVICE_ACTIONS.join(', ')}`);
      return { v, op, args: { unit: a.unit as string, action: a.action as ServiceAction } };
    }
    default:
      exactKeys(r.args, []);
      return { v, op, args: NONE };
  }
}

/**
 * The ifupdown stanzas for the interfaces (Debian's /etc/network/interfaces.d/), one per
 * configured interface; `unconfigured` writes none. Values were validated: no newline, no
 * space can reach the file.
 */
export function renderInterfaces(interfaces: readonly NetworkInterfaceConfig[]): string {
  const lines = [
    '# Written by the netmon-appliance root helper (network.apply); edits here are replaced.',
  ];
  for (const i of interfaces) {
    if (i.type === 'unconfigured') continue;
    lines.push('', `auto ${i.name}`, `iface ${i.name} inet ${i.type}`);
    if (i.type !== 'static') continue;
    lines.push(`    address ${i.address}`);
    if (i.netmask) lines.push(`    netmask ${i.netmask}`);
    if (i.gateway) lines.push(`    gateway ${i.gateway}`);
    if (i.dns && i.dns.length > 0) lines.push(`    dns-nameservers ${i.dns.join(' ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A systemd-timesyncd drop-in naming the servers. */
export function renderTimesyncd(servers: readonly string[]): string {
  return `# Written by the netmon-appliance root helper (ntp.set); edits here are replaced.\n[Time]\nNTP=${servers.join(' ')}\n`;
}

/** The bundled upgrader package file name: netmon-appliance-upgrader_<version>_<arch>.deb. */
export const UPGRADER_DEB =
  /^netmon-appliance-upgrader_[A-Za-z0-9.+~-]{1,64}_(all|amd64|arm64)\.deb$/;

/** What the upgrader writes to its token file: URL-safe base64 of at least 24 bytes. */
export const UPGRADER_TOKEN = /^[A-Za-z0-9_-]{32,128}$/;
