/**
 * The auth hook and permission gate. Runs on every request: resolves the bearer token (or the
 * browser session cookie on browser-session routes) to an Identity and applies the route's
 * declared access rule. Denials are rendered in the route's declared shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiFailure, DENIED_MESSAGE, UNAUTHENTICATED_MESSAGE, type RouteErrors } from './envelopes.js';
import { permits, type IdentityResolver } from './identity.js';

export const SESSION_COOKIE = 'appliance_session';

export function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] as string) : null;
}

function unauthenticated(errors: RouteErrors | undefined): ApiFailure {
  const u = errors?.unauthenticated;
  return new ApiFailure(u?.status ?? 401, u?.message ?? UNAUTHENTICATED_MESSAGE, { family: u?.family ?? 'legacy' });
}

function denied(errors: RouteErrors | undefined): ApiFailure {
  const d = errors?.denial;
  return new ApiFailure(d?.status ?? 401, d?.message ?? DENIED_MESSAGE, { family: d?.family ?? 'legacy' });
}

export function installAuthHook(app: FastifyInstance, resolver: IdentityResolver): void {
  app.decorateRequest('identity', null);
  // Callback style on purpose: this runs on every request and resolves synchronously.
  app.addHook('onRequest', (request, reply, done) => {
    const access = request.routeOptions.config?.access;
    if (!access || access.kind === 'public') return done();
    const errors = request.routeOptions.config.errors;
    if (access.kind === 'browser-session') {
      // Browser pages decide themselves what to do without a session (redirect to sign-in).
      const cookie = request.cookies?.[SESSION_COOKIE];
      request.identity = cookie ? resolver.fromSession(cookie) : null;
      if (request.identity && !permits(request.identity, access)) return done(denied(errors));
      return done();
    }
    const token = bearerOf(request);
    const identity = token ? resolver.fromBearer(token) : null;
    if (!identity) {
      // RFC 6750 §3 and RFC 9728 §5.1: tells an OAuth client (MCP) where to find the
      // authorization server for this resource.
      const metadata = `resource_metadata="${request.protocol}://${request.host}/.well-known/oauth-protected-resource"`;
      reply.header('www-authenticate', token ? `Bearer error="invalid_token", ${metadata}` : `Bearer ${metadata}`);
      return done(unauthenticated(errors));
    }
    if (!permits(identity, access)) return done(denied(errors));
    request.identity = identity;
    done();
  });
}
