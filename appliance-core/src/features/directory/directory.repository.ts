/**
 * SQL of the directory feature: the single configuration row (bind password sealed), the
 * group -> permission mappings and the group -> tag restrictions.
 */
import type { DB } from '../../platform/db/database.js';
import { normalizeDn, type DirectoryType } from './directory.rules.js';

export interface ConfigRow {
  id: 1;
  enabled: number;
  host: string | null;
  port: number | null;
  use_ssl: number;
  use_tls: number;
  verify_tls: number;
  base_dn: string | null;
  bind_dn: string | null;
  bind_password: string | null;
  search_filter: string | null;
  username_attribute: string | null;
  email_attribute: string | null;
  first_name_attribute: string | null;
  last_name_attribute: string | null;
  directory_type: DirectoryType;
  timeout: number;
  fallback_to_local: number;
  auto_provision: number;
  expand_nested_groups: number;
  updated_at: number;
}

export type ConfigWrite = Omit<ConfigRow, 'id' | 'updated_at'>;

export function readConfig(db: DB): ConfigRow | undefined {
  return db.prepare('SELECT * FROM ldap_config WHERE id = 1').get() as ConfigRow | undefined;
}

export function writeConfig(db: DB, row: ConfigWrite, now: number): void {
  const columns = Object.keys(row);
  db.prepare(
    `INSERT INTO ldap_config (id, ${columns.join(', ')}, updated_at)
     VALUES (1, ${columns.map((c) => `@${c}`).join(', ')}, @updated_at)
     ON CONFLICT (id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')},
       updated_at = excluded.updated_at`,
  ).run({ ...row, updated_at: now });
}

export interface MappingRow {
  id: number;
  ldap_group_dn: string;
  ldap_group_name: string;
  permission_id: number;
  permission_name: string;
  permission_slug: string;
}

export function listMappings(db: DB): MappingRow[] {
  return db
    .prepare(
      `SELECT m.id, m.ldap_group_dn, m.ldap_group_name, m.permission_id,
              p.name AS permission_name, p.slug AS permission_slug
       FROM ldap_group_permissions m JOIN permissions p ON p.id = m.permission_id
       ORDER BY m.ldap_group_dn, p.id`,
    )
    .all() as MappingRow[];
}

/** Inserts the pair or, when it exists, updates its name; returns the row. */
export function upsertMapping(
  db: DB,
  groupDn: string,
  groupName: string,
  permissionId: number,
): { id: number; ldap_group_dn: string; ldap_group_name: string; permission_id: number } {
  db.prepare(
    `INSERT INTO ldap_group_permissions (ldap_group_dn, ldap_group_name, permission_id) VALUES (?, ?, ?)
     ON CONFLICT (ldap_group_dn, permission_id) DO UPDATE SET ldap_group_name = excluded.ldap_group_name`,
  ).run(groupDn, groupName, permissionId);
  return db
    .prepare(
      `SELECT id, ldap_group_dn, ldap_group_name, permission_id FROM ldap_group_permissions
       WHERE ldap_group_dn = ? AND permission_id = ?`,
    )
    .get(groupDn, permissionId) as {
    id: number;
    ldap_group_dn: string;
    ldap_group_name: string;
    permission_id: number;
  };
}

/** Replaces the group's whole permission set (an empty list removes every mapping of it). */
export function replaceGroupPermissions(
  db: DB,
  groupDn: string,
  groupName: string,
  permissionIds: readonly number[],
): void {
  db.prepare('DELETE FROM ldap_group_permissions WHERE ldap_group_dn = ?').run(groupDn);
  for (const id of new Set(permissionIds)) upsertMapping(db, groupDn, groupName, id);
}

export function deleteMapping(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM ldap_group_permissions WHERE id = ?').run(id).changes > 0;
}

export interface GroupTagRow {
  ldap_group_dn: string;
  tag_id: number;
  slug: string;
  name: string;
}

export function listGroupTags(db: DB): GroupTagRow[] {
  return db
    .prepare(
      `SELECT g.ldap_group_dn, g.tag_id, t.slug, t.name
       FROM ldap_group_tags g JOIN tags t ON t.id = g.tag_id
       ORDER BY g.ldap_group_dn, t.slug`,
    )
    .all() as GroupTagRow[];
}

export function replaceGroupTags(db: DB, groupDn: string, tagIds: readonly number[]): void {
  db.prepare('DELETE FROM ldap_group_tags WHERE ldap_group_dn = ?').run(groupDn);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO ldap_group_tags (ldap_group_dn, tag_id) VALUES (?, ?)',
  );
  for (const id of tagIds) insert.run(groupDn, id);
}

/** The permission ids and tag ids that a set of group DNs grants (DNs compared normalised). */
export function grantsOf(
  db: DB,
  groupDns: readonly string[],
): { permissionIds: number[]; tagIds: number[] } {
  const groups = new Set(groupDns.map(normalizeDn));
  const permissionIds = new Set<number>();
  for (const m of db
    .prepare('SELECT ldap_group_dn, permission_id FROM ldap_group_permissions')
    .all() as { ldap_group_dn: string; permission_id: number }[])
    if (groups.has(normalizeDn(m.ldap_group_dn))) permissionIds.add(m.permission_id);
  const tagIds = new Set<number>();
  for (const t of db.prepare('SELECT ldap_group_dn, tag_id FROM ldap_group_tags').all() as {
    ldap_group_dn: string;
    tag_id: number;
  }[])
    if (groups.has(normalizeDn(t.ldap_group_dn))) tagIds.add(t.tag_id);
  return {
    permissionIds: [...permissionIds].sort((a, b) => a - b),
    tagIds: [...tagIds].sort((a, b) => a - b),
  };
}

export function existingPermissionIds(db: DB, ids: readonly number[]): Set<number> {
  return new Set(
    (
      db
        .prepare('SELECT id FROM permissions WHERE id IN (SELECT value FROM json_each(?))')
        .all(JSON.stringify(ids)) as { id: number }[]
    ).map((r) => r.id),
  );
}

export function deviceTagIdsBySlug(db: DB, slugs: readonly string[]): Map<string, number> {
  return new Map(
    (
      db
        .prepare(
          `SELECT id, slug FROM tags WHERE type = 'device' AND slug IN (SELECT value FROM json_each(?))`,
        )
        .all(JSON.stringify(slugs)) as { id: number; slug: string }[]
    ).map((r) => [r.slug, r.id]),
  );
}

export function directoryUsers(db: DB): { id: number; username: string; active: number }[] {
  return db
    .prepare("SELECT id, username, active FROM users WHERE auth_source = 'ldap' ORDER BY id")
    .all() as { id: number; username: string; active: number }[];
}
