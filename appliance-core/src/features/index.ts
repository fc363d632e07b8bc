/**
 * The explicit list of features (no autoload): the services they share, the engines app.ts
 * starts, and their routes in registration order.
 */
import type { CoreContext } from '../platform/context.js';
import { Scheduler } from '../platform/scheduler/scheduler.js';
import type { App } from '../platform/http/http-server.js';
import type { IdentityResolver } from '../platform/http/identity.js';
import { authRoutes, CachedIdentityResolver } from './auth/index.js';
import { oauthFeatureRoutes } from './oauth/index.js';
import { TokenService, tokensRoutes } from './tokens/index.js';
import { ToolsEngine, ToolsService, toolsRoutes } from './tools/index.js';
import { userExists, usersRoutes } from './users/index.js';

export interface Engine {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Features {
  resolver: IdentityResolver;
  engines: Engine[];
  register(app: App): Promise<void>;
}

export function createFeatures(ctx: CoreContext): Features {
  const tokens = new TokenService(ctx.db, ctx.clock);
  const resolver = new CachedIdentityResolver(ctx.db, ctx.clock, tokens);
  const tools = new ToolsService(ctx);
  // One scheduler for every interval job (tools retention; later pollers and discovery).
  const scheduler = new Scheduler(ctx.clock, undefined, undefined, (err, jobs) => ctx.log.error({ err, jobs: jobs.map((j) => j.id) }, 'scheduled job failed'));
  return {
    resolver,
    engines: [
      { name: 'token-usage', start: () => tokens.start(), stop: () => tokens.stop() },
      new ToolsEngine(tools, ctx.clock, ctx.log, scheduler),
      // Last: jobs are in place before it starts, and it stops (aborting runs) before their engines.
      { name: 'scheduler', start: () => scheduler.start(), stop: () => scheduler.stop() },
    ],
    async register(app) {
      await authRoutes(app, ctx, { tokens, resolver });
      await tokensRoutes(app, ctx, { tokens, userExists: (id) => userExists(ctx.db, id) });
      await usersRoutes(app, ctx, { tokens });
      await oauthFeatureRoutes(app, ctx, { tokens });
      await toolsRoutes(app, ctx, { tools });
    },
  };
}
