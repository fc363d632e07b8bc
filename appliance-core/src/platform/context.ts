import type { Logger } from 'pino';
import type { ApplianceConfig } from './config/config.js';
import type { DB } from './db/database.js';
import type { MetricsRegistry } from './metrics/metrics.js';
import type { CollectorPorts } from './net/collector-ports.js';
import type { SecretBox } from './security/secret-box.js';
import type { Clock } from './time/time.js';

/** What the composition root hands every feature. */
export interface CoreContext {
  db: DB;
  clock: Clock;
  secrets: SecretBox;
  config: ApplianceConfig;
  log: Logger;
  hostname: () => string;
  /** What the collectors bound (reported after the ready line and in the ready message). */
  collectorPorts: CollectorPorts;
  /** Collectors read at every scrape of GET /metrics. */
  metrics: MetricsRegistry;
}
