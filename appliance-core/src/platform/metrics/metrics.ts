/**
 * Self-metrics in the Prometheus text exposition format (version 0.0.4), the format operators
 * already scrape. Components register collectors that are read at scrape time (the storage
 * writer's per-producer counters, the scheduler, the pollers, later the feeds' intake counters);
 * HTTP requests are counted per route by HttpMetrics.
 *
 * Cost on the request path: one pre-bound series per route, found at registration (no label
 * lookup, no `request.routeOptions` access per request), updated in an onResponse hook with a
 * bucket search over 12 bounds. Everything else is computed only when /metrics is read.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Record<string, string | number>;

export interface Sample {
  labels?: Labels;
  value: number;
}

export interface HistogramSample {
  labels?: Labels;
  /** Upper bounds (ascending) and the cumulative count of observations at or below each. */
  buckets: readonly { le: number; count: number }[];
  sum: number;
  count: number;
}

export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: Sample[] }
  | { name: string; help: string; type: 'histogram'; samples: HistogramSample[] };

export type Collector = () => MetricFamily[];

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (text: string) =>
  text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function formatLabels(labels: Labels | undefined, extra?: [string, string]): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => {
    if (!LABEL.test(k)) throw new Error(`bad metric label name ${k}`);
    return `${k}="${escapeLabel(String(v))}"`;
  });
  if (extra) pairs.push(`${extra[0]}="${extra[1]}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** Renders families in the text exposition format. */
export function renderMetrics(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (!NAME.test(family.name)) throw new Error(`bad metric name ${family.name}`);
    lines.push(
      `# HELP ${family.name} ${escapeHelp(family.help)}`,
      `# TYPE ${family.name} ${family.type}`,
    );
    if (family.type === 'histogram') {
      for (const s of family.samples) {
        for (const b of s.buckets)
          lines.push(
            `${family.name}_bucket${formatLabels(s.labels, ['le', formatValue(b.le)])} ${b.count}`,
          );
        lines.push(`${family.name}_bucket${formatLabels(s.labels, ['le', '+Inf'])} ${s.count}`);
        lines.push(`${family.name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}`);
        lines.push(`${family.name}_count${formatLabels(s.labels)} ${s.count}`);
      }
    } else {
      for (const s of family.samples)
        lines.push(`${family.name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export class MetricsRegistry {
  private readonly collectors: { name: string; collect: Collector }[] = [];

  /** Adds a collector read at every scrape; `name` identifies it in errors. */
  register(name: string, collect: Collector): void {
    this.collectors.push({ name, collect });
  }

  /** Every family, collectors in registration order; a failing collector is reported as a metric. */
  collect(): MetricFamily[] {
    const families: MetricFamily[] = [];
    const failed: Sample[] = [];
    for (const { name, collect } of this.collectors) {
      try {
        families.push(...collect());
      } catch {
        failed.push({ labels: { collector: name }, value: 1 });
      }
    }
    if (failed.length > 0)
      families.push({
        name: 'appliance_metrics_collector_failed',
        help: 'Collectors that failed at this scrape (their metrics are missing).',
        type: 'gauge',
        samples: failed,
      });
    return families;
  }

  render(): string {
    return renderMetrics(this.collect());
  }
}

/** Request duration buckets (seconds): sub-millisecond API answers to multi-second tool runs. */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** One route's counters, bound at registration. */
export class RouteSeries {
  readonly counts = new Array<number>(HTTP_BUCKETS.length).fill(0);
  readonly statuses = new Map<number, number>();
  sum = 0;
  count = 0;

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  observe(seconds: number, status: number): void {
    this.count++;
    this.sum += seconds;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    for (let i = 0; i < HTTP_BUCKETS.length; i++) {
      if (seconds <= (HTTP_BUCKETS[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }
}

/** HTTP request counts and durations by route (method and declared path, never the raw URL). */
export class HttpMetrics {
  private readonly series = new Map<string, RouteSeries>();

  /** The series of a route, created once (at route registration). */
  seriesFor(method: string, route: string): RouteSeries {
    const key = `${method} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = new RouteSeries(method, route);
      this.series.set(key, series);
    }
    return series;
  }

  collect(): MetricFamily[] {
    const used = [...this.series.values()].filter((s) => s.count > 0);
    const requests: Sample[] = [];
    const durations: HistogramSample[] = [];
    for (const s of used) {
      for (const [status, n] of [...s.statuses].sort(([a], [b]) => a - b))
        requests.push({ labels: { method: s.method, route: s.route, status }, value: n });
      let cumulative = 0;
      durations.push({
        labels: { method: s.method, route: s.route },
        buckets: HTTP_BUCKETS.map((le, i) => ({
          le,
          count: (cumulative += s.counts[i] as number),
        })),
        sum: s.sum,
        count: s.count,
      });
    }
    return [
      {
        name: 'appliance_http_requests_total',
        help: 'HTTP requests answered, by method, declared route and status.',
        type: 'counter',
        samples: requests,
      },
      {
        name: 'appliance_http_request_duration_seconds',
        help: 'Time from receiving a request to the end of its answer, by method and declared route.',
        type: 'histogram',
        samples: durations,
      },
    ];
  }
}

/** Memory and event-loop delay of this process. */
export function processCollector(): { collect: Collector; stop: () => void } {
  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const ms = (ns: number) => ns / 1e6 / 1000;
  return {
    stop: () => loop.disable(),
    collect: () => {
      const memory = process.memoryUsage();
      const samples = [
        { labels: { quantile: '0.5' }, value: ms(loop.percentile(50)) },
        { labels: { quantile: '0.99' }, value: ms(loop.percentile(99)) },
        { labels: { quantile: '1' }, value: ms(loop.max) },
      ];
      loop.reset();
      return [
        {
          name: 'appliance_process_resident_memory_bytes',
          help: 'Resident set size of the appliance process.',
          type: 'gauge',
          samples: [{ value: memory.rss }],
        },
        {
          name: 'appliance_process_heap_used_bytes',
          help: 'V8 heap in use.',
          type: 'gauge',
          samples: [{ value: memory.heapUsed }],
        },
        {
          name: 'appliance_process_cpu_seconds_total',
          help: 'User and system CPU time of the appliance process.',
          type: 'counter',
          samples: [{ value: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 }],
        },
        {
          name: 'appliance_event_loop_delay_seconds',
          help: 'Event-loop delay since the previous scrape (quantile 1 is the maximum).',
          type: 'gauge',
          samples,
        },
      ];
    },
  };
}
