-- Directory (LDAP/Active Directory) sign-in (spec part 1, Directory (LDAP) configuration and
-- integration). One configuration row; the bind password is sealed with the secret box and never
-- returned. Group DNs are compared case-insensitively (the mapping tables use NOCASE).
CREATE TABLE ldap_config (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  host TEXT,
  port INTEGER,
  use_ssl INTEGER NOT NULL DEFAULT 0 CHECK (use_ssl IN (0, 1)),
  use_tls INTEGER NOT NULL DEFAULT 0 CHECK (use_tls IN (0, 1)),
  verify_tls INTEGER NOT NULL DEFAULT 1 CHECK (verify_tls IN (0, 1)),
  base_dn TEXT,
  bind_dn TEXT,
  bind_password TEXT,
  search_filter TEXT,
  username_attribute TEXT,
  email_attribute TEXT,
  first_name_attribute TEXT,
  last_name_attribute TEXT,
  directory_type TEXT NOT NULL DEFAULT 'openldap'
    CHECK (directory_type IN ('active_directory', 'openldap')),
  timeout INTEGER NOT NULL DEFAULT 5 CHECK (timeout BETWEEN 1 AND 60),
  fallback_to_local INTEGER NOT NULL DEFAULT 1 CHECK (fallback_to_local IN (0, 1)),
  auto_provision INTEGER NOT NULL DEFAULT 0 CHECK (auto_provision IN (0, 1)),
  expand_nested_groups INTEGER NOT NULL DEFAULT 0 CHECK (expand_nested_groups IN (0, 1)),
  updated_at INTEGER NOT NULL
) STRICT;

-- Group -> permission: the pair is unique; re-saving it updates the name.
CREATE TABLE ldap_group_permissions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ldap_group_dn TEXT NOT NULL COLLATE NOCASE,
  ldap_group_name TEXT NOT NULL DEFAULT '',
  permission_id INTEGER NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
  UNIQUE (ldap_group_dn, permission_id)
) STRICT;

-- Group -> device tag restriction: a directory user inherits the tags of all their groups.
CREATE TABLE ldap_group_tags (
  ldap_group_dn TEXT NOT NULL COLLATE NOCASE,
  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  PRIMARY KEY (ldap_group_dn, tag_id)
) STRICT, WITHOUT ROWID;
