/**
 * What the flow collector writes, as data for the storage writer (platform/db/storage-writer.ts):
 * flow rows into `flows_latest` (multi-row INSERTs of ROWS_PER_INSERT rows, the remainder row
 * by row) and the hourly conversation rollup `flow_conversations` (one upsert per conversation
 * tuple per batch, pre-aggregated by the receiver), queued together as one atomic group per
 * batch (flow-receiver.engine.mjs): the aggregated list never counts a flow that is not stored.
 *
 * `src_ports` merges the stored array with the batch's ports, distinct, at most MAX_SRC_PORTS;
 * once full it no longer changes. Enrichment columns take the newest batch's snapshot.
 * None of these tables is watched by a TEMP-trigger cache (change-triggers.ts).
 */
import type { DB } from '../../platform/db/database.js';
import { pruneByTime, tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';

/** Rows per multi-row INSERT: the receiver (flow-receiver.engine.mjs) packs the same number. */
export const ROWS_PER_INSERT = 32;
export const MAX_SRC_PORTS = 64;
/** Conversation rows per multi-row upsert (the receiver packs the same number). */
export const ROLLUP_ROWS_PER_UPSERT = 16;
export const FLOW_COLUMNS =
  'start_time, end_time, src_ip, src_port, dst_ip, dst_port, protocol, bytes, packets, flow_src, vlan, in_iface, out_iface, src_id, src_host, src_profile, dst_id, dst_host, dst_profile, received_at';
const FLOW_ROW = `(${Array(20).fill('?').join(', ')})`;
const CONVERSATION_KEY =
  'hour, src_ip, dst_ip, dst_port, protocol, flow_src, vlan, in_iface, out_iface';

export const FLOW_STATEMENTS: Readonly<Record<string, string>> = {
  'flows.insert': `INSERT INTO flows_latest (${FLOW_COLUMNS}) VALUES ${FLOW_ROW}`,
  'flows.insert-many': `INSERT INTO flows_latest (${FLOW_COLUMNS}) VALUES ${Array(ROWS_PER_INSERT).fill(FLOW_ROW).join(', ')}`,
  'flows.rollup': rollup(1),
  'flows.rollup-many': rollup(ROLLUP_ROWS_PER_UPSERT),
};

/** The upsert of `rows` conversation rows (a row meeting a stored one, or an earlier row of the same statement, is merged). */
function rollup(rows: number): string {
  const row = `(${Array(21).fill('?').join(', ')})`;
  return `INSERT INTO flow_conversations (${CONVERSATION_KEY}, src_ports, bytes, packets, flows, start_time, end_time, src_id, src_host, src_profile, dst_id, dst_host, dst_profile) VALUES ${Array(rows).fill(row).join(', ')}
 ON CONFLICT (${CONVERSATION_KEY}) DO UPDATE SET
  bytes = bytes + excluded.bytes,
  packets = packets + excluded.packets,
  flows = flows + excluded.flows,
  start_time = min(start_time, excluded.start_time),
  end_time = max(end_time, excluded.end_time),
  src_ports = CASE WHEN json_array_length(flow_conversations.src_ports) >= ${MAX_SRC_PORTS} THEN flow_conversations.src_ports
    ELSE (SELECT json_group_array(value) FROM (SELECT value FROM json_each(flow_conversations.src_ports) UNION SELECT value FROM json_each(excluded.src_ports) ORDER BY 1 LIMIT ${MAX_SRC_PORTS})) END,
  src_id = excluded.src_id, src_host = excluded.src_host, src_profile = excluded.src_profile,
  dst_id = excluded.dst_id, dst_host = excluded.dst_host, dst_profile = excluded.dst_profile`;
}

/** Registers the flow statements on the writer (the flows feature owns the tables). */
export function registerFlowWrites(writer: StorageWriter): void {
  for (const [name, sql] of Object.entries(FLOW_STATEMENTS)) writer.define(name, sql);
}

/** Default retention of the hourly conversation rollup (days). */
export const CONVERSATION_RETENTION_DAYS = 30;

/**
 * The retention row of the conversation rollup: whole hours older than the cutoff deleted in
 * batches through the storage writer (the `hour` column leads the primary key). The flow rows
 * themselves are a partitioned table: maintenance registers their row and drops partitions.
 */
export function registerFlowRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  retention.register({
    table: 'flow_conversations',
    defaultDays: CONVERSATION_RETENTION_DAYS,
    size: () => tableBytes(db, ['flow_conversations']),
    prune: pruneByTime(db, writer, {
      namespace: 'flows',
      table: 'flow_conversations',
      time: 'hour',
    }),
  });
}
