/**
 * What every route declares in its `config`, and the boot-time check that it did.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { RouteErrors } from './envelopes.js';
import type { Access, Identity } from './identity.js';
import { operationIdOf } from './operation-id.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    errors?: RouteErrors;
    /** Media types the route accepts for a request body (default: application/json). */
    accepts?: readonly string[];
    /** The route takes no body: whatever is sent is never read or parsed (a readiness probe). */
    ignoresBody?: boolean;
  }
  interface FastifyRequest {
    identity: Identity | null;
  }
  interface FastifyInstance {
    /** Every guarded route as declared (the contract test compares it with the spec's list). */
    declaredRoutes: DeclaredRoute[];
  }
}

export interface DeclaredRoute {
  method: string;
  url: string;
  access: Access;
  errors: RouteErrors;
  /** The route's schemas as registered (params, body, response map ...), for contract checks. */
  schema: Record<string, unknown>;
  /** The route renders its own failures (an `errorHandler`: the HTML pages of /auth/*). */
  ownErrorHandler: boolean;
  /** The route has a rate limit or an admission hook (its failure family answers 429). */
  rateLimited: boolean;
}

const GUARDED_PREFIXES = ['/api/', '/auth/', '/.well-known/', '/openapi.json', '/metrics'];

/** Refuses to boot when a guarded route lacks a declared access rule or error shape. */
export function enforceRouteDeclarations(app: FastifyInstance): void {
  const declared: DeclaredRoute[] = [];
  app.decorate('declaredRoutes', declared);
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.method === 'HEAD' || !GUARDED_PREFIXES.some((p) => route.url.startsWith(p))) return;
    const config = (route.config ?? {}) as { access?: Access; errors?: RouteErrors };
    const where = `${String(route.method)} ${route.url}`;
    if (!config.access) throw new Error(`route ${where} declares no access (permission or public)`);
    if (!config.errors) throw new Error(`route ${where} declares no error shape`);
    // Every operation gets its stable id from the one rule (operation-id.ts) unless it names one.
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    if (schema.operationId === undefined && typeof route.method === 'string')
      route.schema = { ...schema, operationId: operationIdOf(route.method, route.url) };
    for (const method of [route.method].flat())
      declared.push({
        method: String(method),
        url: route.url,
        access: config.access,
        errors: config.errors,
        schema: route.schema as Record<string, unknown>,
        ownErrorHandler: route.errorHandler !== undefined,
        rateLimited: rateLimited(route.config),
      });
  });
}

interface RateLimitConfig {
  rateLimit?: unknown;
  admission?: boolean;
}

const rateLimited = (config: RateLimitConfig | undefined) =>
  config?.rateLimit !== undefined || config?.admission === true;

/** The identity of an authenticated route; the auth hook guarantees it is set. */
export function identityOf(request: { identity: Identity | null }): Identity {
  if (!request.identity) throw new Error('identityOf() used on a route without authentication');
  return request.identity;
}

export type RouteHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (err?: Error) => void,
) => void;

/**
 * Puts `hook` first among a route's own onRequest hooks (in a new array: route options may be
 * shared, e.g. with the HEAD route Fastify derives from a GET). Route-level hooks run after the
 * global ones; platform hooks installed from `onRoute` with this helper run in the reverse order
 * of their installation (the last installed runs first), before the route's own hooks.
 */
export function prependOnRequest(route: RouteOptions, hook: RouteHook): void {
  const existing = route.onRequest;
  route.onRequest = [
    hook,
    ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
  ];
}
