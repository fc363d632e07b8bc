/**
 * SQL of the alerting tables (0014_alerting.sql): alerts, classes, email templates, maintenance
 * windows, outlets and outlet templates, routing rules, device parents and the history ledger.
 * The legacy alert catalogue is in legacy-alerts.repository.ts.
 */
import type { DB } from '../../platform/db/database.js';
import {
  DEFAULT_FLAP_SETTINGS,
  flapSettingsErrors,
  type FlapSettings,
} from './legacy-flap.rules.js';

// --- alerts -------------------------------------------------------------------------------------

export interface AlertRow {
  id: number;
  label: string;
  class: string;
  severity: number;
  parameters: string;
  enabled: number;
  scope: 'global' | 'device' | 'tag';
  scope_id: string | null;
  tag_filters: string;
  renotify_minutes: number | null;
  throttle_flip_count: number | null;
  throttle_flip_window_minutes: number | null;
  throttle_stable_minutes: number | null;
  disabled_reason: string | null;
  last_evaluated_at: number | null;
  last_result_count: number | null;
  created_at: number;
  updated_at: number;
}

export interface AlertWrite {
  label: string;
  class: string;
  severity: number;
  parameters: string;
  enabled: number;
  scope: string;
  scope_id: string | null;
  tag_filters: string;
  renotify_minutes: number | null;
  throttle_flip_count: number | null;
  throttle_flip_window_minutes: number | null;
  throttle_stable_minutes: number | null;
}

export const listAlerts = (db: DB) =>
  db.prepare('SELECT * FROM alerts ORDER BY id').all() as AlertRow[];
export const listEnabledAlerts = (db: DB) =>
  db.prepare('SELECT * FROM alerts WHERE enabled = 1 ORDER BY id').all() as AlertRow[];
export const findAlertById = (db: DB, id: number) =>
  db.prepare('SELECT * FROM alerts WHERE id = ?').get(id) as AlertRow | undefined;

export function insertAlert(db: DB, alert: AlertWrite, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO alerts (label, class, severity, parameters, enabled, scope, scope_id, tag_filters,
           renotify_minutes, throttle_flip_count, throttle_flip_window_minutes, throttle_stable_minutes,
           created_at, updated_at)
         VALUES (@label, @class, @severity, @parameters, @enabled, @scope, @scope_id, @tag_filters,
           @renotify_minutes, @throttle_flip_count, @throttle_flip_window_minutes, @throttle_stable_minutes,
           @now, @now)`,
      )
      .run({ ...alert, now }).lastInsertRowid,
  );
}

export function updateAlert(db: DB, id: number, alert: Omit<AlertWrite, 'class'>, now: number) {
  db.prepare(
    `UPDATE alerts SET label = @label, severity = @severity, parameters = @parameters,
       enabled = @enabled, scope = @scope, scope_id = @scope_id, tag_filters = @tag_filters,
       renotify_minutes = @renotify_minutes, throttle_flip_count = @throttle_flip_count,
       throttle_flip_window_minutes = @throttle_flip_window_minutes,
       throttle_stable_minutes = @throttle_stable_minutes,
       disabled_reason = CASE WHEN @enabled = 1 THEN NULL ELSE disabled_reason END,
       updated_at = @now WHERE id = @id`,
  ).run({ ...alert, id, now });
}

export const deleteAlert = (db: DB, id: number) =>
  db.prepare('DELETE FROM alerts WHERE id = ?').run(id).changes > 0;

export const toggleAlertEnabled = (db: DB, id: number, now: number) =>
  db
    .prepare(
      'UPDATE alerts SET enabled = 1 - enabled, disabled_reason = NULL, updated_at = ? WHERE id = ?',
    )
    .run(now, id).changes > 0;

/** Device deletion: alerts scoped to the device are disabled, their scope kept. */
export const disableAlertsOfDevice = (db: DB, deviceId: number, now: number) =>
  db
    .prepare(
      `UPDATE alerts SET enabled = 0, disabled_reason = 'device_deleted', updated_at = ?
       WHERE scope = 'device' AND scope_id = ?`,
    )
    .run(now, String(deviceId)).changes;

export function recordEvaluation(db: DB, id: number, at: number, count: number): void {
  db.prepare('UPDATE alerts SET last_evaluated_at = ?, last_result_count = ? WHERE id = ?').run(
    at,
    count,
    id,
  );
}

export function setAlertRouterConfig(
  db: DB,
  id: number,
  fields: Record<string, number>,
  now: number,
): void {
  const columns = Object.keys(fields).filter((k) => ROUTER_COLUMNS.has(k));
  if (columns.length === 0) return;
  db.prepare(
    `UPDATE alerts SET ${columns.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @now WHERE id = @id`,
  ).run({ ...fields, id, now });
}

export const ROUTER_COLUMNS = new Set([
  'severity',
  'renotify_minutes',
  'throttle_flip_count',
  'throttle_flip_window_minutes',
  'throttle_stable_minutes',
]);

// --- classes and email templates -----------------------------------------------------------------

export interface ClassRow {
  name: string;
  label: string;
  description: string;
  kind: 'modern' | 'legacy';
  parameters: string;
  variables: string;
  default_email_template_id: number | null;
  default_email_template_label: string | null;
  restorable: number;
}

export const listClasses = (db: DB) =>
  db
    .prepare(
      `SELECT c.*, t.label AS default_email_template_label,
         EXISTS (SELECT 1 FROM email_template_defaults d WHERE d.class = c.name) AS restorable
       FROM alert_classes c LEFT JOIN email_templates t ON t.id = c.default_email_template_id
       ORDER BY c.position`,
    )
    .all() as ClassRow[];

export interface TemplateRow {
  id: number;
  label: string;
  description: string | null;
  class: string | null;
  email_template: string;
  alt_template: string;
}

const TEMPLATE_COLUMNS = 'id, label, description, class, email_template, alt_template';
export const listTemplates = (db: DB) =>
  db.prepare(`SELECT ${TEMPLATE_COLUMNS} FROM email_templates ORDER BY id`).all() as TemplateRow[];
export const findTemplate = (db: DB, id: number) =>
  db.prepare(`SELECT ${TEMPLATE_COLUMNS} FROM email_templates WHERE id = ?`).get(id) as
    TemplateRow | undefined;
export function updateTemplate(db: DB, row: TemplateRow, now: number): void {
  db.prepare(
    `UPDATE email_templates SET label = @label, description = @description, class = @class,
       email_template = @email_template, alt_template = @alt_template, updated_at = @now WHERE id = @id`,
  ).run({ ...row, now });
}
export const templateDefault = (db: DB, cls: string) =>
  db
    .prepare('SELECT email_template, alt_template FROM email_template_defaults WHERE class = ?')
    .get(cls) as { email_template: string; alt_template: string } | undefined;
/** The template a class notifies with by default. */
export const defaultTemplateOfClass = (db: DB, cls: string) =>
  db
    .prepare(
      `SELECT t.id, t.label, t.description, t.class, t.email_template, t.alt_template
       FROM alert_classes c JOIN email_templates t ON t.id = c.default_email_template_id WHERE c.name = ?`,
    )
    .get(cls) as TemplateRow | undefined;

// --- maintenance windows -------------------------------------------------------------------------

export interface WindowRow {
  id: number;
  label: string;
  recurrence_unit: 'day' | 'week' | 'month' | 'dawom';
  maintenance_duration: number;
  schedule_hour: number;
  schedule_week: number | null;
  schedule_day: number | null;
  schedule_month: number | null;
}
const WINDOW_COLUMNS =
  'id, label, recurrence_unit, maintenance_duration, schedule_hour, schedule_week, schedule_day, schedule_month';
export const listWindows = (db: DB) =>
  db.prepare(`SELECT ${WINDOW_COLUMNS} FROM maintenance_windows ORDER BY id`).all() as WindowRow[];
export const findWindow = (db: DB, id: number) =>
  db.prepare(`SELECT ${WINDOW_COLUMNS} FROM maintenance_windows WHERE id = ?`).get(id) as
    WindowRow | undefined;
export function saveWindow(db: DB, w: Omit<WindowRow, 'id'> & { id?: number }, now: number) {
  if (w.id !== undefined) {
    db.prepare(
      `UPDATE maintenance_windows SET label = @label, recurrence_unit = @recurrence_unit,
         maintenance_duration = @maintenance_duration, schedule_hour = @schedule_hour,
         schedule_week = @schedule_week, schedule_day = @schedule_day,
         schedule_month = @schedule_month, updated_at = @now WHERE id = @id`,
    ).run({ ...w, now });
    return w.id;
  }
  return Number(
    db
      .prepare(
        `INSERT INTO maintenance_windows (label, recurrence_unit, maintenance_duration, schedule_hour,
           schedule_week, schedule_day, schedule_month, created_at, updated_at)
         VALUES (@label, @recurrence_unit, @maintenance_duration, @schedule_hour, @schedule_week,
           @schedule_day, @schedule_month, @now, @now)`,
      )
      .run({ ...w, now }).lastInsertRowid,
  );
}
/** Deletes a window; its attachments (legacy alerts, routing rules) go with it (ON DELETE CASCADE). */
export const deleteWindow = (db: DB, id: number) =>
  db.prepare('DELETE FROM maintenance_windows WHERE id = ?').run(id).changes > 0;
export const existingWindowIds = (db: DB, ids: readonly number[]) =>
  db
    .prepare(
      'SELECT id FROM maintenance_windows WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id',
    )
    .pluck()
    .all(JSON.stringify(ids)) as number[];

export const windowsOfLegacyAlert = (db: DB, legacyAlertId: number) =>
  db
    .prepare(
      `SELECT ${WINDOW_COLUMNS.split(', ')
        .map((c) => `w.${c}`)
        .join(', ')} FROM maintenance_windows w
       JOIN legacy_alert_windows l ON l.window_id = w.id WHERE l.legacy_alert_id = ? ORDER BY w.id`,
    )
    .all(legacyAlertId) as WindowRow[];
export function attachWindows(db: DB, legacyAlertId: number, ids: readonly number[]): void {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO legacy_alert_windows (legacy_alert_id, window_id) VALUES (?, ?)',
  );
  for (const id of ids) insert.run(legacyAlertId, id);
}
export function detachWindows(db: DB, legacyAlertId: number, ids: readonly number[]): void {
  db.prepare(
    'DELETE FROM legacy_alert_windows WHERE legacy_alert_id = ? AND window_id IN (SELECT value FROM json_each(?))',
  ).run(legacyAlertId, JSON.stringify(ids));
}
export function syncWindows(db: DB, legacyAlertId: number, ids: readonly number[]): void {
  db.prepare('DELETE FROM legacy_alert_windows WHERE legacy_alert_id = ?').run(legacyAlertId);
  attachWindows(db, legacyAlertId, ids);
}

// --- outlets -------------------------------------------------------------------------------------

export interface OutletRow {
  id: number;
  name: string;
  type: string;
  config: string;
  secret: string | null;
  enabled: number;
  rate_limit_per_min: number | null;
  template_id: number | null;
  email_template_id: number | null;
  system: number;
  template_name: string | null;
  template_outlet_type: string | null;
  template_label: string | null;
}
const OUTLET_SELECT = `SELECT o.*, t.name AS template_name, t.outlet_type AS template_outlet_type,
  t.label AS template_label FROM outlets o LEFT JOIN outlet_templates t ON t.id = o.template_id`;
export const listOutlets = (db: DB) =>
  db.prepare(`${OUTLET_SELECT} WHERE o.system = 0 ORDER BY o.id`).all() as OutletRow[];
export const findOutlet = (db: DB, id: number) =>
  db.prepare(`${OUTLET_SELECT} WHERE o.id = ?`).get(id) as OutletRow | undefined;
export const outletsByIds = (db: DB, ids: readonly number[]) =>
  db
    .prepare(`${OUTLET_SELECT} WHERE o.id IN (SELECT value FROM json_each(?)) ORDER BY o.id`)
    .all(JSON.stringify(ids)) as OutletRow[];
export const outletNameTaken = (db: DB, name: string, exceptId: number | null) =>
  db
    .prepare('SELECT 1 FROM outlets WHERE name = ? COLLATE NOCASE AND id IS NOT ?')
    .get(name, exceptId) !== undefined;

export interface OutletWrite {
  name: string;
  type: string;
  config: string;
  secret: string | null;
  enabled: number;
  rate_limit_per_min: number | null;
  template_id: number | null;
  email_template_id: number | null;
}
export function insertOutlet(db: DB, o: OutletWrite & { system?: number }, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO outlets (name, type, config, secret, enabled, rate_limit_per_min, template_id,
           email_template_id, system, created_at, updated_at)
         VALUES (@name, @type, @config, @secret, @enabled, @rate_limit_per_min, @template_id,
           @email_template_id, @system, @now, @now)`,
      )
      .run({ system: 0, ...o, now }).lastInsertRowid,
  );
}
export function updateOutlet(db: DB, id: number, o: OutletWrite, now: number): void {
  db.prepare(
    `UPDATE outlets SET name = @name, config = @config, secret = @secret, enabled = @enabled,
       rate_limit_per_min = @rate_limit_per_min, template_id = @template_id,
       email_template_id = @email_template_id, updated_at = @now WHERE id = @id`,
  ).run({ ...o, id, now });
}
export const deleteOutlet = (db: DB, id: number) =>
  db.prepare('DELETE FROM outlets WHERE id = ? AND system = 0').run(id).changes > 0;
export const outletTemplateExists = (db: DB, id: number) =>
  db.prepare('SELECT 1 FROM outlet_templates WHERE id = ?').get(id) !== undefined;
export const emailTemplateExists = (db: DB, id: number) =>
  db.prepare('SELECT 1 FROM email_templates WHERE id = ?').get(id) !== undefined;

// --- routing rules -------------------------------------------------------------------------------

export interface RuleRow {
  id: number;
  label: string;
  enabled: number;
  alert_ids: string;
  legacy_alert_ids: string;
  severities: string;
  device_ids: string;
  tag_slugs: string;
  outlet_ids: string;
  window_ids: string;
}
const RULE_SELECT = `SELECT r.*,
  (SELECT json_group_array(outlet_id) FROM (SELECT outlet_id FROM routing_rule_outlets WHERE rule_id = r.id ORDER BY outlet_id)) AS outlet_ids,
  (SELECT json_group_array(window_id) FROM (SELECT window_id FROM routing_rule_windows WHERE rule_id = r.id ORDER BY window_id)) AS window_ids
  FROM routing_rules r`;
export const listRules = (db: DB) => db.prepare(`${RULE_SELECT} ORDER BY r.id`).all() as RuleRow[];
export const listEnabledRules = (db: DB) =>
  db.prepare(`${RULE_SELECT} WHERE r.enabled = 1 ORDER BY r.id`).all() as RuleRow[];
export const findRule = (db: DB, id: number) =>
  db.prepare(`${RULE_SELECT} WHERE r.id = ?`).get(id) as RuleRow | undefined;

export interface RuleWrite {
  label: string;
  enabled: number;
  alert_ids: number[];
  legacy_alert_ids: number[];
  severities: number[];
  device_ids: number[];
  tag_slugs: string[];
  outlet_ids: number[];
  window_ids: number[];
}
export function saveRule(db: DB, id: number | null, r: RuleWrite, now: number): number {
  const row = {
    label: r.label,
    enabled: r.enabled,
    alert_ids: JSON.stringify(r.alert_ids),
    legacy_alert_ids: JSON.stringify(r.legacy_alert_ids),
    severities: JSON.stringify(r.severities),
    device_ids: JSON.stringify(r.device_ids),
    tag_slugs: JSON.stringify(r.tag_slugs),
    now,
  };
  let ruleId = id;
  if (ruleId === null)
    ruleId = Number(
      db
        .prepare(
          `INSERT INTO routing_rules (label, enabled, alert_ids, legacy_alert_ids, severities, device_ids,
             tag_slugs, created_at, updated_at)
           VALUES (@label, @enabled, @alert_ids, @legacy_alert_ids, @severities, @device_ids, @tag_slugs, @now, @now)`,
        )
        .run(row).lastInsertRowid,
    );
  else
    db.prepare(
      `UPDATE routing_rules SET label = @label, enabled = @enabled, alert_ids = @alert_ids,
         legacy_alert_ids = @legacy_alert_ids, severities = @severities, device_ids = @device_ids,
         tag_slugs = @tag_slugs, updated_at = @now WHERE id = @id`,
    ).run({ ...row, id: ruleId });
  db.prepare('DELETE FROM routing_rule_outlets WHERE rule_id = ?').run(ruleId);
  db.prepare('DELETE FROM routing_rule_windows WHERE rule_id = ?').run(ruleId);
  const outlet = db.prepare('INSERT INTO routing_rule_outlets (rule_id, outlet_id) VALUES (?, ?)');
  for (const o of new Set(r.outlet_ids)) outlet.run(ruleId, o);
  const window = db.prepare('INSERT INTO routing_rule_windows (rule_id, window_id) VALUES (?, ?)');
  for (const w of new Set(r.window_ids)) window.run(ruleId, w);
  return ruleId;
}
export const deleteRule = (db: DB, id: number) =>
  db.prepare('DELETE FROM routing_rules WHERE id = ?').run(id).changes > 0;
export const existingOutletIds = (db: DB, ids: readonly number[]) =>
  db
    .prepare('SELECT id FROM outlets WHERE id IN (SELECT value FROM json_each(?))')
    .pluck()
    .all(JSON.stringify(ids)) as number[];

// --- tags (the core catalogue of 0001, read only) -------------------------------------------------

export const tagIdsOfSlugs = (db: DB, slugs: readonly string[]) =>
  db
    .prepare(
      "SELECT slug, id FROM tags WHERE type = 'device' AND slug IN (SELECT value FROM json_each(?))",
    )
    .all(JSON.stringify(slugs)) as { slug: string; id: number }[];

// --- device parents ------------------------------------------------------------------------------

export const parentOf = (db: DB, deviceId: number) =>
  (db.prepare('SELECT parent_id FROM device_parents WHERE device_id = ?').pluck().get(deviceId) as
    number | undefined) ?? null;
export const allParents = (db: DB) =>
  db.prepare('SELECT device_id, parent_id FROM device_parents').all() as {
    device_id: number;
    parent_id: number;
  }[];
export function setParent(db: DB, deviceId: number, parentId: number | null): void {
  if (parentId === null) db.prepare('DELETE FROM device_parents WHERE device_id = ?').run(deviceId);
  else
    db.prepare(
      'INSERT INTO device_parents (device_id, parent_id) VALUES (?, ?) ON CONFLICT (device_id) DO UPDATE SET parent_id = excluded.parent_id',
    ).run(deviceId, parentId);
}

// --- history ledger ------------------------------------------------------------------------------

export interface OccurrenceWrite {
  source: 'modern' | 'legacy';
  alert_id: number;
  alert_label: string;
  alert_class: string;
  severity: number;
  device_id: number | null;
  device_label: string | null;
  opened_at: number;
  match_count: number;
  message: string | null;
  suppressed_by: string | null;
}
export function openOccurrence(db: DB, o: OccurrenceWrite): number {
  return Number(
    db
      .prepare(
        `INSERT INTO alert_occurrences (source, alert_id, alert_label, alert_class, severity, device_id,
           device_label, opened_at, match_count, message, suppressed_by)
         VALUES (@source, @alert_id, @alert_label, @alert_class, @severity, @device_id, @device_label,
           @opened_at, @match_count, @message, @suppressed_by)`,
      )
      .run(o).lastInsertRowid,
  );
}
export const closeOccurrence = (db: DB, id: number, at: number, count: number) =>
  db
    .prepare(
      'UPDATE alert_occurrences SET closed_at = ?, match_count = max(match_count, ?) WHERE id = ?',
    )
    .run(at, count, id);
export const bumpOccurrence = (db: DB, id: number, count: number) =>
  db
    .prepare('UPDATE alert_occurrences SET match_count = max(match_count, ?) WHERE id = ?')
    .run(count, id);
export const openOccurrences = (db: DB) =>
  db
    .prepare(
      "SELECT id, alert_id, device_id, match_count FROM alert_occurrences WHERE closed_at IS NULL AND source = 'modern'",
    )
    .all() as { id: number; alert_id: number; device_id: number | null; match_count: number }[];
export function recordNotification(
  db: DB,
  n: {
    occurrence_id: number;
    rule_id: number | null;
    outlet_id: number;
    outlet_name: string;
    delivery_id: number | null;
    suppressed_by: string | null;
    queued_at: number;
  },
): void {
  db.prepare(
    `INSERT INTO alert_notifications (occurrence_id, rule_id, outlet_id, outlet_name, delivery_id,
       suppressed_by, queued_at)
     VALUES (@occurrence_id, @rule_id, @outlet_id, @outlet_name, @delivery_id, @suppressed_by, @queued_at)`,
  ).run(n);
  db.prepare('UPDATE alert_occurrences SET routes = routes + 1 WHERE id = ?').run(n.occurrence_id);
}
export const setOccurrenceSuppression = (db: DB, id: number, by: string | null) =>
  db.prepare('UPDATE alert_occurrences SET suppressed_by = ? WHERE id = ?').run(by, id);

export interface OccurrenceRow extends OccurrenceWrite {
  id: number;
  closed_at: number | null;
  notifications: string;
}
export function listOccurrences(
  db: DB,
  q: { limit: number; beforeId?: number; alertId?: number; source?: string },
): OccurrenceRow[] {
  return db
    .prepare(
      `SELECT o.*, (SELECT json_group_array(json_object('outlet_id', n.outlet_id, 'outlet_name', n.outlet_name,
           'delivery_id', n.delivery_id, 'suppressed_by', n.suppressed_by, 'queued_at', n.queued_at,
           'status', d.status, 'attempts', d.attempts, 'error', d.error,
           'rate_delay_ms', d.rate_delay_ms, 'sent_at', d.sent_at))
         FROM alert_notifications n LEFT JOIN alert_deliveries d ON d.id = n.delivery_id
         WHERE n.occurrence_id = o.id) AS notifications
       FROM alert_occurrences o
       WHERE (@beforeId IS NULL OR o.id < @beforeId) AND (@alertId IS NULL OR o.alert_id = @alertId)
         AND (@source IS NULL OR o.source = @source)
       ORDER BY o.id DESC LIMIT @limit`,
    )
    .all({
      limit: q.limit,
      beforeId: q.beforeId ?? null,
      alertId: q.alertId ?? null,
      source: q.source ?? null,
    }) as OccurrenceRow[];
}

// --- legacy firings awaiting delivery -------------------------------------------------------------

export interface PendingLegacyEvent {
  id: number;
  alert_id: number;
  ts: number;
  message: string;
  device_id: number | null;
  tracker_kind: string;
  tracker_id: number;
  alert_type: string;
  severity: number;
  /** The state this firing was for (the alert's current state for rows older than 0016). */
  state: number | null;
}
export const pendingLegacyEvents = (db: DB, limit: number) =>
  db
    .prepare(
      `SELECT e.id, e.alert_id, e.ts, e.message, a.device_id, a.tracker_kind, a.tracker_id, a.alert_type, a.severity,
              coalesce(e.state, a.last_state) AS state
       FROM legacy_alert_events e JOIN legacy_alerts a ON a.id = e.alert_id
       WHERE e.delivered_at IS NULL ORDER BY e.ts, e.id LIMIT ?`,
    )
    .all(limit) as PendingLegacyEvent[];
/** A legacy alert's open occurrence, if any. */
export const openLegacyOccurrence = (db: DB, alertId: number) =>
  db
    .prepare(
      "SELECT id, suppressed_by, alert_label, message FROM alert_occurrences WHERE source = 'legacy' AND alert_id = ? AND closed_at IS NULL",
    )
    .get(alertId) as
    | { id: number; suppressed_by: string | null; alert_label: string; message: string | null }
    | undefined;
export const legacyAlertForRouting = (db: DB, id: number) =>
  db
    .prepare(
      'SELECT severity, device_id, alert_type, tracker_kind, tracker_id FROM legacy_alerts WHERE id = ?',
    )
    .get(id) as
    | {
        severity: number;
        device_id: number | null;
        alert_type: string;
        tracker_kind: string;
        tracker_id: number;
      }
    | undefined;

// --- the engine's high-water marks (resumed after a restart) --------------------------------------

const MARKS_KEY = 'alerts.engine_marks';
export function engineMarks(db: DB): Record<string, unknown> {
  const raw = db.prepare('SELECT value FROM settings WHERE key = ?').pluck().get(MARKS_KEY) as
    string | undefined;
  try {
    const parsed: unknown = raw === undefined ? {} : JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
export const saveEngineMarks = (db: DB, json: string) =>
  db
    .prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    )
    .run(MARKS_KEY, json);

// --- flap control settings (the generic settings table, one JSON value) ---------------------------

const FLAP_KEY = 'alerts.flap_control';
export function flapSettings(db: DB): FlapSettings {
  const raw = db.prepare('SELECT value FROM settings WHERE key = ?').pluck().get(FLAP_KEY) as
    string | undefined;
  if (raw === undefined) return { ...DEFAULT_FLAP_SETTINGS };
  try {
    const stored = JSON.parse(raw) as Partial<FlapSettings>;
    const merged = { ...DEFAULT_FLAP_SETTINGS, ...stored };
    return Object.keys(flapSettingsErrors(merged)).length === 0
      ? merged
      : { ...DEFAULT_FLAP_SETTINGS };
  } catch {
    return { ...DEFAULT_FLAP_SETTINGS };
  }
}
export const saveFlapSettings = (db: DB, value: FlapSettings) =>
  db
    .prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    )
    .run(FLAP_KEY, JSON.stringify(value));

export const markLegacyEventHandled = (db: DB, id: number, at: number) =>
  db.prepare('UPDATE legacy_alert_events SET delivered_at = ? WHERE id = ?').run(at, id);

// --- outlet templates ----------------------------------------------------------------------------

export interface OutletTemplateRow {
  id: number;
  name: string;
  outlet_type: string;
  label: string;
  body: string;
}
const OUTLET_TEMPLATE_COLUMNS = 'id, name, outlet_type, label, body';
export const listOutletTemplates = (db: DB) =>
  db
    .prepare(`SELECT ${OUTLET_TEMPLATE_COLUMNS} FROM outlet_templates ORDER BY id`)
    .all() as OutletTemplateRow[];
export const findOutletTemplate = (db: DB, id: number) =>
  db.prepare(`SELECT ${OUTLET_TEMPLATE_COLUMNS} FROM outlet_templates WHERE id = ?`).get(id) as
    OutletTemplateRow | undefined;
export const outletTemplateNameTaken = (db: DB, name: string, exceptId: number | null) =>
  db
    .prepare('SELECT 1 FROM outlet_templates WHERE name = ? AND id IS NOT ?')
    .get(name, exceptId) !== undefined;
export function saveOutletTemplate(
  db: DB,
  id: number | null,
  t: Omit<OutletTemplateRow, 'id'>,
  now: number,
): number {
  if (id !== null) {
    db.prepare(
      'UPDATE outlet_templates SET name = @name, outlet_type = @outlet_type, label = @label, body = @body, updated_at = @now WHERE id = @id',
    ).run({ ...t, id, now });
    return id;
  }
  return Number(
    db
      .prepare(
        'INSERT INTO outlet_templates (name, outlet_type, label, body, created_at, updated_at) VALUES (@name, @outlet_type, @label, @body, @now, @now)',
      )
      .run({ ...t, now }).lastInsertRowid,
  );
}
/** Outlets using it keep working with their class's email template (template_id SET NULL). */
export const deleteOutletTemplate = (db: DB, id: number) =>
  db.prepare('DELETE FROM outlet_templates WHERE id = ?').run(id).changes > 0;
