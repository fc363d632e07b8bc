/**
 * The explicit list of features (no autoload): the services they share, the engines app.ts
 * starts, and their routes in registration order.
 */
import type { CoreContext } from '../platform/context.js';
import type { App } from '../platform/http/http-server.js';
import type { IdentityResolver } from '../platform/http/identity.js';
import { authRoutes, CachedIdentityResolver } from './auth/index.js';
import { oauthFeatureRoutes } from './oauth/index.js';
import { TokenService, tokensRoutes } from './tokens/index.js';
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
  return {
    resolver,
    engines: [{ name: 'token-usage', start: () => tokens.start(), stop: () => tokens.stop() }],
    async register(app) {
      await authRoutes(app, ctx, { tokens, resolver });
      await tokensRoutes(app, ctx, { tokens, userExists: (id) => userExists(ctx.db, id) });
      await usersRoutes(app, ctx, { tokens });
      await oauthFeatureRoutes(app, ctx, { tokens });
    },
  };
}
