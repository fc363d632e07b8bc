-- Alerting (spec part 3 "Alerting"; issue 17): alert classes and their canonical email templates,
-- alerts, maintenance windows, outlets and outlet templates, routing rules, the legacy alert
-- catalogue (rebuilt from 0005 so URL trackers and local networks can hold alerts) and the alert
-- history ledger. Every table here belongs to features/alerts (docs/features/alerting.md).

-- Classes: the three modern classes and the legacy ones. `parameters` is the JSON array of the
-- class's parameter schemas ({name, label, type, required, default, min, max, options}),
-- `variables` the JSON array of {slug, label} a template may substitute.
CREATE TABLE alert_classes (
  name TEXT PRIMARY KEY,
  label TEXT NOT NULL,
  description TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('modern', 'legacy')),
  parameters TEXT NOT NULL,
  variables TEXT NOT NULL,
  position INTEGER NOT NULL,
  default_email_template_id INTEGER
) STRICT;

-- The canonical default bodies per class (what restore brings back); never written after seeding.
CREATE TABLE email_template_defaults (
  class TEXT PRIMARY KEY REFERENCES alert_classes (name),
  label TEXT NOT NULL,
  description TEXT,
  email_template TEXT NOT NULL,
  alt_template TEXT NOT NULL
) STRICT;

CREATE TABLE email_templates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  description TEXT CHECK (description IS NULL OR length(description) <= 1024),
  class TEXT,                                   -- NULL: no class (restore answers 422)
  email_template TEXT NOT NULL,
  alt_template TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

INSERT INTO alert_classes (name, label, description, kind, parameters, variables, position) VALUES
('syslog_log', 'Syslog', 'Syslog messages matching the parameters, counted per device over the lookback window.', 'modern',
 '[{"name":"facility","label":"Facility","type":"select","required":false,"default":null,"options":[{"value":0,"label":"kern"},{"value":1,"label":"user"},{"value":2,"label":"mail"},{"value":3,"label":"daemon"},{"value":4,"label":"auth"},{"value":5,"label":"syslog"},{"value":6,"label":"lpr"},{"value":7,"label":"news"},{"value":8,"label":"uucp"},{"value":9,"label":"cron"},{"value":10,"label":"authpriv"},{"value":11,"label":"ftp"},{"value":12,"label":"ntp"},{"value":13,"label":"security"},{"value":14,"label":"console"},{"value":15,"label":"solaris-cron"},{"value":16,"label":"local0"},{"value":17,"label":"local1"},{"value":18,"label":"local2"},{"value":19,"label":"local3"},{"value":20,"label":"local4"},{"value":21,"label":"local5"},{"value":22,"label":"local6"},{"value":23,"label":"local7"}]},{"name":"severity_ceiling","label":"Severity at most","type":"select","required":false,"default":null,"options":[{"value":0,"label":"emergency"},{"value":1,"label":"alert"},{"value":2,"label":"critical"},{"value":3,"label":"error"},{"value":4,"label":"warning"},{"value":5,"label":"notice"},{"value":6,"label":"informational"},{"value":7,"label":"debug"}]},{"name":"contains","label":"Message contains","type":"string[]","required":false,"default":[]},{"name":"combine_op","label":"Combine","type":"select","required":false,"default":"AND","options":[{"value":"AND","label":"all of them"},{"value":"OR","label":"any of them"}]},{"name":"invert","label":"Fire on absence","type":"boolean","required":false,"default":false},{"name":"occurrences_min","label":"Occurrences at least","type":"number","required":true,"default":1,"min":1},{"name":"lookback_minutes","label":"Lookback (minutes)","type":"number","required":true,"default":5,"min":1,"max":10080}]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"device_label","label":"Device"},{"slug":"device_ip","label":"Device address"},{"slug":"count","label":"Matches in the window"},{"slug":"lookback_minutes","label":"Lookback (minutes)"},{"slug":"opened_at","label":"Opened at"},{"slug":"message","label":"First matching message"},{"slug":"source","label":"Syslog tag"},{"slug":"facility","label":"Facility"},{"slug":"syslog_severity","label":"Syslog severity"}]', 1),
('event_log', 'Windows events', 'Windows events matching the parameters, counted per device over the lookback window.', 'modern',
 '[{"name":"log","label":"Channel","type":"string","required":false,"default":null},{"name":"source","label":"Provider","type":"string","required":false,"default":null},{"name":"event_ids","label":"Event ids","type":"number[]","required":false,"default":[]},{"name":"severity_ceiling","label":"Severity at most","type":"select","required":false,"default":null,"options":[{"value":1,"label":"critical"},{"value":2,"label":"error"},{"value":3,"label":"warning"},{"value":4,"label":"level 4"},{"value":5,"label":"verbose"}]},{"name":"contains","label":"Message contains","type":"string[]","required":false,"default":[]},{"name":"combine_op","label":"Combine","type":"select","required":false,"default":"AND","options":[{"value":"AND","label":"all of them"},{"value":"OR","label":"any of them"}]},{"name":"invert","label":"Fire on absence","type":"boolean","required":false,"default":false},{"name":"occurrences_min","label":"Occurrences at least","type":"number","required":true,"default":1,"min":1},{"name":"lookback_minutes","label":"Lookback (minutes)","type":"number","required":true,"default":5,"min":1,"max":10080}]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"device_label","label":"Device"},{"slug":"device_ip","label":"Device address"},{"slug":"count","label":"Matches in the window"},{"slug":"lookback_minutes","label":"Lookback (minutes)"},{"slug":"opened_at","label":"Opened at"},{"slug":"message","label":"First matching event text"},{"slug":"event_id","label":"Event id"},{"slug":"log","label":"Channel"},{"slug":"source","label":"Provider"}]', 2),
('eve_log', 'IDS events', 'Suricata alerts matching the parameters, counted per device (source or destination) over the lookback window.', 'modern',
 '[{"name":"signature_ids","label":"Signature ids","type":"number[]","required":false,"default":[]},{"name":"severity_ceiling","label":"Severity at most","type":"select","required":false,"default":null,"options":[{"value":1,"label":"high"},{"value":2,"label":"medium"},{"value":3,"label":"low"}]},{"name":"proto","label":"Protocol","type":"string","required":false,"default":null},{"name":"contains","label":"Signature contains","type":"string[]","required":false,"default":[]},{"name":"combine_op","label":"Combine","type":"select","required":false,"default":"AND","options":[{"value":"AND","label":"all of them"},{"value":"OR","label":"any of them"}]},{"name":"invert","label":"Fire on absence","type":"boolean","required":false,"default":false},{"name":"occurrences_min","label":"Occurrences at least","type":"number","required":true,"default":1,"min":1},{"name":"lookback_minutes","label":"Lookback (minutes)","type":"number","required":true,"default":5,"min":1,"max":10080}]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"device_label","label":"Device"},{"slug":"device_ip","label":"Device address"},{"slug":"count","label":"Matches in the window"},{"slug":"lookback_minutes","label":"Lookback (minutes)"},{"slug":"opened_at","label":"Opened at"},{"slug":"message","label":"First matching signature"},{"slug":"signature_id","label":"Signature id"},{"slug":"src_ip","label":"Source address"},{"slug":"dst_ip","label":"Destination address"}]', 3),
('legacy_device_down', 'Device down', 'The latency tracker of a device saw it stop answering (and answer again).', 'legacy', '[]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"device_label","label":"Device"},{"slug":"device_ip","label":"Device address"},{"slug":"state","label":"State (down or up)"},{"slug":"opened_at","label":"Changed at"},{"slug":"message","label":"What changed"}]', 4),
('legacy_link_state', 'Interface link state', 'An interface tracker saw its link go down or up.', 'legacy', '[]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"device_label","label":"Device"},{"slug":"device_ip","label":"Device address"},{"slug":"state","label":"State"},{"slug":"opened_at","label":"Changed at"},{"slug":"message","label":"What changed"}]', 5);

INSERT INTO email_template_defaults (class, label, description, email_template, alt_template) VALUES
('syslog_log', 'Syslog alert', 'Default template of syslog alerts.',
 '<h2>{$alert_label}</h2><p>{$count} matching syslog messages from <b>{$device_label}</b> ({$device_ip}) in the last {$lookback_minutes} minutes.</p><p>First: <code>{$message}</code></p><p>Opened at {$opened_at}, severity {$severity}.</p>',
 '{$alert_label}: {$count} matching syslog messages from {$device_label} ({$device_ip}) in the last {$lookback_minutes} minutes. First: {$message}. Opened at {$opened_at}, severity {$severity}.'),
('event_log', 'Windows event alert', 'Default template of Windows event alerts.',
 '<h2>{$alert_label}</h2><p>{$count} matching Windows events from <b>{$device_label}</b> ({$device_ip}) in the last {$lookback_minutes} minutes.</p><p>First: <code>{$message}</code></p><p>Opened at {$opened_at}, severity {$severity}.</p>',
 '{$alert_label}: {$count} matching Windows events from {$device_label} ({$device_ip}) in the last {$lookback_minutes} minutes. First: {$message}. Opened at {$opened_at}, severity {$severity}.'),
('eve_log', 'IDS alert', 'Default template of IDS alerts.',
 '<h2>{$alert_label}</h2><p>{$count} matching IDS events for <b>{$device_label}</b> ({$device_ip}) in the last {$lookback_minutes} minutes.</p><p>First: <code>{$message}</code></p><p>Opened at {$opened_at}, severity {$severity}.</p>',
 '{$alert_label}: {$count} matching IDS events for {$device_label} ({$device_ip}) in the last {$lookback_minutes} minutes. First: {$message}. Opened at {$opened_at}, severity {$severity}.'),
('legacy_device_down', 'Device down', 'Default template of the device-down alert.',
 '<h2>{$device_label} is {$state}</h2><p>{$message}</p><p>Address {$device_ip}, at {$opened_at}.</p>',
 '{$device_label} ({$device_ip}) is {$state}: {$message} at {$opened_at}.'),
('legacy_link_state', 'Interface link state', 'Default template of the link-state alert.',
 '<h2>{$device_label}: link {$state}</h2><p>{$message}</p><p>Address {$device_ip}, at {$opened_at}.</p>',
 '{$device_label} ({$device_ip}): link {$state}: {$message} at {$opened_at}.');

INSERT INTO email_templates (label, description, class, email_template, alt_template, created_at, updated_at)
  SELECT d.label, d.description, d.class, d.email_template, d.alt_template,
         CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM email_template_defaults d JOIN alert_classes c ON c.name = d.class ORDER BY c.position;
UPDATE alert_classes SET default_email_template_id =
  (SELECT min(t.id) FROM email_templates t WHERE t.class = alert_classes.name);

-- Modern alerts. `class` is free text (an unknown class is accepted with any parameters and
-- never evaluated). `disabled_reason` says why the appliance (not a user) disabled it.
CREATE TABLE alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  class TEXT NOT NULL,
  severity INTEGER NOT NULL CHECK (severity BETWEEN 1 AND 5),
  parameters TEXT NOT NULL DEFAULT '{}',
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  scope TEXT NOT NULL DEFAULT 'global' CHECK (scope IN ('global', 'device', 'tag')),
  scope_id TEXT,
  tag_filters TEXT NOT NULL DEFAULT '[]',
  renotify_minutes INTEGER,
  throttle_flip_count INTEGER,
  throttle_flip_window_minutes INTEGER,
  throttle_stable_minutes INTEGER,
  disabled_reason TEXT,
  last_evaluated_at INTEGER,
  last_result_count INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX alerts_by_scope ON alerts (scope, scope_id);

-- Maintenance windows in the write shape (hours in the appliance's time zone; Sunday = 0;
-- schedule_month for dawom: nth weekday of the month, 5 = the last).
CREATE TABLE maintenance_windows (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  recurrence_unit TEXT NOT NULL CHECK (recurrence_unit IN ('day', 'week', 'month', 'dawom')),
  maintenance_duration INTEGER NOT NULL CHECK (maintenance_duration BETWEEN 1 AND 44640),
  schedule_hour INTEGER NOT NULL CHECK (schedule_hour BETWEEN 0 AND 23),
  schedule_week INTEGER CHECK (schedule_week BETWEEN 0 AND 6),
  schedule_day INTEGER CHECK (schedule_day BETWEEN 1 AND 31),
  schedule_month INTEGER CHECK (schedule_month BETWEEN 1 AND 5),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Outlet templates (designed): a message body per outlet type.
CREATE TABLE outlet_templates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 255),
  outlet_type TEXT NOT NULL CHECK (outlet_type IN ('email', 'webhook', 'slack', 'teams', 'discord', 'o365')),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Outlets. `config` holds the non-secret keys; `secret` the sealed secret keys (a JSON object,
-- secret box), never returned. System outlets (system = 1) are hidden from the list.
CREATE TABLE outlets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 255),
  type TEXT NOT NULL CHECK (type IN ('email', 'webhook', 'slack', 'teams', 'discord', 'o365')),
  config TEXT NOT NULL DEFAULT '{}',
  secret TEXT,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  rate_limit_per_min INTEGER CHECK (rate_limit_per_min IS NULL OR rate_limit_per_min >= 1),
  template_id INTEGER REFERENCES outlet_templates (id) ON DELETE SET NULL,
  email_template_id INTEGER REFERENCES email_templates (id) ON DELETE SET NULL,
  system INTEGER NOT NULL DEFAULT 0 CHECK (system IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Routing rules (designed): which alerts, severities, devices or tags go to which outlets. An
-- empty criterion matches everything; criteria combine with AND, values of one with OR.
CREATE TABLE routing_rules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  alert_ids TEXT NOT NULL DEFAULT '[]',
  legacy_alert_ids TEXT NOT NULL DEFAULT '[]',
  severities TEXT NOT NULL DEFAULT '[]',
  device_ids TEXT NOT NULL DEFAULT '[]',
  tag_slugs TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE routing_rule_outlets (
  rule_id INTEGER NOT NULL REFERENCES routing_rules (id) ON DELETE CASCADE,
  outlet_id INTEGER NOT NULL REFERENCES outlets (id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, outlet_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX routing_rule_outlets_by_outlet ON routing_rule_outlets (outlet_id);
CREATE TABLE routing_rule_windows (
  rule_id INTEGER NOT NULL REFERENCES routing_rules (id) ON DELETE CASCADE,
  window_id INTEGER NOT NULL REFERENCES maintenance_windows (id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, window_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX routing_rule_windows_by_window ON routing_rule_windows (window_id);

-- The legacy alert catalogue, rebuilt: device_id nullable (URL trackers), tracker kinds for URL
-- trackers and local networks, the router configuration columns. The events move with it. The
-- purge triggers of 0005 are dropped and created again (they name the table in their bodies).
CREATE TABLE legacy_alerts_copy AS SELECT * FROM legacy_alerts;
CREATE TABLE legacy_alert_events_copy AS SELECT * FROM legacy_alert_events;
DROP TRIGGER latency_trackers_purge;
DROP TRIGGER port_trackers_purge;
DROP TRIGGER oid_trackers_purge;
DROP TRIGGER disk_trackers_purge;
DROP TRIGGER interface_trackers_purge;
DROP TABLE legacy_alert_events;
DROP TABLE legacy_alerts;
CREATE TABLE legacy_alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER REFERENCES devices (id) ON DELETE CASCADE,   -- NULL: URL trackers, local networks
  tracker_kind TEXT NOT NULL CHECK (tracker_kind IN ('interface', 'disk', 'latency', 'oid', 'service', 'port', 'url', 'localnet')),
  tracker_id INTEGER NOT NULL,
  alert_type TEXT NOT NULL,                                      -- 'linkstate', 'device_down'
  active INTEGER NOT NULL DEFAULT 1,
  last_state INTEGER,
  last_fired_at INTEGER,
  fired_count INTEGER NOT NULL DEFAULT 0,
  severity INTEGER NOT NULL DEFAULT 3 CHECK (severity BETWEEN 1 AND 5),
  renotify_minutes INTEGER,
  throttle_flip_count INTEGER,
  throttle_flip_window_minutes INTEGER,
  throttle_stable_minutes INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tracker_kind, tracker_id, alert_type)
) STRICT;
CREATE INDEX legacy_alerts_device ON legacy_alerts (device_id);
INSERT INTO legacy_alerts (id, device_id, tracker_kind, tracker_id, alert_type, active, last_state, last_fired_at, fired_count, created_at, updated_at)
  SELECT id, device_id, tracker_kind, tracker_id, alert_type, active, last_state, last_fired_at, fired_count, created_at, updated_at FROM legacy_alerts_copy;
CREATE TABLE legacy_alert_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  alert_id INTEGER NOT NULL REFERENCES legacy_alerts (id) ON DELETE CASCADE,
  ts INTEGER NOT NULL,
  message TEXT NOT NULL,
  delivered_at INTEGER
) STRICT;
CREATE INDEX legacy_alert_events_alert ON legacy_alert_events (alert_id, ts);
CREATE INDEX legacy_alert_events_pending ON legacy_alert_events (delivered_at, ts);
INSERT INTO legacy_alert_events (id, alert_id, ts, message, delivered_at)
  SELECT id, alert_id, ts, message, delivered_at FROM legacy_alert_events_copy;
DROP TABLE legacy_alerts_copy;
DROP TABLE legacy_alert_events_copy;
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
CREATE TRIGGER url_trackers_alerts_purge AFTER DELETE ON url_trackers BEGIN
  DELETE FROM legacy_alerts WHERE tracker_kind = 'url' AND tracker_id = OLD.id;
END;
CREATE TRIGGER local_networks_alerts_purge AFTER DELETE ON local_networks BEGIN
  DELETE FROM legacy_alerts WHERE tracker_kind = 'localnet' AND tracker_id = OLD.id;
END;

-- Legacy alerts reach maintenance windows directly (attach / detach / sync).
CREATE TABLE legacy_alert_windows (
  legacy_alert_id INTEGER NOT NULL REFERENCES legacy_alerts (id) ON DELETE CASCADE,
  window_id INTEGER NOT NULL REFERENCES maintenance_windows (id) ON DELETE CASCADE,
  PRIMARY KEY (legacy_alert_id, window_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX legacy_alert_windows_by_window ON legacy_alert_windows (window_id);

-- Dependency-aware suppression (designed): a device's parent; a child whose parent is down opens
-- no incident of its own. Deleting either end drops the link.
CREATE TABLE device_parents (
  device_id INTEGER PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
  parent_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  CHECK (device_id <> parent_id)
) STRICT;

-- The history ledger: every occurrence, with its labels denormalised and no cascading key, so it
-- outlives the alert, the device and the outlet it names.
CREATE TABLE alert_occurrences (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL CHECK (source IN ('modern', 'legacy')),
  alert_id INTEGER NOT NULL,
  alert_label TEXT NOT NULL,
  alert_class TEXT NOT NULL,
  severity INTEGER NOT NULL,
  device_id INTEGER,
  device_label TEXT,
  opened_at INTEGER NOT NULL,
  closed_at INTEGER,
  match_count INTEGER NOT NULL DEFAULT 0,
  message TEXT,
  suppressed_by TEXT,                                             -- the covering window's label
  routes INTEGER NOT NULL DEFAULT 0                               -- notifications queued
) STRICT;
CREATE INDEX alert_occurrences_by_time ON alert_occurrences (opened_at);
CREATE INDEX alert_occurrences_by_alert ON alert_occurrences (source, alert_id, opened_at);
CREATE INDEX alert_occurrences_open ON alert_occurrences (closed_at) WHERE closed_at IS NULL;
CREATE TABLE alert_notifications (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  occurrence_id INTEGER NOT NULL REFERENCES alert_occurrences (id) ON DELETE CASCADE,
  rule_id INTEGER,
  outlet_id INTEGER NOT NULL,
  outlet_name TEXT NOT NULL,
  delivery_id INTEGER,                                             -- the delivery queue's row
  suppressed_by TEXT,
  queued_at INTEGER NOT NULL
) STRICT;
CREATE INDEX alert_notifications_by_occurrence ON alert_notifications (occurrence_id);
