-- Flow records (spec part 3 "Flow record", "Flow explorer"; issue 15), written by the flow
-- collector (features/flows) through the storage writer.
--
-- flows is a partitioned table (platform/db/partitions.ts), internal (not one of the spec's four
-- listed tables), rotated hourly and pruned by the retention policy: writes go to flows_latest,
-- rotation renames it to flows_pYYYYMMDD[_n], the view flows unions the partitions. Partitions are
-- cut on end_time (the list window ends on it; active flows are the newest end times).
-- No foreign key to devices: enrichment (src_*/dst_*) is a snapshot taken at intake from the
-- device IP map; renaming a device leaves stored rows as they were, deleting one keeps its rows
-- until their partition is pruned. Tag scope applies by endpoint address at query time.
--
-- Indexes (two, for the writer's sake): end_time serves the window and active lists and the
-- partition bounds; bytes serves the first page of a wide window (bytes descending) without
-- sorting the window. Address filters and scope read the rows of the window.
CREATE TABLE flows_latest (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  start_time INTEGER NOT NULL,                -- UTC ms of the flow's first packet
  end_time INTEGER NOT NULL,                  -- UTC ms of its last packet
  src_ip TEXT NOT NULL,
  src_port INTEGER NOT NULL,
  dst_ip TEXT NOT NULL,
  dst_port INTEGER NOT NULL,
  protocol INTEGER NOT NULL,
  bytes INTEGER NOT NULL,                     -- sampling applied
  packets INTEGER NOT NULL,
  flow_src TEXT NOT NULL,                     -- the exporter's address
  vlan INTEGER,
  in_iface INTEGER,
  out_iface INTEGER,
  src_id INTEGER,
  src_host TEXT,
  src_profile TEXT,
  dst_id INTEGER,
  dst_host TEXT,
  dst_profile TEXT,
  received_at INTEGER NOT NULL                -- UTC ms the collector decoded it
) STRICT;
CREATE INDEX flows_latest_by_end ON flows_latest (end_time);
CREATE INDEX flows_latest_by_bytes ON flows_latest (bytes);
CREATE VIEW flows AS SELECT * FROM flows_latest;

-- The aggregated list: one row per conversation tuple per hour (of end_time), maintained at
-- write time (INSERT ... ON CONFLICT DO UPDATE in the same atomic group as the rows it counts).
-- Unknown vlan/interfaces are 0 in the key. src_ports: JSON array of distinct source ports, at
-- most 64 (the first 64 seen in ascending order of arrival batches).
CREATE TABLE flow_conversations (
  hour INTEGER NOT NULL,                      -- UTC ms floored to the hour
  src_ip TEXT NOT NULL,
  dst_ip TEXT NOT NULL,
  dst_port INTEGER NOT NULL,
  protocol INTEGER NOT NULL,
  flow_src TEXT NOT NULL,
  vlan INTEGER NOT NULL,
  in_iface INTEGER NOT NULL,
  out_iface INTEGER NOT NULL,
  src_ports TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  packets INTEGER NOT NULL,
  flows INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  src_id INTEGER,
  src_host TEXT,
  src_profile TEXT,
  dst_id INTEGER,
  dst_host TEXT,
  dst_profile TEXT,
  PRIMARY KEY (hour, src_ip, dst_ip, dst_port, protocol, flow_src, vlan, in_iface, out_iface)
) STRICT, WITHOUT ROWID;
CREATE INDEX flow_conversations_by_src ON flow_conversations (src_ip, hour);
CREATE INDEX flow_conversations_by_dst ON flow_conversations (dst_ip, hour);
