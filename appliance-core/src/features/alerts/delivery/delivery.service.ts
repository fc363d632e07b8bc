/**
 * Alert delivery as the composition root builds it: the mail relay settings, the persisted
 * delivery queue (an engine: start requeues what a stop interrupted), and the relay's route.
 * The alerting feature receives `queue` (DeliveryQueue) and may hand it `currentOutlet` so that
 * queued deliveries follow an outlet's edits and stop when it is deleted.
 */
import type { CoreContext } from '../../../platform/context.js';
import type { App } from '../../../platform/http/http-server.js';
import { outletPolicy } from '../../../platform/net/outbound.js';
import { DeliveryEngine } from './delivery.engine.js';
import type { OutletTarget } from './delivery.schema.js';
import type { OutletProxy } from './outlet-http.service.js';
import type { OutletPolicy } from './outlet-url.rules.js';
import { smtpSettingsRoutes } from './smtp-settings.routes.js';
import { SmtpSettingsService } from './smtp-settings.service.js';

export interface AlertDelivery {
  policy: OutletPolicy;
  queue: DeliveryEngine;
  smtp: SmtpSettingsService;
  /** Lets the alerting feature say what an outlet is now (null: deleted). */
  followOutlets(current: (id: number) => OutletTarget | null): void;
  register(app: App): Promise<void>;
}

/** The proxy of the daemon variables `proxy_url` and `proxy_password` (null without a URL). */
export function proxyOfVars(vars: Record<string, string>): OutletProxy | null {
  if (!vars.proxy_url) return null;
  return {
    url: vars.proxy_url,
    ...(vars.proxy_password ? { password: vars.proxy_password } : {}),
  };
}

export function createAlertDelivery(
  ctx: CoreContext,
  deps: {
    /** The daemons' stored variables, secrets opened (features/maintenance), read at each start. */
    daemonVars?: (daemon: string) => Record<string, string>;
  } = {},
): AlertDelivery {
  const policy = outletPolicy(ctx.config.outletAllow ?? []);
  const smtp = new SmtpSettingsService({
    db: ctx.db,
    clock: ctx.clock,
    secrets: ctx.secrets,
    policy,
    clientName: ctx.hostname,
  });
  let current: ((id: number) => OutletTarget | null) | null = null;
  const queue = new DeliveryEngine({
    db: ctx.db,
    clock: ctx.clock,
    secrets: ctx.secrets,
    log: ctx.log,
    policy,
    relay: () => smtp.relay(),
    currentOutlet: (id) => (current ? current(id) : undefined),
    proxyOf: () => proxyOfVars(deps.daemonVars?.('alert-delivery') ?? {}),
    clientName: ctx.hostname(),
  });
  ctx.metrics.register('alert-delivery', () => {
    const c = queue.counters;
    return [
      {
        name: 'appliance_alert_deliveries_total',
        help: 'Alert deliveries by what became of them (enqueued, sent, failed, retried, rate_deferred, coalesced, suppressed).',
        type: 'counter',
        samples: [
          { labels: { event: 'enqueued' }, value: c.enqueued },
          { labels: { event: 'sent' }, value: c.sent },
          { labels: { event: 'failed' }, value: c.failed },
          { labels: { event: 'retried' }, value: c.retried },
          { labels: { event: 'rate_deferred' }, value: c.rateDeferred },
          { labels: { event: 'coalesced' }, value: c.coalesced },
          { labels: { event: 'suppressed' }, value: c.suppressed },
        ],
      },
    ];
  });
  return {
    policy,
    queue,
    smtp,
    followOutlets(fn) {
      current = fn;
    },
    register: (app) => smtpSettingsRoutes(app, ctx, { smtp }),
  };
}
