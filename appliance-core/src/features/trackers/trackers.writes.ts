/**
 * What the pollers write, as data for the storage writer (platform/db/storage-writer.ts): the
 * samples and rollups, the latest reading on each tracker row, interface counters, disk readings
 * and device reachability, each a named statement run with its parameters in the writer's worker
 * thread, in batched transactions. Everything computed from readings (rates from counters, up or
 * down, link-state alerts) is computed on the main thread before the write is queued.
 *
 * The worker's connection does not fire the main connection's TEMP triggers
 * (platform/db/change-triggers.ts: the identity cache of features/auth and the device list cache
 * of features/devices). None of the tables and columns written here is watched by them: the
 * samples tables and sample_rollups, the reading columns of the tracker rows, and of `devices`
 * only `reachability` and `reachability_at` (the devices feature's statement; its caches watch
 * other columns). Keep it so: a watched table or column written here would leave a cache stale
 * (trackers.writes.test.ts checks).
 *
 * A tracker deleted while its readings are queued: the tracker-row updates then match no row,
 * and the sample statements insert only while the tracker exists (samples.repository.ts), so
 * nothing is left orphaned and nothing fails.
 */
import type { DB } from '../../platform/db/database.js';
import { pruneByKey, tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { StorageWriter, StorageWriterProducer } from '../../platform/db/storage-writer.js';
import { deviceReachabilityWrite } from '../devices/index.js';
import {
  FIVE_MINUTES,
  ONE_HOUR,
  SAMPLE_STATEMENTS,
  SAMPLE_TABLES,
  sampleWrites,
  type Sample,
} from './samples.repository.js';
import type { InterfaceCounters } from './snmp.poller.js';

/**
 * The statements of tracker rows the pollers write. The device's reachability is the devices
 * feature's statement (`devices.reachability`, registered by `registerDeviceWrites`): the pollers
 * queue it by name.
 */
export const TRACKER_STATEMENTS: Readonly<Record<string, string>> = {
  'trackers.latency.reading':
    'UPDATE latency_trackers SET latency = ?, loss = ?, last_polled_at = ?, first_sample_at = coalesce(first_sample_at, ?) WHERE id = ?',
  'trackers.port.reading':
    'UPDATE port_trackers SET state = ?, latency = ?, last_polled_at = ? WHERE id = ?',
  'trackers.oid.reading': 'UPDATE oid_trackers SET value = ?, last_polled_at = ? WHERE id = ?',
  'trackers.disk.first-sample':
    'UPDATE disk_trackers SET first_sample_at = coalesce(first_sample_at, ?) WHERE id = ?',
  'trackers.interface.counters':
    'UPDATE interface_trackers SET in_octets = ?, out_octets = ?, counter_bits = ?, counters_at = ?, in_bps = coalesce(?, in_bps), out_bps = coalesce(?, out_bps), oper_status = coalesce(?, oper_status) WHERE id = ?',
  'trackers.disk.reading':
    'UPDATE disk_trackers SET available = ?, total = ?, last_seen_at = ?, updated_at = ? WHERE id = ?',
};

/** Registers the trackers' statements on the writer (the feature that owns the tables does). */
export function registerTrackerWrites(writer: StorageWriter): void {
  for (const [name, sql] of Object.entries({ ...SAMPLE_STATEMENTS, ...TRACKER_STATEMENTS }))
    writer.define(name, sql);
}

/** The pollers' writes, queued by the `trackers` producer (the devices statement by its name). */
export class TrackerWrites {
  constructor(private readonly writer: StorageWriterProducer) {}

  sample(sample: Sample): void {
    for (const [name, params] of sampleWrites(sample)) this.writer.write(name, params);
  }

  latencyReading(id: number, latency: number, loss: number, now: number): void {
    this.writer.write('trackers.latency.reading', [latency, loss, now, now, id]);
  }

  portReading(id: number, state: string, latency: number, now: number): void {
    this.writer.write('trackers.port.reading', [state, latency, now, id]);
  }

  oidReading(id: number, value: string, now: number): void {
    this.writer.write('trackers.oid.reading', [value, now, id]);
  }

  diskReading(id: number, reading: { available: number; total: number }, now: number): void {
    this.writer.write('trackers.disk.reading', [reading.available, reading.total, now, now, id]);
    this.writer.write('trackers.disk.first-sample', [now, id]);
  }

  /** Counters are kept as decimal text (Counter64 exceeds 2^53); null rates keep the previous ones. */
  interfaceCounters(
    id: number,
    reading: InterfaceCounters,
    rates: { inBps: number | null; outBps: number | null },
    now: number,
  ): void {
    this.writer.write('trackers.interface.counters', [
      reading.inOctets.toString(),
      reading.outOctets.toString(),
      reading.bits,
      now,
      rates.inBps,
      rates.outBps,
      reading.operStatus,
      id,
    ]);
  }

  deviceReachability(deviceId: number, latency: number, now: number): void {
    this.writer.write(...deviceReachabilityWrite(deviceId, latency, now));
  }
}

/** Default retention of raw samples, 5-minute and hourly rollups (days; docs/features/maintenance.md). */
export const SAMPLE_RETENTION_DAYS = { raw: 30, fiveMinutes: 90, hourly: 400 } as const;

/**
 * The retention rows of the samples (one per kind) and of the two rollup resolutions, pruned by
 * batched range deletes per tracker through the storage writer (platform/db/retention.ts).
 * The rollups are one table: each row's size is its estimated share of the table's real size
 * (a tracker writes twelve 5-minute buckets per hourly one, each kept for its row's days).
 */
export function registerTrackerRetention(
  retention: RetentionRegistry,
  db: DB,
  storage: StorageWriter,
): void {
  for (const [kind, table] of Object.entries(SAMPLE_TABLES))
    retention.register({
      table,
      defaultDays: SAMPLE_RETENTION_DAYS.raw,
      size: () => tableBytes(db, [table]),
      prune: pruneByKey(db, storage, {
        namespace: 'trackers',
        name: `${kind}_samples`,
        table,
        key: 'tracker_id',
        time: 'ts',
      }),
    });
  const share = (mine: 'fiveMinutes' | 'hourly') => {
    const five = 12 * (retention.days('sample_rollups_5m') ?? SAMPLE_RETENTION_DAYS.fiveMinutes);
    const hour = retention.days('sample_rollups_1h') ?? SAMPLE_RETENTION_DAYS.hourly;
    return (mine === 'fiveMinutes' ? five : hour) / (five + hour);
  };
  for (const [name, resolution, key] of [
    ['sample_rollups_5m', FIVE_MINUTES, 'fiveMinutes'],
    ['sample_rollups_1h', ONE_HOUR, 'hourly'],
  ] as const) {
    const prunes = Object.keys(SAMPLE_TABLES).map((kind) =>
      pruneByKey(db, storage, {
        namespace: 'trackers',
        name: `${name}_${kind}`,
        table: 'sample_rollups',
        fixed: [{ column: 'kind', value: kind }],
        key: 'tracker_id',
        between: [{ column: 'resolution', value: resolution }],
        time: 'ts',
      }),
    );
    retention.register({
      table: name,
      defaultDays: SAMPLE_RETENTION_DAYS[key],
      size: () => Math.round(tableBytes(db, ['sample_rollups']) * share(key)),
      prune: async (cutoff) => {
        let removed = 0;
        for (const prune of prunes) removed += await prune(cutoff);
        return removed;
      },
    });
  }
}
