/**
 * What the log feeds write, as data for the storage writer (platform/db/storage-writer.ts): rows
 * of syslog and Windows events and their per-minute severity rollups. Rows and the rollup counts
 * that cover them are queued as one atomic group (syslog-receiver.engine.mjs,
 * eventlog-intake.service.ts), so a summary never counts a row that is not stored.
 *
 * Multi-row INSERTs: the writer's cost is per write (one structured clone and one statement run),
 * so the parse thread packs ROWS_PER_LARGE_INSERT rows into one write, then ROWS_PER_INSERT; the
 * remainder of a batch goes row by row. None of these tables is watched by a TEMP-trigger cache (change-triggers.ts).
 */
import type { DB } from '../../platform/db/database.js';
import { pruneByTime, tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';

/** Rows per multi-row INSERT: the parse thread (syslog-parser.engine.mjs) packs 128, 32, then 1. */
export const ROWS_PER_INSERT = 32;
export const ROWS_PER_LARGE_INSERT = 128;
const SYSLOG_COLUMNS =
  'device_id, timestamp, facility, severity, source, message, host, sender, reported_at, malformed';
const SYSLOG_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const EVENTLOG_COLUMNS =
  'device_id, timestamp, event_id, log, source, severity, data, record_id, tracker_id';

export const LOG_STATEMENTS: Readonly<Record<string, string>> = {
  'logs.syslog.insert': `INSERT INTO syslog_log_latest (${SYSLOG_COLUMNS}) VALUES ${SYSLOG_ROW}`,
  'logs.syslog.insert-many': `INSERT INTO syslog_log_latest (${SYSLOG_COLUMNS}) VALUES ${Array(ROWS_PER_INSERT).fill(SYSLOG_ROW).join(', ')}`,
  'logs.syslog.insert-128': `INSERT INTO syslog_log_latest (${SYSLOG_COLUMNS}) VALUES ${Array(ROWS_PER_LARGE_INSERT).fill(SYSLOG_ROW).join(', ')}`,
  'logs.syslog.rollup':
    'INSERT INTO syslog_minute_rollup (minute, device_id, severity, count) VALUES (?, ?, ?, ?) ON CONFLICT (minute, device_id, severity) DO UPDATE SET count = count + excluded.count',
  'logs.eventlog.insert': `INSERT INTO eventlog_log_latest (${EVENTLOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  'logs.eventlog.rollup':
    'INSERT INTO eventlog_minute_rollup (minute, device_id, severity, count) VALUES (?, ?, ?, ?) ON CONFLICT (minute, device_id, severity) DO UPDATE SET count = count + excluded.count',
  // The tracker's cursor, committed with the rows it covers (never moves backwards).
  'logs.eventlog.cursor':
    'UPDATE eventlog_trackers SET last_polled_at = ?, last_event_at = max(coalesce(last_event_at, 0), ?), last_record_id = max(coalesce(last_record_id, 0), ?) WHERE id = ?',
};

/** Registers the log feeds' statements on the writer (the feature that owns the tables does). */
export function registerLogWrites(writer: StorageWriter): void {
  for (const [name, sql] of Object.entries(LOG_STATEMENTS)) writer.define(name, sql);
}

/** Default retention of the per-minute severity summaries (days): the log tables' default. */
export const LOG_SUMMARY_RETENTION_DAYS = 84;

/**
 * The retention rows of the per-minute severity summaries of the three feeds (`minute` leads
 * each primary key): deleted oldest first in batches through the storage writer. The log rows
 * themselves are partitioned tables: maintenance registers their rows and drops partitions.
 */
export function registerLogRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  for (const table of ['syslog_minute_rollup', 'eventlog_minute_rollup', 'eve_minute_rollup'])
    retention.register({
      table,
      defaultDays: LOG_SUMMARY_RETENTION_DAYS,
      size: () => tableBytes(db, [table]),
      prune: pruneByTime(db, writer, { namespace: 'logs', table, time: 'minute' }),
    });
}
