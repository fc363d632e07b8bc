export { authRoutes } from './auth.routes.js';
export { CachedIdentityResolver } from './identity.resolver.js';
