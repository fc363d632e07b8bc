import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import type { RetentionRegistry } from '../../platform/db/retention.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { RetentionPolicyAnswer, SetRetentionAnswer, SetRetentionBody } from './retention.schema.js';

export interface RetentionDeps {
  retention: RetentionRegistry;
}

const errors = (internal: string): RouteErrors => ({
  validation: 'legacy',
  failure: 'legacy',
  internal,
});

export async function retentionRoutes(
  app: App,
  ctx: CoreContext,
  deps: RetentionDeps,
): Promise<void> {
  const { retention } = deps;
  const access = allOf('system');

  // spec: part3 > Data maintenance > GET /api/getRetentionPolicy
  defineRoute(app, {
    method: 'GET',
    url: '/api/getRetentionPolicy',
    access,
    errors: errors('Failed to read the retention policy'),
    tags: ['maintenance'],
    summary: 'Every table that grows, with its retention in days and its size in bytes',
    description:
      'One row per table (or part of one) whose data the scheduled pruner removes past its retention. Throughput history keeps a fixed twelve weeks and has no row.',
    response: { 200: RetentionPolicyAnswer },
    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      message: retention.list(),
    }),
  });

  // spec: part3 > Data maintenance > POST /api/setRetentionPolicy
  defineRoute(app, {
    method: 'POST',
    url: '/api/setRetentionPolicy',
    access,
    errors: errors('Failed to save the retention policy'),
    tags: ['maintenance'],
    summary: 'Set the retention of rows by id (all or nothing)',
    description:
      'Each `id` must be a row of getRetentionPolicy (once) and each `retention` at least 1 day; when any element fails nothing is stored. The pruner applies new values at its next hourly run.',
    body: SetRetentionBody,
    response: { 200: SetRetentionAnswer },
    handler: async (request) => {
      const result = retention.set(request.body.data, ctx.clock.now());
      if (!result.ok) throw failure(422, result.message);
      recordAudit(ctx.db, ctx.clock.now(), actorOf(request), {
        action: 'retention.update',
        outcome: 'success',
        target: { type: 'retention' },
        detail: {
          rows: request.body.data.map((row) => `${row.id}:${row.retention}`),
          changed: result.changed,
        },
      });
      return {
        status: 201 as const,
        hasError: false as const,
        message: 'Retention policy saved',
      };
    },
  });
}
