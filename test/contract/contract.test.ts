/**
 * The spec's endpoint list versus the routes the appliance registers. Fails on a registered
 * route that is not in the list, or whose access rule or denial status differs from it; prints
 * the coverage so progress through the spec stays visible.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeclaredRoute } from '../../appliance-core/src/platform/http/route-config.js';
import { startAppliance, type Harness } from '../harness/appliance.js';

interface SpecEndpoint {
  part: number;
  section: string;
  method: string;
  path: string;
  feature: string;
  access: { kind: string; allOf?: string[]; anyOf?: string[] };
  denial: number | null;
  origin: 'spec' | 'designed';
}

const catalogue = JSON.parse(
  fs.readFileSync(new URL('./spec-endpoints.json', import.meta.url), 'utf8'),
) as SpecEndpoint[];
const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const toSpecPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const sorted = (xs: readonly string[] | undefined) => [...(xs ?? [])].sort();

/** Endpoints registered per feature today: the coverage test fails if one goes missing. */
const COVERAGE_FLOOR: Record<string, number> = {
  auth: 5,
  tokens: 6,
  oauth: 20,
  users: 8,
  platform: 1,
  devices: 23,
  dashboards: 7,
  trackers: 38,
  'url-monitors': 5,
  tools: 17,
  discovery: 4,
  terminal: 2,
  audit: 1,
  metrics: 1,
  logs: 26,
  maintenance: 10,
  captures: 8,
  flows: 7,
  certificate: 4,
  agents: 17,
};

let h: Harness;
let routes: DeclaredRoute[];
beforeAll(async () => {
  h = await startAppliance();
  routes = h.appliance.app.declaredRoutes;
});
afterAll(() => h.close());

describe('spec endpoint catalogue', () => {
  it('has one entry per method and path, each with a feature and an access rule', () => {
    const keys = catalogue.map((e) => keyOf(e.method, e.path));
    expect(new Set(keys).size).toBe(keys.length);
    for (const e of catalogue) {
      expect(e.feature, keyOf(e.method, e.path)).toMatch(/^[a-z-]+$/);
      expect([
        'public',
        'authenticated',
        'permission',
        'browser-session',
        'token-or-signature',
      ]).toContain(e.access.kind);
    }
  });

  it('compiles every route schema (they are compiled on first use at run time)', () => {
    const { compiled, failures } = h.appliance.app.compileAllSchemas();
    expect(failures).toEqual([]);
    // A validator per declared part and a serializer per status code: hundreds for the whole API.
    expect(compiled).toBeGreaterThan(routes.length);
  });

  it('lists every registered route, with the same access rule and denial status', () => {
    const byKey = new Map(catalogue.map((e) => [keyOf(e.method, e.path), e]));
    const problems: string[] = [];
    for (const route of routes) {
      const key = keyOf(route.method, toSpecPath(route.url));
      const listed = byKey.get(key);
      if (!listed) {
        problems.push(`${key}: registered but not in spec-endpoints.json`);
        continue;
      }
      const access = route.access as SpecEndpoint['access'];
      if (access.kind !== listed.access.kind)
        problems.push(`${key}: access ${access.kind}, spec says ${listed.access.kind}`);
      if (JSON.stringify(sorted(access.allOf)) !== JSON.stringify(sorted(listed.access.allOf))) {
        problems.push(
          `${key}: allOf ${sorted(access.allOf).join(',')}, spec says ${sorted(listed.access.allOf).join(',')}`,
        );
      }
      if (JSON.stringify(sorted(access.anyOf)) !== JSON.stringify(sorted(listed.access.anyOf))) {
        problems.push(
          `${key}: anyOf ${sorted(access.anyOf).join(',')}, spec says ${sorted(listed.access.anyOf).join(',')}`,
        );
      }
      const denial = access.kind === 'public' ? null : (route.errors.denial?.status ?? 401);
      if (denial !== listed.denial)
        problems.push(`${key}: denial ${denial}, spec says ${listed.denial}`);
      if (!route.errors.validation || !route.errors.failure)
        problems.push(`${key}: error shape incomplete`);
    }
    expect(problems).toEqual([]);
  });

  it('reports coverage of the spec', () => {
    const registered = new Set(routes.map((r) => keyOf(r.method, toSpecPath(r.url))));
    const perFeature = new Map<string, { done: number; total: number }>();
    for (const e of catalogue) {
      const f = perFeature.get(e.feature) ?? { done: 0, total: 0 };
      f.total++;
      if (registered.has(keyOf(e.method, e.path))) f.done++;
      perFeature.set(e.feature, f);
    }
    const done = [...perFeature.values()].reduce((n, f) => n + f.done, 0);
    const lines = [...perFeature].map(
      ([name, f]) => `  ${name.padEnd(13)} ${String(f.done).padStart(3)} / ${f.total}`,
    );
    console.log(
      `spec coverage: ${done} / ${catalogue.length} endpoints registered\n${lines.join('\n')}`,
    );
    expect(done).toBe(registered.size);
    // A floor per feature, so that coverage cannot drop silently (raise it as features land).
    const below = Object.entries(COVERAGE_FLOOR)
      .filter(([name, floor]) => (perFeature.get(name)?.done ?? 0) < floor)
      .map(([name, floor]) => `${name}: ${perFeature.get(name)?.done ?? 0} < ${floor}`);
    expect(below).toEqual([]);
    expect(done).toBeGreaterThanOrEqual(Object.values(COVERAGE_FLOOR).reduce((a, b) => a + b, 0));
  });

  it('answers 401 to a request without a token on every route that needs one, before anything else', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      if ((route.access as SpecEndpoint['access']).kind === 'public') continue;
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, '1');
      const method = route.method.toUpperCase();
      const res = await h.request(
        method,
        url,
        method === 'GET' || method === 'HEAD' ? {} : { body: {} },
      );
      // The /auth/* browser pages use the cookie session: without one they send the browser to
      // sign in (303) or refuse the request itself (400, 415); they never serve anything.
      const refused = route.url.startsWith('/auth/')
        ? [303, 400, 415].includes(res.status)
        : res.status === 401;
      if (!refused)
        problems.push(`${method} ${route.url}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(problems).toEqual([]);
  });
});
