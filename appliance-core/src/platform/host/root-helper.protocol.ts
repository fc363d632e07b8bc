/**
 * The root helper's request protocol: the one channel through which the hardened appliance
 * service asks for the host changes it may not make itself (network, hostname, time, the
 * allowlisted systemd units, the OS upgrader). The helper is a separate small program run as root
 * by the host package (build/appliance/); the appliance is its only client.
 *
 * Transport: a Unix stream socket (APPLIANCE_ROOT_HELPER_SOCKET, default
 * /run/netmon-appliance/root-helper.sock; mode 0660, group of the appliance's user). One request
 * per connection: the client writes one JSON line (at most ROOT_HELPER_MAX_REQUEST bytes), the
 * helper answers one JSON line and closes. No shell anywhere: the helper validates every field
 * against its allowlists again (never trusting the client) and runs programs by argument array.
 */

export const ROOT_HELPER_PROTOCOL_VERSION = 1;
export const ROOT_HELPER_DEFAULT_SOCKET = '/run/netmon-appliance/root-helper.sock';
export const ROOT_HELPER_MAX_REQUEST = 64 * 1024;

export type NetworkConfigType = 'static' | 'dhcp' | 'manual' | 'unconfigured';

/** One interface's desired configuration, already validated by the appliance. */
export interface NetworkInterfaceConfig {
  name: string;
  type: NetworkConfigType;
  /** IPv4, or IPv4/CIDR; static only. */
  address?: string;
  /** Dotted IPv4 netmask; static only. */
  netmask?: string;
  gateway?: string;
  dns?: string[];
}

export type ServiceAction = 'start' | 'stop' | 'restart' | 'reload';

export type RootHelperRequest =
  | { v: 1; op: 'hostname.set'; args: { hostname: string } }
  | { v: 1; op: 'time.set'; args: { unix: number } }
  | { v: 1; op: 'timezone.set'; args: { tz: string } }
  | { v: 1; op: 'ntp.set'; args: { servers: string[] } }
  /** Writes the host's network configuration and restarts networking; the helper rolls it
   * back by itself unless network.confirm arrives within confirmSeconds. */
  | {
      v: 1;
      op: 'network.apply';
      args: { interfaces: NetworkInterfaceConfig[]; confirmSeconds: number };
    }
  | { v: 1; op: 'network.confirm'; args: Record<string, never> }
  | { v: 1; op: 'network.rollback'; args: Record<string, never> }
  /** `unit` must be on the helper's own allowlist of units. */
  | { v: 1; op: 'service.action'; args: { unit: string; action: ServiceAction } }
  | { v: 1; op: 'upgrader.status'; args: Record<string, never> }
  | { v: 1; op: 'upgrader.install'; args: Record<string, never> }
  | { v: 1; op: 'upgrader.start'; args: Record<string, never> }
  | { v: 1; op: 'upgrader.stop'; args: Record<string, never> };

export type RootHelperOp = RootHelperRequest['op'];

export const ROOT_HELPER_OPS: readonly RootHelperOp[] = [
  'hostname.set',
  'time.set',
  'timezone.set',
  'ntp.set',
  'network.apply',
  'network.confirm',
  'network.rollback',
  'service.action',
  'upgrader.status',
  'upgrader.install',
  'upgrader.start',
  'upgrader.stop',
];

/**
 * The answer. `refused`: the request failed the helper's validation or allowlists (nothing ran);
 * `failed`: a program ran and failed (message = its first stderr line, no secrets);
 * `unsupported`: the host lacks the mechanism (no systemd, no upgrader package).
 */
export type RootHelperResponse =
  | { ok: true; output?: unknown }
  | { ok: false; code: 'refused' | 'failed' | 'unsupported'; message: string };
