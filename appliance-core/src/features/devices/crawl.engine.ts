/**
 * The device crawl: walks an SNMP device's system group, IF-MIB ifTable/ifXTable and
 * HOST-RESOURCES-MIB hrStorageTable, creates or refreshes its interface and disk trackers, and
 * stores the walk in walks_log.
 *
 * Every SNMP-enabled device is one job of the shared scheduler (kind `device-crawl`, a slow
 * interval, at most CRAWL_CONCURRENCY at once). Creating a device with SNMP, enabling SNMP or
 * POST /api/device/{device}/recrawl asks for a crawl now; a request while that device's crawl
 * runs is remembered and served right after it. All writes of one crawl are one transaction;
 * a failed crawl changes no tracker and records its error.
 */
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import type { Clock } from '../../platform/time/time.js';
import { findDevice, findSnmpConfig, recordCrawl, snmpDeviceIds } from './devices.repository.js';
import { snmpTargetOf } from '../../platform/snmp/snmp-config.js';
import { numberOf, tableRows, textOf } from '../../platform/snmp/snmp-table.js';
import {
  hexOf,
  oidUnder,
  SnmpError,
  withSnmpSession,
  type DecodedVarbind,
  type SnmpTiming,
  type WalkOptions,
} from '../../platform/snmp/snmp.client.js';
import {
  upsertCrawledDisks,
  upsertCrawledInterfaces,
  type CrawledDisk,
  type CrawledInterface,
} from './trackers.repository.js';
import type { WalksRepository } from './walks.repository.js';

export const CRAWL_KIND = 'device-crawl';
export const CRAWL_INTERVAL_MS = 24 * 3_600_000;
export const CRAWL_CONCURRENCY = 2;
const CRAWL_TIMING: SnmpTiming = { timeoutMs: 3000, retries: 1 };
const TABLE_BOUNDS: Omit<WalkOptions, 'signal'> = {
  maxVarbinds: 20_000,
  deadlineMs: 60_000,
  maxRepetitions: 25,
};

export const MIB = {
  system: '1.3.6.1.2.1.1',
  ifEntry: '1.3.6.1.2.1.2.2.1',
  ifXEntry: '1.3.6.1.2.1.31.1.1.1',
  hrStorageEntry: '1.3.6.1.2.1.25.2.3.1',
} as const;

/** hrStorageTypes that are disks: fixed (.4), flash (.9) and network (.10) disks; RAM, virtual memory and removable media are not. */
const DISK_STORAGE_TYPES = new Set([
  '1.3.6.1.2.1.25.2.1.4',
  '1.3.6.1.2.1.25.2.1.10',
  '1.3.6.1.2.1.25.2.1.9',
]);

export interface CrawlResult {
  interfaces: number;
  disks: number;
  varbinds: number;
  sysName: string | null;
}

const num = numberOf;
const text = textOf;

/** A MAC from ifPhysAddress: net-snmp's octets, shown as printable text only when they happened to be printable. */
function macOf(v: DecodedVarbind | undefined): string | null {
  if (!v || v.value === null || v.value === '') return null;
  if (v.type === 'Hex-STRING') return String(v.value);
  return hexOf(Buffer.from(String(v.value), 'utf8'));
}

export function parseInterfaces(varbinds: readonly DecodedVarbind[]): CrawledInterface[] {
  const ifTable = tableRows(varbinds, MIB.ifEntry);
  const ifXTable = tableRows(varbinds, MIB.ifXEntry);
  return [...ifTable.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, row]) => {
      const x = ifXTable.get(index) ?? new Map<number, DecodedVarbind>();
      const highSpeed = num(x.get(15));
      const speed = num(row.get(5));
      return {
        index,
        name: text(x.get(1)) ?? text(row.get(2)) ?? `if${index}`,
        descr: text(row.get(2)),
        alias: text(x.get(18)),
        type: num(row.get(3)),
        mtu: num(row.get(4)),
        // ifSpeed saturates at 4294967295; ifHighSpeed (Mbit/s) is exact above that.
        speed:
          highSpeed !== null &&
          highSpeed > 0 &&
          (speed === null || speed >= 4_294_967_295 || highSpeed * 1_000_000 > speed)
            ? highSpeed * 1_000_000
            : speed,
        mac: macOf(row.get(6)),
        adminStatus: num(row.get(7)),
        operStatus: num(row.get(8)),
      };
    });
}

export function parseDisks(varbinds: readonly DecodedVarbind[]): CrawledDisk[] {
  const disks: CrawledDisk[] = [];
  for (const [index, row] of [...tableRows(varbinds, MIB.hrStorageEntry).entries()].sort(
    ([a], [b]) => a - b,
  )) {
    const storageType = text(row.get(2));
    if (!storageType || !DISK_STORAGE_TYPES.has(storageType)) continue;
    const units = num(row.get(4)) ?? 0;
    const size = num(row.get(5)) ?? 0;
    const used = num(row.get(6)) ?? 0;
    disks.push({
      index,
      name: text(row.get(3)) ?? `storage ${index}`,
      storageType,
      allocationUnits: units,
      total: size * units,
      available: Math.max(0, size - used) * units,
    });
  }
  return disks;
}

export interface CrawlDeps {
  db: DB;
  clock: Clock;
  secrets: SecretBox;
  log: Logger;
  scheduler: Scheduler;
  walks: WalksRepository;
}

export class CrawlEngine {
  private readonly running = new Set<number>();
  private readonly again = new Set<number>();

  constructor(private readonly deps: CrawlDeps) {
    deps.scheduler.defineKind<{ deviceId: number }>(CRAWL_KIND, {
      concurrency: CRAWL_CONCURRENCY,
      run: async (job, signal) => {
        await this.runJob(job.payload.deviceId, signal);
      },
    });
  }

  static jobId(deviceId: number): string {
    return `${CRAWL_KIND}:${deviceId}`;
  }

  /** Schedules every SNMP-enabled device (called once by the engine at start). */
  async start(): Promise<void> {
    for (const deviceId of snmpDeviceIds(this.deps.db)) this.schedule(deviceId);
  }

  async stop(): Promise<void> {
    this.again.clear();
  }

  /** Keeps a device's periodic crawl (idempotent). */
  schedule(deviceId: number): void {
    this.deps.scheduler.upsert({
      id: CrawlEngine.jobId(deviceId),
      kind: CRAWL_KIND,
      intervalMs: CRAWL_INTERVAL_MS,
      payload: { deviceId },
    });
  }

  unschedule(deviceId: number): void {
    this.again.delete(deviceId);
    this.deps.scheduler.remove(CrawlEngine.jobId(deviceId));
  }

  /** Asks for a crawl as soon as a slot is free; false when the device has no crawl (SNMP off). */
  queueNow(deviceId: number): boolean {
    const id = CrawlEngine.jobId(deviceId);
    if (!this.deps.scheduler.has(id)) return false;
    if (this.running.has(deviceId)) this.again.add(deviceId);
    else this.deps.scheduler.runSoon(id);
    return true;
  }

  isCrawling(deviceId: number): boolean {
    return this.running.has(deviceId);
  }

  private async runJob(deviceId: number, signal: AbortSignal): Promise<void> {
    this.running.add(deviceId);
    try {
      await this.crawl(deviceId, signal);
    } catch (err) {
      if (!(err instanceof SnmpError && err.kind === 'aborted' && signal.aborted)) {
        this.deps.log.warn({ deviceId, err: (err as Error).message }, 'device crawl failed');
      }
    } finally {
      this.running.delete(deviceId);
      if (this.again.delete(deviceId) && !signal.aborted)
        this.deps.scheduler.runSoon(CrawlEngine.jobId(deviceId));
    }
  }

  /**
   * Crawls one device now. Resolves with what was found; rejects with an SnmpError (recorded on
   * the device) when the agent does not answer properly. A device without SNMP resolves null.
   */
  async crawl(deviceId: number, signal?: AbortSignal): Promise<CrawlResult | null> {
    const { db, clock, secrets, walks } = this.deps;
    const device = findDevice(db, deviceId);
    const config = findSnmpConfig(db, deviceId);
    if (!device || device.enable_snmp !== 1 || !config) return null;
    const target = snmpTargetOf(secrets, device.ip_address, config);
    const started = clock.now();
    const t0 = Date.now();
    let varbinds: DecodedVarbind[] = [];
    let truncated = false;
    try {
      await withSnmpSession(target, CRAWL_TIMING, async (session) => {
        for (const base of [MIB.system, MIB.ifEntry, MIB.ifXEntry, MIB.hrStorageEntry]) {
          const part = await session.subtree(base, {
            ...TABLE_BOUNDS,
            ...(signal ? { signal } : {}),
          });
          varbinds = varbinds.concat(part.varbinds);
          truncated ||= part.truncated;
        }
      });
      if (varbinds.length === 0)
        throw new SnmpError('invalid', 'The agent answered with no system group');
    } catch (err) {
      const error =
        err instanceof SnmpError ? err : new SnmpError('invalid', (err as Error).message);
      if (!(error.kind === 'aborted' && signal?.aborted) && findDevice(db, deviceId)) {
        recordCrawl(db, deviceId, { at: clock.now(), ok: false, error: error.message });
      }
      throw error;
    }
    const interfaces = parseInterfaces(varbinds);
    const disks = parseDisks(varbinds);
    const system = new Map(
      varbinds.filter((v) => oidUnder(v.oid, MIB.system)).map((v) => [v.oid, v]),
    );
    const sysName = text(system.get('1.3.6.1.2.1.1.5.0'));
    const now = clock.now();
    db.transaction(() => {
      // The device may have been deleted (or SNMP switched off) while the agent was answering.
      const current = findDevice(db, deviceId);
      if (!current || current.enable_snmp !== 1) return;
      upsertCrawledInterfaces(db, deviceId, interfaces, now);
      upsertCrawledDisks(db, deviceId, disks, now);
      walks.insert({
        deviceId,
        timestamp: started,
        kind: 'crawl',
        varbinds,
        durationMs: Date.now() - t0,
        truncated,
      });
      recordCrawl(db, deviceId, {
        at: now,
        ok: true,
        sysName,
        sysDescr: text(system.get('1.3.6.1.2.1.1.1.0')),
        sysObjectId: text(system.get('1.3.6.1.2.1.1.2.0')),
      });
    })();
    return {
      interfaces: interfaces.length,
      disks: disks.length,
      varbinds: varbinds.length,
      sysName,
    };
  }
}
