-- Alert delivery (features/alerts/delivery): the persisted queue and ledger of deliveries, one
-- row per notification and outlet plus one row per attempt, and the mail relay settings.
-- No foreign key to the outlets table: the ledger outlives an outlet (its name and type are
-- denormalised here), and pending deliveries of a deleted outlet are cancelled by the queue.

CREATE TABLE alert_deliveries (
  id INTEGER PRIMARY KEY,
  outlet_id INTEGER NOT NULL,
  outlet_name TEXT NOT NULL,
  outlet_type TEXT NOT NULL,
  occurrence_id INTEGER,
  alert_label TEXT NOT NULL,
  severity INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'notification' CHECK (kind IN ('notification', 'summary')),
  -- {subject, text, html, variables} as JSON (no secret: outlet config never goes here).
  notification TEXT NOT NULL,
  -- The outlet as it was enqueued, sealed by the secret box (its secrets stay encrypted at rest).
  target_sealed TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'suppressed', 'coalesced')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  created_at INTEGER NOT NULL,
  sent_at INTEGER,
  error TEXT,
  rate_delay_ms INTEGER NOT NULL DEFAULT 0,
  suppressed_by TEXT,
  coalesced_into INTEGER REFERENCES alert_deliveries (id) ON DELETE SET NULL,
  coalesced_count INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The queue: which outlets have something due, and each outlet's next due delivery.
CREATE INDEX alert_deliveries_due ON alert_deliveries (next_attempt_at, outlet_id) WHERE status = 'pending';
CREATE INDEX alert_deliveries_outlet_due ON alert_deliveries (outlet_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX alert_deliveries_outlet ON alert_deliveries (outlet_id, status, kind);
CREATE INDEX alert_deliveries_occurrence ON alert_deliveries (occurrence_id) WHERE occurrence_id IS NOT NULL;
CREATE INDEX alert_deliveries_created ON alert_deliveries (created_at);
CREATE INDEX alert_deliveries_coalesced ON alert_deliveries (coalesced_into) WHERE coalesced_into IS NOT NULL;

CREATE TABLE alert_delivery_attempts (
  id INTEGER PRIMARY KEY,
  delivery_id INTEGER NOT NULL REFERENCES alert_deliveries (id) ON DELETE CASCADE,
  outlet_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('sending', 'sent', 'retry', 'failed', 'interrupted')),
  http_status INTEGER,
  error TEXT
) STRICT;

CREATE INDEX alert_delivery_attempts_delivery ON alert_delivery_attempts (delivery_id, attempt);
-- The rate limit counts an outlet's attempts started in the current minute.
CREATE INDEX alert_delivery_attempts_outlet ON alert_delivery_attempts (outlet_id, started_at);

-- The mail relay (POST /api/smtpSettings): one row; the password sealed by the secret box.
CREATE TABLE smtp_settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sender TEXT NOT NULL,
  email TEXT NOT NULL,
  server TEXT NOT NULL,
  port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  auth INTEGER NOT NULL CHECK (auth IN (0, 1)),
  usessl INTEGER NOT NULL CHECK (usessl IN (0, 1)),
  authname TEXT NOT NULL DEFAULT '',
  authpass_sealed TEXT,
  updated_at INTEGER NOT NULL
) STRICT;
