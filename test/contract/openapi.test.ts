/**
 * /openapi.json is generated from the route schemas: an independent validator and Redocly's
 * recommended rules must accept it, every registered route must appear in it with its
 * responses, and it must tell the truth a generated client relies on (issue 11): a stable
 * operationId per operation, a server, the cookie session on the /auth pages, the HTML bodies of
 * pages, the events of event streams, and no validator-only keyword.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf } from '../../appliance-core/src/platform/http/operation-id.js';
import { startAppliance, type Harness } from '../harness/appliance.js';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, Record<string, unknown>> }>;
}
interface Document {
  openapi: string;
  servers?: { url: string }[];
  security: Record<string, string[]>[];
  components: { securitySchemes: Record<string, Record<string, unknown>> };
  paths: Record<string, Record<string, Operation>>;
}

/**
 * Redocly warnings kept on purpose, each with its reason (any other warning, and every error,
 * fails the test).
 */
const KEPT_WARNINGS: Record<string, string> = {
  // The appliance is not published under a licence the document could name.
  'info-license #/info': 'no published licence',
  // A WebSocket answers 101 Switching Protocols; it has no 2xx.
  'operation-2xx-response #/paths/~1api~1terminal~1socket/get/responses': 'WebSocket upgrade',
};

let h: Harness;
let doc: Document;
beforeAll(async () => {
  h = await startAppliance();
  const res = await h.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body as Document;
});
afterAll(() => h.close());

const operations = (): [string, string, Operation][] =>
  Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(
      ([method, op]) => [method.toUpperCase(), p, op] as [string, string, Operation],
    ),
  );

it('serves an OpenAPI 3.1 document that swagger-parser validates', async () => {
  expect(doc.openapi).toBe('3.1.0');
  await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
});

it('passes Redocly lint (recommended rules) with no error and only the listed warnings', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    const run = promisify(execFile);
    const result = await run(
      process.execPath,
      [cli, 'lint', file, '--extends=recommended', '--format=json', '--max-problems=1000'],
      {
        timeout: 90_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((err: { stdout?: string; code?: number }) => {
      // Exit code 1 means problems were found; the JSON report is on stdout all the same.
      if (typeof err.stdout === 'string' && err.stdout.trim().startsWith('{'))
        return err as { stdout: string };
      throw err;
    });
    const report = JSON.parse(result.stdout) as {
      totals: { errors: number };
      problems: {
        ruleId: string;
        severity: string;
        message: string;
        location: { pointer: string }[];
      }[];
    };
    const unexpected = report.problems
      .map(
        (p) =>
          `${p.ruleId} ${p.location[0]?.pointer ?? ''}`.trim() +
          (p.severity === 'error' ? ' (error)' : ''),
      )
      .filter((key) => !(key in KEPT_WARNINGS));
    expect(unexpected).toEqual([]);
    expect(report.totals.errors).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it('documents every registered route with its declared responses', () => {
  const missing: string[] = [];
  for (const route of h.appliance.app.declaredRoutes) {
    if (route.url === '/openapi.json') continue;
    const p = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const operation = doc.paths[p]?.[route.method.toLowerCase()];
    if (!operation) missing.push(`${route.method} ${p}`);
    else if (Object.keys(operation.responses ?? {}).length < 2)
      missing.push(`${route.method} ${p}: responses not documented`);
  }
  expect(missing).toEqual([]);
});

describe('operation ids', () => {
  it('gives every operation a unique id from the one rule', () => {
    const ids = operations().map(([method, p, op]) => {
      expect(op.operationId, `${method} ${p}`).toBe(operationIdOf(method, p));
      return op.operationId;
    });
    expect(ids.length).toBeGreaterThan(100);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
  });

  it("uses the spec's endpoint names where the spec names them", () => {
    const id = (method: string, p: string) => doc.paths[p]?.[method]?.operationId;
    expect(id('post', '/api/saveUser')).toBe('saveUser');
    expect(id('post', '/api/hidePendingDevice')).toBe('hidePendingDevice');
    expect(id('get', '/api/SSEgetPingInfo/{pingTarget}')).toBe('SSEgetPingInfo');
    expect(id('get', '/api/tokens')).toBe('getTokens');
    expect(id('delete', '/api/tokens/{id}')).toBe('deleteTokensById');
    expect(id('post', '/api/oauth/clients/{clientId}/approve')).toBe(
      'postOauthClientsByClientIdApprove',
    );
  });
});

it('names a server', () => {
  expect(doc.servers?.length).toBeGreaterThan(0);
});

it('publishes no validator-only keyword', () => {
  expect(JSON.stringify(doc)).not.toContain('"errorMessage"');
});

it('states the rules handlers enforce: IP addresses, the profile catalogue, IPv4 ranges', async () => {
  const body = (path: string) => {
    const op = (doc.paths[path] as Record<string, any>)?.post;
    const schema = op?.requestBody?.content?.['application/json']?.schema;
    return schema?.$ref ? (doc.components as any).schemas[schema.$ref.split('/').at(-1)] : schema;
  };
  const ip = {
    anyOf: [
      { type: 'string', format: 'ipv4' },
      { type: 'string', format: 'ipv6' },
    ],
  };
  expect(body('/api/device/set').properties.ip_address).toMatchObject(ip);
  expect(body('/api/testSnmp').properties.ip).toMatchObject(ip);
  expect(body('/api/device/set').properties.profile.enum).toEqual(
    (h.appliance.db.prepare('SELECT profile FROM profiles ORDER BY id').all() as any[]).map(
      (r) => r.profile,
    ),
  );
  const localnet = JSON.stringify(body('/api/updateLocalnet'));
  expect(localnet.match(/"format":"ipv4"/g)).toHaveLength(2); // network and broadcast
  expect(JSON.stringify(doc)).not.toContain('"documentAs"');
  // Documented, not validated: the handler still trims a padded address and answers in its shape.
  const admin = await h.login();
  const saved = await h.request('POST', '/api/device/set', {
    token: admin,
    body: { ip_address: ' 127.0.9.9 ', label: 'padded', profile: 'dash_generic' },
  });
  expect(saved.status).toBe(200);
});

it('documents the HTTP 200 legacy failures of hidePendingDevice and removePendingDevice', () => {
  for (const p of ['/api/hidePendingDevice', '/api/removePendingDevice']) {
    const ok = doc.paths[p]?.post?.responses['200'];
    expect(ok, p).toBeDefined();
    expect(JSON.stringify(ok)).toContain('hasError');
  }
});

describe('the /auth pages', () => {
  it('declare the cookie session, not the bearer', () => {
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie' });
    for (const method of ['get', 'post']) {
      expect(doc.paths['/auth/authorize']?.[method]?.security).toEqual([{ session: [] }]);
      expect(doc.paths['/auth/device']?.[method]?.security).toEqual([{ session: [] }]);
    }
  });

  it('document the media types their 400 really has', async () => {
    const types = (method: string, p: string) =>
      Object.keys(doc.paths[p]?.[method]?.responses['400']?.content ?? {}).sort();
    // The consent page answers its malformed OAuth requests as OAuth JSON, other failures as pages.
    for (const method of ['get', 'post'])
      expect(types(method, '/auth/authorize')).toEqual(['application/json', 'text/html']);
    expect(types('get', '/auth/device')).toEqual(['text/html']);
    const json = await h.request('GET', '/auth/authorize?response_type=nope');
    expect(json.status).toBe(400);
    expect(String(json.headers['content-type'])).toContain('application/json');
    const page = await h.request('POST', '/auth/authorize', {
      raw: { contentType: 'application/x-www-form-urlencoded', data: `state=${'s'.repeat(5000)}` },
    });
    expect(page.status).toBe(400);
    expect(String(page.headers['content-type'])).toContain('text/html');
  });
});

it('documents the events of event streams', () => {
  for (const p of ['/api/SSEgetPingInfo/{pingTarget}', '/api/SSEgetMTRInfo/{mtrTarget}']) {
    const content = doc.paths[p]?.get?.responses['200']?.content ?? {};
    const stream = content['text/event-stream'] as {
      'x-itemSchema'?: { oneOf: { properties: Record<string, { enum?: string[] }> }[] };
    };
    expect(stream, p).toBeDefined();
    const events = stream['x-itemSchema']?.oneOf.map(
      (e) => e.properties.event?.enum?.[0] ?? 'message',
    );
    expect(events, p).toContain('message');
    expect(events, p).toContain('error');
    // Tool failures and validation answer JSON with HTTP 200 before the stream opens.
    expect(content['application/json'], p).toBeDefined();
  }
  const mtr = doc.paths['/api/SSEgetMTRInfo/{mtrTarget}']?.get?.responses['200']?.content?.[
    'text/event-stream'
  ] as { 'x-itemSchema': { oneOf: { properties: Record<string, { enum?: string[] }> }[] } };
  expect(mtr['x-itemSchema'].oneOf.map((e) => e.properties.event?.enum?.[0])).toContain(
    'stream-complete',
  );
});
