import { Type } from '@sinclair/typebox';
import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import {
  DaemonAnswer,
  DaemonCatalogueAnswer,
  DaemonConfigBody,
  DaemonIdParams,
  DaemonParams,
  DaemonStartBody,
  MessageAnswer,
  ReloadFailedAnswer,
} from './daemons.schema.js';
import type { DaemonsService } from './daemons.service.js';

export interface DaemonsDeps {
  /** Resolved when the routes are registered (the registry exists by then). */
  daemons: () => DaemonsService;
}

const errors = (internal: string): RouteErrors => ({
  validation: 'message',
  failure: 'message',
  internal,
});
const NOT_FOUND = 'Daemon not found';

export async function daemonsRoutes(app: App, ctx: CoreContext, deps: DaemonsDeps): Promise<void> {
  const access = allOf('sa');
  const find = (identifier: string) => {
    const row = deps.daemons().find(identifier);
    if (!row) throw failure(404, NOT_FOUND);
    return row;
  };

  // designed (docs/spec-decisions.md): the list of daemons with the variables each accepts
  defineRoute(app, {
    method: 'GET',
    url: '/api/daemons',
    access,
    errors: errors('Failed to read the daemons'),
    tags: ['maintenance'],
    summary: 'Every daemon with its start_auto flag, variables, and the variables it accepts',
    description:
      'Not in the specification: one request for what `GET /api/daemon/{identifier}` gives per daemon, plus `vars`, the catalogue of variables each daemon accepts (name, secret, description). Secret values read as the sentinel `{"__encrypted__": true}`.',
    response: { 200: DaemonCatalogueAnswer },
    handler: async () => ({ daemons: deps.daemons().catalogue() }),
  });

  // spec: part3 > Data maintenance > GET /api/daemon/{identifier}
  defineRoute(app, {
    method: 'GET',
    url: '/api/daemon/:identifier',
    access,
    errors: errors('Failed to read the daemon'),
    tags: ['maintenance'],
    summary: 'A daemon by numeric id or name, its start_auto flag and variables',
    description: 'Secret variables read as the sentinel `{"__encrypted__": true}`.',
    params: DaemonParams,
    response: { 200: DaemonAnswer, 404: MessageAnswer },
    handler: async (request) => deps.daemons().view(find(request.params.identifier)),
  });

  // spec: part3 > Data maintenance > POST /api/daemon/{id}/config
  defineRoute(app, {
    method: 'POST',
    url: '/api/daemon/:id/config',
    access,
    errors: errors('Failed to save the daemon configuration'),
    tags: ['maintenance'],
    summary: "Replace a daemon's variables and reload it",
    description:
      'A complete replacement: a variable left out is removed; a secret sent as the sentinel or empty keeps its stored value. A running daemon is restarted to apply it; `reload_failed: true` says it was saved but not reloaded.',
    params: DaemonIdParams,
    body: DaemonConfigBody,
    // ReloadFailedAnswer first: the serializer takes the first branch that fits.
    response: { 200: Type.Union([ReloadFailedAnswer, MessageAnswer]), 404: MessageAnswer },
    handler: async (request) => {
      const row = find(request.params.id);
      const result = await deps.daemons().configure(row, request.body.config);
      if (!result.ok) throw failure(422, result.message);
      recordAudit(ctx.db, ctx.clock.now(), actorOf(request), {
        action: 'daemon.configure',
        outcome: 'success',
        target: { type: 'daemon', id: row.id, label: row.name },
        detail: {
          vars: request.body.config.map((v) => v.var),
          reloaded: result.reloaded,
        },
      });
      if (result.error !== undefined) {
        request.log.warn({ daemon: row.name, err: result.error }, 'daemon not reloaded');
        return {
          message: `Configuration of ${row.name} saved, but the daemon did not restart`,
          reload_failed: true as const,
        };
      }
      return {
        message: result.reloaded
          ? `Configuration of ${row.name} saved and the daemon restarted`
          : `Configuration of ${row.name} saved (the daemon is not running)`,
      };
    },
  });

  // spec: part3 > Data maintenance > POST /api/daemon/{id}/start
  defineRoute(app, {
    method: 'POST',
    url: '/api/daemon/:id/start',
    access,
    errors: errors('Failed to start the daemon'),
    tags: ['maintenance'],
    summary: 'Record whether a daemon starts with the appliance, and start it now',
    params: DaemonIdParams,
    body: DaemonStartBody,
    response: { 200: MessageAnswer, 404: MessageAnswer },
    handler: async (request) => {
      const row = find(request.params.id);
      const status = await deps.daemons().start(row, request.body.start_auto);
      recordAudit(ctx.db, ctx.clock.now(), actorOf(request), {
        action: 'daemon.start',
        outcome: status.state === 'running' ? 'success' : 'failure',
        target: { type: 'daemon', id: row.id, label: row.name },
        detail: { start_auto: request.body.start_auto },
      });
      if (status.state !== 'running') {
        request.log.error({ daemon: row.name, err: status.error }, 'daemon did not start');
        throw failure(500, `${row.name} did not start`);
      }
      return { message: `${row.name} is running` };
    },
  });
}
