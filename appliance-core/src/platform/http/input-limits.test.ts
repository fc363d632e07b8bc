import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { jsonDepth, MAX_JSON_DEPTH, nonFinitePath } from './input-limits.js';

const nest = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('input limits (units)', () => {
  it('finds the first non-finite number by JSON pointer', () => {
    expect(nonFinitePath({ a: 1, b: [2, 3.5, -0] })).toBeNull();
    expect(nonFinitePath({ a: { 'x/y': [1, Infinity] } })).toBe('/a/x~1y/1');
    expect(nonFinitePath(-Infinity)).toBe('');
    expect(nonFinitePath([NaN])).toBe('/0');
    expect(nonFinitePath(JSON.parse('{"hours": 1e309}'))).toBe('/hours');
  });

  it('measures nesting outside strings', () => {
    expect(jsonDepth('{"a": [1, {"b": []}]}')).toBe(4);
    expect(jsonDepth('{"a": "[[[[[[\\"[[[["}')).toBe(1);
    expect(jsonDepth('"no structure"')).toBe(0);
    expect(jsonDepth(nest(6000), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });
});

describe('input limits on every route', () => {
  let h: Harness;
  let admin: string;
  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
  });
  afterAll(() => h.close());

  it('refuses non-finite numbers in a query in the route validation family, not with a 500', async () => {
    for (const hours of ['1e309', '-1e309', 'Infinity']) {
      const device = await h.request('GET', `/api/device/1?hours=${hours}`, { token: admin });
      expect(device.status, hours).toBe(422);
      expect(device.body, hours).toEqual({
        status: 422,
        errors: { hours: ['The hours field must be a number.'] },
      });
      const report = await h.request('GET', `/api/urlTracker?hours=${hours}`, { token: admin });
      expect(report.status, hours).toBe(200);
      expect(report.body, hours).toEqual({
        status: false,
        hasError: true,
        message: 'The hours field must be a number.',
      });
    }
  });

  it('refuses non-finite numbers in a JSON body, free-form parts included', async () => {
    const typed = await h.request('POST', '/api/tokens', {
      token: admin,
      raw: { contentType: 'application/json', data: '{"name": "x", "expires_in_days": 1e309}' },
    });
    expect(typed.status).toBe(400);
    const before = await h.request('GET', '/api/getDashboards', { token: admin });
    const res = await h.request('POST', '/api/setDashboards', {
      token: admin,
      raw: {
        contentType: 'application/json',
        data: '{"dashboards": {"w": [1, -1e309]}, "layouts": {}}',
      },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'The dashboards.w.1 field must be a number.',
      errors: { 'dashboards.w.1': ['The dashboards.w.1 field must be a number.'] },
    });
    expect((await h.request('GET', '/api/getDashboards', { token: admin })).body).toEqual(
      before.body,
    );
  });

  it('refuses JSON nested deeper than the limit, in the route validation family, and stores nothing', async () => {
    const before = await h.request('GET', '/api/getDashboards', { token: admin });
    const deep = `{"dashboards": {"a": ${nest(6000)}}, "layouts": {}}`;
    const res = await h.request('POST', '/api/setDashboards', {
      token: admin,
      raw: { contentType: 'application/json', data: deep },
    });
    expect(res.status).not.toBe(500);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).toContain(`more than ${MAX_JSON_DEPTH} levels`);
    expect((await h.request('GET', '/api/getDashboards', { token: admin })).body).toEqual(
      before.body,
    );
    // At the limit it is accepted.
    const ok = `{"dashboards": {"a": ${nest(MAX_JSON_DEPTH - 2)}}, "layouts": {}}`;
    const stored = await h.request('POST', '/api/setDashboards', {
      token: admin,
      raw: { contentType: 'application/json', data: ok },
    });
    expect(stored.status).toBe(201);
  });
});
