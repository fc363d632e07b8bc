/**
 * Appliance settings on the real host (spec part 3, "Appliance settings"; docs/features/settings.md).
 *
 * Invariants:
 * - Reads come from the system (ip -j addr, /etc/network/interfaces, the zone database,
 *   os.hostname(), systemd); changes to the host go only through the root helper, and only in
 *   `apply` mode. In `dry-run` mode (the default) a change is validated in full and answered with
 *   what would have been written; nothing reaches the helper.
 * - The appliance's own settings (interface roles, host map, license) are stored in both modes.
 * - Services are the engines of this instance's registry (plus the systemd unit this process runs
 *   in, when it does). Shared engines (scheduler, storage writer) are never stopped or restarted
 *   here, and restartAppliance restarts only this registry's engines, never another instance's.
 * - A network change applied through the helper is confirmed by the first authenticated
 *   getNetworkInfo within the confirmation window; otherwise the appliance asks the helper to
 *   roll back (the helper also rolls back by itself after the same window).
 */
import os from 'node:os';
import type { CoreContext } from '../../platform/context.js';
import type { EngineRegistry, EngineStatus } from '../../platform/engines/engine-registry.js';
import { ApiFailure, failure } from '../../platform/http/envelopes.js';
import {
  RootHelperUnavailableError,
  type RootHelperClient,
} from '../../platform/host/root-helper.client.js';
import type {
  NetworkInterfaceConfig,
  RootHelperRequest,
} from '../../platform/host/root-helper.protocol.js';
import { toIso } from '../../platform/time/time.js';
import {
  detectSystemdUnit,
  readCurrentZone,
  readIfupdown,
  readInterfaces,
  readNtpServers,
  readUnitStatus,
  readZones,
  UNCONFIGURED,
  type HostPaths,
} from './host-system.service.js';
import * as repo from './settings.repository.js';
import {
  canonicalIp,
  checkRegistrationKey,
  HOST_NAME_TYPES,
  hostMapName,
  hostnameErrors,
  isInterfaceName,
  isIPv4,
  isZoneName,
  netmaskPrefix,
  NODE_TYPES,
  parseIPv4WithPrefix,
  parseManualTime,
  parseNtpServers,
  SERVICE_ACTIONS,
  type ServiceActionName,
} from './settings.rules.js';

export type NetworkMode = 'apply' | 'dry-run';
export const CONFIRM_WINDOW_MS = 120_000;
const MAINTENANCE_DAYS = 365;

export interface SettingsOptions {
  registry: () => EngineRegistry | null;
  helper: RootHelperClient;
  mode: NetworkMode;
  paths: HostPaths;
  /** How long an applied network change waits for its confirmation (tests shorten it). */
  confirmWindowMs?: number;
  /** The host's name (os.hostname by default). */
  hostname?: () => string;
}

export interface ServiceEntry {
  name: string;
  kind: 'engine' | 'systemd';
  status: string;
  pid: number | null;
  shared: boolean;
  started_at: string | null;
  error: string | null;
}

export interface InterfaceConfigInput {
  type?: unknown;
  address?: unknown;
  netmask?: unknown;
  gateway?: unknown;
  'dns-nameservers'?: unknown;
  auto?: unknown;
  'allow-hotplug'?: unknown;
  use_sniffer?: unknown;
  use_suricata?: unknown;
}

export interface Actor {
  name: string | null;
  email: string | null;
}

interface PendingNetwork {
  timer: NodeJS.Timeout;
  deadline: number;
  interfaces: string[];
}

export class SettingsService {
  readonly mode: NetworkMode;
  private readonly confirmWindowMs: number;
  private pending: PendingNetwork | null = null;
  private zoneCache: { zones: string[]; set: Set<string> } | null = null;

  constructor(
    private readonly ctx: CoreContext,
    private readonly options: SettingsOptions,
  ) {
    this.mode = options.mode;
    this.confirmWindowMs = options.confirmWindowMs ?? CONFIRM_WINDOW_MS;
  }

  get confirmWindowSeconds(): number {
    return Math.max(1, Math.round(this.confirmWindowMs / 1000));
  }

  get dryRun(): boolean {
    return this.mode === 'dry-run';
  }

  /** Ends the confirmation timer (appliance shutdown). */
  close(): void {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = null;
  }

  // ---- services ----

  private registry(): EngineRegistry {
    const registry = this.options.registry();
    if (!registry) throw failure(500, 'The service controller is not reachable.');
    return registry;
  }

  async services(): Promise<ServiceEntry[]> {
    const entries = this.registry().list().map(engineEntry);
    const unit = detectSystemdUnit(this.options.paths);
    if (unit) {
      const status = await readUnitStatus(unit);
      entries.push({
        name: unit,
        kind: 'systemd',
        status: status.status,
        pid: status.pid,
        shared: false,
        started_at: null,
        error: null,
      });
    }
    return entries;
  }

  /** Acts on one service; answers the message of the 200 answer or throws 400 / 500. */
  async procmon(service: unknown, action: unknown): Promise<string> {
    if (typeof action !== 'string' || !(SERVICE_ACTIONS as readonly string[]).includes(action))
      throw failure(400, `The action must be one of ${SERVICE_ACTIONS.join(', ')}.`);
    if (typeof service !== 'string' || service === '')
      throw failure(400, 'The service field is required.');
    const verb = action as ServiceActionName;
    const registry = this.registry();
    const engine = registry.list().find((e) => e.name === service);
    if (engine) {
      if (engine.shared)
        throw failure(
          400,
          `${engine.name} is shared by every engine and starts and stops only with the appliance.`,
        );
      if (verb === 'stop') {
        await registry.stop(engine.name);
        const after = registry.status(engine.name);
        if (after.state === 'failed')
          throw failure(500, `${engine.name} failed to stop: ${after.error ?? 'unknown error'}`);
        return `${engine.name} stopped`;
      }
      if (verb === 'start') await registry.start(engine.name);
      else await registry.restart(engine.name);
      const after = registry.status(engine.name);
      if (after.state !== 'running')
        throw failure(500, `${engine.name} failed to start: ${after.error ?? after.state}`);
      return `${engine.name} ${verb === 'start' ? 'started' : verb === 'reload' ? 'reloaded (restarted)' : 'restarted'}`;
    }
    const unit = detectSystemdUnit(this.options.paths);
    if (unit !== null && service === unit) {
      if (this.dryRun)
        return `Dry run (APPLIANCE_NETWORK_MODE=dry-run): would ${verb} ${unit}; nothing was applied.`;
      const answer = await this.helper({
        v: 1,
        op: 'service.action',
        args: { unit, action: verb },
      }).catch((err: unknown) => {
        throw failure(500, (err as Error).message);
      });
      if (!answer.ok)
        throw failure(answer.code === 'refused' ? 400 : 500, `${unit}: ${answer.message}`);
      return `${unit}: ${verb} done`;
    }
    throw failure(400, 'Unknown service: not an engine of this appliance nor its systemd unit.');
  }

  /** Restarts every engine of this instance (never the shared ones); names those that failed. */
  async restartAppliance(): Promise<{ restarted: string[]; failed: string[] }> {
    const registry = this.registry();
    const restarted: string[] = [];
    const failed: string[] = [];
    for (const engine of registry.list()) {
      if (engine.shared) continue;
      const status = await registry.restart(engine.name);
      if (status.state === 'running') restarted.push(engine.name);
      else failed.push(`${engine.name} (${status.error ?? status.state})`);
    }
    return { restarted, failed };
  }

  // ---- network ----

  async networkInfo() {
    const interfaces = await readInterfaces();
    const stanzas = readIfupdown(this.options.paths.networkInterfaces);
    const roles = new Map(repo.listInterfaceRoles(this.ctx.db).map((r) => [r.name, r]));
    return interfaces.map((iface) => {
      const stanza = stanzas.get(iface.name) ?? UNCONFIGURED;
      const role = roles.get(iface.name);
      return {
        ...iface,
        config: {
          ...stanza,
          use_sniffer: role?.use_sniffer === 1,
          use_suricata: role?.use_suricata === 1,
        },
      };
    });
  }

  /** A pending network change is confirmed by this (authenticated) caller's request. */
  async confirmPendingNetwork(): Promise<boolean> {
    const pending = this.pending;
    if (!pending) return false;
    clearTimeout(pending.timer);
    this.pending = null;
    const answer = await this.helper({ v: 1, op: 'network.confirm', args: {} }).catch(
      (err: unknown) => ({ ok: false as const, code: 'failed' as const, message: String(err) }),
    );
    if (!answer.ok) this.ctx.log.warn({ message: answer.message }, 'network confirm failed');
    return answer.ok;
  }

  /** True while an applied network change waits for its confirmation. */
  get pendingNetwork(): { deadline: number; interfaces: string[] } | null {
    return this.pending
      ? { deadline: this.pending.deadline, interfaces: [...this.pending.interfaces] }
      : null;
  }

  /**
   * Validates every element (one bad element rejects all), saves the interface roles, and
   * applies the host configuration (apply mode) or says what would be written (dry run).
   */
  async setNetwork(
    input: { name?: unknown; config?: InterfaceConfigInput }[],
    onRolledBack: (interfaces: string[]) => void,
  ): Promise<{ dryRun: boolean; message: string; interfaces: string[] }> {
    if (!Array.isArray(input) || input.length === 0)
      throw failure(422, 'The interfaces field must be a non-empty array.');
    const known = new Set((await readInterfaces()).map((i) => i.name));
    const configs: NetworkInterfaceConfig[] = [];
    const seen = new Set<string>();
    input.forEach((element, index) => {
      const where = `interfaces.${index}`;
      const name = element?.name;
      if (!isInterfaceName(name))
        throw failure(
          422,
          `${where}.name must be at most 15 letters, digits, _ . - (not starting with - or .).`,
        );
      if (!known.has(name)) throw failure(422, `${where}.name: no interface ${name} on this host.`);
      if (seen.has(name)) throw failure(422, `${where}.name: ${name} is listed twice.`);
      seen.add(name);
      configs.push(interfaceConfig(where, name, element.config));
    });
    const at = this.ctx.clock.now();
    // The appliance's own settings: saved in both modes.
    for (const element of input) {
      const config = element.config ?? {};
      const roles: { use_sniffer?: boolean; use_suricata?: boolean } = {};
      if (typeof config.use_sniffer === 'boolean') roles.use_sniffer = config.use_sniffer;
      if (typeof config.use_suricata === 'boolean') roles.use_suricata = config.use_suricata;
      if (roles.use_sniffer !== undefined || roles.use_suricata !== undefined)
        repo.saveInterfaceRole(this.ctx.db, element.name as string, roles, at);
    }
    const names = configs.map((c) => c.name);
    const described = configs.map(describeInterface).join('; ');
    if (this.dryRun)
      return {
        dryRun: true,
        interfaces: names,
        message: `Dry run (APPLIANCE_NETWORK_MODE=dry-run): nothing was applied to the host. Would write ${described}, then restart host networking. Interface roles (use_sniffer, use_suricata) were saved.`,
      };
    if (this.pending)
      throw failure(
        409,
        'A network change is waiting for its confirmation; confirm it (getNetworkInfo) or wait for its roll-back first.',
      );
    const windowSeconds = this.confirmWindowSeconds;
    const answer = await this.helper({
      v: 1,
      op: 'network.apply',
      args: { interfaces: configs, confirmSeconds: windowSeconds },
    }).catch((err: unknown) => {
      if (err instanceof ApiFailure)
        throw failure(err.status, `${err.message} Interface roles were saved.`);
      throw err;
    });
    if (!answer.ok)
      throw failure(
        answer.code === 'refused' ? 422 : 500,
        `The host network was not changed: ${answer.message}. Interface roles were saved.`,
      );
    const timer = setTimeout(() => {
      if (this.pending?.timer !== timer) return;
      this.pending = null;
      void this.helper({ v: 1, op: 'network.rollback', args: {} })
        .catch((err: unknown) => ({ ok: false, message: String(err) }))
        .then((result) => {
          this.ctx.log.warn({ ok: result.ok }, 'network change not confirmed in time: rolled back');
          onRolledBack(names);
        });
    }, this.confirmWindowMs);
    timer.unref();
    this.pending = { timer, deadline: at + this.confirmWindowMs, interfaces: names };
    return {
      dryRun: false,
      interfaces: names,
      message: `Applied ${described}; host networking restarted. Confirm by reloading the network settings within ${windowSeconds} s, or the previous configuration is restored.`,
    };
  }

  // ---- hostname ----

  hostname(): string {
    return (this.options.hostname ?? os.hostname)();
  }

  /** Field errors (for 422) or the outcome. */
  async setHostname(
    hostname: unknown,
  ): Promise<{ errors: string[] } | { dryRun: boolean; hostname: string; message: string }> {
    const errors = hostnameErrors(hostname);
    if (errors.length > 0) return { errors };
    const name = hostname as string;
    if (this.dryRun)
      return {
        dryRun: true,
        hostname: name,
        message: `Dry run (APPLIANCE_NETWORK_MODE=dry-run): the hostname would be set to ${name}; nothing was applied.`,
      };
    const answer = await this.helper({ v: 1, op: 'hostname.set', args: { hostname: name } });
    if (!answer.ok) throw failure(500, `The hostname was not changed: ${answer.message}`);
    // Without systemd the helper sets the running kernel's name only (root-helper.server.ts).
    const persisted = (answer.output as { persisted?: boolean } | undefined)?.persisted !== false;
    return {
      dryRun: false,
      hostname: name,
      message: persisted
        ? 'Hostname updated'
        : 'Hostname updated for the running system (no systemd on this host: /etc/hostname was not written)',
    };
  }

  // ---- time ----

  zones(): { zones: string[]; set: Set<string> } {
    if (!this.zoneCache) {
      const { zones } = readZones(this.options.paths.zoneinfo);
      this.zoneCache = { zones, set: new Set(zones) };
    }
    return this.zoneCache;
  }

  timeSettings() {
    const servers = readNtpServers(this.options.paths);
    const type = servers.length > 0 ? ('ntp' as const) : ('manual' as const);
    return {
      tzs: this.zones().zones,
      tz: readCurrentZone(this.options.paths),
      type,
      ...(type === 'ntp' ? { ntpserver: servers.join(' ') } : {}),
      time: Math.floor(this.ctx.clock.now() / 1000),
    };
  }

  async setTime(body: {
    type?: unknown;
    tz?: unknown;
    ntpserver?: unknown;
    manual?: unknown;
  }): Promise<{ dryRun: boolean; message: string; type: 'ntp' | 'manual' }> {
    if (body.type !== 'ntp' && body.type !== 'manual')
      throw failure(422, 'The type must be ntp or manual.');
    if (!isZoneName(body.tz, this.zones().set))
      throw failure(422, "The tz must be a zone of the system's zone database.");
    const requests: RootHelperRequest[] = [{ v: 1, op: 'timezone.set', args: { tz: body.tz } }];
    let described: string;
    if (body.type === 'ntp') {
      const servers = parseNtpServers(body.ntpserver);
      if (!servers)
        throw failure(
          422,
          `The ntpserver must be 1 to 8 space-separated host names or IP addresses.`,
        );
      requests.push({ v: 1, op: 'ntp.set', args: { servers } });
      described = `time zone ${body.tz}, NTP servers ${servers.join(' ')}`;
    } else {
      const at = parseManualTime(body.manual);
      if (at === null)
        throw failure(
          422,
          'The manual field must be an ISO 8601 timestamp (2026-12-04T10:20:30Z).',
        );
      const unix = Math.floor(at / 1000);
      requests.push({ v: 1, op: 'ntp.set', args: { servers: [] } });
      requests.push({ v: 1, op: 'time.set', args: { unix } });
      described = `time zone ${body.tz}, NTP off, clock set to ${toIso(unix * 1000)}`;
    }
    if (this.dryRun)
      return {
        dryRun: true,
        type: body.type,
        message: `Dry run (APPLIANCE_NETWORK_MODE=dry-run): would set ${described}; nothing was applied.`,
      };
    for (const request of requests) {
      const answer = await this.helper(request);
      if (!answer.ok)
        throw failure(
          500,
          `The time settings were not all applied (${request.op}): ${answer.message}`,
        );
    }
    return { dryRun: false, type: body.type, message: `Time settings applied: ${described}` };
  }

  // ---- license ----

  licenses() {
    return repo.listLicenses(this.ctx.db).map((row) => ({
      company_name: row.company_name,
      user_name: row.user_name,
      user_email: row.user_email,
      activation_key: row.activation_key,
      license_type: row.license_type,
      active: row.active === 1,
      activation_time: toIso(row.activation_time),
      end_of_license: row.end_of_license === null ? null : toIso(row.end_of_license),
      end_of_maintenance: row.end_of_maintenance === null ? null : toIso(row.end_of_maintenance),
    }));
  }

  /** Stores the activation and restarts this instance's engines ("the monitoring stack"). */
  async validateLicense(
    registrationKey: unknown,
    actor: Actor,
  ): Promise<{ key: string; created: boolean; failed: string[] }> {
    const checked = checkRegistrationKey(registrationKey);
    if (!checked.ok) throw failure(422, checked.message);
    const at = this.ctx.clock.now();
    const { created } = repo.activateLicense(
      this.ctx.db,
      checked.key,
      at,
      at + MAINTENANCE_DAYS * 86_400_000,
      actor,
    );
    const { failed } = await this.restartAppliance();
    return { key: checked.key, created, failed };
  }

  // ---- host map ----

  hostMapPage(page: number, limit: number) {
    const total = repo.countHostMap(this.ctx.db);
    const rows = repo.listHostMap(this.ctx.db, limit, (page - 1) * limit).map(hostMapEntry);
    return { rows, total, lastPage: Math.max(1, Math.ceil(total / limit)) };
  }

  /** Validated host map values, or throws the failure naming the first bad field. */
  hostMapValues(body: Record<string, unknown>): repo.HostMapValues {
    for (const field of ['ip', 'hostname', 'host_name_type', 'node_type'])
      if (body[field] === undefined || body[field] === null || body[field] === '')
        throw failure(422, `The ${field} field is required.`);
    const ip = canonicalIp(body.ip);
    if (!ip) throw failure(422, 'The ip must be an IPv4 or IPv6 address.');
    const type = body.host_name_type;
    if (typeof type !== 'string' || !(HOST_NAME_TYPES as readonly string[]).includes(type))
      throw failure(422, `The host_name_type must be one of ${HOST_NAME_TYPES.join(', ')}.`);
    const nodeType = body.node_type;
    if (typeof nodeType !== 'string' || !(NODE_TYPES as readonly string[]).includes(nodeType))
      throw failure(422, `The node_type must be one of ${NODE_TYPES.join(', ')}.`);
    const hostname = hostMapName(body.hostname, type);
    if (!hostname)
      throw failure(
        422,
        type === 'fqdn'
          ? 'The hostname must be a fully qualified DNS name (at least two labels).'
          : 'The hostname must be a valid DNS name.',
      );
    return { ip, hostname, host_name_type: type, node_type: nodeType };
  }

  createHost(body: Record<string, unknown>) {
    const values = this.hostMapValues(body);
    if (repo.findHostMapDuplicate(this.ctx.db, values, null))
      throw failure(409, 'This address already has this hostname in the host map.');
    const id = repo.insertHostMap(this.ctx.db, values, this.ctx.clock.now());
    return hostMapEntry(repo.findHostMap(this.ctx.db, id) as repo.HostMapRow);
  }

  updateHost(id: number, body: Record<string, unknown>) {
    if (!repo.findHostMap(this.ctx.db, id)) throw failure(404, 'Host not found.');
    const values = this.hostMapValues(body);
    if (repo.findHostMapDuplicate(this.ctx.db, values, id))
      throw failure(409, 'This address already has this hostname in the host map.');
    repo.updateHostMap(this.ctx.db, id, values, this.ctx.clock.now());
    return hostMapEntry(repo.findHostMap(this.ctx.db, id) as repo.HostMapRow);
  }

  deleteHost(id: number): repo.HostMapRow {
    const row = repo.findHostMap(this.ctx.db, id);
    if (!row) throw failure(404, 'Host not found.');
    repo.deleteHostMap(this.ctx.db, id);
    return row;
  }

  // ---- capture ----

  sniffInterfaces(): string[] {
    return repo.sniffInterfaceNames(this.ctx.db);
  }

  // ---- the root helper ----

  private async helper(request: RootHelperRequest) {
    try {
      return await this.options.helper.call(request);
    } catch (err) {
      if (err instanceof RootHelperUnavailableError)
        throw failure(503, `Not applied: ${err.message} (APPLIANCE_NETWORK_MODE=apply).`);
      throw err;
    }
  }
}

function engineEntry(engine: EngineStatus): ServiceEntry {
  return {
    name: engine.name,
    kind: 'engine',
    status: engine.state,
    // Engines run inside the appliance's process.
    pid: engine.state === 'running' ? process.pid : null,
    shared: engine.shared,
    started_at: engine.startedAt === null ? null : toIso(engine.startedAt),
    error: engine.error,
  };
}

function hostMapEntry(row: repo.HostMapRow) {
  return { ...row, timestamp: toIso(row.timestamp) };
}

function interfaceConfig(
  where: string,
  name: string,
  config: InterfaceConfigInput | undefined,
): NetworkInterfaceConfig {
  if (typeof config !== 'object' || config === null)
    throw failure(422, `${where}.config is required.`);
  const type = config.type;
  if (type !== 'static' && type !== 'dhcp' && type !== 'manual' && type !== 'unconfigured')
    throw failure(422, `${where}.config.type must be static, dhcp, manual or unconfigured.`);
  const result: NetworkInterfaceConfig = { name, type };
  if (type === 'static') {
    const address = parseIPv4WithPrefix(config.address);
    if (!address) throw failure(422, `${where}.config.address must be IPv4 or IPv4/CIDR.`);
    const prefix = netmaskPrefix(config.netmask);
    if (prefix === null)
      throw failure(422, `${where}.config.netmask must be a dotted IPv4 netmask.`);
    if (address.prefix !== null && address.prefix !== prefix)
      throw failure(
        422,
        `${where}.config.netmask does not match the address's /${address.prefix}.`,
      );
    result.address = config.address as string;
    result.netmask = config.netmask as string;
    if (config.gateway !== undefined && config.gateway !== null && config.gateway !== '') {
      if (!isIPv4(config.gateway))
        throw failure(422, `${where}.config.gateway must be an IPv4 address.`);
      result.gateway = config.gateway;
    }
  } else if (
    (config.address !== undefined && config.address !== null) ||
    (config.netmask !== undefined && config.netmask !== null) ||
    (config.gateway !== undefined && config.gateway !== null && config.gateway !== '')
  ) {
    throw failure(422, `${where}.config: address, netmask and gateway are for static only.`);
  }
  const dns = config['dns-nameservers'];
  if (dns !== undefined && dns !== null) {
    if (!Array.isArray(dns) || dns.length > 3 || !dns.every((d) => canonicalIp(d) !== null))
      throw failure(
        422,
        `${where}.config.dns-nameservers must be at most 3 IPv4 or IPv6 addresses.`,
      );
    if (dns.length > 0) result.dns = dns as string[];
  }
  for (const flag of ['auto', 'allow-hotplug', 'use_sniffer', 'use_suricata'] as const)
    if (config[flag] !== undefined && typeof config[flag] !== 'boolean')
      throw failure(422, `${where}.config.${flag} must be true or false.`);
  return result;
}

function describeInterface(c: NetworkInterfaceConfig): string {
  const parts = [`${c.name}: ${c.type}`];
  if (c.address) parts.push(c.address);
  if (c.netmask) parts.push(`netmask ${c.netmask}`);
  if (c.gateway) parts.push(`gateway ${c.gateway}`);
  if (c.dns) parts.push(`dns ${c.dns.join(' ')}`);
  return parts.join(' ');
}
