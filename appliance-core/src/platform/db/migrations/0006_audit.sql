-- The audit log (platform/audit): who did what, when, from where, to what, with what outcome.
-- Rows are written on the API connection in the same transaction as the change they record
-- (never through the storage writer, which may drop under load). Never a secret value.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,          -- monotonic: newest first is ORDER BY id DESC
  at INTEGER NOT NULL,                           -- UTC ms
  actor_user_id INTEGER,                         -- null: anonymous (a failed sign-in) or the system
  actor TEXT NOT NULL,                           -- username at the time, 'anonymous' or 'system'
  token_id INTEGER,                              -- the credential used, when it was a token
  source_ip TEXT,
  action TEXT NOT NULL,                          -- '<area>.<verb>', e.g. 'user.create', 'auth.login'
  target_type TEXT,
  target_id TEXT,
  target_label TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
  detail TEXT                                    -- JSON object of non-secret facts, or null
) STRICT;
CREATE INDEX audit_log_actor ON audit_log (actor_user_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_at ON audit_log (at);
