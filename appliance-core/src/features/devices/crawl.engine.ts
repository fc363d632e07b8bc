/**
 * The device crawl: walks an SNMP device's system group and the subtrees registered crawl
 * handlers ask for (the trackers feature: IF-MIB ifTable/ifXTable and HOST-RESOURCES-MIB
 * hrStorageTable for interface and disk trackers), lets each handler store what it found, records
 * the system group on the device and stores the walk in walks_log.
 *
 * Every SNMP-enabled device is one job of the shared scheduler (kind `device-crawl`, a slow
 * interval, at most CRAWL_CONCURRENCY at once). Creating a device with SNMP, enabling SNMP or
 * POST /api/device/{device}/recrawl asks for a crawl now; a request while that device's crawl
 * runs is remembered and served right after it. All writes of one crawl (the handlers' too) are
 * one transaction; a failed crawl changes no tracker and records its error.
 */
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import type { Clock } from '../../platform/time/time.js';
import { textOf as text } from '../../platform/snmp/snmp-table.js';
import { snmpTargetOfDevice } from './device-snmp.service.js';
import { findDevice, recordCrawl, snmpDeviceIds } from './devices.repository.js';
import {
  oidUnder,
  SnmpError,
  withSnmpSession,
  type DecodedVarbind,
  type SnmpTiming,
  type WalkOptions,
} from '../../platform/snmp/snmp.client.js';
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

/** The system group: every crawl walks it (sysName, sysDescr, sysObjectID). */
const SYSTEM_GROUP = '1.3.6.1.2.1.1';

/**
 * A feature's share of the device crawl: the subtrees it needs walked, and what it stores from
 * them. The trackers feature registers one (interface and disk trackers) so that this feature
 * never imports trackers: dependencies flow one way, trackers -> devices.
 */
export interface CrawlHandler {
  /** OID subtrees the crawl walks for this handler (after the system group; each walked once). */
  subtrees: readonly string[];
  /**
   * Stores what the walk found. Runs inside the crawl's one transaction (synchronous, no await):
   * when it throws, nothing of the crawl is stored. Returns counts for the crawl's result.
   */
  store(deviceId: number, varbinds: readonly DecodedVarbind[], now: number): Record<string, number>;
}

export interface CrawlResult {
  varbinds: number;
  sysName: string | null;
  /** What each handler stored, by handler name. */
  stored: Record<string, Record<string, number>>;
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
  private readonly handlers = new Map<string, CrawlHandler>();

  constructor(private readonly deps: CrawlDeps) {
    deps.scheduler.defineKind<{ deviceId: number }>(CRAWL_KIND, {
      concurrency: CRAWL_CONCURRENCY,
      run: async (job, signal) => {
        await this.runJob(job.payload.deviceId, signal);
      },
    });
  }

  /** Adds a feature's share of every crawl (once per name). */
  registerHandler(name: string, handler: CrawlHandler): void {
    if (this.handlers.has(name)) throw new Error(`crawl handler ${name} is already registered`);
    this.handlers.set(name, handler);
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
    const target = snmpTargetOfDevice(db, secrets, deviceId);
    if (!target) return null;
    const started = clock.now();
    const t0 = Date.now();
    let varbinds: DecodedVarbind[] = [];
    let truncated = false;
    try {
      await withSnmpSession(target, CRAWL_TIMING, async (session) => {
        const subtrees = new Set([
          SYSTEM_GROUP,
          ...[...this.handlers.values()].flatMap((h) => h.subtrees),
        ]);
        for (const base of subtrees) {
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
    const system = new Map(
      varbinds.filter((v) => oidUnder(v.oid, SYSTEM_GROUP)).map((v) => [v.oid, v]),
    );
    const sysName = text(system.get('1.3.6.1.2.1.1.5.0'));
    const now = clock.now();
    const stored: CrawlResult['stored'] = {};
    db.transaction(() => {
      // The device may have been deleted (or SNMP switched off) while the agent was answering.
      const current = findDevice(db, deviceId);
      if (!current || current.enable_snmp !== 1) return;
      for (const [name, handler] of this.handlers)
        stored[name] = handler.store(deviceId, varbinds, now);
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
    return { varbinds: varbinds.length, sysName, stored };
  }
}
