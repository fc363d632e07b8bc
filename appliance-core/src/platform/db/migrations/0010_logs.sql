-- Syslog and Windows events (spec part 3 "Log rows", "Syslog", "Windows events", "Syslog access
-- config") and the saved filters of every log feed (IDS events and, later, flows included).
--
-- syslog_log and eventlog_log are partitioned tables (platform/db/partitions.ts): writes go to
-- <name>_latest, rotation renames it to <name>_pYYYYMMDD, the view <name> unions the partitions.
-- No foreign key to devices: a deleted device's rows stay until their partition is pruned (the
-- spec: partitioned tables shed data only by pruning). Tag scope applies by device_id at query
-- time; a syslog sender no device holds is stored with device_id NULL (unrestricted callers only).
--
-- Indexes: two per partition. (timestamp, severity, device_id) serves every window list: the
-- list walks it in time slices (features/logs/log-list.repository.ts) and counts a slice under a
-- severity filter or a tag scope from the index alone, without reading rows. (device_id,
-- timestamp) serves device filters over long windows and the device stats. Each index costs the
-- writer a share of its row rate, so there are no more; text filters read the rows of a slice.
CREATE TABLE syslog_log_latest (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER,                          -- NULL: no device holds the sender's address
  timestamp INTEGER NOT NULL,                 -- UTC ms the appliance received the message
  facility INTEGER NOT NULL CHECK (facility BETWEEN 0 AND 23),
  severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 7),
  source TEXT NOT NULL,                       -- app-name / tag; the sender's address when none
  message TEXT NOT NULL,                      -- the message text; the whole datagram when malformed
  host TEXT,                                  -- HOSTNAME as the sender wrote it
  sender TEXT NOT NULL,                       -- the sender's IP address
  reported_at INTEGER,                        -- the sender's own timestamp (UTC ms), when it gave one
  malformed INTEGER NOT NULL DEFAULT 0 CHECK (malformed IN (0, 1))
) STRICT;
CREATE INDEX syslog_log_latest_by_time ON syslog_log_latest (timestamp, severity, device_id);
CREATE INDEX syslog_log_latest_by_device ON syslog_log_latest (device_id, timestamp);
CREATE VIEW syslog_log AS SELECT * FROM syslog_log_latest;

-- Severity counts per minute x device x severity (device 0: unknown sender), written by the
-- receiver in the same atomic group as the rows they count.
CREATE TABLE syslog_minute_rollup (
  minute INTEGER NOT NULL,                    -- UTC ms floored to the minute (of `timestamp`)
  device_id INTEGER NOT NULL DEFAULT 0,
  severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 7),
  count INTEGER NOT NULL,
  PRIMARY KEY (minute, device_id, severity)
) STRICT, WITHOUT ROWID;

CREATE TABLE eventlog_log_latest (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,                 -- UTC ms of the event (TimeCreated)
  event_id INTEGER NOT NULL,
  log TEXT NOT NULL,                          -- channel: System, Application, Security ...
  source TEXT NOT NULL,                       -- provider name
  severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 5),
  data TEXT NOT NULL,                         -- the rendered message
  record_id INTEGER,                          -- EventRecordID in its channel (de-duplication)
  tracker_id INTEGER                          -- the event-log tracker that fetched it
) STRICT;
CREATE INDEX eventlog_log_latest_by_time ON eventlog_log_latest (timestamp, severity, device_id);
CREATE INDEX eventlog_log_latest_by_device ON eventlog_log_latest (device_id, timestamp);
CREATE VIEW eventlog_log AS SELECT * FROM eventlog_log_latest;

CREATE TABLE eventlog_minute_rollup (
  minute INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 7),
  count INTEGER NOT NULL,
  PRIMARY KEY (minute, device_id, severity)
) STRICT, WITHOUT ROWID;

-- Personal exclusions of every log feed (and flows later): an enabled filter hides the rows it
-- matches from its owner's list and summary of that feed.
CREATE TABLE log_filters (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  users_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  feed TEXT NOT NULL CHECK (feed IN ('syslog', 'eventlog', 'eve', 'flows')),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  filter TEXT NOT NULL,                       -- JSON object of the feed's allowed keys
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX log_filters_by_owner ON log_filters (users_id, feed);

-- Per-device syslog access config, applied at intake (the receiver holds a copy).
CREATE TABLE syslog_config (
  device_id INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  min_severity INTEGER NOT NULL CHECK (min_severity BETWEEN -1 AND 7),
  CHECK (enabled = 1 OR min_severity = -1)
) STRICT;

-- What the agent runs for a tracker: a channel, the levels (Windows Level values: 1 critical,
-- 2 error, 3 warning, 4 information, 5 verbose; empty = all) and event ids (empty = all).
CREATE TABLE eventlog_queries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL UNIQUE,
  channel TEXT NOT NULL,
  levels TEXT NOT NULL DEFAULT '[]',          -- JSON array of integers
  event_ids TEXT NOT NULL DEFAULT '[]'        -- JSON array of integers
) STRICT;
INSERT INTO eventlog_queries (label, channel, levels, event_ids) VALUES
  ('System: critical and errors', 'System', '[1,2]', '[]'),
  ('System: warnings', 'System', '[3]', '[]'),
  ('Application: critical and errors', 'Application', '[1,2]', '[]'),
  ('Security: failed logons', 'Security', '[]', '[4625]'),
  ('Security: account lockouts', 'Security', '[]', '[4740]'),
  ('Security: account changes', 'Security', '[]', '[4720,4722,4725,4726,4738,4767]'),
  ('Security: audit log cleared', 'Security', '[]', '[1102]'),
  ('System: unexpected shutdowns', 'System', '[]', '[41,6008]'),
  ('System: service failures', 'System', '[]', '[7000,7001,7023,7024,7031,7034]');

-- A device x query pair the agents feature polls. last_record_id / last_event_at: the cursor of
-- what was stored (NULL until the first poll, which backfills one day).
CREATE TABLE eventlog_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  query_id INTEGER NOT NULL REFERENCES eventlog_queries(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  last_polled_at INTEGER,
  last_event_at INTEGER,
  last_record_id INTEGER,
  UNIQUE (device_id, query_id)
) STRICT;
