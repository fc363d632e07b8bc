/**
 * Network discovery: for each local network with `enable_discovery`, every `interval` seconds,
 * sweep its range (ICMP with fping, then SNMP with the network's credential sets, then an
 * optional TCP portscan) and record responders that are not devices as pending devices.
 *
 * Invariants:
 * - One job per enabled network in the shared scheduler (kind `discovery-sweep`); at most
 *   SWEEP_CONCURRENCY sweeps at once. A network never swept (or reset with resetDiscoveryTs), or
 *   whose last sweep is older than its interval, runs as soon as a slot is free.
 * - A sweep never blocks the API: the range is walked in chunks of CHUNK_SIZE addresses (one
 *   fping process each), SNMP and TCP probes are awaited with bounded concurrency, each chunk is
 *   written in one transaction, and the loop yields between chunks.
 * - Every sweep has a discovery_status row (start_time, end_time, counters, error).
 * - The SNMP port of a sweep is each credential set's `snmp_port` (default 161).
 * - The daemon variables (features/maintenance daemon catalogue) are read at each start: when
 *   `snmp_community` (secret) is set, a host that no credential set of its network answers is
 *   tried once more over SNMP v2c with that community, on `snmp_port` (161 when left out); a
 *   host found so keeps the community sealed in its pending SNMP config. Never logged.
 * - Deleting or disabling a network aborts its running sweep.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import type { Clock } from '../../platform/time/time.js';
import { fpingAlive, FpingUnavailable, type AliveOptions } from '../../platform/net/fping.js';
import { DEFAULT_SNMP, type SnmpConfigRow } from '../../platform/snmp/snmp-config.js';
import { probeSystem, withSnmpSession, type SnmpTiming } from '../../platform/snmp/snmp.client.js';
import {
  credentialAttempts,
  deviceIpSet,
  findCredential,
  recordDiscoveredHosts,
  type CredentialRow,
  type DiscoveredHost,
} from '../devices/index.js';
import { hostChunks, hostCount } from './ipv4.rules.js';
import {
  closeInterruptedSweeps,
  credIdsOfNet,
  findLocalnet,
  finishStatus,
  latestStatus,
  listLocalnets,
  markDiscovered,
  pruneStatus,
  startStatus,
  updateStatus,
  type LocalnetRow,
  type StatusCounters,
} from './localnets.repository.js';
import { DEFAULT_PORTSCAN_PORTS, openPorts } from './port.probe.js';

export const DISCOVERY_KIND = 'discovery-sweep';
export const SWEEP_CONCURRENCY = 1;

export interface DiscoveryOptions {
  chunkSize: number;
  /** Hosts probed (SNMP, then TCP) at once within a chunk. */
  probeConcurrency: number;
  snmpTiming: SnmpTiming;
  icmp: AliveOptions;
  portscanPorts: readonly number[];
  portTimeoutMs: number;
}

export const DEFAULT_DISCOVERY_OPTIONS: DiscoveryOptions = {
  chunkSize: 256,
  probeConcurrency: 32,
  snmpTiming: { timeoutMs: 1000, retries: 0 },
  icmp: {},
  portscanPorts: DEFAULT_PORTSCAN_PORTS,
  portTimeoutMs: 700,
};

export interface DiscoveryDeps {
  db: DB;
  clock: Clock;
  secrets: SecretBox;
  log: Logger;
  scheduler: Scheduler;
  /** The daemon's stored variables, secrets opened (features/maintenance), read at each start. */
  daemonVars?: () => Record<string, string>;
}

/** The v2c community tried on hosts no credential set answers (the daemon's variables). */
export interface FallbackCommunity {
  community: string;
  port: number;
}

/** The fallback community of the daemon variables `snmp_community` and `snmp_port`, or null. */
export function fallbackCommunityOf(vars: Record<string, string>): FallbackCommunity | null {
  const community = vars.snmp_community;
  if (!community) return null;
  const port = /^[1-9][0-9]{0,4}$/.test(vars.snmp_port ?? '') ? Number(vars.snmp_port) : 161;
  return { community, port: port <= 65535 ? port : 161 };
}

export interface SweepResult extends StatusCounters {
  statusId: number;
  error: string | null;
}

/** The dashboard profile a new pending device starts with, from what answered. */
export function guessProfile(sysDescr: string | null, ports: readonly number[] | null): string {
  if (sysDescr !== null) {
    if (/windows/i.test(sysDescr)) return 'dash_windows_wmi';
    if (/linux|bsd|unix|darwin|sunos/i.test(sysDescr)) return 'dash_linux_snmp';
    return 'dash_network_snmp';
  }
  if (ports && [135, 445, 3389, 5985].some((p) => ports.includes(p))) return 'dash_windows_wmi';
  return 'dash_generic';
}

/** Runs `fn` over `items` with at most `limit` at once, keeping the order of results. */
async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class DiscoveryEngine {
  readonly name = 'discovery';
  private readonly sweeps = new Map<number, AbortController>();
  private readonly options: DiscoveryOptions;
  /** Read from the daemon variables at start (null: none configured). */
  private fallback: FallbackCommunity | null = null;

  constructor(
    private readonly deps: DiscoveryDeps,
    options: Partial<DiscoveryOptions> = {},
  ) {
    this.options = { ...DEFAULT_DISCOVERY_OPTIONS, ...options };
    deps.scheduler.defineKind<{ netId: number }>(DISCOVERY_KIND, {
      concurrency: SWEEP_CONCURRENCY,
      run: async (job, signal) => {
        await this.sweep(job.payload.netId, signal);
      },
    });
  }

  static jobId(netId: number): string {
    return `${DISCOVERY_KIND}:${netId}`;
  }

  async start(): Promise<void> {
    this.fallback = fallbackCommunityOf(this.deps.daemonVars?.() ?? {});
    const closed = closeInterruptedSweeps(this.deps.db, this.deps.clock.now());
    if (closed > 0)
      this.deps.log.warn({ closed }, 'discovery sweeps interrupted by the last stop were closed');
    for (const net of listLocalnets(this.deps.db)) this.sync(net.id);
  }

  async stop(): Promise<void> {
    for (const controller of this.sweeps.values()) controller.abort();
  }

  /** Brings a network's job in line with its row: scheduled when enabled (now when due), else removed. */
  sync(netId: number): void {
    const net = findLocalnet(this.deps.db, netId);
    const id = DiscoveryEngine.jobId(netId);
    if (!net || net.enable_discovery !== 1) {
      this.remove(netId);
      return;
    }
    this.deps.scheduler.upsert({
      id,
      kind: DISCOVERY_KIND,
      intervalMs: net.interval * 1000,
      payload: { netId },
    });
    if (
      net.last_discovery_at === null ||
      this.deps.clock.now() - net.last_discovery_at >= net.interval * 1000
    )
      this.deps.scheduler.runSoon(id);
  }

  /** Stops a network's sweeps (deleted or disabled). */
  remove(netId: number): void {
    this.deps.scheduler.remove(DiscoveryEngine.jobId(netId));
    this.sweeps.get(netId)?.abort();
  }

  isSweeping(netId: number): boolean {
    return this.sweeps.has(netId);
  }

  latestStatus() {
    return latestStatus(this.deps.db);
  }

  /** Sweeps one network now (the scheduler's job; tests call it directly). */
  async sweep(netId: number, signal?: AbortSignal): Promise<SweepResult | null> {
    const { db, clock, log } = this.deps;
    const net = findLocalnet(db, netId);
    if (!net) return null;
    const controller = new AbortController();
    // Shared by every probe of the sweep in flight at once (each removes its listener when done).
    setMaxListeners(0, controller.signal);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.sweeps.set(netId, controller);
    const counters: StatusCounters = {
      addresses: hostCount(net.network_num, net.broadcast_num),
      alive: 0,
      snmp_responders: 0,
      new_pending: 0,
    };
    const statusId = startStatus(db, netId, clock.now(), counters.addresses);
    let error: string | null = null;
    try {
      await this.walkRange(net, controller.signal, counters, statusId);
      if (controller.signal.aborted) error = 'aborted';
    } catch (err) {
      error = controller.signal.aborted ? 'aborted' : (err as Error).message;
      if (!(err instanceof FpingUnavailable) && !controller.signal.aborted)
        log.warn({ netId, err: error }, 'discovery sweep failed');
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.sweeps.delete(netId);
      const end = clock.now();
      if (findLocalnet(db, netId)) {
        db.transaction(() => {
          finishStatus(db, statusId, end, error);
          if (error === null) markDiscovered(db, netId, end);
          pruneStatus(db, netId);
        })();
      }
    }
    return { statusId, ...counters, error };
  }

  private async walkRange(
    net: LocalnetRow,
    signal: AbortSignal,
    counters: StatusCounters,
    statusId: number,
  ): Promise<void> {
    const { db, clock } = this.deps;
    const credentials = credIdsOfNet(db, net.id)
      .map((id) => findCredential(db, id))
      .filter((c): c is CredentialRow => c !== undefined);
    const portscan = net.enable_portscan === 1;
    for (const chunk of hostChunks(net.network_num, net.broadcast_num, this.options.chunkSize)) {
      if (signal.aborted) return;
      const alive = await fpingAlive(chunk, signal, this.options.icmp);
      counters.alive += alive.length;
      const devices = deviceIpSet(db);
      const candidates = alive.filter((ip) => !devices.has(ip));
      const hosts = await mapLimit(candidates, this.options.probeConcurrency, (ip) =>
        this.probeHost(ip, net.id, credentials, portscan, signal),
      );
      if (signal.aborted) return;
      counters.snmp_responders += hosts.filter((h) => h.snmp !== null).length;
      // The network may have been deleted while the chunk was probed: then nothing is written.
      if (!findLocalnet(db, net.id)) return;
      counters.new_pending += recordDiscoveredHosts(db, hosts, clock.now());
      updateStatus(db, statusId, counters);
      await yieldToLoop();
    }
  }

  private async probeHost(
    ip: string,
    netId: number,
    credentials: readonly CredentialRow[],
    portscan: boolean,
    signal: AbortSignal,
  ): Promise<DiscoveredHost> {
    let snmp: SnmpConfigRow | null = null;
    let sysName: string | null = null;
    let sysDescr: string | null = null;
    search: for (const credential of credentials) {
      for (const attempt of credentialAttempts(this.deps.secrets, credential, ip)) {
        if (signal.aborted) break search;
        try {
          const system = await withSnmpSession(attempt.target, this.options.snmpTiming, (session) =>
            probeSystem(session, signal),
          );
          snmp = attempt.config;
          sysName = system.sysName;
          sysDescr = system.sysDescr;
          break search;
        } catch {
          // No answer with this attempt: try the next one.
        }
      }
    }
    const fallback = this.fallback;
    if (snmp === null && fallback && !signal.aborted) {
      try {
        const { community, port } = fallback;
        const target = { host: ip, port, version: 2 as const, community };
        const system = await withSnmpSession(target, this.options.snmpTiming, (session) =>
          probeSystem(session, signal),
        );
        snmp = {
          ...DEFAULT_SNMP,
          snmp_version: 2,
          snmp_port: fallback.port,
          snmp_community: this.deps.secrets.seal(fallback.community),
        };
        sysName = system.sysName;
        sysDescr = system.sysDescr;
      } catch {
        // No answer with the daemon's community either.
      }
    }
    const ports =
      portscan && !signal.aborted
        ? await openPorts(ip, this.options.portscanPorts, this.options.portTimeoutMs, signal)
        : null;
    return {
      ip,
      netId,
      label: (sysName ?? '').trim().slice(0, 255) || ip,
      profile: guessProfile(sysDescr, ports),
      snmp,
      sysDescr,
      openPorts: ports,
    };
  }
}
