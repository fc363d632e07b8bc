/**
 * `GET /metrics` (designed; permission `system`): the appliance's self-metrics in the Prometheus
 * text exposition format, for a scraper with a personal access token (`bearer_token_file`).
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../http/define-route.js';
import type { App } from '../http/http-server.js';
import { allOf } from '../http/identity.js';
import type { MetricsRegistry } from './metrics.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export async function metricsRoutes(app: App, deps: { metrics: MetricsRegistry }): Promise<void> {
  defineRoute(app, {
    method: 'GET',
    url: '/metrics',
    access: allOf('system'),
    errors: 'message',
    tags: ['system'],
    summary: 'Self-metrics in the Prometheus text format',
    description:
      'Storage writer counters per producer, scheduler lateness and overruns, poller counters, HTTP requests and durations by route, process memory, CPU and event-loop delay. Text exposition format 0.0.4.',
    // text/plain for the metrics only: the failures (401, 415 ...) answer JSON like every route.
    response: {
      200: Type.Unsafe<string>({
        description: 'Prometheus text exposition format 0.0.4',
        content: {
          'text/plain': { schema: Type.String({ description: 'text exposition format 0.0.4' }) },
        },
      }),
    },
    handler: async (_request, reply) => {
      reply.header('content-type', METRICS_CONTENT_TYPE);
      reply.header('cache-control', 'no-store');
      return deps.metrics.render();
    },
  });
}
