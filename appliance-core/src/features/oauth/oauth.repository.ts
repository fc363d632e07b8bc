/**
 * SQL for the authorization server's tables (migration 0002_oauth.sql). Secrets arrive here only
 * as SHA-256 digests. Single use is enforced by conditional UPDATEs: the caller that changes the
 * row wins, every later caller sees zero changes.
 */
import type { DB } from '../../platform/db/database.js';

// --- clients -----------------------------------------------------------------------------

export interface ClientRow {
  id: number;
  client_id: string;
  client_name: string;
  redirect_uris: string;
  grant_types: string;
  response_types: string;
  token_endpoint_auth_method: 'none' | 'client_secret_post';
  client_secret_hash: Buffer | null;
  created_at: number;
  approved_at: number | null;
  approved_by_user_id: number | null;
  /** The client address that registered it (null for rows from before migration 0007). */
  registered_from: string | null;
}

export interface NewClient {
  clientId: string;
  clientName: string;
  redirectUris: readonly string[];
  grantTypes: readonly string[];
  responseTypes: readonly string[];
  authMethod: 'none' | 'client_secret_post';
  secretHash: Buffer | null;
  createdAt: number;
  registeredFrom: string | null;
}

/** Approved clients: what the 500-client cap counts. */
export function countApprovedClients(db: DB): number {
  return (
    db.prepare('SELECT COUNT(*) AS n FROM oauth_clients WHERE approved_at IS NOT NULL').get() as {
      n: number;
    }
  ).n;
}

/** The pending clients one address registered, oldest first (their registration times). */
export function pendingClientTimesFrom(db: DB, address: string): number[] {
  return (
    db
      .prepare(
        `SELECT created_at FROM oauth_clients WHERE registered_from = ? AND approved_at IS NULL
         ORDER BY created_at`,
      )
      .all(address) as { created_at: number }[]
  ).map((r) => r.created_at);
}

/**
 * Deletes pending clients registered before `registeredBefore` (served by the pending index);
 * a pending client holds no grant, so nothing else goes with it but its consent requests.
 */
export function purgeExpiredPendingClients(db: DB, registeredBefore: number): number {
  return db
    .prepare('DELETE FROM oauth_clients WHERE approved_at IS NULL AND created_at < ?')
    .run(registeredBefore).changes;
}

export function insertClient(db: DB, client: NewClient): void {
  db.prepare(
    `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, client_secret_hash, created_at, registered_from)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    client.clientId,
    client.clientName,
    JSON.stringify(client.redirectUris),
    JSON.stringify(client.grantTypes),
    JSON.stringify(client.responseTypes),
    client.authMethod,
    client.secretHash,
    client.createdAt,
    client.registeredFrom,
  );
}

export function findClient(db: DB, clientId: string): ClientRow | undefined {
  return db.prepare('SELECT * FROM oauth_clients WHERE client_id = ?').get(clientId) as
    ClientRow | undefined;
}

export function listPendingClients(db: DB): ClientRow[] {
  return db
    .prepare('SELECT * FROM oauth_clients WHERE approved_at IS NULL ORDER BY created_at, id')
    .all() as ClientRow[];
}

/** Records the first approval only (approval is idempotent); returns the row as it stands. */
export function approveClient(
  db: DB,
  clientId: string,
  userId: number,
  now: number,
): ClientRow | undefined {
  db.prepare(
    'UPDATE oauth_clients SET approved_at = ?, approved_by_user_id = ? WHERE client_id = ? AND approved_at IS NULL',
  ).run(now, userId, clientId);
  return findClient(db, clientId);
}

/** Deletes the client; its codes and pending consent requests go with it (ON DELETE CASCADE). */
export function deleteClient(db: DB, clientId: string): boolean {
  return db.prepare('DELETE FROM oauth_clients WHERE client_id = ?').run(clientId).changes > 0;
}

// --- token families and refresh tokens ---------------------------------------------------

export interface FamilyRow {
  id: number;
  user_id: number;
  client_id: string | null;
  client_name: string;
  scopes: string;
  origin: 'device_code' | 'authorization_code';
  created_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
}

export function insertFamily(
  db: DB,
  family: {
    userId: number;
    clientId: string | null;
    clientName: string;
    scopes: readonly string[];
    origin: FamilyRow['origin'];
    createdAt: number;
  },
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO oauth_token_families (user_id, client_id, client_name, scopes, origin, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        family.userId,
        family.clientId,
        family.clientName,
        JSON.stringify(family.scopes),
        family.origin,
        family.createdAt,
      ).lastInsertRowid,
  );
}

export function findFamily(db: DB, id: number): FamilyRow | undefined {
  return db.prepare('SELECT * FROM oauth_token_families WHERE id = ?').get(id) as
    FamilyRow | undefined;
}

export function familiesOfClient(db: DB, clientId: string): number[] {
  return (
    db
      .prepare('SELECT id FROM oauth_token_families WHERE client_id = ? AND revoked_at IS NULL')
      .all(clientId) as { id: number }[]
  ).map((r) => r.id);
}

export function linkAccessToken(db: DB, familyId: number, accessTokenId: number): void {
  db.prepare(
    'INSERT INTO oauth_family_access_tokens (family_id, access_token_id) VALUES (?, ?)',
  ).run(familyId, accessTokenId);
}

export function familyOfAccessToken(db: DB, accessTokenId: number): number | undefined {
  const row = db
    .prepare('SELECT family_id FROM oauth_family_access_tokens WHERE access_token_id = ?')
    .get(accessTokenId) as { family_id: number } | undefined;
  return row?.family_id;
}

export function accessTokensOfFamily(db: DB, familyId: number): number[] {
  return (
    db
      .prepare('SELECT access_token_id FROM oauth_family_access_tokens WHERE family_id = ?')
      .all(familyId) as { access_token_id: number }[]
  ).map((r) => r.access_token_id);
}

/** True when any access token of the family was revoked (rotation never revokes one: someone did). */
export function familyHasRevokedAccessToken(db: DB, familyId: number): boolean {
  return (
    db
      .prepare(
        `SELECT 1 FROM oauth_family_access_tokens f JOIN access_tokens t ON t.id = f.access_token_id
         WHERE f.family_id = ? AND t.revoked_at IS NOT NULL LIMIT 1`,
      )
      .get(familyId) !== undefined
  );
}

/** Marks the family and its refresh tokens revoked; returns false when it already was. */
export function markFamilyRevoked(db: DB, familyId: number, reason: string, now: number): boolean {
  const changed =
    db
      .prepare(
        'UPDATE oauth_token_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
      )
      .run(now, reason, familyId).changes > 0;
  db.prepare(
    'UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL',
  ).run(now, familyId);
  return changed;
}

export interface RefreshRow {
  id: number;
  token_hash: Buffer;
  family_id: number;
  access_token_id: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
}

export function insertRefreshToken(
  db: DB,
  token: {
    hash: Buffer;
    familyId: number;
    accessTokenId: number;
    createdAt: number;
    expiresAt: number;
  },
): number {
  return Number(
    db
      .prepare(
        'INSERT INTO oauth_refresh_tokens (token_hash, family_id, access_token_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(token.hash, token.familyId, token.accessTokenId, token.createdAt, token.expiresAt)
      .lastInsertRowid,
  );
}

export function findRefreshToken(db: DB, hash: Buffer): RefreshRow | undefined {
  return db.prepare('SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?').get(hash) as
    RefreshRow | undefined;
}

/** Spends a refresh token; false when it was already spent (a replay). */
export function useRefreshToken(db: DB, id: number, now: number): boolean {
  return (
    db
      .prepare('UPDATE oauth_refresh_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL')
      .run(now, id).changes > 0
  );
}

// --- device codes ------------------------------------------------------------------------

export interface DeviceCodeRow {
  id: number;
  client_id: string | null;
  client_name: string;
  scopes: string;
  status: 'pending' | 'approved' | 'denied' | 'consumed';
  user_id: number | null;
  failed_attempts: number;
  family_id: number | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  consumed_at: number | null;
}

const SQLITE_CONSTRAINT_UNIQUE = 'SQLITE_CONSTRAINT_UNIQUE';

/** Inserts a device code; false when the user code collides with a stored one (the caller draws again). */
export function insertDeviceCode(
  db: DB,
  code: {
    deviceCodeHash: Buffer;
    userCodeHash: Buffer;
    clientId: string | null;
    clientName: string;
    scopes: readonly string[];
    createdAt: number;
    expiresAt: number;
  },
): boolean {
  try {
    db.prepare(
      `INSERT INTO oauth_device_codes (device_code_hash, user_code_hash, client_id, client_name, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      code.deviceCodeHash,
      code.userCodeHash,
      code.clientId,
      code.clientName,
      JSON.stringify(code.scopes),
      code.createdAt,
      code.expiresAt,
    );
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === SQLITE_CONSTRAINT_UNIQUE) return false;
    throw err;
  }
}

export function findDeviceCode(db: DB, deviceCodeHash: Buffer): DeviceCodeRow | undefined {
  return db
    .prepare('SELECT * FROM oauth_device_codes WHERE device_code_hash = ?')
    .get(deviceCodeHash) as DeviceCodeRow | undefined;
}

export function findPendingUserCode(
  db: DB,
  userCodeHash: Buffer,
  now: number,
): DeviceCodeRow | undefined {
  return db
    .prepare(
      `SELECT * FROM oauth_device_codes WHERE user_code_hash = ? AND status = 'pending' AND expires_at > ?`,
    )
    .get(userCodeHash, now) as DeviceCodeRow | undefined;
}

export function decideDeviceCode(
  db: DB,
  id: number,
  decision: 'approved' | 'denied',
  userId: number,
  now: number,
): boolean {
  return (
    db
      .prepare(
        `UPDATE oauth_device_codes SET status = ?, user_id = ?, decided_at = ? WHERE id = ? AND status = 'pending' AND expires_at > ?`,
      )
      .run(decision, userId, now, id, now).changes > 0
  );
}

/** Redeems an approved device code; false when another poll got there first. */
export function consumeDeviceCode(db: DB, id: number, now: number): boolean {
  return (
    db
      .prepare(
        `UPDATE oauth_device_codes SET status = 'consumed', consumed_at = ? WHERE id = ? AND status = 'approved'`,
      )
      .run(now, id).changes > 0
  );
}

export function setDeviceCodeFamily(db: DB, id: number, familyId: number): void {
  db.prepare('UPDATE oauth_device_codes SET family_id = ? WHERE id = ?').run(familyId, id);
}

/**
 * A wrong user code counts against every code pending now; a code that has seen `limit` wrong
 * entries is withdrawn (expired at once). Returns how many codes were withdrawn.
 */
export function countWrongUserCode(db: DB, now: number, limit: number): number {
  db.prepare(
    `UPDATE oauth_device_codes SET failed_attempts = failed_attempts + 1 WHERE status = 'pending' AND expires_at > ?`,
  ).run(now);
  return db
    .prepare(
      `UPDATE oauth_device_codes SET expires_at = ? WHERE status = 'pending' AND expires_at > ? AND failed_attempts >= ?`,
    )
    .run(now, now, limit).changes;
}

// --- wrong user codes per client address -------------------------------------------------

export function failuresOf(
  db: DB,
  address: string,
  windowStart: number,
): { failures: number; window_start: number } | undefined {
  return db
    .prepare(
      'SELECT failures, window_start FROM oauth_user_code_failures WHERE client_address = ? AND window_start > ?',
    )
    .get(address, windowStart) as { failures: number; window_start: number } | undefined;
}

/** Counts one wrong entry for the address in the window that started after `windowStart` (or a new one at `now`). */
export function recordFailure(db: DB, address: string, now: number, windowStart: number): void {
  db.prepare(
    `INSERT INTO oauth_user_code_failures (client_address, window_start, failures) VALUES (@address, @now, 1)
     ON CONFLICT (client_address) DO UPDATE SET
       failures = CASE WHEN window_start > @windowStart THEN failures + 1 ELSE 1 END,
       window_start = CASE WHEN window_start > @windowStart THEN window_start ELSE @now END`,
  ).run({ address, now, windowStart });
}

// --- consent requests and authorization codes --------------------------------------------

export interface ConsentRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string;
  state: string | null;
}

const MAX_REQUESTS_PER_SESSION = 20;

export function insertConsentRequest(
  db: DB,
  sessionId: number,
  request: ConsentRequest,
  now: number,
  expiresAt: number,
): void {
  db.prepare(
    `INSERT INTO oauth_consent_requests (session_id, client_id, redirect_uri, code_challenge, scopes, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    sessionId,
    request.clientId,
    request.redirectUri,
    request.codeChallenge,
    request.scopes,
    request.state,
    now,
    expiresAt,
  );
  // A session keeps its most recent requests only.
  db.prepare(
    `DELETE FROM oauth_consent_requests WHERE session_id = ? AND id NOT IN
       (SELECT id FROM oauth_consent_requests WHERE session_id = ? ORDER BY id DESC LIMIT ?)`,
  ).run(sessionId, sessionId, MAX_REQUESTS_PER_SESSION);
}

/** Finds and removes (single use) the live consent request of the session that matches exactly. */
export function takeConsentRequest(
  db: DB,
  sessionId: number,
  request: ConsentRequest,
  now: number,
): boolean {
  const row = db
    .prepare(
      `SELECT id FROM oauth_consent_requests WHERE session_id = ? AND client_id = ? AND redirect_uri = ? AND code_challenge = ?
       AND scopes = ? AND state IS ? AND expires_at > ? ORDER BY id DESC LIMIT 1`,
    )
    .get(
      sessionId,
      request.clientId,
      request.redirectUri,
      request.codeChallenge,
      request.scopes,
      request.state,
      now,
    ) as { id: number } | undefined;
  if (!row) return false;
  return db.prepare('DELETE FROM oauth_consent_requests WHERE id = ?').run(row.id).changes > 0;
}

export interface AuthorizationCodeRow {
  id: number;
  client_id: string;
  user_id: number;
  redirect_uri: string;
  code_challenge: string;
  scopes: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  family_id: number | null;
}

export function insertAuthorizationCode(
  db: DB,
  code: {
    hash: Buffer;
    clientId: string;
    userId: number;
    redirectUri: string;
    codeChallenge: string;
    scopes: readonly string[];
    createdAt: number;
    expiresAt: number;
  },
): void {
  db.prepare(
    `INSERT INTO oauth_authorization_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    code.hash,
    code.clientId,
    code.userId,
    code.redirectUri,
    code.codeChallenge,
    JSON.stringify(code.scopes),
    code.createdAt,
    code.expiresAt,
  );
}

export function findAuthorizationCode(db: DB, hash: Buffer): AuthorizationCodeRow | undefined {
  return db.prepare('SELECT * FROM oauth_authorization_codes WHERE code_hash = ?').get(hash) as
    AuthorizationCodeRow | undefined;
}

/** Spends a code atomically; false when it was already spent. */
export function consumeAuthorizationCode(db: DB, id: number, now: number): boolean {
  return (
    db
      .prepare(
        'UPDATE oauth_authorization_codes SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL',
      )
      .run(now, id).changes > 0
  );
}

export function setAuthorizationCodeFamily(db: DB, id: number, familyId: number): void {
  db.prepare('UPDATE oauth_authorization_codes SET family_id = ? WHERE id = ?').run(familyId, id);
}

// --- housekeeping ------------------------------------------------------------------------

/**
 * Drops rows nobody can use any more. Expired device and authorization codes are kept for a day
 * so that a late poll still hears `expired_token` and a late replay still revokes what the code
 * issued; every delete is served by an expiry index (the link table by its own rows).
 */
export function pruneExpired(db: DB, now: number, keepMs: number, failureWindowMs: number): void {
  db.prepare('DELETE FROM oauth_device_codes WHERE expires_at < ?').run(now - keepMs);
  db.prepare('DELETE FROM oauth_authorization_codes WHERE expires_at < ?').run(now - keepMs);
  db.prepare('DELETE FROM oauth_refresh_tokens WHERE expires_at < ?').run(now - keepMs);
  db.prepare('DELETE FROM oauth_consent_requests WHERE expires_at < ?').run(now);
  // Links to access tokens that simply expired serve nothing; links to revoked ones are kept
  // (a revoked access token ends its grant at the next refresh, however late that comes).
  db.prepare(
    `DELETE FROM oauth_family_access_tokens WHERE access_token_id IN
       (SELECT f.access_token_id FROM oauth_family_access_tokens f JOIN access_tokens t ON t.id = f.access_token_id
        WHERE t.expires_at < ? AND t.revoked_at IS NULL)`,
  ).run(now - keepMs);
  db.prepare('DELETE FROM oauth_user_code_failures WHERE window_start < ?').run(
    now - failureWindowMs,
  );
}
