/**
 * What the IDS intake writes, as data for the storage writer (platform/db/storage-writer.ts):
 * the alert rows of `eve_log_latest`, the per-minute severity rollup `eve_minute_rollup`, and the
 * follower's position `eve_intake_state`, all in ONE atomic group per chunk of the file
 * (`chunkOps`), so that the rows of a chunk, their rollup counts and the offset just past them
 * commit together or not at all: after a crash or a kill -9 the stored offset is exactly where
 * the stored rows end, and the follower resumes there (no duplicate, no loss).
 *
 * The position update is a compare-and-set: it moves the offset only from the position the
 * chunk was read at (same path, device and inode, same offset). Anything else (another process
 * following the same file into the same database, or a follower whose idea of the position went
 * stale) makes the statement fail with a type error of the STRICT table, which fails the whole
 * group: rows are never stored twice. The follower then reads the stored position back.
 *
 * None of these tables is watched by a TEMP trigger of the API connection (change-triggers.ts),
 * so the writer's own connection may write them.
 */
import type { GroupOp, SqlParam, StorageWriter } from '../../platform/db/storage-writer.js';
import type { EveAlert } from './eve-line.rules.js';

/** A device an endpoint matched at intake (a snapshot: later renames do not rewrite rows). */
export interface EveEndpointDevice {
  id: number;
  host: string;
  profile: string;
}

/** Where the follower stands in a file: what `eve_intake_state` holds for the configured path. */
export interface EvePosition {
  /** st_dev and st_ino as signed 64-bit integers (SQLite's INTEGER; inodes may exceed 2^53). */
  dev: bigint;
  inode: bigint;
  /** Bytes consumed: the file is read from here (always the start of a line). */
  offset: number;
}

export const EVE_STATEMENTS: Readonly<Record<string, string>> = {
  'logs.eve.insert':
    'INSERT INTO eve_log_latest (timestamp, signature_id, signature, category, severity, proto, iface, vlan, src_ip, src_port, dst_ip, dst_port, src_id, src_host, src_profile, dst_id, dst_host, dst_profile, flow_id, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  'logs.eve.rollup':
    'INSERT INTO eve_minute_rollup (minute, src_id, dst_id, severity, count) VALUES (?, ?, ?, ?, ?) ON CONFLICT (minute, src_id, dst_id, severity) DO UPDATE SET count = count + excluded.count',
  // Compare-and-set (see the header): a mismatch stores text in an INTEGER column of a STRICT
  // table, which SQLite refuses, failing the group. The first row for a path is inserted as is.
  'logs.eve.position':
    "INSERT INTO eve_intake_state (path, dev, inode, offset, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET offset = CASE WHEN eve_intake_state.dev = ? AND eve_intake_state.inode = ? AND eve_intake_state.offset = ? THEN excluded.offset ELSE 'position moved' END, dev = excluded.dev, inode = excluded.inode, updated_at = excluded.updated_at",
};

/** Registers the IDS intake's statements on the writer (the logs feature owns the tables). */
export function registerEveWrites(writer: StorageWriter): void {
  for (const [name, sql] of Object.entries(EVE_STATEMENTS)) writer.define(name, sql);
}

export interface EnrichedAlert {
  alert: EveAlert;
  src: EveEndpointDevice | null;
  dst: EveEndpointDevice | null;
}

const MINUTE = 60_000;

/**
 * One chunk of the file as one atomic group: a row per alert, one rollup upsert per (minute,
 * source device, destination device, severity), and the move of the position from `from` to
 * `to` (a new file's first chunk moves from its own inode at offset 0).
 */
export function chunkOps(
  path: string,
  from: EvePosition,
  to: EvePosition,
  alerts: readonly EnrichedAlert[],
  now: number,
): GroupOp[] {
  const ops: GroupOp[] = [];
  const rollup = new Map<
    string,
    { minute: number; src: number; dst: number; sev: number; n: number }
  >();
  for (const { alert: a, src, dst } of alerts) {
    ops.push({
      statement: 'logs.eve.insert',
      params: [
        a.timestamp,
        a.signatureId,
        a.signature,
        a.category,
        a.severity,
        a.proto,
        a.iface,
        a.vlan,
        a.srcIp,
        a.srcPort,
        a.dstIp,
        a.dstPort,
        src?.id ?? null,
        src?.host ?? null,
        src?.profile ?? null,
        dst?.id ?? null,
        dst?.host ?? null,
        dst?.profile ?? null,
        a.flowId,
        a.raw,
      ] satisfies SqlParam[],
    });
    const minute = Math.floor(a.timestamp / MINUTE) * MINUTE;
    const key = `${minute}|${src?.id ?? 0}|${dst?.id ?? 0}|${a.severity}`;
    const entry = rollup.get(key);
    if (entry) entry.n++;
    else rollup.set(key, { minute, src: src?.id ?? 0, dst: dst?.id ?? 0, sev: a.severity, n: 1 });
  }
  for (const r of rollup.values())
    ops.push({ statement: 'logs.eve.rollup', params: [r.minute, r.src, r.dst, r.sev, r.n] });
  ops.push({
    statement: 'logs.eve.position',
    params: [path, to.dev, to.inode, to.offset, now, from.dev, from.inode, from.offset],
  });
  return ops;
}
