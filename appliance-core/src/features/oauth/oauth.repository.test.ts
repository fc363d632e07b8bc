/**
 * The authorization server's SQL on a real (in-memory) SQLite database with every migration:
 * each lookup and list is served by an index, single use holds, counters and windows behave,
 * and housekeeping drops only what nobody can use any more.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import {
  consumeAuthorizationCode,
  countWrongUserCode,
  failuresOf,
  familyHasRevokedAccessToken,
  findPendingUserCode,
  insertAuthorizationCode,
  insertConsentRequest,
  insertDeviceCode,
  insertFamily,
  insertRefreshToken,
  linkAccessToken,
  markFamilyRevoked,
  pruneExpired,
  recordFailure,
  takeConsentRequest,
  useRefreshToken,
} from './oauth.repository.js';
import { sha256 } from './oauth.rules.js';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;
let db: DB;
let userId: number;
let sessionId: number;

function plan(sql: string, ...params: unknown[]): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((r) => r.detail)
    .join(' | ');
}

function accessToken(expiresAt: number, revokedAt: number | null = null): number {
  return Number(
    db
      .prepare(
        "INSERT INTO access_tokens (user_id, name, kind, token_hash, scopes, created_at, expires_at, revoked_at) VALUES (?, 'MCP Client: x', 'oauth', randomblob(32), '[]', ?, ?, ?)",
      )
      .run(userId, NOW, expiresAt, revokedAt).lastInsertRowid,
  );
}

function deviceCode(name: string, expiresAt = NOW + 600_000) {
  expect(
    insertDeviceCode(db, {
      deviceCodeHash: sha256(`device-${name}`),
      userCodeHash: sha256(name),
      clientId: null,
      clientName: name,
      scopes: ['mcp:devices'],
      createdAt: NOW,
      expiresAt,
    }),
  ).toBe(true);
}

beforeEach(() => {
  db = openDatabase(':memory:');
  migrate(db, NOW);
  userId = Number(
    db
      .prepare(
        "INSERT INTO users (email, username, password_hash, created_at, updated_at) VALUES ('u@example.test', 'u', NULL, ?, ?)",
      )
      .run(NOW, NOW).lastInsertRowid,
  );
  sessionId = Number(
    db
      .prepare(
        "INSERT INTO web_sessions (session_hash, user_id, csrf_secret, created_at, expires_at) VALUES (randomblob(32), ?, 's', ?, ?)",
      )
      .run(userId, NOW, NOW + DAY).lastInsertRowid,
  );
  db.prepare(
    `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, created_at)
     VALUES ('c1', 'Client', '["https://c.example/cb"]', '["authorization_code"]', '["code"]', 'none', ?)`,
  ).run(NOW);
});

describe('query plans', () => {
  it('serves every lookup and list from an index', () => {
    expect(
      plan('SELECT * FROM oauth_clients WHERE approved_at IS NULL ORDER BY created_at, id'),
    ).toMatch(/USING INDEX oauth_clients_pending/);
    expect(plan('SELECT * FROM oauth_clients WHERE client_id = ?', 'c1')).toMatch(
      /USING INDEX sqlite_autoindex_oauth_clients/,
    );
    expect(
      plan(
        "SELECT * FROM oauth_device_codes WHERE user_code_hash = ? AND status = 'pending' AND expires_at > ?",
        Buffer.alloc(32),
        NOW,
      ),
    ).toMatch(/USING INDEX sqlite_autoindex_oauth_device_codes_2/);
    expect(
      plan('SELECT * FROM oauth_device_codes WHERE device_code_hash = ?', Buffer.alloc(32)),
    ).toMatch(/USING INDEX sqlite_autoindex_oauth_device_codes_1/);
    expect(
      plan(
        "UPDATE oauth_device_codes SET failed_attempts = failed_attempts + 1 WHERE status = 'pending' AND expires_at > ?",
        NOW,
      ),
    ).toMatch(/USING INDEX oauth_device_codes_pending/);
    expect(
      plan('SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?', Buffer.alloc(32)),
    ).toMatch(/USING INDEX sqlite_autoindex_oauth_refresh_tokens/);
    expect(
      plan('SELECT * FROM oauth_authorization_codes WHERE code_hash = ?', Buffer.alloc(32)),
    ).toMatch(/USING INDEX sqlite_autoindex_oauth_authorization_codes/);
    expect(
      plan('SELECT id FROM oauth_token_families WHERE client_id = ? AND revoked_at IS NULL', 'c1'),
    ).toMatch(/USING INDEX oauth_token_families_by_client/);
    expect(
      plan(
        'UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL',
        NOW,
        1,
      ),
    ).toMatch(/USING INDEX oauth_refresh_tokens_by_family/);
    expect(
      plan('SELECT family_id FROM oauth_family_access_tokens WHERE access_token_id = ?', 1),
    ).toMatch(/USING (COVERING )?INDEX oauth_family_access_tokens_by_token/);
    expect(
      plan(
        `SELECT id FROM oauth_consent_requests WHERE session_id = ? AND client_id = ? AND redirect_uri = ? AND code_challenge = ?
         AND scopes = ? AND state IS ? AND expires_at > ? ORDER BY id DESC LIMIT 1`,
        1,
        'c1',
        'x',
        'x',
        'x',
        null,
        NOW,
      ),
    ).toMatch(/USING INDEX oauth_consent_requests_by_session/);
    for (const [table, index] of [
      ['oauth_device_codes', 'oauth_device_codes_by_expiry'],
      ['oauth_authorization_codes', 'oauth_authorization_codes_by_expiry'],
      ['oauth_refresh_tokens', 'oauth_refresh_tokens_by_expiry'],
      ['oauth_consent_requests', 'oauth_consent_requests_by_expiry'],
    ]) {
      expect(plan(`DELETE FROM ${table} WHERE expires_at < ?`, NOW)).toMatch(
        new RegExp(`USING (COVERING )?INDEX ${index}`),
      );
    }
  });
});

describe('device codes', () => {
  it('finds a pending code by its user code only while it is pending and unexpired', () => {
    deviceCode('BCDFGHJK');
    expect(findPendingUserCode(db, sha256('BCDFGHJK'), NOW)?.client_name).toBe('BCDFGHJK');
    expect(findPendingUserCode(db, sha256('BCDFGHJK'), NOW + 600_000)).toBeUndefined();
    expect(findPendingUserCode(db, sha256('BCDFGHJL'), NOW)).toBeUndefined();
  });

  it('reports a user-code collision instead of throwing, so the caller draws again', () => {
    deviceCode('BCDFGHJK');
    expect(
      insertDeviceCode(db, {
        deviceCodeHash: sha256('other'),
        userCodeHash: sha256('BCDFGHJK'),
        clientId: null,
        clientName: 'x',
        scopes: [],
        createdAt: NOW,
        expiresAt: NOW + 1,
      }),
    ).toBe(false);
  });

  it('counts a wrong code against every pending code and withdraws the ones at the limit', () => {
    deviceCode('AAAA');
    for (let i = 0; i < 2; i++) expect(countWrongUserCode(db, NOW, 3)).toBe(0);
    deviceCode('BBBB');
    expect(countWrongUserCode(db, NOW, 3)).toBe(1);
    expect(findPendingUserCode(db, sha256('AAAA'), NOW)).toBeUndefined();
    expect(findPendingUserCode(db, sha256('BBBB'), NOW)).toMatchObject({ failed_attempts: 1 });
  });
});

describe('wrong codes per client address', () => {
  it('counts within a window and starts a new window after it', () => {
    const window = 900_000;
    for (let i = 0; i < 3; i++) recordFailure(db, '192.0.2.1', NOW + i, NOW - window);
    expect(failuresOf(db, '192.0.2.1', NOW - window)).toEqual({ failures: 3, window_start: NOW });
    expect(failuresOf(db, '192.0.2.2', NOW - window)).toBeUndefined();
    const later = NOW + window + 1;
    expect(failuresOf(db, '192.0.2.1', later - window)).toBeUndefined();
    recordFailure(db, '192.0.2.1', later, later - window);
    expect(failuresOf(db, '192.0.2.1', later - window)).toEqual({
      failures: 1,
      window_start: later,
    });
  });
});

describe('single use', () => {
  it('spends an authorization code and a refresh token exactly once', () => {
    insertAuthorizationCode(db, {
      hash: sha256('code'),
      clientId: 'c1',
      userId,
      redirectUri: 'https://c.example/cb',
      codeChallenge: 'x',
      scopes: [],
      createdAt: NOW,
      expiresAt: NOW + 1,
    });
    const codeId = (db.prepare('SELECT id FROM oauth_authorization_codes').get() as { id: number })
      .id;
    expect(consumeAuthorizationCode(db, codeId, NOW)).toBe(true);
    expect(consumeAuthorizationCode(db, codeId, NOW)).toBe(false);
    const family = insertFamily(db, {
      userId,
      clientId: 'c1',
      clientName: 'Client',
      scopes: [],
      origin: 'authorization_code',
      createdAt: NOW,
    });
    const refreshId = insertRefreshToken(db, {
      hash: sha256('r'),
      familyId: family,
      accessTokenId: accessToken(NOW + 1),
      createdAt: NOW,
      expiresAt: NOW + DAY,
    });
    expect(useRefreshToken(db, refreshId, NOW)).toBe(true);
    expect(useRefreshToken(db, refreshId, NOW)).toBe(false);
  });

  it('takes a consent request once; a session keeps its 20 latest', () => {
    const request = {
      clientId: 'c1',
      redirectUri: 'https://c.example/cb',
      codeChallenge: 'ch',
      scopes: 'mcp:devices',
      state: null,
    };
    for (let i = 0; i < 25; i++)
      insertConsentRequest(
        db,
        sessionId,
        { ...request, codeChallenge: `ch${i}` },
        NOW,
        NOW + 600_000,
      );
    expect(
      (db.prepare('SELECT COUNT(*) AS n FROM oauth_consent_requests').get() as { n: number }).n,
    ).toBe(20);
    expect(takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch3' }, NOW)).toBe(
      false,
    );
    expect(takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch24' }, NOW)).toBe(
      true,
    );
    expect(takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch24' }, NOW)).toBe(
      false,
    );
    expect(
      takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch23', state: 's' }, NOW),
    ).toBe(false);
    expect(
      takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch23' }, NOW + 600_000),
    ).toBe(false);
    expect(takeConsentRequest(db, sessionId, { ...request, codeChallenge: 'ch23' }, NOW)).toBe(
      true,
    );
  });
});

describe('families', () => {
  it('notices a revoked access token of the family, and revokes its refresh tokens', () => {
    const family = insertFamily(db, {
      userId,
      clientId: 'c1',
      clientName: 'Client',
      scopes: [],
      origin: 'authorization_code',
      createdAt: NOW,
    });
    const live = accessToken(NOW + 3_600_000);
    linkAccessToken(db, family, live);
    insertRefreshToken(db, {
      hash: sha256('r1'),
      familyId: family,
      accessTokenId: live,
      createdAt: NOW,
      expiresAt: NOW + DAY,
    });
    expect(familyHasRevokedAccessToken(db, family)).toBe(false);
    linkAccessToken(db, family, accessToken(NOW + 3_600_000, NOW));
    expect(familyHasRevokedAccessToken(db, family)).toBe(true);
    expect(markFamilyRevoked(db, family, 'test', NOW)).toBe(true);
    expect(markFamilyRevoked(db, family, 'test', NOW)).toBe(false);
    expect(db.prepare('SELECT revoked_at FROM oauth_refresh_tokens').all()).toEqual([
      { revoked_at: NOW },
    ]);
  });
});

describe('housekeeping', () => {
  it('drops expired codes, tokens and requests after a day, and keeps what still matters', () => {
    deviceCode('OLD', NOW - DAY - 1);
    deviceCode('RECENT', NOW - 1);
    const family = insertFamily(db, {
      userId,
      clientId: 'c1',
      clientName: 'Client',
      scopes: [],
      origin: 'authorization_code',
      createdAt: NOW,
    });
    const expired = accessToken(NOW - DAY - 1);
    const revokedExpired = accessToken(NOW - DAY - 1, NOW - DAY - 2);
    const live = accessToken(NOW + 1);
    for (const id of [expired, revokedExpired, live]) linkAccessToken(db, family, id);
    insertRefreshToken(db, {
      hash: sha256('old'),
      familyId: family,
      accessTokenId: expired,
      createdAt: NOW - 40 * DAY,
      expiresAt: NOW - DAY - 1,
    });
    insertRefreshToken(db, {
      hash: sha256('new'),
      familyId: family,
      accessTokenId: live,
      createdAt: NOW,
      expiresAt: NOW + DAY,
    });
    insertConsentRequest(
      db,
      sessionId,
      { clientId: 'c1', redirectUri: 'x', codeChallenge: 'x', scopes: 'x', state: null },
      NOW - 700_000,
      NOW - 100_000,
    );
    recordFailure(db, '192.0.2.9', NOW - 1_000_000, NOW - 2_000_000);

    pruneExpired(db, NOW, DAY, 900_000);

    const names = (
      db.prepare('SELECT client_name FROM oauth_device_codes').all() as { client_name: string }[]
    ).map((r) => r.client_name);
    expect(names).toEqual(['RECENT']);
    expect(
      (
        db
          .prepare(
            'SELECT access_token_id FROM oauth_family_access_tokens ORDER BY access_token_id',
          )
          .all() as { access_token_id: number }[]
      ).map((r) => r.access_token_id),
    ).toEqual([revokedExpired, live]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM oauth_refresh_tokens').get()).toEqual({ n: 1 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM oauth_consent_requests').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM oauth_user_code_failures').get()).toEqual({
      n: 0,
    });
  });
});
