-- Data maintenance (spec part 3): the retention policy and the daemon configuration.
--
-- One row per table that grows, registered by the table's owner with its default retention
-- (platform/db/retention.ts) on first start and changed only by POST /api/setRetentionPolicy.
-- `id` is the row id the API answers and takes; `table_name` the row's name (a table, or a part
-- of one: the 5-minute and hourly sample rollups are two rows of one table).
CREATE TABLE retention_policies (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  table_name TEXT NOT NULL UNIQUE,
  retention_days INTEGER NOT NULL CHECK (retention_days >= 1),
  updated_at INTEGER NOT NULL
) STRICT;

-- The daemon catalogue's stored state (features/maintenance/daemons.catalog.ts): one row per
-- daemon the catalogue names, made on first start. `name` is the engine's name in the registry.
CREATE TABLE daemons (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  start_auto INTEGER NOT NULL DEFAULT 1 CHECK (start_auto IN (0, 1)),
  updated_at INTEGER NOT NULL
) STRICT;

-- A daemon's variables: a complete replacement on every POST /api/daemon/{id}/config. A secret
-- variable's value is sealed by the secret box (`sealed` = 1) and never returned.
CREATE TABLE daemon_vars (
  daemon_id INTEGER NOT NULL REFERENCES daemons (id) ON DELETE CASCADE,
  var TEXT NOT NULL,
  value TEXT NOT NULL,
  sealed INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1)),
  PRIMARY KEY (daemon_id, var)
) STRICT;
