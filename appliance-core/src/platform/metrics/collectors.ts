/**
 * Collectors for the platform's shared resources: the scheduler and the storage writer.
 */
import type { SchedulerStats } from '../scheduler/scheduler.js';
import type { Collector, MetricFamily } from './metrics.js';

export function schedulerCollector(stats: () => SchedulerStats): Collector {
  return () => {
    const s = stats();
    const seconds = (ms: number) => ms / 1000;
    return [
      gauge('appliance_scheduler_jobs', 'Jobs scheduled.', s.jobs),
      gauge('appliance_scheduler_running', 'Runs (or batches) in flight.', s.running),
      gauge(
        'appliance_scheduler_queued',
        'Due jobs waiting for a free slot of their kind.',
        s.queued,
      ),
      counter('appliance_scheduler_runs_total', 'Job runs started.', s.runs),
      counter(
        'appliance_scheduler_overruns_total',
        'Runs skipped because the previous run of the job was still in flight.',
        s.overruns,
      ),
      counter('appliance_scheduler_failures_total', 'Job runs that threw.', s.failures),
      {
        name: 'appliance_scheduler_lateness_seconds',
        help: 'Start time minus due time over the most recent runs.',
        type: 'gauge',
        samples: [
          { labels: { quantile: '0.5' }, value: seconds(s.lateness.p50) },
          { labels: { quantile: '0.99' }, value: seconds(s.lateness.p99) },
          { labels: { quantile: '1' }, value: seconds(s.lateness.max) },
        ],
      },
    ];
  };
}

export function gauge(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'gauge', samples: [{ value }] };
}

export function counter(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'counter', samples: [{ value }] };
}
