/**
 * SQL for users, their permissions and tag restrictions, and the permission catalogue.
 * Every change to what a user may do bumps `access_version`, which invalidates cached identities.
 * Usernames and emails are one namespace: no account's username or email may have the identity
 * key (username.rules.ts) of another account's username or email.
 */
import type { DB } from '../../platform/db/database.js';
import { identityKey } from './username.rules.js';

export interface UserRow {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  username: string;
  password_hash: string | null;
  active: number;
  auth_source: 'local' | 'ldap';
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number;
  access_version: number;
  created_at: number;
  updated_at: number;
}

export interface PermissionRow {
  id: number;
  slug: string;
  name: string;
}

export interface TagRef {
  id: number;
  slug: string;
}

export const SUPER_ADMIN_USER_ID = 1;

export function findUserById(db: DB, id: number): UserRow | undefined {
  return db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
}

/**
 * Every account whose username or email has the login's identity key (NFKC, case-folded).
 * Sign-in accepts one match only: rows written before usernames and emails shared one namespace
 * may collide, and a name that two accounts answer to signs in as neither (see auth.service).
 * The scan reads two short columns of every account: 10,000 accounts took 13 to 40 ms on a busy
 * 2-core machine (sign-in then spends ~0.4 s hashing the password).
 */
export function findUsersByLogin(db: DB, login: string): UserRow[] {
  const key = identityKey(login);
  const ids = (
    db.prepare('SELECT id, username, email FROM users').all() as {
      id: number;
      username: string;
      email: string;
    }[]
  )
    .filter((u) => identityKey(u.username) === key || identityKey(u.email) === key)
    .map((u) => u.id);
  return ids.map((id) => findUserById(db, id)).filter((u): u is UserRow => u !== undefined);
}

/**
 * Which field of another account already answers to this name (usernames and emails are one
 * namespace, compared by identity key), or null when none does.
 */
export function nameHolder(db: DB, name: string, exceptId = 0): 'username' | 'email' | null {
  const key = identityKey(name);
  const rows = db.prepare('SELECT username, email FROM users WHERE id <> ?').all(exceptId) as {
    username: string;
    email: string;
  }[];
  for (const row of rows) {
    if (identityKey(row.username) === key) return 'username';
    if (identityKey(row.email) === key) return 'email';
  }
  return null;
}

export function userExists(db: DB, id: number): boolean {
  return db.prepare('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
}

export function listUsers(db: DB, onlyId?: number): UserRow[] {
  return onlyId === undefined
    ? (db.prepare('SELECT * FROM users ORDER BY id').all() as UserRow[])
    : (db.prepare('SELECT * FROM users WHERE id = ?').all(onlyId) as UserRow[]);
}

/** Is this email another account's email or username (one namespace, case-insensitive)? */
export function emailTaken(db: DB, email: string, exceptId = 0): boolean {
  return nameHolder(db, email, exceptId) !== null;
}

/** Is this username another account's username or email (one namespace, case-insensitive)? */
export function usernameTaken(db: DB, username: string, exceptId = 0): boolean {
  return nameHolder(db, username, exceptId) !== null;
}

export interface NewUser {
  first_name: string;
  last_name: string;
  email: string;
  username: string;
  password_hash: string | null;
  auth_source?: 'local' | 'ldap';
  id?: number;
}

export function insertUser(db: DB, user: NewUser, now: number): number {
  const result = db
    .prepare(
      `INSERT INTO users (id, first_name, last_name, email, username, password_hash, auth_source, active, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
    )
    .run(
      user.id ?? null,
      user.first_name,
      user.last_name,
      user.email,
      user.username,
      user.password_hash,
      user.auth_source ?? 'local',
      now,
      now,
    );
  return Number(result.lastInsertRowid);
}

export type UserChanges = Partial<
  Pick<UserRow, 'first_name' | 'last_name' | 'email' | 'username' | 'password_hash' | 'active'>
>;

const CHANGEABLE = [
  'first_name',
  'last_name',
  'email',
  'username',
  'password_hash',
  'active',
] as const;

export function updateUser(db: DB, id: number, changes: UserChanges, now: number): void {
  const columns = CHANGEABLE.filter((c) => changes[c] !== undefined);
  const sets = columns.map((c) => `${c} = @${c}`);
  sets.push('updated_at = @now', 'access_version = access_version + 1');
  db.prepare(`UPDATE users SET ${sets.join(', ')} WHERE id = @id`).run({
    ...pick(changes, columns),
    now,
    id,
  });
}

function pick(changes: UserChanges, columns: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c, changes[c as keyof UserChanges]]));
}

export function deleteUser(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM users WHERE id = ?').run(id).changes > 0;
}

export function bumpAccessVersion(db: DB, userId: number): void {
  db.prepare('UPDATE users SET access_version = access_version + 1 WHERE id = ?').run(userId);
}

// --- permissions -------------------------------------------------------------------------

export function listPermissions(db: DB): PermissionRow[] {
  return db.prepare('SELECT id, slug, name FROM permissions ORDER BY id').all() as PermissionRow[];
}

/** Does the account hold sa (user 1 always does)? */
export function holdsSuperAdmin(db: DB, userId: number): boolean {
  return userId === SUPER_ADMIN_USER_ID || permissionSlugsOf(db, userId).includes('sa');
}

/** The permissions of one source (what `replacePermissions` of that source replaces). */
export function permissionSlugsFrom(db: DB, userId: number, source: 'local' | 'ldap'): string[] {
  return (
    db
      .prepare(
        `SELECT p.slug FROM user_permissions up JOIN permissions p ON p.id = up.permission_id
         WHERE up.user_id = ? AND up.source = ? ORDER BY p.id`,
      )
      .all(userId, source) as { slug: string }[]
  ).map((r) => r.slug);
}

export function permissionSlugsOf(db: DB, userId: number): string[] {
  return (
    db
      .prepare(
        `SELECT DISTINCT p.slug FROM user_permissions up JOIN permissions p ON p.id = up.permission_id
         WHERE up.user_id = ? ORDER BY p.id`,
      )
      .all(userId) as { slug: string }[]
  ).map((r) => r.slug);
}

export function permissionsBySlug(db: DB, slugs: readonly string[]): PermissionRow[] {
  return db
    .prepare(
      'SELECT id, slug, name FROM permissions WHERE slug IN (SELECT value FROM json_each(?))',
    )
    .all(JSON.stringify(slugs)) as PermissionRow[];
}

/** Replaces the user's permissions of one source (local or ldap); the other source is untouched. */
export function replacePermissions(
  db: DB,
  userId: number,
  permissionIds: readonly number[],
  source: 'local' | 'ldap' = 'local',
): void {
  db.prepare('DELETE FROM user_permissions WHERE user_id = ? AND source = ?').run(userId, source);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO user_permissions (user_id, permission_id, source) VALUES (?, ?, ?)',
  );
  for (const id of permissionIds) insert.run(userId, id, source);
  bumpAccessVersion(db, userId);
}

// --- tag restrictions --------------------------------------------------------------------

export function tagsOf(db: DB, userId: number): TagRef[] {
  return db
    .prepare(
      `SELECT DISTINCT t.id, t.slug FROM user_tags ut JOIN tags t ON t.id = ut.tag_id
       WHERE ut.user_id = ? ORDER BY t.slug`,
    )
    .all(userId) as TagRef[];
}

/** The tag restriction of one source (what `replaceTags` of that source replaces). */
export function tagSlugsFrom(db: DB, userId: number, source: 'local' | 'ldap'): string[] {
  return (
    db
      .prepare(
        `SELECT t.slug FROM user_tags ut JOIN tags t ON t.id = ut.tag_id
         WHERE ut.user_id = ? AND ut.source = ? ORDER BY t.slug`,
      )
      .all(userId, source) as { slug: string }[]
  ).map((r) => r.slug);
}

export function deviceTagsBySlug(db: DB, slugs: readonly string[]): TagRef[] {
  return db
    .prepare(
      `SELECT id, slug FROM tags WHERE type = 'device' AND slug IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(slugs)) as TagRef[];
}

export function replaceTags(
  db: DB,
  userId: number,
  tagIds: readonly number[],
  source: 'local' | 'ldap' = 'local',
): void {
  db.prepare('DELETE FROM user_tags WHERE user_id = ? AND source = ?').run(userId, source);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO user_tags (user_id, tag_id, source) VALUES (?, ?, ?)',
  );
  for (const id of tagIds) insert.run(userId, id, source);
  bumpAccessVersion(db, userId);
}

// --- MFA ---------------------------------------------------------------------------------

export function stageTotpSecret(db: DB, userId: number, sealedSecret: string, now: number): void {
  db.prepare(
    'UPDATE users SET totp_pending_secret = ?, updated_at = ?, access_version = access_version + 1 WHERE id = ?',
  ).run(sealedSecret, now, userId);
}

export function enableStagedTotp(db: DB, userId: number, step: number, now: number): void {
  db.prepare(
    `UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_last_step = ?,
     updated_at = ?, access_version = access_version + 1 WHERE id = ?`,
  ).run(step, now, userId);
}

export function disableTotp(db: DB, userId: number, now: number): void {
  db.prepare(
    `UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_last_step = 0,
     updated_at = ?, access_version = access_version + 1 WHERE id = ?`,
  ).run(now, userId);
}

/** Records the step of an accepted code; false when a concurrent request used it first. */
export function consumeTotpStep(db: DB, userId: number, step: number): boolean {
  return (
    db
      .prepare('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?')
      .run(step, userId, step).changes === 1
  );
}
