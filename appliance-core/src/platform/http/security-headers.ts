/**
 * Headers every response inherits: HSTS (the API is HTTPS only), no sniffing, no referrer, and a
 * strict Content-Security-Policy on every HTML response. API answers are never cached.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { ApiFailure } from './envelopes.js';
import { prependOnRequest, type RouteHook } from './route-config.js';

export const HTML_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function installSecurityHeaders(app: FastifyInstance): void {
  // Set up front on every reply (a JSON answer ignores the CSP; an HTML one must have it), in
  // callback style: this runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers({
      'strict-transport-security': 'max-age=31536000',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'content-security-policy': HTML_CSP,
      'x-frame-options': 'DENY',
    });
    if (request.url.startsWith('/api/') || request.url.startsWith('/auth/'))
      reply.header('cache-control', 'no-store');
    done();
  });
}

/**
 * A route that takes no body never reads one: without the headers that announce a body, Fastify
 * does not choose a parser (so no media type, encoding, depth or poisoning check can fail the
 * request) and Node discards the unread bytes when the answer is sent. The raw headers are edited
 * because that is what Fastify consults; nothing after this hook needs them.
 */
const ignoreBody: RouteHook = (request, _reply, done) => {
  const headers = request.raw.headers;
  delete headers['content-type'];
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  done();
};

/**
 * Content types: a request body must be one of the media types the route accepts
 * (application/json unless the route declares otherwise); anything else is refused with 415
 * before the body is read. A route-level hook built per route (routes added after this call), so
 * its rule is known up front; installed before the auth hook, it runs right after the auth check.
 */
export function installContentTypeGate(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.ignoresBody) return prependOnRequest(route, ignoreBody);
    const accepts: readonly string[] = route.config?.accepts ?? ['application/json'];
    const refusal = `Unsupported Media Type: this endpoint accepts ${accepts.join(', ')}.`;
    const gate: RouteHook = (request, _reply, done) => {
      const length = request.headers['content-length'];
      const hasBody =
        (length !== undefined && length !== '0') ||
        request.headers['transfer-encoding'] !== undefined;
      if (!hasBody) return done();
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!accepts.includes(type)) return done(new ApiFailure(415, refusal));
      done();
    };
    prependOnRequest(route, gate);
  });
}
