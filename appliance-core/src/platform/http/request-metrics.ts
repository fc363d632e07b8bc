/**
 * Counts every routed request in HttpMetrics: each route gets its series when it is registered
 * and an onResponse hook bound to it, so the request path pays one closure call and a bucket
 * search, never a label lookup (see platform/metrics/metrics.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { HttpMetrics } from '../metrics/metrics.js';

type OnResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

export function installRequestMetrics(app: FastifyInstance, metrics: HttpMetrics): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const series = metrics.seriesFor(String(method), route.url);
      const hook: OnResponse = (_request, reply, done) => {
        series.observe(reply.elapsedTime / 1000, reply.statusCode);
        done();
      };
      const existing = route.onResponse;
      route.onResponse = [
        ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
        hook,
      ];
    }
  });
}
