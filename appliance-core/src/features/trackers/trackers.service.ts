/**
 * Tracker records, their logs (sample windows), storage estimates and statistics, and the
 * contributions of trackers to the devices feature (relations, sections, log stats, clean-up).
 */
import type { DB } from '../../platform/db/database.js';
import type { StorageWriter, StorageWriterProducer } from '../../platform/db/storage-writer.js';
import { DAY_MS, HOUR_MS, toSqlDateTime } from '../../platform/time/time.js';
import { formatBytes, type DevicesService, type DeviceWindow } from '../devices/index.js';
import {
  diskRecord,
  diskTrackersOfDevices,
  listDiskTrackers,
  type DiskTrackerRow,
} from './disks.repository.js';
import {
  interfaceRecord,
  interfaceTrackersOfDevices,
  listInterfaceTrackers,
  type InterfaceTrackerRow,
} from './interfaces.repository.js';
import {
  SAMPLE_TABLES,
  SamplesRepository,
  type SampleKind,
  type SeriesPoint,
} from './samples.repository.js';
import { alertRecord, alertsOf, alertsOfDevices, type TrackerKind } from '../alerts/index.js';
import { deleteTrackersOfDevice, trackerIdsOfDevice } from './device-trackers.repository.js';
import {
  latencyRecord,
  latencyTrackerOfDevice,
  latencyReadings,
  latencyTrackersOfDevices,
  type LatencyTrackerRow,
} from './latency.repository.js';
import {
  oidRecord,
  oidTrackersOfDevice,
  oidTrackersOfDevices,
  type OidTrackerRow,
} from './oids.repository.js';
import {
  portRecord,
  portTrackersOfDevice,
  portTrackersOfDevices,
  type PortTrackerRow,
} from './ports.repository.js';
import { notFound } from './trackers.access.js';
import { DEVICE_RELATION_SCHEMAS, DEVICE_SECTION_SCHEMAS } from './trackers.schema.js';
import { trackerCrawlHandler } from './trackers.crawl.js';
import { TrackerWrites } from './trackers.writes.js';

/** What the trackers engine is told when a tracker changes through the API (no restart needed). */
export interface TrackerChanges {
  changed(kind: 'latency' | 'port' | 'disk' | 'interface' | 'oid' | 'service', id: number): void;
  removed(kind: 'latency' | 'port' | 'disk' | 'interface' | 'oid' | 'service', id: number): void;
}

const ts = (ms: number) => toSqlDateTime(ms);

export class TrackersService {
  readonly samples: SamplesRepository;
  /**
   * The pollers' writes: producer `trackers` of the process's one storage writer (a worker thread
   * with its own connection to the database file), which the composition root builds, starts
   * first and closes last. Readers of samples written by the engine see them once
   * `writer.flush()` resolves.
   */
  readonly writer: StorageWriterProducer;
  readonly writes: TrackerWrites;
  changes: TrackerChanges = { changed: () => {}, removed: () => {} };

  /** `storage` must have the trackers' and the devices' statements registered (registerTrackerWrites, registerDeviceWrites). */
  constructor(
    readonly db: DB,
    storage: StorageWriter,
  ) {
    this.samples = new SamplesRepository(db);
    // One transaction a second carries the pollers' readings; 200,000 queued writes are ~25 s of
    // the pollers bench's load (~8,000 writes/s) before the newest readings would be dropped.
    this.writer = storage.producer('trackers', { flushMs: 1000, maxQueued: 200_000 });
    this.writes = new TrackerWrites(this.writer);
  }

  // --- logs ---------------------------------------------------------------------------------------

  series(kind: SampleKind, trackerId: number, window: DeviceWindow): SeriesPoint[] {
    return this.samples.series(kind, trackerId, window.start, window.end);
  }

  latencyLogs(row: LatencyTrackerRow, window: DeviceWindow) {
    return this.series('latency', row.id, window).map((p) => ({
      icmping_id: row.id,
      latency: p.a === null ? -1 : round(p.a),
      loss: round(p.b ?? 0),
      timestamp: ts(p.ts),
    }));
  }

  portLogs(row: PortTrackerRow, window: DeviceWindow) {
    return this.series('port', row.id, window).map((p) => ({
      port_id: row.id,
      latency: p.a === null ? -1 : round(p.a),
      timestamp: ts(p.ts),
    }));
  }

  diskLogs(row: DiskTrackerRow, window: DeviceWindow) {
    return this.series('disk', row.id, window).map((p) => ({
      timestamp: ts(p.ts),
      available: Math.round(p.a ?? 0),
      total: Math.round(p.b ?? 0),
    }));
  }

  interfaceLogs(row: InterfaceTrackerRow, window: DeviceWindow) {
    return this.series('interface', row.id, window).map((p) => ({
      timestamp: ts(p.ts),
      in_bps: Math.round(p.a ?? 0),
      out_bps: Math.round(p.b ?? 0),
      ...(p.extra !== undefined ? { oper_status: p.extra as number | null } : {}),
    }));
  }

  /** OID logs: text values are raw samples; numeric long windows come from rollups. A single synthetic point from the last reading when the window is empty. */
  oidLogs(row: OidTrackerRow, window: DeviceWindow) {
    const points =
      row.datatype === 'I' && window.end - window.start > 6 * HOUR_MS
        ? this.series('oid', row.id, window).map((p) => ({
            timestamp: ts(p.ts),
            value: p.a === null ? null : String(round(p.a)),
          }))
        : this.samples.raw('oid', row.id, window.start, window.end).map((p) => ({
            timestamp: ts(p.ts),
            value: p.extra === null || p.extra === undefined ? null : String(p.extra),
          }));
    if (points.length === 0 && row.value !== null && row.last_polled_at !== null)
      return [{ timestamp: ts(row.last_polled_at), value: row.value }];
    return points;
  }

  alerts(kind: TrackerKind, id: number) {
    return (alertsOf(this.db, kind, [id]).get(id) ?? []).map(alertRecord);
  }

  alertsMany(kind: TrackerKind, ids: readonly number[]) {
    const map = alertsOf(this.db, kind, ids);
    return (id: number) => (map.get(id) ?? []).map(alertRecord);
  }

  storage(kind: SampleKind, id: number): { rows: number; size: string } | null {
    const { rows, bytes } = this.samples.stats(kind, id);
    if (rows === 0) return null;
    return { rows, size: formatBytes(bytes) };
  }

  /** The storage estimate of a tracker the caller may see, else 404 `No stats found` (none stored, or not visible). */
  storageOr404(kind: SampleKind, id: number, visible: boolean): { rows: number; size: string } {
    const estimate = visible ? this.storage(kind, id) : null;
    if (!estimate) throw notFound('No stats found');
    return estimate;
  }

  // --- statistics ---------------------------------------------------------------------------------

  /** Disk growth (used space, KB) and the fill time projected from the 7-day slope; null without logs. */
  diskStats(row: DiskTrackerRow, now: number) {
    const latest = this.samples.latestDisk(row.id);
    if (!latest) return null;
    const firstSince = (since: number) => this.samples.firstDiskSince(row.id, since);
    const used = (s: { available: number; total: number }) => s.total - s.available;
    const growthKB = (since: number) => {
      const first = firstSince(since);
      return first ? Math.round(((used(latest) - used(first)) / 1024) * 100) / 100 : 0;
    };
    const week = firstSince(now - 7 * DAY_MS);
    let estimatedFillTime: string | null = null;
    if (week && latest.ts > week.ts) {
      const slope = (used(latest) - used(week)) / (latest.ts - week.ts); // bytes per ms
      if (slope > 0) estimatedFillTime = ts(latest.ts + Math.round(latest.available / slope));
    }
    return {
      oneDayGrowthKB: growthKB(now - DAY_MS),
      oneWeekGrowthKB: growthKB(now - 7 * DAY_MS),
      oneMonthGrowthKB: growthKB(now - 30 * DAY_MS),
      allTimeGrowthKB: growthKB(0),
      estimatedFillTime,
    };
  }

  /** Latency averages, loss, uptime and monitoring duration (from the hourly rollups); null without logs. */
  latencyStats(row: LatencyTrackerRow, now: number) {
    const since = (start: number) => this.samples.hourlyTotals('latency', row.id, start);
    const all = since(0);
    if (!all.n) return null;
    const day = since(now - DAY_MS);
    const week = since(now - 7 * DAY_MS);
    const avg = (s: typeof all) => (s.n_a ? round((s.sum_a ?? 0) / s.n_a) : null);
    const uptime = (s: typeof all) => (s.n ? round(((s.n_a ?? 0) / s.n) * 100) : null);
    const { first } = this.samples.extent('latency', row.id);
    return {
      dayAvgLatency: avg(day),
      weekAvgLatency: avg(week),
      dayAvgLoss: day.n ? round((day.sum_b ?? 0) / day.n) : null,
      dayUptime: uptime(day),
      weekUptime: uptime(week),
      allTimeUptime: uptime(all),
      currentLatency: row.latency,
      currentLoss: row.loss,
      monitoringDuration: Math.max(
        0,
        Math.round((now - (row.first_sample_at ?? first ?? now)) / 1000),
      ),
    };
  }

  // --- device integration -------------------------------------------------------------------------

  /**
   * Adds trackers to GET /api/devices, GET /api/device/{device}, its stats, the device crawl
   * (interface and disk trackers) and device deletion.
   */
  attachToDevices(devices: DevicesService, afterDelete: (deviceId: number) => void): void {
    const db = this.db;
    devices.registerCrawlHandler('trackers', trackerCrawlHandler(db));
    const relations = DEVICE_RELATION_SCHEMAS;
    const sections = DEVICE_SECTION_SCHEMAS;
    devices.provideDeviceRelation(
      'interfaces',
      (ids) => fillMany(ids, interfaceTrackersOfDevices(db, ids), interfaceRecord),
      relations.interfaces,
    );
    devices.provideDeviceRelation(
      'disks',
      (ids) => fillMany(ids, diskTrackersOfDevices(db, ids), diskRecord),
      relations.disks,
    );
    devices.provideDeviceRelation(
      'ping',
      (ids) => fill(ids, latencyTrackersOfDevices(db, ids), latencyRecord, null),
      relations.ping,
    );
    devices.provideDeviceRelation(
      'oids',
      (ids) => fillMany(ids, oidTrackersOfDevices(db, ids), oidRecord),
      relations.oids,
    );
    devices.provideDeviceRelation(
      'ports',
      (ids) => fillMany(ids, portTrackersOfDevices(db, ids), portRecord),
      relations.ports,
    );
    devices.provideDeviceRelation(
      'alerts',
      (ids) => fillMany(ids, alertsOfDevices(db, ids), alertRecord),
      relations.alerts,
    );
    devices.provideLatencyReadings(() => latencyReadings(db));
    devices.provideDeviceSection(
      'ping',
      (id, window) => {
        const row = latencyTrackerOfDevice(db, id);
        return row ? this.latencyLogs(row, window) : [];
      },
      sections.ping,
    );
    devices.provideDeviceSection(
      'oids',
      (id, window) =>
        oidTrackersOfDevice(db, id, 'oid').map((row) => ({
          ...oidRecord(row),
          alerts: this.alerts('oid', row.id),
          logs: this.oidLogs(row, window),
        })),
      sections.oids,
    );
    devices.provideDeviceSection(
      'ports',
      (id, window) =>
        portTrackersOfDevice(db, id).map((row) => ({
          ...portRecord(row),
          logs: this.portLogs(row, window),
        })),
      sections.ports,
    );
    devices.provideDeviceSection(
      'interfaces',
      (id, window) =>
        listInterfaceTrackers(db, id).map((row) => ({
          ...interfaceRecord(row),
          alerts: this.alerts('interface', row.id),
          logs: this.interfaceLogs(row, window),
        })),
      sections.interfaces,
    );
    devices.provideDeviceSection(
      'disks',
      (id, window) =>
        listDiskTrackers(db, id).map((row) => ({
          ...diskRecord(row),
          alerts: this.alerts('disk', row.id),
          logs: this.diskLogs(row, window),
        })),
      sections.disks,
    );
    devices.provideDeviceSection(
      'alerts',
      (id) => (alertsOfDevices(db, [id]).get(id) ?? []).map(alertRecord),
      sections.alerts,
    );

    for (const kind of ['latency', 'port', 'oid', 'disk', 'interface'] as const)
      devices.registerDeviceLogStats(SAMPLE_TABLES[kind], (deviceId) =>
        this.samples.deviceStats(kind, trackerIdsOfDevice(db, kind, deviceId)),
      );

    devices.registerDeviceCleanup(
      'trackers',
      (deviceId) => deleteTrackersOfDevice(db, deviceId),
      (deviceId) => afterDelete(deviceId),
    );
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function fill<R, T>(
  ids: readonly number[],
  rows: Map<number, R>,
  map: (row: R) => T,
  empty: T,
): Map<number, T> {
  return new Map(ids.map((id) => [id, rows.has(id) ? map(rows.get(id) as R) : empty]));
}

function fillMany<R, T>(
  ids: readonly number[],
  rows: Map<number, R[]>,
  map: (row: R) => T,
): Map<number, T[]> {
  return new Map(ids.map((id) => [id, (rows.get(id) ?? []).map(map)]));
}
