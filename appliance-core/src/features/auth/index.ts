export { authRoutes, setSessionCookie } from './auth.routes.js';
export { login, type LoginOutcome } from './auth.service.js';
export { CachedIdentityResolver } from './identity.resolver.js';
