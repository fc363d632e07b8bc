/**
 * The alert history's retention rows (platform/db/retention.ts), pruned in batches through the
 * storage writer: closed occurrences by the time they opened (their notifications go with them,
 * ON DELETE CASCADE; an open occurrence is never pruned), and the legacy alerts' firings by
 * alert and time (their (alert_id, ts) index). None of these tables is watched by a TEMP-trigger
 * cache (change-triggers.ts): the writer refuses a statement that writes one.
 */
import type { DB } from '../../platform/db/database.js';
import {
  pruneByKey,
  pruneByTime,
  tableBytes,
  type RetentionRegistry,
} from '../../platform/db/retention.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';

/** Default retention of the alert history (days). */
export const ALERT_HISTORY_RETENTION_DAYS = 365;

export function registerAlertRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  retention.register({
    table: 'alert_occurrences',
    defaultDays: ALERT_HISTORY_RETENTION_DAYS,
    size: () => tableBytes(db, ['alert_occurrences', 'alert_notifications']),
    prune: pruneByTime(db, writer, {
      namespace: 'alerts',
      table: 'alert_occurrences',
      time: 'opened_at',
      where: 'closed_at IS NOT NULL',
    }),
  });
  retention.register({
    table: 'legacy_alert_events',
    defaultDays: ALERT_HISTORY_RETENTION_DAYS,
    size: () => tableBytes(db, ['legacy_alert_events']),
    prune: pruneByKey(db, writer, {
      namespace: 'alerts',
      name: 'legacy_alert_events',
      table: 'legacy_alert_events',
      key: 'alert_id',
      time: 'ts',
    }),
  });
}
