/**
 * /openapi.json is generated from the route schemas: an independent validator must accept it,
 * and every registered route must appear in it with its responses.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../harness/appliance.js';

let h: Harness;
beforeAll(async () => {
  h = await startAppliance();
});
afterAll(() => h.close());

it('serves an OpenAPI 3.1 document that swagger-parser validates', async () => {
  const res = await h.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.openapi).toBe('3.1.0');
  await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeTruthy();
});

it('documents every registered route with its declared responses', async () => {
  const doc = (await h.request('GET', '/openapi.json')).body as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const missing: string[] = [];
  for (const route of h.appliance.app.declaredRoutes) {
    if (route.url === '/openapi.json') continue;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const operation = doc.paths[path]?.[route.method.toLowerCase()];
    if (!operation) missing.push(`${route.method} ${path}`);
    else if (Object.keys(operation.responses ?? {}).length < 2)
      missing.push(`${route.method} ${path}: responses not documented`);
  }
  expect(missing).toEqual([]);
});
