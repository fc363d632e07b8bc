-- OAuth 2 authorization server (issue 3): clients, device codes, authorization codes, refresh tokens.
-- Times are UTC integer milliseconds. Secrets (client secrets, device codes, user codes,
-- authorization codes, refresh tokens) are stored only as SHA-256 digests.

-- Clients registered through POST /auth/register (RFC 7591). An operator approves each one
-- before it may obtain a consent (POST /api/oauth/clients/{clientId}/approve).
CREATE TABLE oauth_clients (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  client_id TEXT NOT NULL UNIQUE,
  client_name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,                -- JSON array of exact URIs
  grant_types TEXT NOT NULL,                  -- JSON array
  response_types TEXT NOT NULL,               -- JSON array
  token_endpoint_auth_method TEXT NOT NULL CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post')),
  client_secret_hash BLOB,                    -- confidential clients only
  created_at INTEGER NOT NULL,
  approved_at INTEGER,
  approved_by_user_id INTEGER
) STRICT;
-- GET /api/oauth/clients/pending: oldest first.
CREATE INDEX oauth_clients_pending ON oauth_clients (created_at, id) WHERE approved_at IS NULL;

-- A chain of refresh tokens (one per rotation) and the access tokens issued with them. A
-- replayed refresh token or authorization code revokes the whole family.
CREATE TABLE oauth_token_families (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  client_id TEXT,                             -- registered client id, or the device-flow client_id label
  client_name TEXT NOT NULL,
  scopes TEXT NOT NULL,                       -- JSON array
  origin TEXT NOT NULL CHECK (origin IN ('device_code', 'authorization_code')),
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  revoked_reason TEXT
) STRICT;
CREATE INDEX oauth_token_families_by_client ON oauth_token_families (client_id) WHERE client_id IS NOT NULL;
CREATE INDEX oauth_token_families_by_user ON oauth_token_families (user_id);

-- Every access token minted for a family (first issue and each rotation).
CREATE TABLE oauth_family_access_tokens (
  family_id INTEGER NOT NULL REFERENCES oauth_token_families (id) ON DELETE CASCADE,
  access_token_id INTEGER NOT NULL,
  PRIMARY KEY (family_id, access_token_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_family_access_tokens_by_token ON oauth_family_access_tokens (access_token_id);

CREATE TABLE oauth_refresh_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash BLOB NOT NULL UNIQUE,
  family_id INTEGER NOT NULL REFERENCES oauth_token_families (id) ON DELETE CASCADE,
  access_token_id INTEGER NOT NULL,           -- the access token issued together with it
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,                            -- set when rotated; a second use is a replay
  revoked_at INTEGER
) STRICT;
CREATE INDEX oauth_refresh_tokens_by_family ON oauth_refresh_tokens (family_id);
CREATE INDEX oauth_refresh_tokens_by_expiry ON oauth_refresh_tokens (expires_at);

-- Device authorization (RFC 8628). The token is minted at redemption, never stored.
CREATE TABLE oauth_device_codes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_code_hash BLOB NOT NULL UNIQUE,
  user_code_hash BLOB NOT NULL UNIQUE,
  client_id TEXT,
  client_name TEXT NOT NULL,
  scopes TEXT NOT NULL,                       -- JSON array
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
  user_id INTEGER REFERENCES users (id) ON DELETE CASCADE,
  -- Wrong user codes entered appliance-wide while this code was pending; at the limit the code
  -- is withdrawn, so a distributed guesser gets a bounded number of tries at any one code.
  failed_attempts INTEGER NOT NULL DEFAULT 0,
  family_id INTEGER,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  consumed_at INTEGER
) STRICT;
CREATE INDEX oauth_device_codes_pending ON oauth_device_codes (expires_at) WHERE status = 'pending';
CREATE INDEX oauth_device_codes_by_expiry ON oauth_device_codes (expires_at);

-- Wrong user-code entries per client address, in fixed windows.
CREATE TABLE oauth_user_code_failures (
  client_address TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  failures INTEGER NOT NULL
) STRICT;
CREATE INDEX oauth_user_code_failures_by_window ON oauth_user_code_failures (window_start);

-- The authorization request shown on the consent page (GET /auth/authorize), which the
-- consent form post must match (POST /auth/authorize).
CREATE TABLE oauth_consent_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id INTEGER NOT NULL REFERENCES web_sessions (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  scopes TEXT NOT NULL,                       -- space-delimited, as requested
  state TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX oauth_consent_requests_by_session ON oauth_consent_requests (session_id, client_id);
CREATE INDEX oauth_consent_requests_by_expiry ON oauth_consent_requests (expires_at);

-- Authorization codes: single use (consumed atomically), 10 minutes. family_id and
-- access_token_id name what was issued from the code, so that a replay can revoke it.
CREATE TABLE oauth_authorization_codes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code_hash BLOB NOT NULL UNIQUE,
  client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  scopes TEXT NOT NULL,                       -- JSON array
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER,
  family_id INTEGER
) STRICT;
CREATE INDEX oauth_authorization_codes_by_expiry ON oauth_authorization_codes (expires_at);
