/**
 * The auth hook and permission gate on the HTTP server the features register on, with a resolver
 * the test controls: bearer parsing, the 401 for a missing or unknown token with its
 * WWW-Authenticate (RFC 6750 error, RFC 9728 metadata link from the public origin or a sane
 * Host), the denial in the route's declared family, public routes untouched, and browser-session
 * routes reading the session cookie and refusing a session that lacks the permission.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerOf, SESSION_COOKIE } from './auth-hook.js';
import { defineRoute } from './define-route.js';
import { createHttpServer, type App } from './http-server.js';
import {
  allOf,
  publicAccess,
  tokenOrSignature,
  type Identity,
  type IdentityResolver,
} from './identity.js';

const identity = (permissions: string[]): Identity => ({
  user: { id: 7 } as Identity['user'],
  tokenId: 1,
  sessionId: null,
  scopes: [],
  permissions: new Set(permissions),
  tagIds: null,
  tagSlugs: [],
});
const TOKENS: Record<string, Identity> = {
  reader: identity(['things']),
  nobody: identity([]),
};
const SESSIONS: Record<string, Identity> = { good: identity(['things']), weak: identity([]) };
const resolver: IdentityResolver = {
  fromBearer: (token) => TOKENS[token] ?? null,
  fromSession: (cookie) => SESSIONS[cookie] ?? null,
};

async function server(publicOrigin?: string): Promise<App> {
  const app = await createHttpServer({
    logger: pino({ level: 'silent' }),
    tls: null,
    trustedProxies: [],
    resolver,
    version: 'test',
    publicOrigin,
  });
  const whoAmI = async (request: { identity: Identity | null }) => ({
    user: request.identity?.user.id ?? null,
    // Every request carries `identity` (null until the hook sets it), also on public routes.
    decorated: request.identity !== undefined,
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/things',
    access: allOf('things'),
    errors: 'statusMessage',
    tags: ['t'],
    summary: 'Things',
    response: {},
    handler: whoAmI,
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/open',
    access: publicAccess,
    errors: 'statusMessage',
    tags: ['t'],
    summary: 'Open',
    response: {},
    handler: whoAmI,
  });
  defineRoute(app, {
    method: 'GET',
    url: '/auth/page',
    access: { kind: 'browser-session', anyOf: ['things'] },
    errors: 'statusMessage',
    tags: ['t'],
    summary: 'Page',
    response: {},
    handler: whoAmI,
  });
  // A signed URL: the query's `sig` must be 'good' (the route's own check, e.g. an HMAC).
  defineRoute(app, {
    method: 'GET',
    url: '/api/signed',
    access: tokenOrSignature((request) => (request.query as { sig?: string }).sig === 'good'),
    errors: {
      validation: 'statusMessage',
      failure: 'statusMessage',
      unauthenticated: {
        status: 401,
        family: 'statusMessage',
        message: 'Invalid or expired signature',
      },
    },
    tags: ['t'],
    summary: 'Signed',
    response: {},
    handler: whoAmI,
  });
  await app.ready();
  return app;
}

const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

describe('auth hook', () => {
  let app: App;
  let withOrigin: App;
  beforeAll(async () => {
    app = await server();
    withOrigin = await server('https://appliance.example.test');
  });
  afterAll(async () => {
    await app?.close();
    await withOrigin?.close();
  });

  const get = (a: App, url: string, headers: Record<string, string> = {}) =>
    a.inject({ method: 'GET', url, headers });

  it('token-or-signature: any bearer, or a signature the route accepts (no identity); else 401 in the route family', async () => {
    const bearer = await get(app, '/api/signed', { authorization: 'Bearer nobody' });
    expect([bearer.statusCode, bearer.json()]).toEqual([200, { user: 7, decorated: true }]);
    const signedUrl = await get(app, '/api/signed?sig=good');
    expect([signedUrl.statusCode, signedUrl.json()]).toEqual([
      200,
      { user: null, decorated: true },
    ]);
    const refused = { status: false, message: 'Invalid or expired signature' };
    const bad = await get(app, '/api/signed?sig=bad');
    expect([bad.statusCode, bad.json()]).toEqual([401, refused]);
    const none = await get(app, '/api/signed');
    expect([none.statusCode, none.json()]).toEqual([401, refused]);
    // An unknown bearer with a good signature: the signature stands in.
    const both = await get(app, '/api/signed?sig=good', { authorization: 'Bearer stolen' });
    expect(both.statusCode).toBe(200);
  });

  it('reads a bearer token in any case, with surrounding spaces, and nothing else', () => {
    const of = (authorization?: string) =>
      bearerOf({ headers: authorization === undefined ? {} : { authorization } } as never);
    expect(of()).toBeNull();
    expect(of('Bearer abc')).toBe('abc');
    expect(of('bearer   abc  ')).toBe('abc');
    expect(of('Basic abc')).toBeNull();
    expect(of('Bearer a b')).toBeNull();
    expect(of('Bearer')).toBeNull();
    expect(of('xBearer abc')).toBeNull();
  });

  it('lets a token with the permission through, with its identity on the request', async () => {
    const res = await get(app, '/api/things', { authorization: 'Bearer reader' });
    expect([res.statusCode, res.json()]).toEqual([200, { user: 7, decorated: true }]);
  });

  it('answers 401 without a token: Bearer with the metadata link of the Host, no error', async () => {
    const res = await get(app, '/api/things', { host: 'box.local:8443' });
    expect([res.statusCode, res.json()]).toEqual([401, UNAUTHENTICATED]);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="http://box.local:8443/.well-known/oauth-protected-resource"',
    );
  });

  it('answers 401 for an unknown token with error="invalid_token"; the public origin wins', async () => {
    const res = await get(withOrigin, '/api/things', {
      authorization: 'Bearer stolen',
      host: 'box.local',
    });
    expect([res.statusCode, res.json()]).toEqual([401, UNAUTHENTICATED]);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", resource_metadata="https://appliance.example.test/.well-known/oauth-protected-resource"',
    );
  });

  it('takes a Host without a port and an IPv6 literal', async () => {
    const link = (origin: string) =>
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"`;
    expect((await get(app, '/api/things', { host: 'box.local' })).headers['www-authenticate']).toBe(
      link('http://box.local'),
    );
    expect(
      (await get(app, '/api/things', { host: '[::1]:8443' })).headers['www-authenticate'],
    ).toBe(link('http://[::1]:8443'));
    expect((await get(app, '/api/things', { host: '[zz]' })).headers['www-authenticate']).toBe(
      'Bearer',
    );
  });

  it('never puts a Host that is not host[:port] into the header', async () => {
    const res = await get(app, '/api/things', { host: 'evil.test/x"' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    const bad = await get(app, '/api/things', { authorization: 'Bearer x', host: 'a b' });
    expect(bad.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('denies a known token without the permission in the route family, no identity leaked', async () => {
    const res = await get(app, '/api/things', { authorization: 'Bearer nobody' });
    expect([res.statusCode, res.json()]).toEqual([401, DENIED]);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('runs no auth on a public route', async () => {
    const res = await get(app, '/api/open', { authorization: 'Bearer reader' });
    expect([res.statusCode, res.json()]).toEqual([200, { user: null, decorated: true }]);
  });

  it('reads the session cookie on a browser-session route and refuses a session without the permission', async () => {
    expect(SESSION_COOKIE).toBe('appliance_session');
    const cookie = (value: string) => ({ cookie: `appliance_session=${value}` });
    expect((await get(app, '/auth/page', cookie('good'))).json()).toEqual({
      user: 7,
      decorated: true,
    });
    // Without a session the page decides itself (here: it answers without an identity).
    expect((await get(app, '/auth/page')).json()).toEqual({ user: null, decorated: true });
    expect((await get(app, '/auth/page', cookie('unknown'))).json()).toEqual({
      user: null,
      decorated: true,
    });
    // A bearer token means nothing to a browser page.
    expect((await get(app, '/auth/page', { authorization: 'Bearer reader' })).json()).toEqual({
      user: null,
      decorated: true,
    });
    const weak = await get(app, '/auth/page', cookie('weak'));
    expect([weak.statusCode, weak.json()]).toEqual([401, DENIED]);
  });
});
