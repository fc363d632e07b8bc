/**
 * The counters of every intake feed, in one place (GET /api/intake/counters, designed; mirrored
 * in GET /metrics as `appliance_intake_messages_total{feed, outcome}`). Each feed registers a
 * function returning its counters since start: at least `received`, `stored` and `dropped`,
 * plus its own (`filtered`, `malformed`, `duplicates` ...). The feeds known to the product are
 * listed up front and answer null until their intake registers (the IDS follower, flows), so
 * a client sees the same keys on every appliance.
 */
import type { MetricFamily } from '../../platform/metrics/metrics.js';

export type FeedCounters = Record<string, number | string | null>;

export const KNOWN_FEEDS = ['syslog', 'windows', 'ids'] as const;

export class IntakeCounterRegistry {
  private readonly feeds = new Map<string, () => FeedCounters | null>();

  /** `read` answers null while the feed is off (the IDS follower without an eve file). */
  register(feed: string, read: () => FeedCounters | null): void {
    if (this.feeds.has(feed)) throw new Error(`intake counters of ${feed} are already registered`);
    this.feeds.set(feed, read);
  }

  snapshot(): Record<string, FeedCounters | null> {
    const out: Record<string, FeedCounters | null> = {};
    for (const feed of KNOWN_FEEDS) out[feed] = null;
    for (const [feed, read] of this.feeds) out[feed] = read();
    return out;
  }

  metrics(): MetricFamily[] {
    const samples: { labels: Record<string, string>; value: number }[] = [];
    for (const [feed, read] of this.feeds)
      for (const [outcome, value] of Object.entries(read() ?? {}))
        if (typeof value === 'number' && !outcome.endsWith('_ms') && outcome !== 'port')
          samples.push({ labels: { feed, outcome }, value });
    return [
      {
        name: 'appliance_intake_messages_total',
        help: 'Messages of each intake feed since start, by outcome (received, stored, dropped ...).',
        type: 'counter',
        samples,
      },
    ];
  }
}
