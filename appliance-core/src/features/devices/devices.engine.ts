/**
 * The devices engine: schedules the crawl of every SNMP-enabled device, and keeps walks_log
 * bounded by partition: once a week the latest partition is rotated to a dated one, and dated
 * partitions older than WALKS_RETENTION_MS are dropped (dropping, never deleting rows).
 * The retention policy of the maintenance endpoints, when configured, calls the same
 * PartitionedTable functions (devices exports the table as `walksLog`).
 */
import type { Logger } from 'pino';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import type { Clock } from '../../platform/time/time.js';
import { DAY_MS } from '../../platform/time/time.js';
import type { DevicesService } from './devices.service.js';

export const WALKS_ROTATION_MS = 7 * DAY_MS;
export const WALKS_RETENTION_MS = 84 * DAY_MS;
const HOUSEKEEPING_KIND = 'walks-log-housekeeping';
const HOUSEKEEPING_INTERVAL_MS = 6 * 3_600_000;

/** Rotates walks_log when its latest partition holds a week of walks, and drops expired partitions. */
export function walksHousekeeping(
  devices: DevicesService,
  now: number,
): { rotated: string | null; dropped: string[] } {
  const table = devices.walks.table;
  const latest = table.list().find((p) => p.isLatest);
  const rotated =
    latest && latest.minTime !== null && now - latest.minTime >= WALKS_ROTATION_MS
      ? table.rotate(now)
      : null;
  return { rotated, dropped: table.dropOlderThan(now - WALKS_RETENTION_MS) };
}

export class DevicesEngine {
  readonly name = 'devices';

  constructor(
    private readonly devices: DevicesService,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    scheduler.defineKind(HOUSEKEEPING_KIND, {
      concurrency: 1,
      run: async () => {
        const { rotated, dropped } = walksHousekeeping(this.devices, this.clock.now());
        if (rotated || dropped.length > 0)
          this.log.info({ rotated, dropped }, 'walks_log partitions maintained');
      },
    });
  }

  async start(): Promise<void> {
    await this.devices.crawl.start();
    this.scheduler.upsert({
      id: HOUSEKEEPING_KIND,
      kind: HOUSEKEEPING_KIND,
      intervalMs: HOUSEKEEPING_INTERVAL_MS,
      payload: null,
    });
  }

  async stop(): Promise<void> {
    this.scheduler.remove(HOUSEKEEPING_KIND);
    await this.devices.crawl.stop();
  }
}
