/**
 * The log feature's own tables besides the lists (log-list.repository.ts) and saved filters:
 * per-device syslog access config, event-log queries and trackers, IDS event detail, and the
 * per-device figures of GET /api/device/{device}/stats.
 */
import type { DB } from '../../platform/db/database.js';
import { PartitionedTable } from '../../platform/db/partitions.js';

export interface LogTables {
  syslog: PartitionedTable;
  eventlog: PartitionedTable;
  eve: PartitionedTable;
}

/** The partitioned tables the lists read (their rotation and pruning are maintenance's). */
export function logTables(db: DB): LogTables {
  return {
    syslog: new PartitionedTable(db, { name: 'syslog_log', timeColumn: 'timestamp' }),
    eventlog: new PartitionedTable(db, { name: 'eventlog_log', timeColumn: 'timestamp' }),
    eve: new PartitionedTable(db, { name: 'eve_log', timeColumn: 'timestamp' }),
  };
}

// --- syslog access config ----------------------------------------------------------------------

export interface SyslogConfigRow {
  device_id: number;
  enabled: number;
  min_severity: number;
}

export function findSyslogConfig(db: DB, deviceId: number): SyslogConfigRow | undefined {
  return db.prepare('SELECT * FROM syslog_config WHERE device_id = ?').get(deviceId) as
    SyslogConfigRow | undefined;
}

/** Creates the enabled default (min_severity 7) when the device has none; returns the row. */
export function ensureSyslogConfig(db: DB, deviceId: number): SyslogConfigRow {
  db.prepare(
    'INSERT INTO syslog_config (device_id, enabled, min_severity) VALUES (?, 1, 7) ON CONFLICT (device_id) DO NOTHING',
  ).run(deviceId);
  return findSyslogConfig(db, deviceId)!;
}

export function saveSyslogConfig(db: DB, row: SyslogConfigRow): void {
  db.prepare(
    'INSERT INTO syslog_config (device_id, enabled, min_severity) VALUES (?, ?, ?) ON CONFLICT (device_id) DO UPDATE SET enabled = excluded.enabled, min_severity = excluded.min_severity',
  ).run(row.device_id, row.enabled, row.min_severity);
}

export function deleteSyslogConfig(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM syslog_config WHERE device_id = ?').run(deviceId);
}

/** [device id, min_severity] of every device with a config (the receiver's copy). */
export function allSyslogConfigs(db: DB): [number, number][] {
  return (
    db.prepare('SELECT device_id, min_severity FROM syslog_config').all() as {
      device_id: number;
      min_severity: number;
    }[]
  ).map((r) => [r.device_id, r.min_severity]);
}

// --- event-log queries and trackers ------------------------------------------------------------

export interface EventLogQueryRow {
  id: number;
  label: string;
  channel: string;
  levels: string;
  event_ids: string;
}

export function listEventLogQueries(db: DB): EventLogQueryRow[] {
  return db.prepare('SELECT * FROM eventlog_queries ORDER BY id').all() as EventLogQueryRow[];
}

export function findEventLogQuery(db: DB, id: number): EventLogQueryRow | undefined {
  return db.prepare('SELECT * FROM eventlog_queries WHERE id = ?').get(id) as
    EventLogQueryRow | undefined;
}

export interface EventLogTrackerRow {
  id: number;
  device_id: number;
  query_id: number;
  created_at: number;
  last_polled_at: number | null;
  last_event_at: number | null;
  last_record_id: number | null;
}

export function listEventLogTrackers(db: DB, deviceId: number): EventLogTrackerRow[] {
  return db
    .prepare('SELECT * FROM eventlog_trackers WHERE device_id = ? ORDER BY id')
    .all(deviceId) as EventLogTrackerRow[];
}

/** Every event-log tracker (the agents feature polls them). */
export function allEventLogTrackers(db: DB): EventLogTrackerRow[] {
  return db.prepare('SELECT * FROM eventlog_trackers ORDER BY id').all() as EventLogTrackerRow[];
}

export function findEventLogTracker(db: DB, id: number): EventLogTrackerRow | undefined {
  return db.prepare('SELECT * FROM eventlog_trackers WHERE id = ?').get(id) as
    EventLogTrackerRow | undefined;
}

/** Inserts the pair unless it exists; `created` says which. */
export function ensureEventLogTracker(
  db: DB,
  deviceId: number,
  queryId: number,
  now: number,
): { row: EventLogTrackerRow; created: boolean } {
  const changes = db
    .prepare(
      'INSERT INTO eventlog_trackers (device_id, query_id, created_at) VALUES (?, ?, ?) ON CONFLICT (device_id, query_id) DO NOTHING',
    )
    .run(deviceId, queryId, now).changes;
  const row = db
    .prepare('SELECT * FROM eventlog_trackers WHERE device_id = ? AND query_id = ?')
    .get(deviceId, queryId) as EventLogTrackerRow;
  return { row, created: changes === 1 };
}

export function deleteEventLogTracker(db: DB, id: number): void {
  db.prepare('DELETE FROM eventlog_trackers WHERE id = ?').run(id);
}

export function deleteEventLogTrackersOfDevice(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM eventlog_trackers WHERE device_id = ?').run(deviceId);
}

// --- IDS detail and device stats ---------------------------------------------------------------

export interface EveRow {
  id: number;
  timestamp: number;
  src_ip: string;
  dst_ip: string;
  [column: string]: unknown;
}

/** An IDS event by id, from whichever partition holds it (each probed by its primary key). */
export function findEveEvent(tables: LogTables, db: DB, id: number): EveRow | undefined {
  for (const partition of tables.eve.partitions()) {
    const row = db.prepare(`SELECT * FROM "${partition}" WHERE id = ?`).get(id) as
      EveRow | undefined;
    if (row) return row;
  }
  return undefined;
}

/**
 * Rows of a device in a partitioned log table (counted on its device index) and their bytes,
 * estimated from the mean size of up to 1,000 of its rows per partition (a sum over millions of
 * rows would read them all).
 */
export function deviceLogStats(
  db: DB,
  table: PartitionedTable,
  deviceId: number,
  textColumns: readonly string[],
): { rows: number; bytes: number } {
  let rows = 0;
  let bytes = 0;
  const length = textColumns.map((c) => `coalesce(length(${c}), 0)`).join(' + ');
  for (const partition of table.partitions()) {
    const count = db
      .prepare(`SELECT count(*) FROM "${partition}" WHERE device_id = ?`)
      .pluck()
      .get(deviceId) as number;
    if (count === 0) continue;
    const mean = db
      .prepare(
        `SELECT avg(size) FROM (SELECT ${length} + 48 AS size FROM "${partition}" WHERE device_id = ? LIMIT 1000)`,
      )
      .pluck()
      .get(deviceId) as number;
    rows += count;
    bytes += Math.round(count * mean);
  }
  return { rows, bytes };
}
