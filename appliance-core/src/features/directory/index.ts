/**
 * Directory (LDAP/Active Directory) sign-in (spec part 1, Directory (LDAP) integration):
 * the service, its routes, and the hook that plugs search-then-bind into `features/auth` login().
 */
import type { CoreContext } from '../../platform/context.js';
import type { App } from '../../platform/http/http-server.js';
import { useDirectorySignIn } from '../auth/index.js';
import type { TokenService } from '../tokens/index.js';
import { directoryRoutes } from './directory.routes.js';
import { DirectoryService } from './directory.service.js';

export { DirectoryService } from './directory.service.js';
export * as directoryRules from './directory.rules.js';

export function createDirectory(ctx: CoreContext, deps: { tokens: TokenService }) {
  const directory = new DirectoryService(ctx, deps.tokens);
  useDirectorySignIn(ctx, {
    enabled: () => directory.enabled(),
    signIn: (login, password, existing, actor) =>
      directory.signIn(login, password, existing, actor),
  });
  return {
    service: directory,
    register: (app: App) => directoryRoutes(app, ctx, { directory }),
  };
}
