/**
 * Headers every response inherits: HSTS (the API is HTTPS only), no sniffing, no referrer, and a
 * strict Content-Security-Policy on every HTML response. API answers are never cached.
 */
import type { FastifyInstance } from 'fastify';
import { ApiFailure } from './envelopes.js';

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
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('strict-transport-security', 'max-age=31536000');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('text/html')) {
      reply.header('content-security-policy', HTML_CSP);
      reply.header('x-frame-options', 'DENY');
    }
    if (request.url.startsWith('/api/') || request.url.startsWith('/auth/')) {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    }
    return payload;
  });
}

/**
 * Content types: a request body must be one of the media types the route accepts
 * (application/json unless the route declares otherwise); anything else is refused with 415
 * before the body is read.
 */
export function installContentTypeGate(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const length = request.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return;
    const accepts = request.routeOptions.config?.accepts ?? ['application/json'];
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!accepts.includes(type)) {
      throw new ApiFailure(415, `Unsupported Media Type: this endpoint accepts ${accepts.join(', ')}.`);
    }
  });
}
