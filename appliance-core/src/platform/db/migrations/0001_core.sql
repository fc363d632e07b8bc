-- Core identity and inventory tables. Times are UTC integer milliseconds (*_at columns).

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE permissions (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL
) STRICT;

-- The permission catalogue: every slug the specification names.
INSERT INTO permissions (id, slug, name) VALUES
  (1, 'sa', 'Super administrator (bypasses every permission and tag restriction)'),
  (2, 'api', 'Obtain programmatic tokens (personal access tokens, OAuth consent)'),
  (3, 'users', 'Manage users, their tokens and MFA'),
  (4, 'system', 'Appliance settings, maintenance and OAuth client approval'),
  (5, 'devices', 'View devices, dashboards and device data'),
  (6, 'write_devices', 'Create and edit devices, trackers and collection settings'),
  (7, 'overwatch', 'Overview lists of devices, tags and profiles'),
  (8, 'alerts', 'View and manage alerts, templates and outlets'),
  (9, 'logs', 'View syslog, Windows event logs and IDS events'),
  (10, 'vne', 'Flow explorer (NetFlow and IPFIX records)'),
  (11, 'capture', 'Packet captures'),
  (12, 'urls', 'URL monitoring'),
  (13, 'tools', 'On-box network tools'),
  (14, 'agentadmin', 'Agent administration: enrollment tokens and file operations');

CREATE TABLE tags (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'device',
  UNIQUE (slug, type)
) STRICT;

-- AUTOINCREMENT: an id is never reused, so nothing cached or recorded about a deleted user
-- (identity cache, revoked_by_user_id) can ever apply to a new account.
CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  first_name TEXT NOT NULL DEFAULT '',
  last_name TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL COLLATE NOCASE UNIQUE,
  username TEXT NOT NULL COLLATE NOCASE UNIQUE,
  password_hash TEXT,
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  auth_source TEXT NOT NULL DEFAULT 'local' CHECK (auth_source IN ('local', 'ldap')),
  totp_secret TEXT,
  totp_pending_secret TEXT,
  totp_last_step INTEGER NOT NULL DEFAULT 0,
  -- Bumped whenever permissions or tags change, so cached access decisions are refreshed.
  access_version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE user_permissions (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  permission_id INTEGER NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
  source TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'ldap')),
  PRIMARY KEY (user_id, permission_id, source)
) STRICT, WITHOUT ROWID;

CREATE TABLE user_tags (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  source TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'ldap')),
  PRIMARY KEY (user_id, tag_id, source)
) STRICT, WITHOUT ROWID;

-- Login, personal and OAuth tokens. Only the SHA-256 of the plaintext is stored.
CREATE TABLE access_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('login', 'pat', 'oauth')),
  token_hash BLOB NOT NULL UNIQUE,
  client_id TEXT,
  scopes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER,
  revoked_by_user_id INTEGER
) STRICT;
CREATE INDEX access_tokens_by_user ON access_tokens (user_id, created_at);

-- Browser sessions (cookie), each the companion of the token that created it.
CREATE TABLE web_sessions (
  id INTEGER PRIMARY KEY,
  session_hash BLOB NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_id INTEGER REFERENCES access_tokens (id) ON DELETE CASCADE,
  csrf_secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  ended_at INTEGER
) STRICT;
CREATE INDEX web_sessions_by_user ON web_sessions (user_id);
CREATE INDEX web_sessions_by_token ON web_sessions (token_id);

CREATE TABLE profiles (
  id INTEGER PRIMARY KEY,
  profile TEXT NOT NULL UNIQUE,
  layout TEXT NOT NULL DEFAULT '{}'
) STRICT;

-- Default profiles: the dashboard layout a new device of that kind starts with.
INSERT INTO profiles (id, profile, layout) VALUES
  (1, 'dash_appliance', '{"widgets":["latency","interfaces","disks","syslog"]}'),
  (2, 'dash_generic', '{"widgets":["latency","ports"]}'),
  (3, 'dash_network_snmp', '{"widgets":["latency","interfaces","oids"]}'),
  (4, 'dash_linux_snmp', '{"widgets":["latency","interfaces","disks","oids"]}'),
  (5, 'dash_windows_wmi', '{"widgets":["latency","disks","services","eventlog"]}');

CREATE TABLE devices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL,
  ip_address TEXT NOT NULL UNIQUE,
  profile TEXT NOT NULL,
  enable_snmp INTEGER NOT NULL DEFAULT 0,
  enable_agent INTEGER NOT NULL DEFAULT 0,
  enable_netflow INTEGER NOT NULL DEFAULT 0,
  enable_port_monitor INTEGER NOT NULL DEFAULT 0,
  agent_uuid TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE device_tags (
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  PRIMARY KEY (device_id, tag_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX device_tags_by_tag ON device_tags (tag_id, device_id);

-- Device 1: the appliance itself. The devices feature refuses to delete it.
INSERT INTO devices (id, label, ip_address, profile, created_at, updated_at)
  VALUES (1, 'appliance (loopback)', '127.0.0.1', 'dash_appliance',
          CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));
