/**
 * The auth hook and permission gate. Runs on every request: resolves the bearer token (or the
 * browser session cookie on browser-session routes) to an Identity and applies the route's
 * declared access rule. Denials are rendered in the route's declared shape.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import {
  ApiFailure,
  DENIED_MESSAGE,
  UNAUTHENTICATED_MESSAGE,
  type RouteErrors,
} from './envelopes.js';
import { permits, type Access, type IdentityResolver } from './identity.js';
import { prependOnRequest, type RouteHook } from './route-config.js';

export const SESSION_COOKIE = 'appliance_session';

export function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] as string) : null;
}

function unauthenticated(errors: RouteErrors | undefined): ApiFailure {
  const u = errors?.unauthenticated;
  return new ApiFailure(u?.status ?? 401, u?.message ?? UNAUTHENTICATED_MESSAGE, {
    family: u?.family ?? 'legacy',
  });
}

function denied(errors: RouteErrors | undefined): ApiFailure {
  const d = errors?.denial;
  return new ApiFailure(d?.status ?? 401, d?.message ?? DENIED_MESSAGE, {
    family: d?.family ?? 'legacy',
  });
}

/** The route's auth check, built once per route from its declared access rule and error shape. */
/** The origin of absolute URLs in headers: the configured public origin, else the Host as received. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function authHookFor(
  resolver: IdentityResolver,
  access: Access,
  errors: RouteErrors | undefined,
  publicOrigin: string | undefined,
): RouteHook {
  if (access.kind === 'browser-session') {
    // Browser pages decide themselves what to do without a session (redirect to sign-in).
    return (request, _reply, done) => {
      const cookie = request.cookies?.[SESSION_COOKIE];
      request.identity = cookie ? resolver.fromSession(cookie) : null;
      if (request.identity && !permits(request.identity, access)) return done(denied(errors));
      done();
    };
  }
  return (request, reply, done) => {
    const token = bearerOf(request);
    const identity = token ? resolver.fromBearer(token) : null;
    // A signed URL (token-or-signature) stands in for a bearer: the route runs without identity.
    if (!identity && access.kind === 'token-or-signature' && access.signature?.(request)) {
      request.identity = null;
      return done();
    }
    if (!identity) {
      // RFC 6750 §3 and RFC 9728 §5.1: tells an OAuth client (MCP) where to find the
      // authorization server for this resource.
      // APPLIANCE_PUBLIC_ORIGIN wins; without it the Host header is trusted (docs/features/identity.md),
      // and a Host that is not a host[:port] gets no metadata link rather than an injected one.
      const origin =
        publicOrigin ??
        (HOST_HEADER.test(request.host) ? `${request.protocol}://${request.host}` : null);
      const metadata = origin
        ? `resource_metadata="${origin}/.well-known/oauth-protected-resource"`
        : null;
      const params = [token ? 'error="invalid_token"' : null, metadata].filter(Boolean);
      reply.header(
        'www-authenticate',
        params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer',
      );
      return done(unauthenticated(errors));
    }
    if (!permits(identity, access)) return done(denied(errors));
    request.identity = identity;
    done();
  };
}

/**
 * Installs the auth check as a route-level onRequest hook on every route that declares a
 * non-public access rule (routes added after this call). Built per route, the hook knows its
 * rule and error shape up front: nothing is looked up per request, and public routes run no
 * auth code at all. It runs after the global onRequest hooks (security headers, cookies) and
 * before the route's own hooks (rate limits), as a global hook did. Install it after the
 * content-type gate: both prepend, so the auth check runs first.
 */
export function installAuthHook(
  app: FastifyInstance,
  resolver: IdentityResolver,
  publicOrigin?: string,
): void {
  app.decorateRequest('identity', null);
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = route.config;
    const access = config?.access;
    if (!access || access.kind === 'public') return;
    prependOnRequest(route, authHookFor(resolver, access, config.errors, publicOrigin));
  });
}
