-- Trackers (spec part 2 > Trackers) and URL monitoring (spec part 2 > URL monitoring): latency,
-- custom OID, service and TCP port trackers (interface and disk trackers are in 0003), their
-- samples with 5-minute and 1-hour rollups, the legacy alert records trackers attach, and URL trackers.

-- Latency tracker: one per device (the record's `icmping_id` is `id`, `dev_id` is `device_id`).
CREATE TABLE latency_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL UNIQUE REFERENCES devices (id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  interval INTEGER NOT NULL DEFAULT 60 CHECK (interval > 0),
  timeout INTEGER NOT NULL DEFAULT 60 CHECK (timeout > 0),     -- milliseconds per probe
  lossout INTEGER NOT NULL DEFAULT 100 CHECK (lossout BETWEEN 1 AND 100), -- loss % at which a reading is "down"
  latency REAL,                                                 -- ms of the latest reading, -1 when down
  loss REAL,                                                    -- % of the latest reading
  last_polled_at INTEGER,
  first_sample_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Custom OID and service trackers (kind 'service': datatype S, oid Win32_Service::State.0.#Name!<name>).
CREATE TABLE oid_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  kind TEXT NOT NULL DEFAULT 'oid' CHECK (kind IN ('oid', 'service')),
  oid TEXT NOT NULL,
  label TEXT NOT NULL,
  name TEXT,                                                    -- service name (kind 'service')
  datatype TEXT NOT NULL CHECK (datatype IN ('S', 'I')),
  interval INTEGER NOT NULL DEFAULT 180 CHECK (interval > 0),
  enable_logging INTEGER NOT NULL DEFAULT 1,
  value TEXT,                                                   -- latest reading
  last_polled_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX oid_trackers_device ON oid_trackers (device_id, kind, label);
CREATE INDEX oid_trackers_kind ON oid_trackers (kind, device_id);

-- TCP port trackers; (device_id, port) is the natural key of POST /api/port/set.
CREATE TABLE port_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  label TEXT NOT NULL DEFAULT '',
  interval INTEGER NOT NULL DEFAULT 60 CHECK (interval > 0),
  enable_logging INTEGER NOT NULL DEFAULT 1,
  state TEXT,                                                   -- 'open' | 'closed' (closed, filtered or unreachable); null before the first check
  latency REAL,
  last_polled_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (device_id, port)
) STRICT;

-- Interface counters between polls (octet counters become rates).
ALTER TABLE interface_trackers ADD COLUMN in_octets TEXT;          -- decimal text: Counter64 exceeds 2^53
ALTER TABLE interface_trackers ADD COLUMN out_octets TEXT;
ALTER TABLE interface_trackers ADD COLUMN counter_bits INTEGER;    -- 32 or 64
ALTER TABLE interface_trackers ADD COLUMN counters_at INTEGER;
ALTER TABLE interface_trackers ADD COLUMN in_bps REAL;
ALTER TABLE interface_trackers ADD COLUMN out_bps REAL;
ALTER TABLE disk_trackers ADD COLUMN first_sample_at INTEGER;

-- Samples: one row per reading, (tracker_id, ts) clustered so a window is one range scan.
CREATE TABLE latency_samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, latency REAL NOT NULL, loss REAL NOT NULL, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;
CREATE TABLE port_samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, latency REAL NOT NULL, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;
CREATE TABLE disk_samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, available INTEGER NOT NULL, total INTEGER NOT NULL, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;
CREATE TABLE interface_samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, in_bps REAL NOT NULL, out_bps REAL NOT NULL, oper_status INTEGER, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;
CREATE TABLE oid_samples (tracker_id INTEGER NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tracker_id, ts)) STRICT, WITHOUT ROWID;

-- Rollups of numeric samples, maintained as samples are written: `resolution` 300000 (5 min) or
-- 3600000 (1 h); `ts` the bucket start; sums and count give averages; `a` and `b` are the kind's two values
-- (latency: latency of answered probes / loss; port: latency / closed count; disk: available / total;
-- interface: in_bps / out_bps; oid: numeric value).
CREATE TABLE sample_rollups (
  kind TEXT NOT NULL CHECK (kind IN ('latency', 'port', 'disk', 'interface', 'oid')),
  tracker_id INTEGER NOT NULL,
  resolution INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  n INTEGER NOT NULL,
  sum_a REAL NOT NULL,
  n_a INTEGER NOT NULL,                                         -- samples that contributed to sum_a (answered probes)
  sum_b REAL NOT NULL,
  PRIMARY KEY (kind, tracker_id, resolution, ts)
) STRICT, WITHOUT ROWID;

-- Legacy alert records attached to trackers (spec: trackers' `alerts`). Issue 5 creates the
-- interface link-state alert (POST /api/interfaces/toggleupdown); alerting extends this table.
CREATE TABLE legacy_alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  tracker_kind TEXT NOT NULL CHECK (tracker_kind IN ('interface', 'disk', 'latency', 'oid', 'service', 'port', 'url')),
  tracker_id INTEGER NOT NULL,
  alert_type TEXT NOT NULL,                                     -- 'linkstate'
  active INTEGER NOT NULL DEFAULT 1,
  last_state INTEGER,                                           -- the value the alert last saw (ifOperStatus)
  last_fired_at INTEGER,
  fired_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tracker_kind, tracker_id, alert_type)
) STRICT;
CREATE INDEX legacy_alerts_device ON legacy_alerts (device_id);

-- Firings of legacy alerts (what changed, when): alerting will deliver them.
CREATE TABLE legacy_alert_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  alert_id INTEGER NOT NULL REFERENCES legacy_alerts (id) ON DELETE CASCADE,
  ts INTEGER NOT NULL,
  message TEXT NOT NULL,
  delivered_at INTEGER
) STRICT;
CREATE INDEX legacy_alert_events_alert ON legacy_alert_events (alert_id, ts);
CREATE INDEX legacy_alert_events_pending ON legacy_alert_events (delivered_at, ts);

-- URL trackers (not tag scoped).
CREATE TABLE url_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url TEXT NOT NULL,
  pattern TEXT NOT NULL,
  interval INTEGER NOT NULL DEFAULT 300 CHECK (interval > 0),
  timestamp INTEGER,                                            -- Unix seconds of the last check
  latency REAL,
  message TEXT,
  status INTEGER,                                               -- HTTP status of the last check
  ssldate TEXT,                                                 -- certificate expiry (YYYY-MM-DD HH:MM:SS UTC)
  ok INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE url_samples (
  tracker_id INTEGER NOT NULL REFERENCES url_trackers (id) ON DELETE CASCADE,
  ts INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  latency REAL NOT NULL,
  http_status INTEGER,
  ssl_expires_at INTEGER,
  PRIMARY KEY (tracker_id, ts)
) STRICT, WITHOUT ROWID;

-- Device 1 gets a latency tracker at first start.
INSERT INTO latency_trackers (device_id, label, created_at, updated_at)
  SELECT id, 'appliance (loopback)', CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM devices WHERE id = 1;

-- Deleting a tracker (through its endpoint, a device deletion or the crawl) removes its history
-- and its alerts in the same transaction.
CREATE TRIGGER latency_trackers_purge AFTER DELETE ON latency_trackers BEGIN
  DELETE FROM latency_samples WHERE tracker_id = OLD.id;
  DELETE FROM sample_rollups WHERE kind = 'latency' AND tracker_id = OLD.id;
  DELETE FROM legacy_alerts WHERE tracker_kind = 'latency' AND tracker_id = OLD.id;
END;
CREATE TRIGGER port_trackers_purge AFTER DELETE ON port_trackers BEGIN
  DELETE FROM port_samples WHERE tracker_id = OLD.id;
  DELETE FROM sample_rollups WHERE kind = 'port' AND tracker_id = OLD.id;
  DELETE FROM legacy_alerts WHERE tracker_kind = 'port' AND tracker_id = OLD.id;
END;
CREATE TRIGGER oid_trackers_purge AFTER DELETE ON oid_trackers BEGIN
  DELETE FROM oid_samples WHERE tracker_id = OLD.id;
  DELETE FROM sample_rollups WHERE kind = 'oid' AND tracker_id = OLD.id;
  DELETE FROM legacy_alerts WHERE tracker_kind IN ('oid', 'service') AND tracker_id = OLD.id;
END;
CREATE TRIGGER disk_trackers_purge AFTER DELETE ON disk_trackers BEGIN
  DELETE FROM disk_samples WHERE tracker_id = OLD.id;
  DELETE FROM sample_rollups WHERE kind = 'disk' AND tracker_id = OLD.id;
  DELETE FROM legacy_alerts WHERE tracker_kind = 'disk' AND tracker_id = OLD.id;
END;
CREATE TRIGGER interface_trackers_purge AFTER DELETE ON interface_trackers BEGIN
  DELETE FROM interface_samples WHERE tracker_id = OLD.id;
  DELETE FROM sample_rollups WHERE kind = 'interface' AND tracker_id = OLD.id;
  DELETE FROM legacy_alerts WHERE tracker_kind = 'interface' AND tracker_id = OLD.id;
END;
