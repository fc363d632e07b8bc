/**
 * SQL of the captures feature: the `captures` rows and their `capture_chunks` pointers
 * (migration 0013_captures.sql). Plain functions taking the database first.
 */
import type { DB } from '../../platform/db/database.js';

export type CaptureStatus = 'starting' | 'running' | 'stopped' | 'expired' | 'failed';
export const ACTIVE_STATUSES: readonly CaptureStatus[] = ['starting', 'running'];

export interface CaptureRow {
  id: number;
  user_id: number;
  device_id: number | null;
  label: string | null;
  filter: string;
  bpf: string;
  ifaces: string;
  status: CaptureStatus;
  engine: string | null;
  reason: string | null;
  ephemeral: number;
  byte_cap: number;
  deadline_s: number;
  packets: number;
  bytes: number;
  drops: number | null;
  header_bytes: number;
  pid: number | null;
  file: string;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  expires_at: number | null;
  polled_at: number | null;
}

export interface ChunkRow {
  seq: number;
  offset: number;
  length: number;
  packets: number;
}

/** The file name of a capture: from its id only. */
export const captureFileName = (id: number) => `capture-${id}.pcapng`;

export const LIST_LIMIT = 200;

export function insertCapture(
  db: DB,
  row: {
    userId: number;
    deviceId: number | null;
    label: string | null;
    filter: unknown;
    bpf: string;
    ifaces: readonly string[];
    ephemeral: boolean;
    byteCap: number;
    deadlineS: number;
    now: number;
  },
): number {
  return db.transaction(() => {
    const id = Number(
      db
        .prepare(
          `INSERT INTO captures (user_id, device_id, label, filter, bpf, ifaces, status, ephemeral,
             byte_cap, deadline_s, file, created_at, polled_at)
           VALUES (?, ?, ?, ?, ?, ?, 'starting', ?, ?, ?, '', ?, ?)`,
        )
        .run(
          row.userId,
          row.deviceId,
          row.label,
          JSON.stringify(row.filter),
          row.bpf,
          JSON.stringify(row.ifaces),
          row.ephemeral ? 1 : 0,
          row.byteCap,
          row.deadlineS,
          row.now,
          row.now,
        ).lastInsertRowid,
    );
    db.prepare('UPDATE captures SET file = ? WHERE id = ?').run(captureFileName(id), id);
    return id;
  })();
}

export function findCapture(db: DB, id: number): CaptureRow | null {
  return (db.prepare('SELECT * FROM captures WHERE id = ?').get(id) as CaptureRow) ?? null;
}

/** Newest first, at most LIST_LIMIT; `userId` null lists every user's. */
export function listCaptures(db: DB, userId: number | null): CaptureRow[] {
  return (
    userId === null
      ? db.prepare('SELECT * FROM captures ORDER BY id DESC LIMIT ?').all(LIST_LIMIT)
      : db
          .prepare('SELECT * FROM captures WHERE user_id = ? ORDER BY id DESC LIMIT ?')
          .all(userId, LIST_LIMIT)
  ) as CaptureRow[];
}

export function activeCaptures(db: DB): CaptureRow[] {
  return db
    .prepare("SELECT * FROM captures WHERE status IN ('starting', 'running') ORDER BY id")
    .all() as CaptureRow[];
}

export function countActive(db: DB): number {
  return (
    db
      .prepare("SELECT count(*) AS n FROM captures WHERE status IN ('starting', 'running')")
      .get() as { n: number }
  ).n;
}

export function markRunning(
  db: DB,
  id: number,
  values: {
    engine: string;
    pid: number | null;
    headerBytes: number;
    now: number;
    expiresAt: number;
  },
): void {
  db.prepare(
    `UPDATE captures SET status = 'running', engine = ?, pid = ?, header_bytes = ?, started_at = ?,
       expires_at = ?, polled_at = ? WHERE id = ?`,
  ).run(
    values.engine,
    values.pid,
    values.headerBytes,
    values.now,
    values.expiresAt,
    values.now,
    id,
  );
}

export function setEngine(db: DB, id: number, engine: string): void {
  db.prepare('UPDATE captures SET engine = ? WHERE id = ?').run(engine, id);
}

export function updateCounters(
  db: DB,
  id: number,
  values: { packets: number; bytes: number; headerBytes: number },
): void {
  db.prepare('UPDATE captures SET packets = ?, bytes = ?, header_bytes = ? WHERE id = ?').run(
    values.packets,
    values.bytes,
    values.headerBytes,
    id,
  );
}

export function finishCapture(
  db: DB,
  id: number,
  values: {
    status: Exclude<CaptureStatus, 'starting' | 'running'>;
    reason: string;
    packets: number;
    bytes: number;
    drops: number | null;
    headerBytes: number;
    now: number;
  },
): void {
  db.prepare(
    `UPDATE captures SET status = ?, reason = ?, packets = ?, bytes = ?, drops = ?, header_bytes = ?,
       ended_at = ?, pid = NULL WHERE id = ?`,
  ).run(
    values.status,
    values.reason,
    values.packets,
    values.bytes,
    values.drops,
    values.headerBytes,
    values.now,
    id,
  );
}

/** A capture that failed before running: no engine state to finalize. */
export function failCapture(db: DB, id: number, reason: string, now: number): void {
  db.prepare(
    "UPDATE captures SET status = 'failed', reason = ?, ended_at = ?, pid = NULL WHERE id = ?",
  ).run(reason, now, id);
}

export function touchPolled(db: DB, id: number, now: number): void {
  db.prepare('UPDATE captures SET polled_at = ? WHERE id = ?').run(now, id);
}

export function deleteCaptureRow(db: DB, id: number): void {
  db.prepare('DELETE FROM captures WHERE id = ?').run(id);
}

export function insertChunks(db: DB, captureId: number, chunks: readonly ChunkRow[]): void {
  if (chunks.length === 0) return;
  const insert = db.prepare(
    'INSERT INTO capture_chunks (capture_id, seq, offset, length, packets) VALUES (?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const c of chunks) insert.run(captureId, c.seq, c.offset, c.length, c.packets);
  })();
}

/** Chunks after `since`, in order, until `maxBytes` of data (at least one when any is there). */
export function chunksSince(
  db: DB,
  captureId: number,
  since: number,
  maxBytes: number,
): ChunkRow[] {
  const rows = db
    .prepare(
      'SELECT seq, offset, length, packets FROM capture_chunks WHERE capture_id = ? AND seq > ? ORDER BY seq LIMIT 4096',
    )
    .all(captureId, since) as ChunkRow[];
  const out: ChunkRow[] = [];
  let total = 0;
  for (const row of rows) {
    if (out.length > 0 && total + row.length > maxBytes) break;
    out.push(row);
    total += row.length;
  }
  return out;
}

export function lastChunk(db: DB, captureId: number): ChunkRow | null {
  return (
    (db
      .prepare(
        'SELECT seq, offset, length, packets FROM capture_chunks WHERE capture_id = ? ORDER BY seq DESC LIMIT 1',
      )
      .get(captureId) as ChunkRow) ?? null
  );
}

export function deleteChunksPast(db: DB, captureId: number, end: number): void {
  db.prepare('DELETE FROM capture_chunks WHERE capture_id = ? AND offset + length > ?').run(
    captureId,
    end,
  );
}

/** Ended captures that ended before `cutoff` (retention), oldest first, at most `limit`. */
export function endedBefore(db: DB, cutoff: number, limit: number): { id: number }[] {
  return db
    .prepare(
      "SELECT id FROM captures WHERE status IN ('stopped', 'expired', 'failed') AND ended_at < ? ORDER BY ended_at, id LIMIT ?",
    )
    .all(cutoff, limit) as { id: number }[];
}

/** Ended captures, oldest first (disk-cap pruning). */
export function endedOldestFirst(db: DB): { id: number; bytes: number }[] {
  return db
    .prepare(
      "SELECT id, bytes FROM captures WHERE status IN ('stopped', 'expired', 'failed') ORDER BY ended_at, id",
    )
    .all() as { id: number; bytes: number }[];
}

export function totalBytes(db: DB): number {
  return (db.prepare('SELECT coalesce(sum(bytes), 0) AS n FROM captures').get() as { n: number }).n;
}

/** Device deletion: captures of the device keep their rows and files, without the device. */
export function detachDevice(db: DB, deviceId: number): number[] {
  const ids = (
    db
      .prepare("SELECT id FROM captures WHERE device_id = ? AND status IN ('starting', 'running')")
      .all(deviceId) as { id: number }[]
  ).map((r) => r.id);
  db.prepare('UPDATE captures SET device_id = NULL WHERE device_id = ?').run(deviceId);
  return ids;
}
