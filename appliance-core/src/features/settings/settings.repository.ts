/**
 * SQL for the settings feature's tables (migration 0018): host map, license activations and the
 * appliance's interface roles. Values only as parameters.
 */
import type { DB } from '../../platform/db/database.js';

export interface HostMapRow {
  id: number;
  ip: string;
  hostname: string;
  host_name_type: string;
  node_type: string;
  timestamp: number;
}

export interface HostMapValues {
  ip: string;
  hostname: string;
  host_name_type: string;
  node_type: string;
}

export function listHostMap(db: DB, limit: number, offset: number): HostMapRow[] {
  return db
    .prepare('SELECT * FROM host_map ORDER BY id LIMIT ? OFFSET ?')
    .all(limit, offset) as HostMapRow[];
}

export function countHostMap(db: DB): number {
  return (db.prepare('SELECT count(*) AS n FROM host_map').get() as { n: number }).n;
}

export function findHostMap(db: DB, id: number): HostMapRow | undefined {
  return db.prepare('SELECT * FROM host_map WHERE id = ?').get(id) as HostMapRow | undefined;
}

/** Another row with the same address and name (the duplicate rule), excluding `exceptId`. */
export function findHostMapDuplicate(
  db: DB,
  values: HostMapValues,
  exceptId: number | null,
): HostMapRow | undefined {
  return db
    .prepare('SELECT * FROM host_map WHERE ip = ? AND hostname = ? AND id IS NOT ?')
    .get(values.ip, values.hostname, exceptId) as HostMapRow | undefined;
}

export function insertHostMap(db: DB, values: HostMapValues, at: number): number {
  const result = db
    .prepare(
      'INSERT INTO host_map (ip, hostname, host_name_type, node_type, timestamp) VALUES (?, ?, ?, ?, ?)',
    )
    .run(values.ip, values.hostname, values.host_name_type, values.node_type, at);
  return Number(result.lastInsertRowid);
}

export function updateHostMap(db: DB, id: number, values: HostMapValues, at: number): boolean {
  return (
    db
      .prepare(
        'UPDATE host_map SET ip = ?, hostname = ?, host_name_type = ?, node_type = ?, timestamp = ? WHERE id = ?',
      )
      .run(values.ip, values.hostname, values.host_name_type, values.node_type, at, id).changes > 0
  );
}

export function deleteHostMap(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM host_map WHERE id = ?').run(id).changes > 0;
}

export interface LicenseRow {
  id: number;
  activation_key: string;
  license_type: string;
  company_name: string | null;
  user_name: string | null;
  user_email: string | null;
  active: 0 | 1;
  activation_time: number;
  end_of_license: number | null;
  end_of_maintenance: number | null;
}

export function listLicenses(db: DB): LicenseRow[] {
  return db
    .prepare('SELECT * FROM license_activations ORDER BY activation_time DESC, id DESC')
    .all() as LicenseRow[];
}

/** Makes `key` the one active license (a repeated key is re-activated, keeping its row). */
export function activateLicense(
  db: DB,
  key: string,
  at: number,
  endOfMaintenance: number,
  user: { name: string | null; email: string | null },
): { created: boolean } {
  const existing = db
    .prepare('SELECT id FROM license_activations WHERE activation_key = ?')
    .get(key) as { id: number } | undefined;
  db.prepare('UPDATE license_activations SET active = 0 WHERE activation_key <> ?').run(key);
  if (existing) {
    db.prepare('UPDATE license_activations SET active = 1 WHERE id = ?').run(existing.id);
    return { created: false };
  }
  db.prepare(
    `INSERT INTO license_activations (activation_key, license_type, user_name, user_email, active, activation_time, end_of_license, end_of_maintenance)
     VALUES (?, 'perpetual', ?, ?, 1, ?, NULL, ?)`,
  ).run(key, user.name, user.email, at, endOfMaintenance);
  return { created: true };
}

export interface InterfaceRoleRow {
  name: string;
  use_sniffer: 0 | 1;
  use_suricata: 0 | 1;
}

export function listInterfaceRoles(db: DB): InterfaceRoleRow[] {
  return db
    .prepare('SELECT name, use_sniffer, use_suricata FROM interface_roles ORDER BY name')
    .all() as InterfaceRoleRow[];
}

export function saveInterfaceRole(
  db: DB,
  name: string,
  roles: { use_sniffer?: boolean; use_suricata?: boolean },
  at: number,
): void {
  db.prepare(
    `INSERT INTO interface_roles (name, use_sniffer, use_suricata, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET
       use_sniffer = coalesce(?, use_sniffer), use_suricata = coalesce(?, use_suricata), updated_at = excluded.updated_at`,
  ).run(
    name,
    roles.use_sniffer ? 1 : 0,
    roles.use_suricata ? 1 : 0,
    at,
    roles.use_sniffer === undefined ? null : roles.use_sniffer ? 1 : 0,
    roles.use_suricata === undefined ? null : roles.use_suricata ? 1 : 0,
  );
}

export function sniffInterfaceNames(db: DB): string[] {
  return (
    db.prepare('SELECT name FROM interface_roles WHERE use_sniffer = 1 ORDER BY name').all() as {
      name: string;
    }[]
  ).map((r) => r.name);
}
