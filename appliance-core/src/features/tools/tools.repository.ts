/**
 * SQL for the tools' tables: throughput history, port service names, the geoip cache.
 */
import type { DB } from '../../platform/db/database.js';

export type ThroughputKind = 'speedtest' | 'iperf_client';

export interface HistoryDbRow {
  id: number;
  created_at: number;
  kind: ThroughputKind;
  target: string | null;
  result: string;
}

export function insertHistory(
  db: DB,
  row: { createdAt: number; kind: ThroughputKind; target: string | null; result: unknown },
): number {
  const info = db
    .prepare(
      'INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, ?, ?, ?)',
    )
    .run(row.createdAt, row.kind, row.target, JSON.stringify(row.result));
  return Number(info.lastInsertRowid);
}

/** Newest first (by time, then by id for rows of the same millisecond). */
export function listHistory(db: DB, limit: number): HistoryDbRow[] {
  return db
    .prepare(
      'SELECT id, created_at, kind, target, result FROM throughput_history ORDER BY created_at DESC, id DESC LIMIT ?',
    )
    .all(limit) as HistoryDbRow[];
}

export function deleteHistory(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM throughput_history WHERE id = ?').run(id).changes > 0;
}

/** Deletes rows created before `before`; returns how many. */
export function pruneHistory(db: DB, before: number): number {
  return db.prepare('DELETE FROM throughput_history WHERE created_at < ?').run(before).changes;
}

export function listPortServiceNames(db: DB): { port: number; name: string }[] {
  return db.prepare('SELECT port, name FROM port_service_names ORDER BY port').all() as {
    port: number;
    name: string;
  }[];
}

export function savePortServiceName(db: DB, port: number, name: string, now: number): void {
  db.prepare(
    'INSERT INTO port_service_names (port, name, updated_at) VALUES (?, ?, ?) ON CONFLICT (port) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at',
  ).run(port, name, now);
}

export function deletePortServiceName(db: DB, port: number): boolean {
  return db.prepare('DELETE FROM port_service_names WHERE port = ?').run(port).changes > 0;
}

export function findGeoCache(db: DB, ip: string, freshAfter: number): string | null {
  const row = db
    .prepare('SELECT result FROM geoip_cache WHERE ip = ? AND fetched_at >= ?')
    .get(ip, freshAfter) as { result: string } | undefined;
  return row?.result ?? null;
}

export function saveGeoCache(db: DB, ip: string, result: unknown, now: number): void {
  db.prepare(
    'INSERT INTO geoip_cache (ip, result, fetched_at) VALUES (?, ?, ?) ON CONFLICT (ip) DO UPDATE SET result = excluded.result, fetched_at = excluded.fetched_at',
  ).run(ip, JSON.stringify(result), now);
}

export function pruneGeoCache(db: DB, before: number): number {
  return db.prepare('DELETE FROM geoip_cache WHERE fetched_at < ?').run(before).changes;
}
