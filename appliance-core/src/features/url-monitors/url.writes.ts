/**
 * The URL checks' retention row (platform/db/retention.ts): samples older than the cutoff
 * deleted per URL tracker as one key range ((tracker_id, ts) is the primary key), in batches
 * through the storage writer. Not watched by a TEMP-trigger cache (change-triggers.ts).
 */
import type { DB } from '../../platform/db/database.js';
import { pruneByKey, tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';

/** Default retention of URL samples (days): the tracker samples' default. */
export const URL_SAMPLE_RETENTION_DAYS = 30;

export function registerUrlRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  retention.register({
    table: 'url_samples',
    defaultDays: URL_SAMPLE_RETENTION_DAYS,
    size: () => tableBytes(db, ['url_samples']),
    prune: pruneByKey(db, writer, {
      namespace: 'url-monitors',
      name: 'url_samples',
      table: 'url_samples',
      key: 'tracker_id',
      time: 'ts',
    }),
  });
}
