-- Each legacy firing records the state it fired for (link state: 1 up, 2 down; device down:
-- 1 up, 0 down). Without it the engine judged every pending firing by the alert's current state,
-- so a change and its reversal within one tick read as two of the same, and flap control (which
-- counts changes) had nothing to count. Rows written before this migration keep NULL and are
-- judged by the current state, as before.
ALTER TABLE legacy_alert_events ADD COLUMN state INTEGER;
