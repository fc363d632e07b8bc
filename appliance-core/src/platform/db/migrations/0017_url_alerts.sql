-- URL trackers hold a legacy alert: `url_down` fires when a check fails (state 0) and again when
-- one passes (state 1), like the latency tracker's device-down alert. Its class, with the
-- canonical default template (what restore brings back) and the operator's copy.
INSERT INTO alert_classes (name, label, description, kind, parameters, variables, position) VALUES
('legacy_url_down', 'URL check failed', 'A URL tracker''s check failed (wrong status, pattern missing, certificate or connection error) and passed again.', 'legacy', '[]',
 '[{"slug":"alert_label","label":"Alert"},{"slug":"severity","label":"Alert severity"},{"slug":"url","label":"URL"},{"slug":"state","label":"State"},{"slug":"opened_at","label":"Changed at"},{"slug":"message","label":"What the check saw"}]', 6);

INSERT INTO email_template_defaults (class, label, description, email_template, alt_template) VALUES
('legacy_url_down', 'URL check failed', 'Default template of the URL tracker alert.',
 '<h2>{$url} is {$state}</h2><p>{$message}</p><p>At {$opened_at}.</p>',
 '{$url} is {$state}: {$message} at {$opened_at}.');

INSERT INTO email_templates (label, description, class, email_template, alt_template, created_at, updated_at)
  SELECT label, description, class, email_template, alt_template,
         CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM email_template_defaults WHERE class = 'legacy_url_down';
UPDATE alert_classes SET default_email_template_id =
  (SELECT min(t.id) FROM email_templates t WHERE t.class = 'legacy_url_down')
  WHERE name = 'legacy_url_down';
