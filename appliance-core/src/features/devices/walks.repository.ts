/**
 * SNMP walks (walks_log): a partitioned table (platform/db/partitions.ts), registered for
 * maintenance with a weekly rotation and 84 days of retention (the maintenance feature's
 * scheduler rotates and prunes it). Writes go to the latest partition; reads of a device's
 * newest walk visit partitions newest first and stop at the first hit, each through its
 * (device_id, timestamp) index. A deleted device's walks stay until their partition is pruned
 * (one rule for every partitioned table: they shed data only by pruning; docs/spec-decisions.md).
 */
import type { DB } from '../../platform/db/database.js';
import {
  DEFAULT_RETENTION_DAYS,
  definePartitionedTable,
  WEEKLY_ROTATION,
  type PartitionedTable,
} from '../../platform/db/partitions.js';
import { toIso } from '../../platform/time/time.js';
import type { WalkRecord } from './devices.schema.js';
import type { DecodedVarbind } from '../../platform/snmp/snmp.client.js';

export const WALKS_TABLE = 'walks_log';

interface WalkRow {
  id: number;
  device_id: number;
  timestamp: number;
  kind: 'crawl' | 'live';
  oid_count: number;
  duration_ms: number;
  truncated: number;
  walk?: string;
}

export interface NewWalk {
  deviceId: number;
  timestamp: number;
  kind: 'crawl' | 'live';
  varbinds: readonly DecodedVarbind[];
  durationMs: number;
  truncated: boolean;
}

const summaryOf = (row: WalkRow) => ({
  id: row.id,
  device_id: row.device_id,
  timestamp: toIso(row.timestamp),
  kind: row.kind,
  oid_count: row.oid_count,
  duration_ms: row.duration_ms,
  truncated: row.truncated === 1,
});

export class WalksRepository {
  readonly table: PartitionedTable;

  constructor(private readonly db: DB) {
    this.table = definePartitionedTable(db, {
      name: WALKS_TABLE,
      timeColumn: 'timestamp',
      maintenance: {
        listed: true,
        rotationCron: WEEKLY_ROTATION,
        retentionDays: DEFAULT_RETENTION_DAYS,
      },
    });
  }

  insert(walk: NewWalk): WalkRecord {
    const result = this.db
      .prepare(
        `INSERT INTO ${this.table.latest} (device_id, timestamp, kind, oid_count, duration_ms, truncated, walk) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        walk.deviceId,
        walk.timestamp,
        walk.kind,
        walk.varbinds.length,
        Math.round(walk.durationMs),
        walk.truncated ? 1 : 0,
        JSON.stringify(walk.varbinds),
      );
    return {
      ...summaryOf({
        id: Number(result.lastInsertRowid),
        device_id: walk.deviceId,
        timestamp: walk.timestamp,
        kind: walk.kind,
        oid_count: walk.varbinds.length,
        duration_ms: Math.round(walk.durationMs),
        truncated: walk.truncated ? 1 : 0,
      }),
      varbinds: [...walk.varbinds],
    };
  }

  /** The device's newest walk with its varbinds, or null. */
  latest(deviceId: number): WalkRecord | null {
    for (const partition of this.table.partitions()) {
      const row = this.db
        .prepare(
          `SELECT * FROM ${partition} WHERE device_id = ? ORDER BY timestamp DESC, id DESC LIMIT 1`,
        )
        .get(deviceId) as WalkRow | undefined;
      if (row)
        return { ...summaryOf(row), varbinds: JSON.parse(row.walk as string) as DecodedVarbind[] };
    }
    return null;
  }

  /** Summaries (no varbinds) of the newest walks of many devices, newest first, at most `perDevice` each. */
  summaries(deviceIds: readonly number[], perDevice = 10) {
    const map = new Map<number, ReturnType<typeof summaryOf>[]>(deviceIds.map((id) => [id, []]));
    if (deviceIds.length === 0) return map;
    const rows = this.db
      .prepare(
        `SELECT id, device_id, timestamp, kind, oid_count, duration_ms, truncated FROM (
           SELECT id, device_id, timestamp, kind, oid_count, duration_ms, truncated,
                  row_number() OVER (PARTITION BY device_id ORDER BY timestamp DESC, id DESC) AS n
           FROM ${WALKS_TABLE} WHERE device_id IN (SELECT value FROM json_each(?)))
         WHERE n <= ? ORDER BY device_id, timestamp DESC, id DESC`,
      )
      .all(JSON.stringify(deviceIds), perDevice) as WalkRow[];
    for (const row of rows) map.get(row.device_id)?.push(summaryOf(row));
    return map;
  }

  /** Rows and stored bytes of a device's walks (GET /api/device/{device}/stats). */
  statsOf(deviceId: number): { rows: number; bytes: number } {
    const row = this.db
      .prepare(
        `SELECT count(*) AS rows, coalesce(sum(length(walk) + 48), 0) AS bytes FROM ${WALKS_TABLE} WHERE device_id = ?`,
      )
      .get(deviceId) as { rows: number; bytes: number };
    return row;
  }
}
