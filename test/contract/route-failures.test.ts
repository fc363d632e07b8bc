/**
 * Every declared route renders each failure it can answer in the family it declares, and its
 * response map documents that body (issue 11: `POST /api/information` answered 500 because its
 * HTTP 200 schema did not admit the legacy failure its family renders with HTTP 200, so the
 * serializer threw).
 *
 * Two walks over the route registry of a started appliance:
 * - statically, for every route: each status the platform or the route may answer (validation,
 *   missing credential, denial, media type, rate limit, internal failure, the tool status, every
 *   failure status the route declares) is rendered in the route's family, and the route's
 *   response schema for that status accepts the body (AJV) and serializes it unchanged
 *   (fast-json-stringify, the serializer Fastify uses: a body its schema rejects is where a 500
 *   came from);
 * - over HTTP, for every route that takes a body: malformed JSON, sent as the administrator,
 *   answers the route's validation family, never a 5xx.
 * Every path parameter also has a bound its schema checks (maxLength or maximum): the router's
 * own 100-character limit is lifted so that the schema decides.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  render,
  validationStatus,
  type Family,
  type Rendered,
} from '../../appliance-core/src/platform/http/envelopes.js';
import type { DeclaredRoute } from '../../appliance-core/src/platform/http/route-config.js';
import { startAppliance, type Harness } from '../harness/appliance.js';

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const fromAjvCompiler = createRequire(
  createRequire(import.meta.url).resolve('@fastify/ajv-compiler'),
);
type Validate = ((data: unknown) => boolean) & { errors?: unknown };
const Ajv = fromAjvCompiler('ajv') as {
  default: new (options: Record<string, unknown>) => { compile(schema: unknown): Validate };
};
const addFormats = fromAjvCompiler('ajv-formats') as { default: (ajv: unknown) => void };
const fastJsonStringify = fromFastify('fast-json-stringify') as (
  schema: unknown,
) => (data: unknown) => string;

const ajv = new Ajv.default({
  strict: false,
  allowUnionTypes: true,
  addUsedSchema: false,
  keywords: ['errorMessage'],
});
addFormats.default(ajv);

const validators = new WeakMap<object, Validate>();
const serializers = new WeakMap<object, (data: unknown) => string>();
function validatorOf(schema: object): Validate {
  let v = validators.get(schema);
  if (!v) validators.set(schema, (v = ajv.compile(schema)));
  return v;
}
function serializerOf(schema: object): (data: unknown) => string {
  let s = serializers.get(schema);
  if (!s) serializers.set(schema, (s = fastJsonStringify(schema)));
  return s;
}

interface Case extends Rendered {
  why: string;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the platform and the route may answer besides success, rendered as the error handler does. */
function failuresOf(route: DeclaredRoute): Case[] {
  const e = route.errors;
  const cases: Case[] = [];
  const add = (why: string, r: Rendered) => cases.push({ why, ...r });
  add(
    'validation',
    render(e.validation, validationStatus(e), 'The x field is required.', {
      x: ['The x field is required.'],
    }),
  );
  if (route.access.kind !== 'public' && route.access.kind !== 'browser-session') {
    const u = e.unauthenticated;
    add('no credential', render(u?.family ?? 'legacy', u?.status ?? 401, 'Unauthenticated.'));
    if (route.access.kind === 'permission') {
      const d = e.denial;
      add('denial', render(d?.family ?? 'legacy', d?.status ?? 401, 'You do not have permission.'));
    }
  }
  add('media type', render(e.failure, 415, 'Unsupported Media Type.'));
  if (route.rateLimited)
    add(
      'rate limit',
      render(e.failure, 429, 'Too Many Attempts.', undefined, 'temporarily_unavailable'),
    );
  add('internal failure', render(e.failure, 500, e.internal ?? 'Server Error'));
  if (e.toolFailureStatus !== undefined)
    add('tool failure', render(e.failure, e.toolFailureStatus, 'fping is not installed.'));
  return cases;
}

const FAMILIES: Family[] = [
  'legacy',
  'statusMessage',
  'error',
  'errors',
  'message',
  'messageErrors',
  'oauth',
  'statusCode',
  'legacyStatus',
  'legacyFields',
  'falseErrors',
  'legacyValidation',
  'statusError',
];

/**
 * The failure statuses a route declares beyond the platform's: a handler throws them in the
 * route's failure family or names another family, so the declared body must be one family's
 * body at that status (a success-shaped schema under a failure status is the mistake).
 */
function declaredFailuresOf(route: DeclaredRoute, covered: Set<number>): Case[][] {
  const response = (route.schema.response ?? {}) as Record<string, unknown>;
  const alternatives: Case[][] = [];
  for (const status of Object.keys(response).map(Number)) {
    if (status < 400 || covered.has(status)) continue;
    alternatives.push(
      [route.errors.failure, ...FAMILIES].map((family) => ({
        why: `declared ${status} (${family})`,
        ...render(family, status, 'Not found.', { x: ['Not found.'] }),
      })),
    );
  }
  return alternatives;
}

/** The JSON schema the serializer uses for a status (a media-typed entry: its JSON one). */
function jsonSchemaFor(route: DeclaredRoute, status: number): object | null | 'absent' {
  const response = (route.schema.response ?? {}) as Record<string, Record<string, unknown>>;
  const entry = response[status] ?? response[String(status)];
  if (entry === undefined) return 'absent';
  const content = entry.content as Record<string, { schema: object }> | undefined;
  if (content === undefined) return entry;
  return content['application/json']?.schema ?? null;
}

function problemsOf(route: DeclaredRoute): string[] {
  const cases = failuresOf(route);
  const problems = cases.flatMap((c) => problemsOfCase(route, c));
  for (const alternatives of declaredFailuresOf(route, new Set(cases.map((c) => c.status)))) {
    const each = alternatives.map((c) => problemsOfCase(route, c));
    if (each.every((p) => p.length > 0)) problems.push(...(each[0] as string[]));
  }
  return problems;
}

function problemsOfCase(route: DeclaredRoute, c: Case): string[] {
  const where = `${route.method} ${route.url}: ${c.why} (HTTP ${c.status})`;
  const schema = jsonSchemaFor(route, c.status);
  if (schema === 'absent') return [`${where} is not in the response map`];
  if (schema === null) return [`${where} has no application/json body documented`];
  if (!validatorOf(schema)(structuredClone(c.body)))
    return [`${where}: the schema refuses ${JSON.stringify(c.body)}`];
  try {
    const text = serializerOf(schema)(c.body);
    if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(c.body))
      return [`${where}: serialized as ${text}`];
  } catch (err) {
    return [`${where}: the serializer throws ${(err as Error).message}`];
  }
  return [];
}

let h: Harness;
let admin: string;
let routes: DeclaredRoute[];
beforeAll(async () => {
  h = await startAppliance();
  admin = await h.login();
  routes = h.appliance.app.declaredRoutes.filter((r) => !r.ownErrorHandler);
});
afterAll(() => h.close());

describe('route registry', () => {
  it('renders every failure status of every route in its family, as documented', () => {
    expect(routes.length).toBeGreaterThan(100);
    expect(routes.flatMap(problemsOf)).toEqual([]);
  });

  it('bounds every path parameter in its schema', () => {
    const unbounded: string[] = [];
    for (const route of h.appliance.app.declaredRoutes) {
      const names = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
      const params = route.schema.params as
        { properties?: Record<string, Record<string, unknown>> } | undefined;
      for (const name of names) {
        const p = params?.properties?.[name];
        const bounded =
          p !== undefined &&
          ((p.type === 'string' && typeof p.maxLength === 'number') ||
            (p.type === 'integer' && typeof p.maximum === 'number') ||
            Array.isArray(p.enum));
        if (!bounded) unbounded.push(`${route.method} ${route.url}: ${name}`);
      }
    }
    expect(unbounded).toEqual([]);
  });
});

describe('malformed JSON on every route that takes a body', () => {
  it('answers the route validation family (or its 415), never a server error', async () => {
    const wrong: string[] = [];
    let tried = 0;
    for (const route of routes) {
      if (!BODY_METHODS.has(route.method)) continue;
      if (route.url === '/api/information') continue; // takes no body (http-input.test.ts)
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '1');
      const res = await h.request(route.method, path, {
        token: admin,
        raw: { contentType: 'application/json', data: '{' },
      });
      tried++;
      const e = route.errors;
      const message = 'The request body is not valid JSON.';
      const expected = render(e.validation, validationStatus(e), message, { body: [message] });
      const refused = render(e.failure, 415, '');
      const ok =
        (res.status === expected.status && equal(res.body, expected.body)) ||
        (res.status === 415 && sameKeys(res.body, refused.body)) ||
        // A rate-limited route already spent by another test keeps its 429 family.
        (res.status === 429 && route.rateLimited);
      if (!ok) wrong.push(`${route.method} ${route.url}: ${res.status} ${res.text}`);
    }
    expect(tried).toBeGreaterThan(50);
    expect(wrong).toEqual([]);
  });
});

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
function sameKeys(a: unknown, b: Record<string, unknown>): boolean {
  return (
    typeof a === 'object' &&
    a !== null &&
    Object.keys(a).sort().join() === Object.keys(b).sort().join()
  );
}

export type { Family };
