/**
 * The console's API types (renderer/src/lib/api-types.ts) are generated from /openapi.json: this
 * fails when the checked-in file no longer matches the routes' schemas. Fix: `npm run gen:api`.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../appliance-core/src/app.js';
import { loadConfig } from '../../appliance-core/src/platform/config/config.js';
// @ts-expect-error a plain .mjs build script without type declarations
import { API_TYPES_FILE, apiTypesFor, dumpOpenApi } from '../../build/scripts/gen-api-types.mjs';

describe('console API types', () => {
  it('are generated from the current OpenAPI document (run npm run gen:api when this fails)', async () => {
    const document = await dumpOpenApi(buildApp, loadConfig);
    const expected = await apiTypesFor(document);
    const actual = fs.readFileSync(API_TYPES_FILE, 'utf8');
    expect(actual === expected, 'renderer/src/lib/api-types.ts is stale: run npm run gen:api').toBe(
      true,
    );
  });
});
