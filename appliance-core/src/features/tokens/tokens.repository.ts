/**
 * SQL for access tokens (login, personal, OAuth) and their companion browser sessions.
 * Plaintext tokens never reach this module: only SHA-256 digests.
 */
import type { DB } from '../../platform/db/database.js';

export type TokenKind = 'login' | 'pat' | 'oauth';

export interface TokenRow {
  id: number;
  user_id: number;
  name: string;
  kind: TokenKind;
  client_id: string | null;
  scopes: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  revoked_by_user_id: number | null;
}

export interface NewToken {
  userId: number;
  name: string;
  kind: TokenKind;
  hash: Buffer;
  clientId?: string | null;
  scopes: readonly string[];
  createdAt: number;
  expiresAt: number;
}

export function insertToken(db: DB, token: NewToken): number {
  const result = db
    .prepare(
      `INSERT INTO access_tokens (user_id, name, kind, token_hash, client_id, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      token.userId,
      token.name,
      token.kind,
      token.hash,
      token.clientId ?? null,
      JSON.stringify(token.scopes),
      token.createdAt,
      token.expiresAt,
    );
  return Number(result.lastInsertRowid);
}

/** The row behind a bearer token with the owner's state, for the auth hook (one indexed lookup). */
export interface BearerRow {
  id: number;
  user_id: number;
  scopes: string;
  expires_at: number;
  revoked_at: number | null;
  active: number;
  access_version: number;
}

export function prepareBearerLookup(db: DB): (hash: Buffer) => BearerRow | undefined {
  const statement = db.prepare(
    `SELECT t.id, t.user_id, t.scopes, t.expires_at, t.revoked_at, u.active, u.access_version
     FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?`,
  );
  return (hash) => statement.get(hash) as BearerRow | undefined;
}

export function findToken(db: DB, id: number): TokenRow | undefined {
  return db.prepare('SELECT * FROM access_tokens WHERE id = ?').get(id) as TokenRow | undefined;
}

/** A user's tokens, newest first; revoked rows created more than 30 days ago are hidden. */
export function listTokensForUser(db: DB, userId: number, revokedVisibleSince: number): TokenRow[] {
  return db
    .prepare(
      `SELECT * FROM access_tokens WHERE user_id = ? AND (revoked_at IS NULL OR created_at >= ?)
       ORDER BY created_at DESC, id DESC`,
    )
    .all(userId, revokedVisibleSince) as TokenRow[];
}

/** Revokes one token of a user; true when the token exists and belongs to the user. */
export function revokeToken(
  db: DB,
  args: { id: number; userId: number; now: number; byUserId?: number },
): boolean {
  const row = db
    .prepare('SELECT revoked_at FROM access_tokens WHERE id = ? AND user_id = ?')
    .get(args.id, args.userId) as { revoked_at: number | null } | undefined;
  if (!row) return false;
  if (row.revoked_at === null) {
    db.prepare('UPDATE access_tokens SET revoked_at = ?, revoked_by_user_id = ? WHERE id = ?').run(
      args.now,
      args.byUserId ?? null,
      args.id,
    );
    endSessionsOfToken(db, args.id, args.now);
  }
  return true;
}

/** Revokes the given tokens (those not yet revoked) and ends their companion sessions; returns how many were revoked now. */
export function revokeTokensByIds(db: DB, ids: readonly number[], now: number): number {
  const revoke = db.prepare(
    'UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  );
  let count = 0;
  for (const id of ids) {
    if (revoke.run(now, id).changes > 0) {
      count++;
      endSessionsOfToken(db, id, now);
    }
  }
  return count;
}

/** Revokes every live token of a user, skipping rows already revoked or expired; returns how many were revoked now. */
export function revokeAllTokensOfUser(
  db: DB,
  userId: number,
  now: number,
  byUserId?: number,
): number {
  return db
    .prepare(
      'UPDATE access_tokens SET revoked_at = @now, revoked_by_user_id = @by WHERE user_id = @userId AND revoked_at IS NULL AND expires_at > @now',
    )
    .run({ now, by: byUserId ?? null, userId }).changes;
}

/** Revokes live login tokens of a user that carry the given name (one live token per browser). */
export function revokeLoginTokensNamed(db: DB, userId: number, name: string, now: number): void {
  const ids = db
    .prepare(
      `SELECT id FROM access_tokens WHERE user_id = ? AND name = ? AND kind = 'login' AND revoked_at IS NULL`,
    )
    .all(userId, name) as { id: number }[];
  for (const { id } of ids) {
    db.prepare('UPDATE access_tokens SET revoked_at = ? WHERE id = ?').run(now, id);
    endSessionsOfToken(db, id, now);
  }
}

export function recordTokenUse(db: DB, uses: ReadonlyMap<number, number>): void {
  const update = db.prepare(
    'UPDATE access_tokens SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?',
  );
  db.transaction(() => {
    for (const [id, at] of uses) update.run(at, id);
  })();
}

// --- browser sessions --------------------------------------------------------------------

export interface SessionRow {
  id: number;
  user_id: number;
  token_id: number | null;
  csrf_secret: string;
  expires_at: number;
  ended_at: number | null;
  active: number;
  access_version: number;
}

export function insertSession(
  db: DB,
  session: {
    hash: Buffer;
    userId: number;
    tokenId: number | null;
    csrfSecret: string;
    createdAt: number;
    expiresAt: number;
  },
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO web_sessions (session_hash, user_id, token_id, csrf_secret, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(
        session.hash,
        session.userId,
        session.tokenId,
        session.csrfSecret,
        session.createdAt,
        session.expiresAt,
      ).lastInsertRowid,
  );
}

export function prepareSessionLookup(db: DB): (hash: Buffer) => SessionRow | undefined {
  const statement = db.prepare(
    `SELECT s.id, s.user_id, s.token_id, s.csrf_secret, s.expires_at, s.ended_at, u.active, u.access_version
     FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.session_hash = ?`,
  );
  return (hash) => statement.get(hash) as SessionRow | undefined;
}

/** The CSRF secret of a live browser session (forms of the /auth pages are signed with it). */
export function sessionCsrfSecret(db: DB, sessionId: number): string | undefined {
  const row = db
    .prepare('SELECT csrf_secret FROM web_sessions WHERE id = ? AND ended_at IS NULL')
    .get(sessionId) as { csrf_secret: string } | undefined;
  return row?.csrf_secret;
}

export function endSessionsOfToken(db: DB, tokenId: number, now: number): number {
  return db
    .prepare('UPDATE web_sessions SET ended_at = ? WHERE token_id = ? AND ended_at IS NULL')
    .run(now, tokenId).changes;
}

export function endSessionsOfUser(db: DB, userId: number, now: number): number {
  return db
    .prepare('UPDATE web_sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL')
    .run(now, userId).changes;
}

export function endSession(db: DB, sessionId: number, now: number): void {
  db.prepare('UPDATE web_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL').run(
    now,
    sessionId,
  );
}

/** Drops sessions and tokens that ended long ago (housekeeping; the 30-day listing rule is kept). */
export function pruneExpired(db: DB, now: number): void {
  db.prepare('DELETE FROM web_sessions WHERE COALESCE(ended_at, expires_at) < ?').run(
    now - 86_400_000,
  );
}
