/**
 * The capture filter object (`hosts`, `ports`, `protocols`, `vlans`, `ifaces`) checked value by
 * value and compiled into one BPF expression that both engines take (pure, free of I/O).
 *
 * Invariant: no request text reaches the expression except values that passed these checks:
 * hosts are IP addresses (node:net isIP, re-serialised), ports and vlans integers in range,
 * protocols one of three words, interface names a conservative character set without a leading
 * `-`. So `1.2.3.4 or port 22`, `;id`, `$(id)` or `-w/etc/x` are refused (422) before anything
 * runs. The expression is passed to the engine as one argument, never through a shell.
 *
 * Compilation: each non-empty list becomes an OR group, groups are joined with AND:
 * `(vlan 10 or vlan 20) and (host 10.0.0.1 or host ::1) and (port 22) and (tcp or icmp or icmp6)`.
 * `device_id` adds `host <device address>` as one more AND group. `icmp` matches ICMP and ICMPv6.
 * The vlan group comes first because libpcap's `vlan` keyword moves the offsets of what follows.
 */
import net from 'node:net';

export const PROTOCOLS = ['tcp', 'udp', 'icmp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface CaptureFilter {
  hosts?: string[];
  ports?: number[];
  protocols?: string[];
  vlans?: number[];
  ifaces?: string[];
}

/** An interface name: letters, digits, `_ . : @ -`, not starting with `-`, at most 32 characters. */
export const IFACE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,31}$/;
export const MAX_LIST = 64;

export type FieldErrors = Record<string, string[]>;

/** Field errors of a filter (empty when valid), keyed `filter.hosts.0` and so on. */
export function filterErrors(filter: CaptureFilter): FieldErrors {
  const errors: FieldErrors = {};
  const add = (key: string, text: string) => {
    (errors[key] ??= []).push(text);
  };
  const list = <T>(name: keyof CaptureFilter, check: (value: T, key: string) => void) => {
    const values = filter[name] as T[] | undefined;
    if (values === undefined) return;
    if (values.length > MAX_LIST)
      add(`filter.${name}`, `The filter.${name} field must not have more than ${MAX_LIST} items.`);
    values.forEach((value, i) => check(value, `filter.${name}.${i}`));
  };
  list<string>('hosts', (value, key) => {
    if (typeof value !== 'string' || net.isIP(value) === 0)
      add(key, `The ${key} field must be a valid IP address.`);
  });
  list<number>('ports', (value, key) => {
    if (!Number.isInteger(value) || value < 1 || value > 65535)
      add(key, `The ${key} field must be an integer between 1 and 65535.`);
  });
  list<number>('vlans', (value, key) => {
    if (!Number.isInteger(value) || value < 0 || value > 4095)
      add(key, `The ${key} field must be an integer between 0 and 4095.`);
  });
  list<string>('protocols', (value, key) => {
    if (!(PROTOCOLS as readonly string[]).includes(value))
      add(key, `The ${key} field must be one of: ${PROTOCOLS.join(', ')}.`);
  });
  list<string>('ifaces', (value, key) => {
    if (typeof value !== 'string' || value.length > 32)
      add(key, `The ${key} field must not be greater than 32 characters.`);
    else if (!IFACE_NAME.test(value)) add(key, `The ${key} field is not an interface name.`);
  });
  return errors;
}

/** The canonical text of an IP address (IPv4 dotted quad, IPv6 as node prints it). */
function canonicalIp(value: string): string {
  if (net.isIPv4(value)) return value.split('.').map(Number).join('.');
  return value.toLowerCase();
}

const unique = <T>(values: readonly T[] | undefined): T[] => [...new Set(values ?? [])];

/**
 * The BPF expression of a valid filter (call filterErrors first; throws on an invalid value as a
 * last guard, so an unchecked value can never reach the engine). `deviceAddress` restricts the
 * capture to one device. Empty string: capture everything.
 */
export function compileFilter(filter: CaptureFilter, deviceAddress?: string | null): string {
  const errors = filterErrors(filter);
  if (Object.keys(errors).length > 0) throw new Error('compileFilter: invalid filter');
  if (deviceAddress != null && net.isIP(deviceAddress) === 0)
    throw new Error('compileFilter: invalid device address');
  const groups: string[] = [];
  const group = (terms: string[]) => {
    if (terms.length === 0) return;
    groups.push(terms.length === 1 ? terms[0]! : `(${terms.join(' or ')})`);
  };
  group(unique(filter.vlans).map((v) => `vlan ${v}`));
  if (deviceAddress != null) group([`host ${canonicalIp(deviceAddress)}`]);
  group(unique((filter.hosts ?? []).map(canonicalIp)).map((h) => `host ${h}`));
  group(unique(filter.ports).map((p) => `port ${p}`));
  group(unique(filter.protocols).flatMap((p) => (p === 'icmp' ? ['icmp', 'icmp6'] : [p])));
  return groups.join(' and ');
}
