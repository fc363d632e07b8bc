/**
 * Input handling at the HTTP edge (issue 11, "Input handling"), against a started appliance:
 * a route that takes no body never parses one, over-long path parameters are the route's own
 * validation failure after the auth check, unsupported methods answer 405 with `Allow`, and the
 * operator's OAuth client administration does not share the public OAuth bucket.
 */
import { Readable } from 'node:stream';
import { request as undiciRequest, Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../harness/appliance.js';

let h: Harness;
let admin: string;
const agent = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  h = await startAppliance();
  admin = await h.login();
});
afterAll(async () => {
  await agent.close();
  await h.close();
});

/** A request with a raw byte body (the harness sends text only). */
async function rawRequest(
  method: string,
  path: string,
  body: Uint8Array | string | Readable | undefined,
  headers: Record<string, string>,
) {
  const res = await undiciRequest(`${h.url}${path}`, {
    method: method as never,
    headers,
    body,
    dispatcher: agent,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

describe('POST /api/information takes no body', () => {
  const utf16 = Buffer.concat([
    Buffer.from([0xff, 0xfe]),
    Buffer.from('{"hostname": "x"}', 'utf16le'),
  ]);
  const bodies: [string, string, Uint8Array | string][] = [
    ['malformed JSON', 'application/json', '{'],
    ['a prototype-poisoning body', 'application/json', '{"__proto__": {"isAdmin": true}}'],
    ['a constructor-poisoning body', 'application/json', '{"constructor": {"prototype": {}}}'],
    ['a UTF-16 body', 'application/json; charset=utf-16', utf16],
    ['a text body', 'text/plain', 'hello'],
    ['a form body', 'application/x-www-form-urlencoded', 'a=1'],
    ['a body with a malformed media type', 'no/such type', 'x'],
    ['a JSON body nested too deep', 'application/json', '['.repeat(5000) + ']'.repeat(5000)],
  ];
  it.each(bodies)('answers 200 with the information for %s', async (_what, type, body) => {
    const res = await rawRequest('POST', '/api/information', body, { 'content-type': type });
    expect(res.status).toBe(200);
    const parsed = JSON.parse(res.text) as { status: number; data: { hostname: string } };
    expect(parsed.status).toBe(201);
    expect(typeof parsed.data.hostname).toBe('string');
  });

  it('answers 200 for a chunked body without a content type', async () => {
    // A stream of unknown length is sent chunked.
    const res = await rawRequest('POST', '/api/information', Readable.from(['{', '{']), {});
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ status: 201, hasError: false });
  });
});

describe('path parameters', () => {
  const long = 'a'.repeat(150);
  const longNumber = '1'.repeat(150);

  it('checks access before the length of a parameter', async () => {
    const res = await h.request('GET', `/api/device/${longNumber}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: false, hasError: true, message: 'Unauthenticated.' });
  });

  it('answers an over-long text parameter with the route validation failure', async () => {
    const res = await h.request('POST', `/api/oauth/clients/${long}/approve`, { token: admin });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: 'The clientId field must not be greater than 64 characters.',
    });
  });

  it('answers an over-long numeric parameter with the route validation failure', async () => {
    const res = await h.request('DELETE', `/api/tokens/${longNumber}`, { token: admin });
    expect(res.status).not.toBe(414);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).not.toContain('FST_');
  });

  it('answers an over-long tool target in the tool family', async () => {
    const res = await h.request('GET', `/api/tools/whois/${'b'.repeat(1100)}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: false });
  });
});

describe('methods a path does not support', () => {
  it.each(['PUT', 'TRACE', 'DELETE', 'PATCH'])('%s /api/me answers 405 with Allow', async (m) => {
    const res = await h.request(m, '/api/me', { token: admin });
    expect(res.status).toBe(405);
    expect(res.body).toEqual({
      status: false,
      hasError: true,
      message: `The ${m} method is not supported for this route. Supported methods: GET, HEAD.`,
    });
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('answers 405 to an anonymous caller too (the method is refused before access)', async () => {
    const res = await h.request('PUT', '/api/me');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('lists every method of a path with several', async () => {
    const res = await h.request('PUT', '/api/tokens', { token: admin });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('matches parametric paths', async () => {
    const res = await h.request('PATCH', '/api/tokens/5', { token: admin });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE');
  });

  it.each(['/openapi.json', '/.well-known/oauth-authorization-server'])(
    'QUERY %s answers 405, not 422',
    async (path) => {
      const res = await h.request('QUERY', path, {
        raw: { contentType: 'application/json', data: '{}' },
      });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      const noType = await h.request('QUERY', path);
      expect(noType.status).toBe(405);
    },
  );

  it('keeps 404 for unknown paths', async () => {
    for (const method of ['GET', 'PUT', 'QUERY']) {
      const res = await h.request(method, '/api/no-such-route', { token: admin });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: false, hasError: true, message: 'Not Found' });
      expect(res.headers.allow).toBeUndefined();
    }
  });
});

describe('OAuth client administration has its own bucket', () => {
  it('answers the operator after the public bucket of the same address is spent', async () => {
    // The public group: 30 a minute per address across /api/oauth/* and /auth/token.
    let limited = false;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await h.request('POST', '/api/oauth/token/introspect', { body: {} });
      limited = res.status === 429;
    }
    expect(limited).toBe(true);
    const pending = await h.request('GET', '/api/oauth/clients/pending', { token: admin });
    expect(pending.status).toBe(200);
    const approve = await h.request('POST', '/api/oauth/clients/no-such-client/approve', {
      token: admin,
    });
    expect(approve.status).toBe(404);
    const remove = await h.request('DELETE', '/api/oauth/clients/no-such-client', {
      token: admin,
    });
    expect(remove.status).toBe(404);
  });

  it('limits the administration routes per user, 30 a minute', async () => {
    const operator = await h.userWith(['system']);
    let answered = 0;
    let limited: Awaited<ReturnType<Harness['request']>> | null = null;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await h.request('GET', '/api/oauth/clients/pending', { token: operator.token });
      if (res.status === 429) limited = res;
      else answered++;
    }
    expect(answered).toBe(30);
    expect(limited?.headers['retry-after']).toBeDefined();
    // Another user from the same address keeps their own bucket.
    const other = await h.request('GET', '/api/oauth/clients/pending', { token: admin });
    expect(other.status).toBe(200);
  });
});
