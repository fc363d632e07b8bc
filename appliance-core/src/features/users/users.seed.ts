/**
 * First start: user 1 (`admin`, `admin@appliance.local`, permission `sa`). Its password comes
 * from the configuration or is random; a random one is written once to the data dir (0600)
 * and printed once.
 */
import crypto from 'node:crypto';
import type { DB } from '../../platform/db/database.js';
import { hashPassword } from '../../platform/security/password.js';
import {
  insertUser,
  listPermissions,
  replacePermissions,
  SUPER_ADMIN_USER_ID,
} from './users.repository.js';

export function randomAdminPassword(): string {
  // Meets the password policy by construction: letters of both cases and digits.
  return `Aa1-${crypto.randomBytes(15).toString('base64url')}`;
}

/** Creates user 1 when the appliance has no users; returns the password used, or null. */
export async function seedSuperAdmin(
  db: DB,
  now: number,
  configured: string | undefined,
): Promise<{ password: string; generated: boolean } | null> {
  const existing = db.prepare('SELECT count(*) AS n FROM users').get() as { n: number };
  if (existing.n > 0) return null;
  const password = configured ?? randomAdminPassword();
  const passwordHash = await hashPassword(password);
  const sa = listPermissions(db).find((p) => p.slug === 'sa');
  if (!sa) throw new Error('permission catalogue is missing sa');
  db.transaction(() => {
    insertUser(
      db,
      {
        id: SUPER_ADMIN_USER_ID,
        first_name: 'Appliance',
        last_name: 'Administrator',
        email: 'admin@appliance.local',
        username: 'admin',
        password_hash: passwordHash,
      },
      now,
    );
    replacePermissions(db, SUPER_ADMIN_USER_ID, [sa.id]);
  })();
  return { password, generated: configured === undefined };
}
