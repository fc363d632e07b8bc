import { actorOf, recordAudit, type AuditOutcome } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { StatusCodeBody } from '../../platform/http/schemas.js';
import { InstallAnswer, StartAnswer, StopAnswer, UpgraderStatus } from './upgrader.schema.js';
import type { UpgraderService } from './upgrader.service.js';

const TAGS = ['upgrader'];

export interface UpgraderDeps {
  upgrader: UpgraderService;
}

const errors = (internal: string): RouteErrors => ({
  validation: 'statusCode',
  failure: 'statusCode',
  internal,
});

export async function upgraderRoutes(
  app: App,
  ctx: CoreContext,
  deps: UpgraderDeps,
): Promise<void> {
  const { upgrader } = deps;
  const access = allOf('sa');
  /** Runs an action and audits it (never with the token: only the outcome and the status). */
  const audited = async <T>(
    request: Parameters<typeof actorOf>[0],
    action: string,
    work: () => Promise<T>,
  ): Promise<T> => {
    const record = (outcome: AuditOutcome, detail: Record<string, string | number>) =>
      recordAudit(ctx.db, ctx.clock.now(), actorOf(request), {
        action,
        outcome,
        target: { type: 'upgrader', id: null, label: 'netmon-appliance-upgrader' },
        detail,
      });
    try {
      const result = await work();
      record('success', {});
      return result;
    } catch (err) {
      record(
        'failure',
        err instanceof ApiFailure ? { status: err.status, message: err.message } : {},
      );
      throw err;
    }
  };
  const publicHost = (() => {
    if (!ctx.config.publicOrigin) return null;
    try {
      return new URL(ctx.config.publicOrigin).hostname;
    } catch {
      return null;
    }
  })();

  // spec: part1 > Operating-system upgrade bootstrap > GET /api/osUpgrade/info
  defineRoute(app, {
    method: 'GET',
    url: '/api/osUpgrade/info',
    access,
    errors: errors('Failed to read the upgrader status'),
    tags: TAGS,
    summary: 'The upgrader status: host codename, appliance version, upgrader unit and package',
    description:
      'database_clusters is always empty (SQLite). On a host without the root helper (a laptop, CI) upgrader_active and upgrader_enabled are `unavailable`.',
    response: { 200: UpgraderStatus },
    handler: async () => upgrader.info(),
  });

  // spec: part1 > Operating-system upgrade bootstrap > POST /api/osUpgrade/install
  defineRoute(app, {
    method: 'POST',
    url: '/api/osUpgrade/install',
    access,
    errors: errors('Installing the upgrader failed'),
    tags: TAGS,
    summary: 'Installs the bundled upgrader package (idempotent)',
    response: { 200: InstallAnswer, 404: StatusCodeBody },
    handler: async (request) => audited(request, 'upgrader.install', () => upgrader.install()),
  });

  // spec: part1 > Operating-system upgrade bootstrap > POST /api/osUpgrade/start
  defineRoute(app, {
    method: 'POST',
    url: '/api/osUpgrade/start',
    access,
    errors: errors('The upgrader service failed to start'),
    tags: TAGS,
    summary:
      'Starts the upgrader and returns its URL and one-time token (a workflow that reboots the appliance)',
    description:
      'The token is returned once and never stored by the appliance; a fresh one comes from stopping and starting again.',
    response: { 200: StartAnswer },
    handler: async (request, reply) => {
      const answer = await audited(request, 'upgrader.start', () =>
        upgrader.start(publicHost ?? request.hostname, ctx.hostname()),
      );
      void reply.header('cache-control', 'no-store');
      return answer;
    },
  });

  // spec: part1 > Operating-system upgrade bootstrap > POST /api/osUpgrade/stop
  defineRoute(app, {
    method: 'POST',
    url: '/api/osUpgrade/stop',
    access,
    errors: errors('The upgrader service failed to stop'),
    tags: TAGS,
    summary: 'Stops the upgrader (idempotent); its current token is invalidated',
    response: { 200: StopAnswer },
    handler: async (request) => audited(request, 'upgrader.stop', () => upgrader.stop()),
  });
}
