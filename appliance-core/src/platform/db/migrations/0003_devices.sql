-- Device inventory, SNMP and discovery (issue 4).
-- Times are UTC integer milliseconds. Columns holding secrets (SNMP communities, v3 passphrases)
-- store only the secret box's sealed form (`v1:...`), never plaintext.

-- Reachability from the latest latency reading (spec part 2, States: latency >= 0 is up, -1 is
-- down). Written by the latency poller; NULL until a first reading, matching neither filter.
ALTER TABLE devices ADD COLUMN reachability TEXT CHECK (reachability IN ('up', 'down'));
ALTER TABLE devices ADD COLUMN reachability_at INTEGER;
CREATE INDEX devices_by_reachability ON devices (reachability, id);

-- The SNMP configuration of a device (its `snmpconfig`), kept when SNMP is disabled so that
-- re-enabling restores it; plus what the last crawl learned.
CREATE TABLE device_snmp (
  device_id INTEGER PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
  snmp_version INTEGER NOT NULL DEFAULT 2 CHECK (snmp_version IN (1, 2, 3)),
  snmp_port INTEGER NOT NULL DEFAULT 161 CHECK (snmp_port BETWEEN 1 AND 65535),
  snmp_community TEXT,                        -- sealed
  snmp_v3_security TEXT CHECK (snmp_v3_security IN ('noAuthNoPriv', 'authNoPriv', 'authPriv')),
  authuser TEXT,
  authpass TEXT,                              -- sealed
  authprot TEXT,
  privpass TEXT,                              -- sealed
  privprot TEXT,
  sys_name TEXT,
  sys_descr TEXT,
  sys_object_id TEXT,
  last_crawl_at INTEGER,
  last_crawl_status TEXT CHECK (last_crawl_status IN ('ok', 'failed')),
  last_crawl_error TEXT,
  updated_at INTEGER NOT NULL
) STRICT;

-- Autodiscovery credential sets, tried in order by the discovery sweep of a local network.
CREATE TABLE snmp_credentials (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL,
  authuser TEXT NOT NULL,
  snmp_authprot TEXT NOT NULL,
  snmp_privprot TEXT NOT NULL,
  snmp_community TEXT,                        -- sealed
  authpass TEXT,                              -- sealed
  snmp_privpass TEXT,                         -- sealed
  snmp_port INTEGER NOT NULL DEFAULT 161 CHECK (snmp_port BETWEEN 1 AND 65535),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Local networks swept by discovery. `network`..`broadcast` is an inclusive IPv4 range of at
-- most 65536 addresses (a /16); the numeric forms serve range checks.
CREATE TABLE local_networks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL,
  network TEXT NOT NULL,
  broadcast TEXT NOT NULL,
  network_num INTEGER NOT NULL,
  broadcast_num INTEGER NOT NULL,
  interval INTEGER NOT NULL CHECK (interval > 0),      -- seconds between sweeps
  enable_discovery INTEGER NOT NULL DEFAULT 0,
  enable_portscan INTEGER NOT NULL DEFAULT 0,
  alerts INTEGER NOT NULL DEFAULT 0,
  last_discovery_at INTEGER,                  -- the record's `timestamp`; NULL = due now
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  CHECK (broadcast_num >= network_num AND broadcast_num - network_num < 65536)
) STRICT;

CREATE TABLE local_network_credentials (
  net_id INTEGER NOT NULL REFERENCES local_networks (id) ON DELETE CASCADE,
  cred_id INTEGER NOT NULL REFERENCES snmp_credentials (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (net_id, cred_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX local_network_credentials_by_cred ON local_network_credentials (cred_id);

-- One row per discovery sweep (GET /api/getDevicesPending lists the latest per network).
CREATE TABLE discovery_status (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  net_id INTEGER NOT NULL REFERENCES local_networks (id) ON DELETE CASCADE,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  addresses INTEGER NOT NULL DEFAULT 0,
  alive INTEGER NOT NULL DEFAULT 0,
  snmp_responders INTEGER NOT NULL DEFAULT 0,
  new_pending INTEGER NOT NULL DEFAULT 0,
  error TEXT
) STRICT;
CREATE INDEX discovery_status_by_net ON discovery_status (net_id, id);

-- Devices found by discovery (or announced by an agent) that are not yet in the inventory.
CREATE TABLE pending_devices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL,
  ip_address TEXT NOT NULL UNIQUE,
  profile TEXT NOT NULL,
  enable_snmp INTEGER NOT NULL DEFAULT 0,
  enable_agent INTEGER NOT NULL DEFAULT 0,
  agent_uuid TEXT,
  last_checkin_at INTEGER,
  agent_version TEXT,
  os_version TEXT,
  snmp_version INTEGER NOT NULL DEFAULT 2 CHECK (snmp_version IN (1, 2, 3)),
  snmp_port INTEGER NOT NULL DEFAULT 161 CHECK (snmp_port BETWEEN 1 AND 65535),
  snmp_community TEXT,                        -- sealed
  snmp_v3_security TEXT CHECK (snmp_v3_security IN ('noAuthNoPriv', 'authNoPriv', 'authPriv')),
  authuser TEXT,
  authpass TEXT,                              -- sealed
  authprot TEXT,
  privpass TEXT,                              -- sealed
  privprot TEXT,
  hidden INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL CHECK (source IN ('discovery', 'agent', 'manual')),
  net_id INTEGER REFERENCES local_networks (id) ON DELETE SET NULL,
  open_ports TEXT,                            -- JSON array of open TCP ports (portscan), NULL when not scanned
  sys_descr TEXT,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) STRICT;
CREATE INDEX pending_devices_by_hidden ON pending_devices (hidden, id);
CREATE INDEX pending_devices_by_net ON pending_devices (net_id);

CREATE TABLE pending_device_tags (
  pending_id INTEGER NOT NULL REFERENCES pending_devices (id) ON DELETE CASCADE,
  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  PRIMARY KEY (pending_id, tag_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX pending_device_tags_by_tag ON pending_device_tags (tag_id, pending_id);

-- Per-user dashboards (GET/POST getDashboards, setDashboards, addWidgetToDash): free-form JSON.
CREATE TABLE user_dashboards (
  user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  dashboards TEXT NOT NULL DEFAULT '{}',
  layouts TEXT NOT NULL DEFAULT '{}',
  updated_at INTEGER NOT NULL
) STRICT;

-- Per-user layout and pinned widgets of a device page.
CREATE TABLE device_layouts (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  layouts TEXT,                               -- JSON, NULL when none saved
  pinned_widgets TEXT,                        -- JSON, NULL when none saved
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, device_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX device_layouts_by_device ON device_layouts (device_id);

-- Interface trackers (spec part 2, Interface tracker): created and refreshed by the device crawl
-- from IF-MIB ifTable/ifXTable, one per (device, ifIndex).
CREATE TABLE interface_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  interface INTEGER NOT NULL,                 -- ifIndex
  name TEXT NOT NULL,                         -- ifName, else ifDescr
  description TEXT NOT NULL DEFAULT '',       -- ifAlias, else ifDescr, at creation; then the operator's
  interval INTEGER NOT NULL DEFAULT 300 CHECK (interval > 0),
  enable_logging INTEGER NOT NULL DEFAULT 1,
  if_descr TEXT,
  if_alias TEXT,
  if_type INTEGER,
  mtu INTEGER,
  speed INTEGER,                              -- bits per second (ifHighSpeed * 10^6, else ifSpeed)
  mac TEXT,
  admin_status INTEGER,
  oper_status INTEGER,
  last_seen_at INTEGER NOT NULL,              -- last crawl that reported the interface
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (device_id, interface)
) STRICT;
CREATE INDEX interface_trackers_logging ON interface_trackers (enable_logging, device_id);

-- Disk trackers (spec part 2, Disk tracker): created by the crawl from HOST-RESOURCES-MIB
-- hrStorageTable (fixed, network and flash disks) or by POST /api/disk/set; one per
-- (device, hrStorageIndex). `available` and `total` are bytes.
CREATE TABLE disk_trackers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  storage_index INTEGER NOT NULL,             -- the record's `index`
  freespace_oid TEXT NOT NULL,
  interval INTEGER NOT NULL DEFAULT 600 CHECK (interval > 0),
  enable_logging INTEGER NOT NULL DEFAULT 1,
  available INTEGER,
  total INTEGER,
  storage_type TEXT,                          -- hrStorageType OID
  allocation_units INTEGER,
  source TEXT NOT NULL DEFAULT 'crawl' CHECK (source IN ('crawl', 'manual')),
  last_seen_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (device_id, storage_index)
) STRICT;

-- walks_log: a partitioned table (platform/db/partitions.ts): writes go to walks_log_latest,
-- rotation renames it to walks_log_pYYYYMMDD, and the view walks_log unions the partitions.
-- No foreign key: partitions are dropped whole, and device deletion purges each partition.
CREATE TABLE walks_log_latest (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('crawl', 'live')),
  oid_count INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  truncated INTEGER NOT NULL DEFAULT 0,
  walk TEXT NOT NULL                          -- JSON array of {oid, type, value}
) STRICT;
CREATE INDEX walks_log_latest_by_device ON walks_log_latest (device_id, timestamp);
CREATE INDEX walks_log_latest_by_time ON walks_log_latest (timestamp);
CREATE VIEW walks_log AS SELECT * FROM walks_log_latest;
