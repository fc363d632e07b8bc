/**
 * The delivery ledger's retention row (platform/db/retention.ts): settled deliveries (sent,
 * failed, suppressed, coalesced: never one still pending or sending) older than the cutoff by
 * their creation time, deleted in batches through the storage writer; their attempts go with
 * them (ON DELETE CASCADE). Not watched by a TEMP-trigger cache (change-triggers.ts).
 */
import type { DB } from '../../../platform/db/database.js';
import { pruneByTime, tableBytes, type RetentionRegistry } from '../../../platform/db/retention.js';
import type { StorageWriter } from '../../../platform/db/storage-writer.js';

/** Default retention of the delivery ledger (days). */
export const DELIVERY_RETENTION_DAYS = 90;

export function registerDeliveryRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  retention.register({
    table: 'alert_deliveries',
    defaultDays: DELIVERY_RETENTION_DAYS,
    size: () => tableBytes(db, ['alert_deliveries', 'alert_delivery_attempts']),
    prune: pruneByTime(db, writer, {
      namespace: 'alerts',
      table: 'alert_deliveries',
      time: 'created_at',
      where: "status NOT IN ('pending', 'sending')",
    }),
  });
}
