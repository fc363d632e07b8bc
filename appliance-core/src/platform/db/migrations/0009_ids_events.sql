-- IDS events (Suricata eve.json alerts), spec part 3 "Log rows" and "IDS events".
--
-- eve_log is a partitioned table (platform/db/partitions.ts): writes go to eve_log_latest,
-- rotation renames it to eve_log_pYYYYMMDD, and the view eve_log unions the partitions. No
-- foreign key to devices: enrichment (src_id/src_host/src_profile and the destination
-- equivalents) is a snapshot taken at intake from the device IP map, and a deleted device's rows
-- stay until their partition is pruned. Tag scope is applied by endpoint IP at query time.
CREATE TABLE eve_log_latest (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  timestamp INTEGER NOT NULL,                 -- UTC milliseconds of the event (eve "timestamp")
  signature_id INTEGER NOT NULL,
  signature TEXT NOT NULL,                    -- alert.signature, for the detail view
  category TEXT,                              -- alert.category
  severity INTEGER NOT NULL CHECK (severity BETWEEN 1 AND 3), -- Suricata severity, > 3 stored as 3
  proto TEXT,
  iface TEXT,                                 -- eve "in_iface"
  vlan INTEGER,                               -- first entry of eve "vlan"
  src_ip TEXT NOT NULL,
  src_port INTEGER,
  dst_ip TEXT NOT NULL,
  dst_port INTEGER,
  src_id INTEGER,
  src_host TEXT,
  src_profile TEXT,
  dst_id INTEGER,
  dst_host TEXT,
  dst_profile TEXT,
  flow_id INTEGER,
  raw TEXT NOT NULL                           -- the eve line as read, for the detail view
) STRICT;
CREATE INDEX eve_log_latest_by_time ON eve_log_latest (timestamp);
CREATE INDEX eve_log_latest_by_src ON eve_log_latest (src_ip, timestamp);
CREATE INDEX eve_log_latest_by_dst ON eve_log_latest (dst_ip, timestamp);
CREATE VIEW eve_log AS SELECT * FROM eve_log_latest;

-- Severity counts per minute, maintained at write time by the intake (INSERT ... ON CONFLICT DO
-- UPDATE in the same batch as the rows), keyed by the devices matched at intake so that tag scope
-- can still apply to the summary. 0 = no device matched that endpoint.
CREATE TABLE eve_minute_rollup (
  minute INTEGER NOT NULL,                    -- UTC milliseconds, floored to the minute
  src_id INTEGER NOT NULL DEFAULT 0,
  dst_id INTEGER NOT NULL DEFAULT 0,
  severity INTEGER NOT NULL CHECK (severity BETWEEN 1 AND 3),
  count INTEGER NOT NULL,
  PRIMARY KEY (minute, src_id, dst_id, severity)
) STRICT, WITHOUT ROWID;

-- Where the eve.json follower stands: committed in the same transaction as the rows it read (an
-- atomic group of the storage writer), so a restart or a kill neither duplicates nor loses events.
CREATE TABLE eve_intake_state (
  path TEXT PRIMARY KEY,                      -- the configured eve file
  dev INTEGER NOT NULL,                       -- st_dev of the file read
  inode INTEGER NOT NULL,                     -- st_ino of the file read
  offset INTEGER NOT NULL,                    -- bytes consumed (up to the last complete line)
  updated_at INTEGER NOT NULL
) STRICT;
