-- Agents (spec part 2 "Agent installer", "Agent probes", "Agent administration"; docs/agent-protocol.md).

-- Enrollment tokens: only the SHA-256 of the token is stored; rows are kept after revocation,
-- consumption and expiry (audit).
CREATE TABLE agent_enrollment_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '[]',            -- JSON array of tag slugs
  token_hash BLOB NOT NULL UNIQUE,
  ttl_seconds INTEGER NOT NULL CHECK (ttl_seconds BETWEEN 60 AND 2592000),
  single_use INTEGER NOT NULL CHECK (single_use IN (0, 1)),
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER,
  revoked_at INTEGER,
  created_by_user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX agent_enrollment_tokens_by_expiry ON agent_enrollment_tokens (expires_at);

-- Every agent that registered a key (enroll, a check-in, adoption): the key is the credential
-- of its signed requests; the uuid alone never is. enrolled_at is set once a token or an
-- adoption vouched for it (a plain check-in leaves it NULL until the pending row is imported).
CREATE TABLE agents (
  agent_uuid TEXT PRIMARY KEY,
  public_key TEXT NOT NULL,                   -- b64u raw Ed25519 public key
  hostname TEXT,
  agent_version TEXT,
  os_version TEXT,
  arch TEXT NOT NULL DEFAULT 'amd64' CHECK (arch IN ('amd64', 'arm64')),
  enrolled_at INTEGER,
  last_checkin_at INTEGER,
  last_ip TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The appliance's own agent secrets, sealed with the secret box: the Ed25519 private key
-- ('appliance_key', with its public half in clear) and the download-URL secret ('download_secret').
CREATE TABLE agent_secrets (
  name TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  public_part TEXT,
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
