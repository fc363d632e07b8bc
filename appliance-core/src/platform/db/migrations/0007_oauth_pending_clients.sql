-- Pending OAuth clients (issue 11). A registration that no operator approves expires 7 days
-- after it was made (computed from created_at; the OAuth service purges expired ones before it
-- counts, lists or approves), one client address holds at most 20 pending registrations, and
-- the 500-client cap counts approved clients only. Rows from before this migration have no
-- address: they count against no address and expire like the others.
ALTER TABLE oauth_clients ADD COLUMN registered_from TEXT;
-- The per-address count at registration.
CREATE INDEX oauth_clients_pending_by_address ON oauth_clients (registered_from, created_at)
  WHERE approved_at IS NULL;
-- The cap's count.
CREATE INDEX oauth_clients_approved ON oauth_clients (approved_at) WHERE approved_at IS NOT NULL;
