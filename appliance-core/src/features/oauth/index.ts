import type { CoreContext } from '../../platform/context.js';
import type { App } from '../../platform/http/http-server.js';
import type { TokenService } from '../tokens/index.js';
import { FormGuard } from './oauth.csrf.js';
import { oauthPageRoutes } from './oauth.pages.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import { OAuthService } from './oauth.service.js';

export { OAuthService } from './oauth.service.js';

/** The authorization server: JSON endpoints, discovery documents and the /auth browser pages. */
export async function oauthFeatureRoutes(
  app: App,
  ctx: CoreContext,
  deps: { tokens: TokenService },
): Promise<void> {
  const service = new OAuthService(ctx, deps.tokens);
  await oauthRoutes(app, ctx, { service });
  await oauthPageRoutes(app, ctx, {
    service,
    guard: new FormGuard(ctx.secrets),
    tokens: deps.tokens,
  });
}
