export { authRoutes, setSessionCookie } from './auth.routes.js';
export {
  login,
  useDirectorySignIn,
  type DirectorySignIn,
  type LoginOutcome,
} from './auth.service.js';
export { CachedIdentityResolver } from './identity.resolver.js';
