/**
 * URL checks on the shared scheduler: one job per URL tracker on its `interval`, at most
 * `concurrency` checks at once, each bounded by its timeout, so a slow or dead site never delays
 * the others. Saving or deleting a tracker through the API takes effect at once. Every check
 * judges the address it connects to (urlPolicyOf: APPLIANCE_URL_ALLOW_PRIVATE), so a tracker
 * stored before a rule existed, or a name that starts resolving elsewhere, is refused at its
 * next check.
 */
import type { LookupFunction } from 'node:net';
import type { CoreContext } from '../../platform/context.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import type { OutboundPolicy } from '../../platform/net/outbound.js';
import { checkUrl } from './url.checker.js';
import { findUrlTracker, listUrlTrackers, recordUrlCheck } from './url.repository.js';

export interface UrlEngineOptions {
  concurrency?: number;
  /** Upper bound of one check (default 10 s; never more than the tracker's interval). */
  timeoutMs?: number;
  lookup?: LookupFunction;
}

/** The outbound rule of URL monitoring under the appliance's configuration. */
export const urlPolicyOf = (config: CoreContext['config']): OutboundPolicy => ({
  allowPrivate: config.urlAllowPrivate !== 'off',
});

export class UrlMonitorEngine {
  readonly name = 'url-monitors';
  checks = 0;

  constructor(
    private readonly ctx: Pick<CoreContext, 'db' | 'clock' | 'log' | 'config'>,
    private readonly scheduler: Scheduler,
    private readonly options: UrlEngineOptions = {},
  ) {
    scheduler.defineKind<{ id: number }>('url-check', {
      concurrency: options.concurrency ?? 16,
      run: (job) => this.check(job.payload.id),
    });
  }

  async start(): Promise<void> {
    for (const row of listUrlTrackers(this.ctx.db)) this.changed(row.id);
  }

  async stop(): Promise<void> {}

  changed(id: number): void {
    const row = findUrlTracker(this.ctx.db, id);
    if (!row) return this.removed(id);
    this.scheduler.upsert({
      id: `url:${id}`,
      kind: 'url-check',
      intervalMs: row.interval * 1000,
      payload: { id },
    });
  }

  removed(id: number): void {
    this.scheduler.remove(`url:${id}`);
  }

  /** Checks one tracker now and stores the result. */
  async check(id: number): Promise<void> {
    const row = findUrlTracker(this.ctx.db, id);
    if (!row) return this.removed(id);
    const timeoutMs = Math.min(this.options.timeoutMs ?? 10_000, row.interval * 1000);
    const result = await checkUrl(row.url, row.pattern, {
      timeoutMs,
      now: () => this.ctx.clock.now(),
      policy: urlPolicyOf(this.ctx.config),
      ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
    });
    this.checks++;
    recordUrlCheck(this.ctx.db, id, result, this.ctx.clock.now());
  }
}
