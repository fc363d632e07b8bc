/**
 * The route-declaration guard (enforceRouteDeclarations) on a bare Fastify instance: every route
 * under a guarded prefix must declare access and an error shape or the server refuses it; routes
 * elsewhere and the HEAD routes Fastify derives are not recorded; each recorded route gets its
 * stable operationId unless it names one, and says whether it renders its own errors and whether
 * it answers 429 (a rate limit or an admission hook). Also identityOf and prependOnRequest.
 */
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { RouteErrors } from './envelopes.js';
import { allOf, type Identity } from './identity.js';
import { operationIdOf } from './operation-id.js';
import { enforceRouteDeclarations, identityOf, prependOnRequest } from './route-config.js';

const ERRORS = { validation: 'errors', failure: 'error' } as RouteErrors;
const ACCESS = allOf('things');
const ok = async () => ({ ok: true });

function guarded(): FastifyInstance {
  const app = Fastify();
  enforceRouteDeclarations(app);
  return app;
}

describe('enforceRouteDeclarations', () => {
  it.each(['/api/x', '/auth/x', '/.well-known/x', '/openapi.json', '/metrics'])(
    'refuses %s without access, then without an error shape',
    (url) => {
      const app = guarded();
      expect(() => app.route({ method: 'GET', url, handler: ok, config: {} })).toThrow(
        `route GET ${url} declares no access (permission or public)`,
      );
      expect(() =>
        app.route({ method: 'POST', url, handler: ok, config: { access: ACCESS } }),
      ).toThrow(`route POST ${url} declares no error shape`);
      expect(app.declaredRoutes).toEqual([]);
    },
  );

  it('records guarded routes only, without the derived HEAD routes', async () => {
    const app = guarded();
    app.route({ method: 'GET', url: '/health', handler: ok });
    app.route({
      method: 'GET',
      url: '/api/things',
      handler: ok,
      config: { access: ACCESS, errors: ERRORS },
    });
    await app.ready();
    expect(app.declaredRoutes.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/things']);
    expect(app.declaredRoutes[0]).toMatchObject({ access: ACCESS, errors: ERRORS });
    await app.close();
  });

  it('gives each route its operationId from the one rule unless it names one', () => {
    const app = guarded();
    app.route({
      method: 'GET',
      url: '/api/things/:id',
      handler: ok,
      config: { access: ACCESS, errors: ERRORS },
    });
    app.route({
      method: 'POST',
      url: '/api/things',
      handler: ok,
      config: { access: ACCESS, errors: ERRORS },
      schema: { operationId: 'makeThing', summary: 'kept' },
    });
    const [get, post] = app.declaredRoutes;
    expect(get?.schema.operationId).toBe(operationIdOf('GET', '/api/things/:id'));
    expect(post?.schema).toEqual({ operationId: 'makeThing', summary: 'kept' });
  });

  it('says whether a route renders its own errors and whether it answers 429', () => {
    const app = guarded();
    const base = { handler: ok, config: { access: ACCESS, errors: ERRORS } };
    app.route({ ...base, method: 'GET', url: '/api/plain' });
    app.route({ ...base, method: 'GET', url: '/api/page', errorHandler: () => undefined });
    app.route({
      ...base,
      method: 'GET',
      url: '/api/limited',
      config: { ...base.config, rateLimit: { max: 1, timeWindow: 60_000 } } as never,
    });
    app.route({
      ...base,
      method: 'GET',
      url: '/api/admitted',
      config: { ...base.config, admission: true } as never,
    });
    expect(app.declaredRoutes.map((r) => [r.url, r.ownErrorHandler, r.rateLimited])).toEqual([
      ['/api/plain', false, false],
      ['/api/page', true, false],
      ['/api/limited', false, true],
      ['/api/admitted', false, true],
    ]);
  });

  it('records a route declared for several methods once per method', () => {
    const app = guarded();
    app.route({
      method: ['GET', 'POST'],
      url: '/api/both',
      handler: ok,
      config: { access: ACCESS, errors: ERRORS },
    });
    expect(app.declaredRoutes.map((r) => r.method)).toEqual(['GET', 'POST']);
  });
});

describe('identityOf and prependOnRequest', () => {
  it('answers the identity the auth hook set, and refuses a request without one', () => {
    const identity = { user: { id: 1 } } as unknown as Identity;
    expect(identityOf({ identity })).toBe(identity);
    expect(() => identityOf({ identity: null })).toThrow(
      'identityOf() used on a route without authentication',
    );
  });

  it('puts the hook first, in a new array, whatever the route had', () => {
    const hook = () => undefined;
    const own = () => undefined;
    const none = { onRequest: undefined } as unknown as RouteOptions;
    prependOnRequest(none, hook);
    expect(none.onRequest).toEqual([hook]);
    const single = { onRequest: own } as unknown as RouteOptions;
    prependOnRequest(single, hook);
    expect(single.onRequest).toEqual([hook, own]);
    const list = [own];
    const many = { onRequest: list } as unknown as RouteOptions;
    prependOnRequest(many, hook);
    expect(many.onRequest).toEqual([hook, own]);
    expect(list).toEqual([own]);
  });
});
