-- Appliance settings (spec part 3 "Appliance settings", "Settings and maintenance records"):
-- the host map, license activations, and the appliance's own role of each interface (capture and
-- IDS assignment). The host's own configuration (addresses, hostname, time) is never stored
-- here: it is read from the system and changed through the root helper. docs/features/settings.md.

-- Host map: names the appliance shows for addresses (flows, logs, captures).
CREATE TABLE host_map (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ip TEXT NOT NULL,                             -- canonical IPv4 or IPv6 literal
  hostname TEXT NOT NULL,                       -- DNS name, lower case, no trailing dot
  host_name_type TEXT NOT NULL CHECK (host_name_type IN ('hostname', 'fqdn', 'alias')),
  node_type TEXT NOT NULL CHECK (node_type IN ('host', 'server', 'workstation', 'router', 'switch', 'firewall', 'access_point', 'printer', 'other')),
  timestamp INTEGER NOT NULL,                   -- UTC ms of the last change
  UNIQUE (ip, hostname)
) STRICT;
CREATE INDEX host_map_hostname ON host_map (hostname);

-- License activations: one row per registration key; the newest is the active one.
CREATE TABLE license_activations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  activation_key TEXT NOT NULL UNIQUE,          -- six dash-separated groups of six upper-case hex digits
  license_type TEXT NOT NULL,
  company_name TEXT,                            -- not known offline: NULL
  user_name TEXT,                               -- the user who activated it (username at the time)
  user_email TEXT,                              -- and their email
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  activation_time INTEGER NOT NULL,             -- UTC ms
  end_of_license INTEGER,                       -- UTC ms, NULL for a perpetual license
  end_of_maintenance INTEGER                    -- UTC ms
) STRICT;

-- The appliance's own settings per interface: capture (use_sniffer) and IDS (use_suricata)
-- assignment. Saved in both network modes; the captures feature reads use_sniffer.
CREATE TABLE interface_roles (
  name TEXT PRIMARY KEY,                        -- interface name (max 15; letters, digits, _ . -)
  use_sniffer INTEGER NOT NULL DEFAULT 0 CHECK (use_sniffer IN (0, 1)),
  use_suricata INTEGER NOT NULL DEFAULT 0 CHECK (use_suricata IN (0, 1)),
  updated_at INTEGER NOT NULL
) STRICT;
