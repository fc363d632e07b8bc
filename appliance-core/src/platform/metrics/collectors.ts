/**
 * Collectors for the platform's shared resources: the scheduler and the storage writer.
 */
import type { StorageWriterStats } from '../db/storage-writer.js';
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

/** The storage writer's counters by producer (exact for this thread's producers). */
export function storageWriterCollector(stats: () => StorageWriterStats): Collector {
  return () => {
    const s = stats();
    const producers = Object.entries(s.producers).sort(([a], [b]) => a.localeCompare(b));
    const outcomes = ['written', 'dropped', 'failed', 'lost'] as const;
    return [
      {
        name: 'appliance_storage_writes_received_total',
        help: 'Writes producers asked for, by producer.',
        type: 'counter',
        samples: producers.map(([producer, p]) => ({ labels: { producer }, value: p.received })),
      },
      {
        name: 'appliance_storage_writes_total',
        help: 'Writes settled, by producer and outcome (dropped: over the producer queue limit; lost: worker ended first).',
        type: 'counter',
        samples: producers.flatMap(([producer, p]) =>
          outcomes.map((outcome) => ({ labels: { producer, outcome }, value: p[outcome] })),
        ),
      },
      {
        name: 'appliance_storage_queued',
        help: 'Writes accepted and not yet settled (buffered or in flight), by producer.',
        type: 'gauge',
        samples: producers.map(([producer, p]) => ({
          labels: { producer },
          value: p.queued + p.inFlight,
        })),
      },
      counter(
        'appliance_storage_batches_total',
        'Transactions the storage writer committed.',
        s.flushes,
      ),
      counter(
        'appliance_storage_worker_restarts_total',
        'Starts of the writer worker after a crash.',
        s.restarts,
      ),
    ];
  };
}

export function gauge(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'gauge', samples: [{ value }] };
}

export function counter(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'counter', samples: [{ value }] };
}
