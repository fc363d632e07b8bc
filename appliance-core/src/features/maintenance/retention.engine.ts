/**
 * The retention pruner: one scheduled job (hourly, on the shared scheduler) that enforces the
 * retention policy on every registered row (platform/db/retention.ts), one row after the other:
 * partitioned tables drop whole partitions, the others delete in short batches through the
 * storage writer, so intake and the API keep going while it runs. Each run logs its start, then
 * what each row removed and how long it took; a failing row is logged and the others still run.
 */
import type { Logger } from 'pino';
import type { RetentionRegistry } from '../../platform/db/retention.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import { HOUR_MS, type Clock } from '../../platform/time/time.js';

export const RETENTION_PRUNE_KIND = 'retention-prune';
const RETENTION_PRUNE_JOB = 'retention-prune';

export class RetentionEngine {
  readonly name = 'retention';

  constructor(
    private readonly retention: RetentionRegistry,
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly intervalMs: number = HOUR_MS,
  ) {
    scheduler.defineKind<null>(RETENTION_PRUNE_KIND, {
      concurrency: 1,
      run: async () => {
        const started = Date.now();
        this.log.info('retention prune started');
        const outcomes = await this.retention.pruneAll(this.clock.now());
        const ms = Date.now() - started;
        for (const o of outcomes)
          if (o.error) this.log.error({ table: o.table, err: o.error }, 'retention prune failed');
        const removed = outcomes.filter((o) => o.removed > 0);
        this.log.info({ removed, ms }, 'retention prune finished');
      },
    });
  }

  async start(): Promise<void> {
    this.scheduler.upsert({
      id: RETENTION_PRUNE_JOB,
      kind: RETENTION_PRUNE_KIND,
      intervalMs: this.intervalMs,
      payload: null,
    });
  }

  async stop(): Promise<void> {
    this.scheduler.remove(RETENTION_PRUNE_JOB);
  }
}
