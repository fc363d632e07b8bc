/**
 * SQL for local networks, their credential sets and the discovery_status log of sweeps.
 */
import type { DB } from '../../platform/db/database.js';
import { toSqlDateTime } from '../../platform/time/time.js';

export interface LocalnetRow {
  id: number;
  label: string;
  network: string;
  broadcast: string;
  network_num: number;
  broadcast_num: number;
  interval: number;
  enable_discovery: number;
  enable_portscan: number;
  alerts: number;
  last_discovery_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface LocalnetFields {
  label: string;
  network: string;
  broadcast: string;
  network_num: number;
  broadcast_num: number;
  interval: number;
  enable_discovery: boolean;
  enable_portscan: boolean;
  alerts: boolean;
}

/** Sweeps kept per network in discovery_status. */
export const STATUS_ROWS_KEPT = 20;

export function localnetRecord(row: LocalnetRow, credIds: number[]) {
  return {
    id: row.id,
    label: row.label,
    network: row.network,
    broadcast: row.broadcast,
    interval: row.interval,
    enable_discovery: row.enable_discovery === 1,
    enable_portscan: row.enable_portscan === 1,
    cred_ids: credIds,
    alerts: row.alerts === 1,
    timestamp: row.last_discovery_at === null ? null : Math.floor(row.last_discovery_at / 1000),
  };
}

export function listLocalnets(db: DB): LocalnetRow[] {
  return db.prepare('SELECT * FROM local_networks ORDER BY id').all() as LocalnetRow[];
}

export function findLocalnet(db: DB, id: number): LocalnetRow | undefined {
  return db.prepare('SELECT * FROM local_networks WHERE id = ?').get(id) as LocalnetRow | undefined;
}

/** Credential ids of each network, in the order a sweep tries them. */
export function credIdsOf(db: DB): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const row of db
    .prepare('SELECT net_id, cred_id FROM local_network_credentials ORDER BY net_id, position')
    .all() as { net_id: number; cred_id: number }[]) {
    const list = map.get(row.net_id) ?? [];
    list.push(row.cred_id);
    map.set(row.net_id, list);
  }
  return map;
}

export function credIdsOfNet(db: DB, netId: number): number[] {
  return (
    db
      .prepare('SELECT cred_id FROM local_network_credentials WHERE net_id = ? ORDER BY position')
      .all(netId) as { cred_id: number }[]
  ).map((r) => r.cred_id);
}

const bits = (fields: LocalnetFields) => ({
  ...fields,
  enable_discovery: fields.enable_discovery ? 1 : 0,
  enable_portscan: fields.enable_portscan ? 1 : 0,
  alerts: fields.alerts ? 1 : 0,
});

export function insertLocalnet(db: DB, fields: LocalnetFields, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO local_networks (label, network, broadcast, network_num, broadcast_num, interval, enable_discovery, enable_portscan, alerts, created_at, updated_at)
         VALUES (@label, @network, @broadcast, @network_num, @broadcast_num, @interval, @enable_discovery, @enable_portscan, @alerts, @now, @now)`,
      )
      .run({ ...bits(fields), now }).lastInsertRowid,
  );
}

export function updateLocalnet(db: DB, id: number, fields: LocalnetFields, now: number): void {
  db.prepare(
    `UPDATE local_networks SET label = @label, network = @network, broadcast = @broadcast, network_num = @network_num, broadcast_num = @broadcast_num,
       interval = @interval, enable_discovery = @enable_discovery, enable_portscan = @enable_portscan, alerts = @alerts, updated_at = @now WHERE id = @id`,
  ).run({ ...bits(fields), now, id });
}

export function replaceCredIds(db: DB, netId: number, credIds: readonly number[]): void {
  db.prepare('DELETE FROM local_network_credentials WHERE net_id = ?').run(netId);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO local_network_credentials (net_id, cred_id, position) VALUES (?, ?, ?)',
  );
  credIds.forEach((credId, position) => insert.run(netId, credId, position));
}

export function deleteLocalnet(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM local_networks WHERE id = ?').run(id).changes > 0;
}

/** Makes the network due now (its next sweep runs as soon as a slot is free). */
export function resetDiscoveryTs(db: DB, id: number): boolean {
  return (
    db.prepare('UPDATE local_networks SET last_discovery_at = NULL WHERE id = ?').run(id).changes >
    0
  );
}

export function markDiscovered(db: DB, id: number, at: number): void {
  db.prepare('UPDATE local_networks SET last_discovery_at = ? WHERE id = ?').run(at, id);
}

// --- discovery_status -----------------------------------------------------------------------

export interface StatusCounters {
  addresses: number;
  alive: number;
  snmp_responders: number;
  new_pending: number;
}

export function startStatus(db: DB, netId: number, start: number, addresses: number): number {
  return Number(
    db
      .prepare('INSERT INTO discovery_status (net_id, start_time, addresses) VALUES (?, ?, ?)')
      .run(netId, start, addresses).lastInsertRowid,
  );
}

export function updateStatus(db: DB, id: number, counters: StatusCounters): void {
  db.prepare(
    'UPDATE discovery_status SET alive = @alive, snmp_responders = @snmp_responders, new_pending = @new_pending WHERE id = @id',
  ).run({ ...counters, id });
}

export function finishStatus(db: DB, id: number, end: number, error: string | null): void {
  db.prepare('UPDATE discovery_status SET end_time = ?, error = ? WHERE id = ?').run(
    end,
    error,
    id,
  );
}

/** Sweeps still marked running (after a crash or stop): closed with an error at start. */
export function closeInterruptedSweeps(db: DB, now: number): number {
  return db
    .prepare(
      `UPDATE discovery_status SET end_time = ?, error = 'interrupted' WHERE end_time IS NULL`,
    )
    .run(now).changes;
}

export function pruneStatus(db: DB, netId: number): void {
  db.prepare(
    `DELETE FROM discovery_status WHERE net_id = ? AND id < (SELECT min(id) FROM (SELECT id FROM discovery_status WHERE net_id = ? ORDER BY id DESC LIMIT ?))`,
  ).run(netId, netId, STATUS_ROWS_KEPT);
}

export interface StatusRow extends StatusCounters {
  id: number;
  net_id: number;
  start_time: number;
  end_time: number | null;
  error: string | null;
}

export function findStatus(db: DB, id: number): StatusRow | undefined {
  return db.prepare('SELECT * FROM discovery_status WHERE id = ?').get(id) as StatusRow | undefined;
}

/** The latest sweep of each network, as getDevicesPending lists them. */
export function latestStatus(db: DB) {
  const rows = db
    .prepare(
      'SELECT * FROM discovery_status WHERE id IN (SELECT max(id) FROM discovery_status GROUP BY net_id) ORDER BY net_id',
    )
    .all() as StatusRow[];
  return rows.map((row) => ({
    id: row.id,
    net_id: row.net_id,
    start_time: toSqlDateTime(row.start_time),
    end_time: row.end_time === null ? null : toSqlDateTime(row.end_time),
  }));
}
