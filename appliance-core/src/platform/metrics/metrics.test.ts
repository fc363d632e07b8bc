import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { HttpMetrics, MetricsRegistry, renderMetrics } from './metrics.js';

type Parsed = { name: string; help: string; type: string; metrics: any[] }[];
const parse = (text: string) => parsePrometheusTextFormat(text) as Parsed;
const family = (parsed: Parsed, name: string) => {
  const found = parsed.find((f) => f.name === name);
  if (!found) throw new Error(`no family ${name}`);
  return found;
};

describe('text exposition', () => {
  it('renders counters, gauges and histograms that a Prometheus parser reads back', () => {
    const http = new HttpMetrics();
    const series = http.seriesFor('GET', '/api/device/:device');
    series.observe(0.002, 200);
    series.observe(0.2, 200);
    series.observe(30, 404);
    const text = renderMetrics([
      {
        name: 'a_total',
        help: 'A "quoted" help\nwith a newline \\ and a backslash',
        type: 'counter',
        samples: [{ labels: { who: 'x"y\\z\nq' }, value: 3 }],
      },
      { name: 'b', help: 'B', type: 'gauge', samples: [{ value: Infinity }] },
      ...http.collect(),
    ]);
    const parsed = parse(text);
    expect(family(parsed, 'a_total')).toMatchObject({
      type: 'COUNTER',
      metrics: [{ labels: { who: 'x"y\\z\nq' }, value: '3' }],
    });
    expect(family(parsed, 'b').metrics[0].value).toBe('+Inf');
    expect(family(parsed, 'appliance_http_requests_total').metrics).toEqual([
      { labels: { method: 'GET', route: '/api/device/:device', status: '200' }, value: '2' },
      { labels: { method: 'GET', route: '/api/device/:device', status: '404' }, value: '1' },
    ]);
    // The parser keeps labelled histograms' buckets only (a limitation of it): read sum and
    // count of the one series from the text, and check the buckets through the parser.
    const histogram = family(parsed, 'appliance_http_request_duration_seconds').metrics[0];
    expect(histogram.buckets['0.001']).toBe('0');
    expect(histogram.buckets['0.0025']).toBe('1');
    expect(histogram.buckets['0.25']).toBe('2');
    expect(histogram.buckets['10']).toBe('2');
    expect(histogram.buckets['+Inf']).toBe('3');
    const route = 'method="GET",route="/api/device/:device"';
    expect(text).toContain(`appliance_http_request_duration_seconds_count{${route}} 3\n`);
    expect(text).toMatch(
      new RegExp(
        `appliance_http_request_duration_seconds_sum\\{${route.replace(/[/:]/g, '\\$&')}\\} 30\\.20`,
      ),
    );
  });

  it('reports a failing collector as a metric instead of failing the scrape', () => {
    const registry = new MetricsRegistry();
    registry.register('ok', () => [
      { name: 'ok', help: 'fine', type: 'gauge', samples: [{ value: 1 }] },
    ]);
    registry.register('broken', () => {
      throw new Error('boom');
    });
    const parsed = parse(registry.render());
    expect(family(parsed, 'ok').metrics[0].value).toBe('1');
    expect(family(parsed, 'appliance_metrics_collector_failed').metrics).toEqual([
      { labels: { collector: 'broken' }, value: '1' },
    ]);
  });

  it('refuses names that are not Prometheus names', () => {
    expect(() =>
      renderMetrics([{ name: 'bad-name', help: '', type: 'gauge', samples: [] }]),
    ).toThrow('bad metric name');
  });
});

describe('GET /metrics', () => {
  let h: Harness;
  let admin: string;
  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
  });
  afterAll(() => h.close());

  it('needs permission system, as a bearer', async () => {
    expect((await h.request('GET', '/metrics')).status).toBe(401);
    const user = await h.userWith(['devices']);
    const denied = await h.request('GET', '/metrics', { token: user.token });
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ status: false, hasError: true });
  });

  it('exposes HTTP, scheduler, poller, storage and process metrics in the text format', async () => {
    for (let i = 0; i < 3; i++)
      expect((await h.request('GET', '/api/me', { token: admin })).status).toBe(200);
    await h.request('GET', '/api/device/999999', { token: admin });
    const res = await h.request('GET', '/metrics', { token: admin });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const parsed = parse(res.text);
    const requests = family(parsed, 'appliance_http_requests_total').metrics;
    expect(requests).toContainEqual({
      labels: { method: 'GET', route: '/api/me', status: '200' },
      value: '3',
    });
    expect(requests.find((m) => m.labels.route === '/api/device/:device')?.labels.status).toBe(
      '404',
    );
    // Routes are labelled by declared path, never by the raw URL (bounded cardinality).
    expect(res.text).not.toContain('route="/api/device/999999"');
    expect(family(parsed, 'appliance_http_request_duration_seconds').type).toBe('HISTOGRAM');
    expect(res.text).toContain(
      'appliance_http_request_duration_seconds_count{method="GET",route="/api/me"} 3\n',
    );
    for (const name of [
      'appliance_scheduler_jobs',
      'appliance_scheduler_overruns_total',
      'appliance_scheduler_lateness_seconds',
      'appliance_poller_readings_total',
      'appliance_storage_writes_total',
      'appliance_process_resident_memory_bytes',
      'appliance_event_loop_delay_seconds',
    ])
      expect(family(parsed, name).metrics.length, name).toBeGreaterThan(0);
    expect(
      Number(family(parsed, 'appliance_process_resident_memory_bytes').metrics[0].value),
    ).toBeGreaterThan(10e6);
    expect(Number(family(parsed, 'appliance_scheduler_jobs').metrics[0].value)).toBeGreaterThan(0);
    // The storage writer's counters are per producer: the pollers write as `trackers`.
    const outcomes = family(parsed, 'appliance_storage_writes_total').metrics;
    expect(
      outcomes.filter((m) => m.labels.producer === 'trackers').map((m) => m.labels.outcome),
    ).toEqual(['written', 'dropped', 'failed', 'lost']);
    expect(family(parsed, 'appliance_storage_batches_total').metrics.length).toBe(1);
  });
});
