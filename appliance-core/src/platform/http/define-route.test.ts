/**
 * defineRoute: one declaration fills the route config (what the route-declaration guard reads)
 * and the response map (own statuses plus the platform's failure statuses in the route's
 * families); presets resolve by name; the guard still refuses a route without access; pages
 * with their own error handler keep their own map; event streams report failures in the stream.
 */
import { Type } from '@sinclair/typebox';
import type { onRequestHookHandler, RouteOptions } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { defineEventStream, defineRoute, ERROR_PRESETS } from './define-route.js';
import { ToolMissingError } from '../process/spawn.js';
import { ToolFailure } from '../process/tool-failure.js';
import { failure } from './envelopes.js';
import { createHttpServer, type App } from './http-server.js';
import { allOf, publicAccess, type Access, type IdentityResolver } from './identity.js';
import { PER_MINUTE } from './rate-limit.js';
import {
  ErrorBody,
  ErrorsBody,
  legacy200,
  LegacyFailureBody,
  MessageBody,
  StatusMessageBody,
} from './schemas.js';

const resolver: IdentityResolver = { fromBearer: () => null, fromSession: () => null };

/** A server whose routes are recorded as Fastify receives them. */
async function server(): Promise<{ app: App; routes: RouteOptions[] }> {
  const app = await createHttpServer({
    logger: pino({ level: 'silent' }),
    tls: null,
    trustedProxies: [],
    resolver,
    version: 'test',
  });
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
  return { app, routes };
}

const Thing = Type.Object({ id: Type.Integer() });
const Body = Type.Object({ name: Type.String({ maxLength: 5 }) });

describe('defineRoute', () => {
  it('fills the route config and the response map from one declaration', async () => {
    const { app, routes } = await server();
    const limit = { max: 2, timeWindow: PER_MINUTE };
    defineRoute(app, {
      method: 'POST',
      url: '/api/things',
      access: allOf('things'),
      errors: { validation: 'errors', failure: 'error', internal: 'Failed to save the thing' },
      tags: ['things'],
      summary: 'Save a thing',
      body: Body,
      response: { 201: Thing, 404: ErrorBody },
      rateLimit: limit,
      accepts: ['application/json'],
      handler: async (_request, reply) => {
        reply.code(201);
        return { id: 1 };
      },
    });
    const route = routes[0]!;
    expect(route.config).toEqual({
      access: allOf('things'),
      errors: { validation: 'errors', failure: 'error', internal: 'Failed to save the thing' },
      rateLimit: limit,
      accepts: ['application/json'],
    });
    const schema = route.schema as { response: Record<number, unknown>; security?: unknown };
    // Own statuses, then validation (400, errors), credential (401), media type (415), rate
    // limit (429) and internal failure (500), each in the route's families.
    expect(Object.keys(schema.response).map(Number).sort()).toEqual([
      201, 400, 401, 404, 415, 429, 500,
    ]);
    expect(schema.response[201]).toBe(Thing);
    expect(schema.response[400]).toEqual(Type.Union([ErrorsBody, ErrorBody]));
    expect(schema.response[429]).toEqual(ErrorBody);
    expect(schema.security).toBeUndefined();
    expect(app.declaredRoutes).toEqual([
      {
        method: 'POST',
        url: '/api/things',
        access: allOf('things'),
        errors: route.config!.errors,
        schema: route.schema,
        ownErrorHandler: false,
        rateLimited: true,
      },
    ]);
  });

  it("runs an admission hook after the route's own hooks, and its 429 joins the response map in the failure family", async () => {
    const { app, routes } = await server();
    const order: string[] = [];
    let admit = true;
    const own: onRequestHookHandler = (_request, _reply, done) => {
      order.push('own');
      done();
    };
    const admission: onRequestHookHandler = (_request, _reply, done) => {
      order.push('admission');
      done(admit ? undefined : failure(429, 'Too many runs'));
    };
    defineRoute(app, {
      method: 'GET',
      url: '/api/admitted',
      access: publicAccess,
      errors: 'statusMessage',
      tags: ['things'],
      summary: 'A limited run',
      response: { 200: Thing },
      onRequest: own,
      admission,
      handler: async () => ({ id: 3 }),
    });
    const route = routes[0]!;
    expect(route.config).toMatchObject({ admission: true });
    const schema = route.schema as { response: Record<number, unknown> };
    expect(schema.response[429]).toEqual(StatusMessageBody);
    expect(app.declaredRoutes[0]?.rateLimited).toBe(true);
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/api/admitted' })).json()).toEqual({ id: 3 });
    expect(order).toEqual(['own', 'admission']);
    admit = false;
    const refused = await app.inject({ method: 'GET', url: '/api/admitted' });
    expect([refused.statusCode, refused.json()]).toEqual([
      429,
      { status: false, message: 'Too many runs' },
    ]);
  });

  it('resolves a named preset, and documents a public route without a security requirement', async () => {
    const { app, routes } = await server();
    defineRoute(app, {
      method: 'POST',
      url: '/api/legacy-thing',
      access: publicAccess,
      errors: 'legacy',
      tags: ['things'],
      summary: 'A legacy route',
      body: Body,
      // A legacy 200 answers the success or the failure body.
      response: { 200: legacy200(Thing) },
      handler: async () => ({ id: 2 }),
    });
    const route = routes[0]!;
    expect(route.config?.errors).toBe(ERROR_PRESETS.legacy);
    const schema = route.schema as { response: Record<number, unknown>; security?: unknown };
    expect(schema.security).toEqual([]);
    // Legacy failures answer HTTP 200 (no validation status); public: no 401.
    expect(Object.keys(schema.response).map(Number).sort()).toEqual([200, 415]);
    expect(schema.response[415]).toEqual(LegacyFailureBody);
    await app.ready();
    const invalid = await app.inject({
      method: 'POST',
      url: '/api/legacy-thing',
      payload: { name: 'toolong' },
    });
    expect([invalid.statusCode, invalid.json()]).toEqual([
      200,
      {
        status: false,
        hasError: true,
        message: 'The name field must not be greater than 5 characters.',
      },
    ]);
  });

  it('leaves the guard of route-config.ts in charge: a route without access does not register', async () => {
    const { app } = await server();
    expect(() =>
      defineRoute(app, {
        method: 'GET',
        url: '/api/unguarded',
        access: undefined as unknown as Access,
        errors: 'legacy',
        tags: ['things'],
        summary: 'No access rule',
        response: { 200: Thing },
        handler: async () => ({ id: 3 }),
      }),
    ).toThrow('route GET /api/unguarded declares no access (permission or public)');
  });

  it('keeps the own response map of a route that renders its own failures', async () => {
    const { app, routes } = await server();
    const Page = Type.Unsafe<string>({
      description: 'A page',
      content: { 'text/html': { schema: { type: 'string' } } },
    });
    defineRoute(app, {
      method: 'GET',
      url: '/auth/page',
      access: { kind: 'browser-session', anyOf: [] },
      errors: 'message',
      tags: ['pages'],
      summary: 'A page',
      response: { 200: Page, 500: Page },
      errorHandler: (_err, _request, reply) => {
        void reply.code(500).type('text/html; charset=utf-8').send('<p>sorry</p>');
      },
      handler: async () => {
        throw new Error('broken');
      },
    });
    const schema = routes[0]!.schema as { response: Record<number, unknown> };
    expect(Object.keys(schema.response).map(Number)).toEqual([200, 500]);
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/auth/page' });
    expect([res.statusCode, res.body]).toEqual([500, '<p>sorry</p>']);
  });
});

describe('defineEventStream', () => {
  async function streams() {
    const { app, routes } = await server();
    const Params = Type.Object({ what: Type.String({ maxLength: 8 }) });
    for (const last of [undefined, { event: 'stream-complete', data: {} }]) {
      defineEventStream(app, {
        method: 'GET',
        url: last ? '/api/stream-with-end/:what' : '/api/stream/:what',
        access: publicAccess,
        errors: { ...ERROR_PRESETS.tool, internal: 'The stream failed' },
        tags: ['things'],
        summary: 'A stream',
        params: Params,
        frames: 'data: {n} per step',
        events: [],
        ...(last ? { last } : {}),
        stream: async (request, stream) => {
          stream.send({ n: 1 });
          if (request.params.what === 'fail') throw failure(200, 'The target is not reachable');
          if (request.params.what === 'boom') throw new Error('internals at /srv/secret');
          stream.send({ n: 2 });
        },
      });
    }
    await app.ready();
    return { app, routes };
  }
  const frames = (body: string) =>
    body
      .split('\n\n')
      .filter((block) => block.startsWith('event:') || block.startsWith('data:'))
      .map((block) => {
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as unknown;
        return event ? { event, data } : { data };
      });

  it('streams the frames, then the last frame, and ends', async () => {
    const { app, routes } = await streams();
    const schema = routes[0]!.schema as { response: Record<number, { description?: string }> };
    expect(schema.response[200]!.description).toBe('data: {n} per step');
    const res = await app.inject({ method: 'GET', url: '/api/stream-with-end/ok' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(frames(res.body)).toEqual([
      { data: { n: 1 } },
      { data: { n: 2 } },
      { event: 'stream-complete', data: {} },
    ]);
  });

  it('reports a failure inside the open stream with its message, before the last frame', async () => {
    const { app } = await streams();
    const plain = await app.inject({ method: 'GET', url: '/api/stream/fail' });
    expect(frames(plain.body)).toEqual([
      { data: { n: 1 } },
      { event: 'error', data: { message: 'The target is not reachable' } },
    ]);
    const ended = await app.inject({ method: 'GET', url: '/api/stream-with-end/fail' });
    expect(frames(ended.body)).toEqual([
      { data: { n: 1 } },
      { event: 'error', data: { message: 'The target is not reachable' } },
      { event: 'stream-complete', data: {} },
    ]);
  });

  it('never shows the message of an unexpected error: the route internal message stands in', async () => {
    const { app } = await streams();
    const res = await app.inject({ method: 'GET', url: '/api/stream/boom' });
    expect(frames(res.body)).toEqual([
      { data: { n: 1 } },
      { event: 'error', data: { message: 'The stream failed' } },
    ]);
  });

  it('answers failures before the stream opens in the route family', async () => {
    const { app } = await streams();
    const res = await app.inject({ method: 'GET', url: '/api/stream/much-too-long' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      status: false,
      message: 'The what field must not be greater than 8 characters.',
    });
  });
});

describe('tool failures', () => {
  /** One route per error shape that throws the ToolFailure its query names. */
  async function tools() {
    const { app } = await server();
    const Query = Type.Object({ what: Type.String() });
    const thrown: Record<string, () => Error> = {
      plain: () => new ToolFailure('ping: connect: Network is unreachable'),
      gateway: () => new ToolFailure('iperf3: unable to connect to server', { status: 502 }),
      protocol: () =>
        new ToolFailure('not a speed test server', { family: 'statusMessage' as const }),
      missing: () => new ToolMissingError({ program: 'mtr', debianPackage: 'mtr-tiny' }),
      bug: () => new Error('internals at /srv/secret'),
    };
    // A route documents what it answers: the tool preset's 200 is the success or the failure; a
    // failure in another family than the route's is in the union of its status.
    const shapes = {
      tool: ['tool', { 200: Type.Union([Thing, StatusMessageBody]) }],
      statusMessage: [
        { ...ERROR_PRESETS.statusMessage, internal: 'The run failed' },
        { 200: Thing, 502: StatusMessageBody },
      ],
      message: [
        { ...ERROR_PRESETS.message, internal: 'The run failed' },
        { 200: Thing, 500: Type.Union([StatusMessageBody, MessageBody]) },
      ],
    } as const;
    for (const [name, [errors, response]] of Object.entries(shapes)) {
      defineRoute(app, {
        method: 'GET',
        url: `/api/${name}`,
        access: publicAccess,
        errors,
        tags: ['tools'],
        summary: 'A tool',
        querystring: Query,
        response,
        handler: async (request) => {
          throw thrown[request.query.what]!();
        },
      });
    }
    await app.ready();
    return async (route: string, what: string) => {
      const res = await app.inject({ method: 'GET', url: `/api/${route}?what=${what}` });
      return [res.statusCode, res.json()] as const;
    };
  }

  it('answers every tool failure with the status the route declares for them (the tool preset: 200)', async () => {
    const ask = await tools();
    expect(await ask('tool', 'plain')).toEqual([
      200,
      { status: false, message: 'ping: connect: Network is unreachable' },
    ]);
    expect(await ask('tool', 'gateway')).toEqual([
      200,
      { status: false, message: 'iperf3: unable to connect to server' },
    ]);
    expect(await ask('tool', 'missing')).toEqual([
      200,
      { status: false, message: 'mtr is not installed (Debian package mtr-tiny)' },
    ]);
  });

  it("answers a tool failure with its own status, in the route's family or its own", async () => {
    const ask = await tools();
    expect(await ask('statusMessage', 'gateway')).toEqual([
      502,
      { status: false, message: 'iperf3: unable to connect to server' },
    ]);
    expect(await ask('statusMessage', 'missing')).toEqual([
      500,
      { status: false, message: 'mtr is not installed (Debian package mtr-tiny)' },
    ]);
    expect(await ask('message', 'plain')).toEqual([
      500,
      { message: 'ping: connect: Network is unreachable' },
    ]);
    expect(await ask('message', 'protocol')).toEqual([
      500,
      { status: false, message: 'not a speed test server' },
    ]);
  });

  it('never shows the message of an error that is no tool failure', async () => {
    const ask = await tools();
    expect(await ask('message', 'bug')).toEqual([500, { message: 'The run failed' }]);
    expect(await ask('tool', 'bug')).toEqual([500, { status: false, message: 'Server Error' }]);
  });

  it('reports a tool failure inside an open event stream with its message', async () => {
    const { app } = await server();
    defineEventStream(app, {
      method: 'GET',
      url: '/api/tool-stream',
      access: publicAccess,
      errors: 'tool',
      tags: ['tools'],
      summary: 'A tool stream',
      frames: 'data: {n}',
      events: [],
      stream: async () => {
        throw new ToolMissingError({ program: 'ping', debianPackage: 'iputils-ping' });
      },
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/api/tool-stream' });
    expect(res.body).toContain(
      'event: error\ndata: {"message":"ping is not installed (Debian package iputils-ping)"}\n\n',
    );
  });
});
