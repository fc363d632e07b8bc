/**
 * Scheduled partition maintenance: one cron job per table registered for maintenance, rotating
 * it at its stored schedule (default: log tables daily at 00:00 UTC, walks_log weekly on Monday;
 * changed by POST /api/updateTableCronSchedule, which reaches the scheduler at once), and one
 * hourly retention job dropping partitions past each table's retention (default 84 days; the
 * retention policy of retention.routes.ts sets the days, and its pruner drops the same partitions
 * through the same function). Both call MaintenanceService, as the routes do.
 */
import type { Logger } from 'pino';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import { HOUR_MS } from '../../platform/time/time.js';
import type { MaintenanceService } from './maintenance.service.js';

export const ROTATION_KIND = 'partition-rotation';
export const RETENTION_KIND = 'partition-retention';
const RETENTION_JOB = 'partition-retention';
const RETENTION_INTERVAL_MS = HOUR_MS;

export const rotationJobId = (table: string) => `${ROTATION_KIND}:${table}`;

export class MaintenanceEngine {
  readonly name = 'maintenance';
  private started = false;
  private readonly jobs = new Set<string>();

  constructor(
    private readonly maintenance: MaintenanceService,
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
  ) {
    scheduler.defineKind<string>(ROTATION_KIND, {
      concurrency: 1,
      run: async (job) => {
        const table = this.maintenance.maintainedTables().find((t) => t.name === job.payload);
        if (table) await this.maintenance.rotate(table);
      },
    });
    scheduler.defineKind<null>(RETENTION_KIND, {
      concurrency: 1,
      run: async () => {
        const dropped = await this.maintenance.pruneExpired();
        if (Object.keys(dropped).length > 0)
          this.log.info({ dropped }, 'partitions past retention dropped');
      },
    });
    maintenance.onScheduleChange((table, cron) => {
      if (this.started) this.schedule(table, cron);
    });
  }

  async start(): Promise<void> {
    this.started = true;
    for (const table of this.maintenance.maintainedTables()) {
      const settings = table.settings();
      if (settings) this.schedule(table.name, settings.cronSchedule);
    }
    this.scheduler.upsert({
      id: RETENTION_JOB,
      kind: RETENTION_KIND,
      intervalMs: RETENTION_INTERVAL_MS,
      payload: null,
    });
    this.jobs.add(RETENTION_JOB);
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const id of this.jobs) this.scheduler.remove(id);
    this.jobs.clear();
  }

  private schedule(table: string, cron: string): void {
    const id = rotationJobId(table);
    this.scheduler.upsert({ id, kind: ROTATION_KIND, cron, payload: table });
    this.jobs.add(id);
  }
}
