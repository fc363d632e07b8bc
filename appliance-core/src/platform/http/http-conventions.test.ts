/**
 * The HTTP conventions every route inherits, exercised on a server built by createHttpServer
 * with test routes: failure families, the permission gate, 415, prototype poisoning, 429 with
 * Retry-After and shared groups, security headers, forwarded headers, boot-time declarations.
 */
import { Type } from '@sinclair/typebox';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { failure, oauthFailure, type RouteErrors } from './envelopes.js';
import { createHttpServer, type App } from './http-server.js';
import {
  allOf,
  anyOf,
  authenticated,
  publicAccess,
  type Identity,
  type IdentityResolver,
} from './identity.js';
import { PER_MINUTE } from './rate-limit.js';
import { identityOf } from './route-config.js';

const silent = pino({ level: 'silent' });

function identity(permissions: string[], tagIds: number[] | null = null): Identity {
  return {
    user: {
      id: 7,
      username: 'u',
      email: 'u@example.test',
      first_name: '',
      last_name: '',
      auth_source: 'local',
      created_at: 0,
      updated_at: 0,
    },
    tokenId: 1,
    sessionId: null,
    scopes: [],
    permissions: new Set(permissions),
    tagIds,
    tagSlugs: [],
  };
}

const resolver: IdentityResolver = {
  fromBearer: (token) => {
    if (token === 'sa') return identity(['sa']);
    if (token === 'devices') return identity(['devices']);
    if (token === 'both') return identity(['devices', 'write_devices']);
    if (token === 'none') return identity([]);
    return null;
  },
  fromSession: () => null,
};

/** A clock that moves only when the test moves it. */
class StoppedClock {
  constructor(public ms = 1_700_000_000_000) {}
  now(): number {
    return this.ms;
  }
}

async function server(trustedProxies: string[] = [], clock?: StoppedClock): Promise<App> {
  const app = await createHttpServer({
    logger: silent,
    tls: null,
    trustedProxies,
    resolver,
    version: 'test',
    ...(clock ? { clock } : {}),
  });
  const families: Record<string, RouteErrors> = {
    legacy: { validation: 'legacy', failure: 'legacy' },
    errors: { validation: 'errors', failure: 'error', internal: 'Failed to do the thing' },
    messageErrors: { validation: 'messageErrors', failure: 'message' },
    oauth: { validation: 'oauth', failure: 'oauth' },
    statusMessage: { validation: 'statusMessage', validationStatus: 400, failure: 'statusMessage' },
  };
  const Body = Type.Object({
    name: Type.String({ maxLength: 5 }),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
  });
  for (const [name, errors] of Object.entries(families)) {
    app.post(
      `/api/${name}`,
      { config: { access: publicAccess, errors }, schema: { body: Body } },
      async (request) => {
        const body = request.body as { name: string };
        if (body.name === 'fail') throw failure(404, 'Thing not found');
        if (body.name === 'oauth') throw oauthFailure(400, 'invalid_grant', 'bad code');
        if (body.name === 'boom') throw new Error('secret internals at /srv/db password=hunter2');
        return { ok: true, got: request.body };
      },
    );
  }
  app.get(
    '/api/all-of',
    { config: { access: allOf('devices', 'write_devices'), errors: families.legacy! } },
    async () => ({ ok: true }),
  );
  app.get(
    '/api/any-of',
    { config: { access: anyOf('devices', 'overwatch'), errors: families.legacy! } },
    async () => ({ ok: true }),
  );
  app.get(
    '/api/forbidden-403',
    {
      config: {
        access: allOf('users'),
        errors: {
          validation: 'errors',
          failure: 'error',
          denial: { status: 403, family: 'error', message: 'Forbidden' },
        },
      },
    },
    async () => ({ ok: true }),
  );
  app.get(
    '/api/whoami',
    { config: { access: authenticated, errors: families.legacy! } },
    async (request) => ({ id: identityOf(request).user.id, ip: request.ip }),
  );
  app.get(
    '/api/ip',
    { config: { access: publicAccess, errors: families.legacy! } },
    async (request) => ({ ip: request.ip }),
  );
  app.get(
    '/api/limited',
    {
      config: {
        access: publicAccess,
        errors: families.legacy!,
        rateLimit: { max: 3, timeWindow: PER_MINUTE },
      },
    },
    async () => ({ ok: true }),
  );
  for (const n of [1, 2]) {
    app.post(
      `/api/group/${n}`,
      {
        config: {
          access: publicAccess,
          errors: families.oauth!,
          rateLimit: { max: 4, timeWindow: PER_MINUTE, groupId: 'g' },
        },
      },
      async () => ({ ok: n }),
    );
  }
  app.get(
    '/auth/page',
    { config: { access: publicAccess, errors: families.messageErrors! } },
    async (_request, reply) => reply.type('text/html').send('<p>hi</p>'),
  );
  await app.ready();
  return app;
}

const post = (app: App, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('failure families', () => {
  it('legacy: HTTP 200 {status:false, hasError:true, message} for validation and failures', async () => {
    const app = await server();
    const invalid = await post(app, '/api/legacy', { name: 'toolong' });
    expect(invalid.statusCode).toBe(200);
    expect(invalid.json()).toEqual({
      status: false,
      hasError: true,
      message: 'The name field must not be greater than 5 characters.',
    });
    const missing = await post(app, '/api/legacy', {});
    expect(missing.json()).toEqual({
      status: false,
      hasError: true,
      message: 'The name field is required.',
    });
    const notFound = await post(app, '/api/legacy', { name: 'fail' });
    expect([notFound.statusCode, notFound.json()]).toEqual([
      200,
      { status: false, hasError: true, message: 'Thing not found' },
    ]);
  });

  it('errors: 400 {errors:{field:[...]}} for validation, {error} with the failure status', async () => {
    const app = await server();
    const invalid = await post(app, '/api/errors', { name: 'a', count: 0 });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ errors: { count: ['The count field must be at least 1.'] } });
    const notFound = await post(app, '/api/errors', { name: 'fail' });
    expect([notFound.statusCode, notFound.json()]).toEqual([404, { error: 'Thing not found' }]);
  });

  it('messageErrors: 422 {message, errors}', async () => {
    const app = await server();
    const res = await post(app, '/api/messageErrors', { name: 5 });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      message: 'The name field must be a string.',
      errors: { name: ['The name field must be a string.'] },
    });
  });

  it('oauth: {error, error_description}', async () => {
    const app = await server();
    const invalid = await post(app, '/api/oauth', {});
    expect([invalid.statusCode, invalid.json()]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'The name field is required.' },
    ]);
    const grant = await post(app, '/api/oauth', { name: 'oauth' });
    expect([grant.statusCode, grant.json()]).toEqual([
      400,
      { error: 'invalid_grant', error_description: 'bad code' },
    ]);
  });

  it('statusMessage with a declared validation status', async () => {
    const app = await server();
    const res = await post(app, '/api/statusMessage', {});
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { status: false, message: 'The name field is required.' },
    ]);
  });

  it('unexpected errors answer the route internal message with no stack, path or secret', async () => {
    const app = await server();
    const res = await post(app, '/api/errors', { name: 'boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Failed to do the thing' });
    expect(res.body).not.toMatch(/hunter2|\/srv|at .*\.js/);
    const legacy = await post(app, '/api/legacy', { name: 'boom' });
    expect(legacy.json()).toEqual({ status: false, hasError: true, message: 'Server Error' });
  });
});

describe('body parsing', () => {
  it('refuses other media types with 415 before reading the body', async () => {
    const app = await server();
    const res = await app.inject({
      method: 'POST',
      url: '/api/errors',
      payload: 'name=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toMatch(/Unsupported Media Type/);
    const text = await app.inject({
      method: 'POST',
      url: '/api/legacy',
      payload: 'hi',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
  });

  it('checks authentication before the media type on an authenticated route', async () => {
    const app = await server();
    const body = { payload: 'hi', headers: { 'content-type': 'text/plain' } };
    const anonymous = await app.inject({ method: 'GET', url: '/api/whoami', ...body });
    expect(anonymous.statusCode).toBe(401);
    const signedIn = await app.inject({
      method: 'GET',
      url: '/api/whoami',
      payload: 'hi',
      headers: { 'content-type': 'text/plain', authorization: 'Bearer sa' },
    });
    expect(signedIn.statusCode).toBe(415);
  });

  it('refuses prototype poisoning and malformed JSON in the validation family', async () => {
    const app = await server();
    const proto = await post(app, '/api/errors', '{"name":"a","__proto__":{"admin":true}}');
    expect(proto.statusCode).toBe(400);
    expect(proto.json()).toEqual({
      errors: { body: ['The request body contains a forbidden property name.'] },
    });
    const ctor = await post(app, '/api/errors', '{"name":"a","constructor":{"prototype":{"x":1}}}');
    expect(ctor.statusCode).toBe(400);
    const broken = await post(app, '/api/messageErrors', '{"name":');
    expect(broken.statusCode).toBe(422);
    expect(broken.json().message).toBe('The request body is not valid JSON.');
  });

  it('drops unknown properties instead of passing them to handlers', async () => {
    const app = await server();
    const res = await post(app, '/api/legacy', { name: 'a', isAdmin: true });
    expect(res.json()).toEqual({ ok: true, got: { name: 'a' } });
  });
});

describe('permission gate', () => {
  it('401 legacy without a valid token, pointing OAuth clients at the resource metadata', async () => {
    const app = await server();
    for (const headers of [
      {},
      { authorization: 'Bearer nope' },
      { authorization: 'Basic sa' },
    ] as Record<string, string>[]) {
      const res = await app.inject({
        method: 'GET',
        url: '/api/all-of',
        headers: { ...headers, host: 'appliance.test:8443' },
      });
      expect([res.statusCode, res.json()]).toEqual([
        401,
        { status: false, hasError: true, message: 'Unauthenticated.' },
      ]);
      const metadata =
        'resource_metadata="http://appliance.test:8443/.well-known/oauth-protected-resource"';
      const presented = String(headers.authorization ?? '').startsWith('Bearer');
      expect(res.headers['www-authenticate']).toBe(
        presented ? `Bearer error="invalid_token", ${metadata}` : `Bearer ${metadata}`,
      );
    }
  });

  it('all-of needs every slug, any-of one; sa bypasses both', async () => {
    const app = await server();
    const get = (url: string, token: string) =>
      app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect((await get('/api/all-of', 'devices')).statusCode).toBe(401);
    expect((await get('/api/all-of', 'both')).statusCode).toBe(200);
    expect((await get('/api/all-of', 'sa')).statusCode).toBe(200);
    expect((await get('/api/any-of', 'devices')).statusCode).toBe(200);
    expect((await get('/api/any-of', 'none')).statusCode).toBe(401);
    expect((await get('/api/any-of', 'sa')).statusCode).toBe(200);
    const denied = await get('/api/all-of', 'none');
    expect(denied.json()).toEqual({
      status: false,
      hasError: true,
      message: 'You do not have permission to perform this action.',
    });
  });

  it('answers the route declared denial shape (403 {error:"Forbidden"})', async () => {
    const app = await server();
    const res = await app.inject({
      method: 'GET',
      url: '/api/forbidden-403',
      headers: { authorization: 'Bearer devices' },
    });
    expect([res.statusCode, res.json()]).toEqual([403, { error: 'Forbidden' }]);
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After in the route family once the limit is reached', async () => {
    const clock = new StoppedClock();
    const app = await server([], clock);
    const get = () => app.inject({ method: 'GET', url: '/api/limited' });
    for (let i = 1; i <= 3; i++) expect((await get()).statusCode, `request ${i}`).toBe(200);
    const res = await get();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toEqual({
      status: false,
      hasError: true,
      message: 'Too Many Attempts. Retry after 60 seconds.',
    });
    // Retry-After counts down on the appliance's clock; the window ends one minute after its
    // first request, to the millisecond, with a fresh allowance of three.
    clock.ms += 45_000;
    expect((await get()).headers['retry-after']).toBe('15');
    clock.ms += 14_999;
    expect((await get()).statusCode).toBe(429);
    clock.ms += 1;
    for (let i = 1; i <= 3; i++) expect((await get()).statusCode, `request ${i} again`).toBe(200);
    expect((await get()).statusCode).toBe(429);
  });

  it('routes of one group share one bucket per client address', async () => {
    const clock = new StoppedClock();
    const app = await server([], clock);
    for (const n of [1, 2, 1, 2])
      expect((await post(app, `/api/group/${n}`, {})).statusCode).toBe(200);
    const res = await post(app, '/api/group/1', {});
    expect(res.statusCode).toBe(429);
    expect(res.json().error).toBe('temporarily_unavailable');
    const other = await post(app, '/api/group/2', {}, {});
    expect(other.statusCode).toBe(429);
    // Another route without a group keeps its own bucket.
    expect((await app.inject({ method: 'GET', url: '/api/limited' })).statusCode).toBe(200);
    clock.ms += PER_MINUTE;
    expect((await post(app, '/api/group/2', {})).statusCode).toBe(200);
  });
});

describe('headers', () => {
  it('sends HSTS and nosniff everywhere and a strict CSP on HTML', async () => {
    const app = await server();
    const json = await app.inject({ method: 'GET', url: '/api/ip' });
    expect(json.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(json.headers['x-content-type-options']).toBe('nosniff');
    expect(json.headers['cache-control']).toBe('no-store');
    const html = await app.inject({ method: 'GET', url: '/auth/page' });
    expect(html.headers['content-security-policy']).toContain("default-src 'none'");
    expect(html.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('ignores X-Forwarded-For unless the proxy is trusted', async () => {
    const untrusted = await server();
    const spoofed = await untrusted.inject({
      method: 'GET',
      url: '/api/ip',
      headers: { 'x-forwarded-for': '203.0.113.9' },
      remoteAddress: '127.0.0.1',
    });
    expect(spoofed.json().ip).toBe('127.0.0.1');
    const trusted = await server(['127.0.0.1']);
    const forwarded = await trusted.inject({
      method: 'GET',
      url: '/api/ip',
      headers: { 'x-forwarded-for': '203.0.113.9' },
      remoteAddress: '127.0.0.1',
    });
    expect(forwarded.json().ip).toBe('203.0.113.9');
  });
});

describe('route declarations', () => {
  it('refuses to boot with an /api route that declares no access or no error shape', async () => {
    const app = await createHttpServer({
      logger: silent,
      tls: null,
      trustedProxies: [],
      resolver,
      version: 'test',
    });
    expect(() => app.get('/api/naked', async () => ({}))).toThrow(/declares no access/);
    expect(() => app.get('/metrics', async () => 'open to anyone')).toThrow(/declares no access/);
    expect(() =>
      app.get('/api/half', { config: { access: publicAccess } }, async () => ({})),
    ).toThrow(/declares no error shape/);
  });

  it('records every guarded route for the contract test', async () => {
    const app = await server();
    expect(app.declaredRoutes.some((r) => r.method === 'GET' && r.url === '/api/all-of')).toBe(
      true,
    );
  });
});
