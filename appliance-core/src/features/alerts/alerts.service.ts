/**
 * Alerting's logic over its repositories: alerts (validated per class; scope inside a
 * tag-restricted caller's tags), email templates, maintenance windows, router configuration,
 * outlets (secrets sealed, masked on read, kept on the sentinel; URLs checked by the outbound
 * policy), routing rules (tag filtered), the legacy catalogue (tag filtered), device parents and
 * the history ledger.
 *
 * Delivery is a seam: the DeliveryQueue, the template renderer and the outbound-address check
 * come from features/alerts/delivery (built by another engineer) through AlertsDeps, so this
 * module never names a transport.
 */
import type { DB } from '../../platform/db/database.js';
import { failure, type FieldErrors } from '../../platform/http/envelopes.js';
import { ENCRYPTED_SENTINEL, isSentinel } from '../../platform/http/encrypted-field.js';
import type { Identity } from '../../platform/http/identity.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import type { Clock } from '../../platform/time/time.js';
import { toIsoWithOffset } from '../../platform/time/time.js';
import * as repo from './alerts.repository.js';
import {
  normaliseParameters,
  splitOutletConfig,
  windowErrors,
  windowShort,
  type RuleCriteria,
} from './alerts.rules.js';
import type {
  CreateAlertBody,
  CreateOutletBody,
  OutletTemplateBody,
  RouterConfigBody,
  RoutingRuleBody,
  SaveWindowBody,
  UpdateAlertBody,
  UpdateOutletBody,
  UpdateTemplateBody,
} from './alerts.schema.js';
import {
  DEVICE_DOWN_ALERT,
  deleteLegacyAlert,
  ensureLegacyAlert,
  findAlert,
  findLegacyAlert,
  legacyClassOf,
  listLegacyAlerts,
  setLegacyRouterConfig,
  URL_DOWN_ALERT,
  type AlertRow as LegacyAlertRow,
} from './legacy-alerts.repository.js';

// --- the delivery seam (features/alerts/delivery/index.ts) -----------------------------------------

export interface OutletTarget {
  id: number;
  type: 'email' | 'webhook' | 'slack' | 'teams' | 'discord' | 'o365';
  name: string;
  /** Secrets in clear: server side only, never logged or returned. */
  config: Record<string, unknown>;
  rate_limit_per_min: number | null;
}
export interface Notification {
  occurrenceId: number | null;
  alertLabel: string;
  severity: number;
  subject: string;
  text: string;
  html: string | null;
  variables: Record<string, string>;
}
export interface DeliveryQueue {
  enqueue(outlet: OutletTarget, n: Notification, opts?: { suppressedBy?: string }): number;
  sendTest(outlet: OutletTarget): Promise<{ ok: boolean; error?: string }>;
}
export type RenderTemplate = (
  body: string,
  vars: Record<string, string>,
  opts: { html: boolean },
) => string;
/** The outbound-address policy bound to the appliance's settings (APPLIANCE_OUTLET_ALLOW). */
export type CheckOutletUrl = (url: string) => { ok: true } | { ok: false; reason: string };

/** What alerting needs of the devices feature (composition root). */
export interface AlertDevices {
  /** The device when it exists and the caller may see it. */
  visibleDevice(identity: Identity, id: number): { id: number; label: string } | null;
  /** Every device: id, label, address, tag ids (the IP map). */
  entries(): readonly {
    id: number;
    label: string;
    ip: string;
    tagIds: readonly number[];
  }[];
}

/** What features/alerts/delivery provides (wired by the composition root). */
export interface DeliverySeam {
  queue: DeliveryQueue;
  renderTemplate: RenderTemplate;
  checkOutletUrl: CheckOutletUrl;
}

export interface AlertsDeps {
  /**
   * Null until the composition root connects delivery: outlet URLs are then refused (no policy
   * to check them against), send-test fails with that reason, and occurrences are recorded in
   * the history with their routes marked undelivered.
   */
  delivery: DeliverySeam | null;
  devices: AlertDevices;
  /** The appliance's time zone (maintenance windows). */
  timeZone: () => string;
  /** The URL a URL tracker checks, or null when there is no such tracker (url-monitors). */
  urlOfTracker?: (trackerId: number) => string | null;
}

// --- records -------------------------------------------------------------------------------------

const iso = (ms: number | null) => (ms === null ? null : toIsoWithOffset(ms));
const parse = <T>(json: string): T => JSON.parse(json) as T;

export function alertRecord(row: repo.AlertRow) {
  return {
    id: row.id,
    label: row.label,
    class: row.class,
    severity: row.severity,
    parameters: parse<Record<string, unknown>>(row.parameters),
    enabled: row.enabled === 1,
    scope: row.scope,
    scope_id: row.scope_id,
    tag_filters: parse<string[]>(row.tag_filters),
    renotify_minutes: row.renotify_minutes,
    throttle_flip_count: row.throttle_flip_count,
    throttle_flip_window_minutes: row.throttle_flip_window_minutes,
    throttle_stable_minutes: row.throttle_stable_minutes,
    disabled_reason: row.disabled_reason,
    last_evaluated_at: iso(row.last_evaluated_at),
    last_result_count: row.last_result_count,
  };
}

function outletRecord(row: repo.OutletRow) {
  const config = parse<Record<string, unknown>>(row.config);
  if (row.secret) {
    const sealed = parse<Record<string, string>>(row.secret);
    for (const key of Object.keys(sealed)) config[key] = ENCRYPTED_SENTINEL;
  }
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    config,
    enabled: row.enabled === 1,
    rate_limit_per_min: row.rate_limit_per_min,
    template_id: row.template_id,
    email_template_id: row.email_template_id,
    template:
      row.template_id === null
        ? null
        : {
            id: row.template_id,
            name: row.template_name ?? '',
            outlet_type: row.template_outlet_type ?? '',
            label: row.template_label ?? '',
          },
  };
}

function ruleRecord(row: repo.RuleRow) {
  return {
    id: row.id,
    label: row.label,
    enabled: row.enabled === 1,
    alert_ids: parse<number[]>(row.alert_ids),
    legacy_alert_ids: parse<number[]>(row.legacy_alert_ids),
    severities: parse<number[]>(row.severities),
    device_ids: parse<number[]>(row.device_ids),
    tag_slugs: parse<string[]>(row.tag_slugs),
    outlet_ids: parse<number[]>(row.outlet_ids),
    maintenance_window_ids: parse<number[]>(row.window_ids),
  };
}

const NOT_INSTALLED = 'outlet delivery is not installed on this appliance';
const ALERT_NOT_FOUND = () => failure(404, 'Alert not found');
const OUTLET_NOT_FOUND = () => failure(404, 'Outlet not found');
const TEMPLATE_NOT_FOUND = () => failure(404, 'Template not found');
const RULE_NOT_FOUND = () => failure(404, 'Routing rule not found');
const WINDOW_NOT_FOUND = () => failure(404, 'Maintenance window not found');
const invalid = (fields: FieldErrors, status = 400) => {
  const first = Object.values(fields)[0]?.[0] ?? 'The given data was invalid.';
  return failure(status, first, { fields, family: 'errors' });
};

export class AlertsService {
  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    readonly deps: AlertsDeps,
  ) {}

  /** Connects delivery (features/alerts/delivery): the composition root, or a test's recorder. */
  connectDelivery(seam: DeliverySeam): void {
    this.deps.delivery = seam;
  }

  private now() {
    return this.clock.now();
  }

  // --- alerts -----------------------------------------------------------------------------------

  list() {
    return repo.listAlerts(this.db).map(alertRecord);
  }

  get(id: number) {
    const row = repo.findAlertById(this.db, id);
    if (!row) throw ALERT_NOT_FOUND();
    return alertRecord(row);
  }

  /**
   * Scope rules: `scope` is required when `scope_id` is sent; an empty `scope_id` is null; a
   * device must exist; a tag-restricted caller may scope only to a device or tag inside their
   * tags (403 naming the axis), never globally.
   */
  private resolveScope(
    identity: Identity,
    scope: string | undefined,
    scopeIdIn: string | number | null | undefined,
    current: { scope: string; scope_id: string | null } | null,
  ): { scope: string; scope_id: string | null } {
    const sent = scopeIdIn !== undefined;
    if (sent && scope === undefined && current === null)
      throw invalid({ scope: ['The scope field is required when scope id is present.'] });
    if (sent && scope === undefined)
      throw invalid({ scope: ['The scope field is required when scope id is present.'] });
    const nextScope = scope ?? current?.scope ?? 'global';
    let scopeId: string | null =
      scopeIdIn === undefined
        ? scope !== undefined && scope !== current?.scope
          ? null
          : (current?.scope_id ?? null)
        : scopeIdIn === null || String(scopeIdIn).trim() === ''
          ? null
          : String(scopeIdIn).trim();
    if (nextScope === 'global') scopeId = null;
    if (nextScope !== 'global' && scopeId === null)
      throw invalid({ scope_id: [`The scope id field is required when scope is ${nextScope}.`] });
    if (nextScope === 'device') {
      if (!/^[1-9][0-9]{0,15}$/.test(scopeId as string))
        throw invalid({ scope_id: ['The selected device does not exist.'] });
      const visible = this.deps.devices.visibleDevice(identity, Number(scopeId));
      if (!visible) {
        const exists = this.deps.devices.entries().some((d) => d.id === Number(scopeId));
        if (exists && identity.tagIds !== null)
          throw failure(403, 'You may only scope an alert to a device inside your tags.');
        throw invalid({ scope_id: ['The selected device does not exist.'] });
      }
    }
    if (identity.tagIds !== null) {
      if (nextScope === 'global')
        throw failure(
          403,
          'Your access is limited to tags: scope the alert to a device or tag inside your tags.',
        );
      if (nextScope === 'tag' && !identity.tagSlugs.includes(scopeId as string))
        throw failure(403, 'You may only scope an alert to a tag inside your tags.');
    }
    return { scope: nextScope, scope_id: scopeId };
  }

  create(identity: Identity, body: CreateAlertBody) {
    const normalised = normaliseParameters(body.class, body.parameters ?? {});
    if ('errors' in normalised) throw invalid(normalised.errors);
    const scope = this.resolveScope(identity, body.scope, body.scope_id, null);
    const id = repo.insertAlert(
      this.db,
      {
        label: body.label,
        class: body.class,
        severity: body.severity,
        parameters: JSON.stringify(normalised.parameters),
        enabled: body.enabled === false ? 0 : 1,
        ...scope,
        tag_filters: JSON.stringify([...new Set(body.tag_filters ?? [])]),
        renotify_minutes: body.renotify_minutes ?? null,
        throttle_flip_count: body.throttle_flip_count ?? null,
        throttle_flip_window_minutes: body.throttle_flip_window_minutes ?? null,
        throttle_stable_minutes: body.throttle_stable_minutes ?? null,
      },
      this.now(),
    );
    return this.get(id);
  }

  /** `class` is ignored (fixed at creation). */
  update(identity: Identity, id: number, body: UpdateAlertBody) {
    const row = repo.findAlertById(this.db, id);
    if (!row) throw ALERT_NOT_FOUND();
    const current = alertRecord(row);
    const normalised = normaliseParameters(row.class, body.parameters ?? current.parameters);
    if ('errors' in normalised) throw invalid(normalised.errors);
    const touchesScope = body.scope !== undefined || body.scope_id !== undefined;
    const scope = touchesScope
      ? this.resolveScope(identity, body.scope, body.scope_id, row)
      : { scope: row.scope, scope_id: row.scope_id };
    const pick = <K extends keyof typeof current>(k: K, v: (typeof current)[K] | undefined) =>
      v === undefined ? current[k] : v;
    repo.updateAlert(
      this.db,
      id,
      {
        label: pick('label', body.label),
        severity: pick('severity', body.severity),
        parameters: JSON.stringify(normalised.parameters),
        enabled: pick('enabled', body.enabled) ? 1 : 0,
        ...scope,
        tag_filters: JSON.stringify([...new Set(pick('tag_filters', body.tag_filters))]),
        renotify_minutes: pick('renotify_minutes', body.renotify_minutes),
        throttle_flip_count: pick('throttle_flip_count', body.throttle_flip_count),
        throttle_flip_window_minutes: pick(
          'throttle_flip_window_minutes',
          body.throttle_flip_window_minutes,
        ),
        throttle_stable_minutes: pick('throttle_stable_minutes', body.throttle_stable_minutes),
      },
      this.now(),
    );
    return this.get(id);
  }

  delete(id: number) {
    if (!repo.deleteAlert(this.db, id)) throw ALERT_NOT_FOUND();
    return { deleted: true as const };
  }

  toggle(id: number) {
    if (!repo.toggleAlertEnabled(this.db, id, this.now())) throw ALERT_NOT_FOUND();
    return this.get(id);
  }

  /** Device deletion (inside its transaction): device-scoped alerts disabled, scope kept. */
  onDeviceDeleted(deviceId: number) {
    repo.disableAlertsOfDevice(this.db, deviceId, this.now());
  }

  // --- classes and templates ------------------------------------------------------------------

  classes() {
    return repo.listClasses(this.db).map((c) => ({
      name: c.name,
      label: c.label,
      description: c.description,
      parameters: parse<Record<string, unknown>[]>(c.parameters),
      variables: parse<{ slug: string; label: string }[]>(c.variables),
      default_email_template_id: c.default_email_template_id,
      default_email_template_label: c.default_email_template_label,
    }));
  }

  templateClasses() {
    return repo.listClasses(this.db).map((c) => ({
      name: c.name,
      label: c.label,
      variables: parse<{ slug: string; label: string }[]>(c.variables),
      restorable: c.restorable === 1,
    }));
  }

  templates() {
    return repo.listTemplates(this.db);
  }

  template(id: number) {
    const row = repo.findTemplate(this.db, id);
    if (!row) throw TEMPLATE_NOT_FOUND();
    return row;
  }

  updateTemplate(id: number, body: UpdateTemplateBody) {
    const row = this.template(id);
    const cls = body.class === undefined ? row.class : body.class === '' ? null : body.class;
    if (cls !== null && !repo.listClasses(this.db).some((c) => c.name === cls))
      throw invalid({ class: ['The selected class is invalid.'] });
    repo.updateTemplate(
      this.db,
      {
        id,
        label: body.label ?? row.label,
        description: body.description === undefined ? row.description : body.description,
        class: cls,
        email_template: body.email_template ?? row.email_template,
        alt_template: body.alt_template ?? row.alt_template,
      },
      this.now(),
    );
    return this.template(id);
  }

  restoreTemplate(id: number) {
    const row = this.template(id);
    const canonical = row.class === null ? undefined : repo.templateDefault(this.db, row.class);
    if (!canonical) throw failure(422, 'This template has no canonical default to restore.');
    repo.updateTemplate(this.db, { ...row, ...canonical }, this.now());
    return this.template(id);
  }

  // --- maintenance windows -----------------------------------------------------------------------

  windows() {
    return repo.listWindows(this.db).map(windowShort);
  }

  saveWindow(body: SaveWindowBody): { id: number; created: boolean } {
    const errors = windowErrors(body);
    if (Object.keys(errors).length > 0) throw invalid(errors);
    if (body.id !== undefined && !repo.findWindow(this.db, body.id)) throw WINDOW_NOT_FOUND();
    const unit = body.recurrence_unit;
    const id = repo.saveWindow(
      this.db,
      {
        ...(body.id !== undefined ? { id: body.id } : {}),
        label: body.label,
        recurrence_unit: unit,
        maintenance_duration: body.maintenance_duration,
        schedule_hour: body.schedule_hour,
        // Only the fields the unit uses are kept.
        schedule_week: unit === 'week' || unit === 'dawom' ? (body.schedule_week ?? null) : null,
        schedule_day: unit === 'month' ? (body.schedule_day ?? null) : null,
        schedule_month: unit === 'dawom' ? (body.schedule_month ?? null) : null,
      },
      this.now(),
    );
    return { id, created: body.id === undefined };
  }

  deleteWindow(id: number) {
    if (!repo.deleteWindow(this.db, id)) throw WINDOW_NOT_FOUND();
    return { success: 'Maintenance window deleted' as const };
  }

  // --- legacy catalogue (tag filtered) ------------------------------------------------------------

  private legacyVisible(identity: Identity, row: LegacyAlertRow | undefined): LegacyAlertRow {
    if (!row) throw ALERT_NOT_FOUND();
    if (row.device_id !== null && !this.deps.devices.visibleDevice(identity, row.device_id))
      throw ALERT_NOT_FOUND();
    return row;
  }

  legacyAlert(identity: Identity, id: number) {
    return this.legacyVisible(identity, findLegacyAlert(this.db, id));
  }

  legacyRecord(row: LegacyAlertRow) {
    return {
      id: row.id,
      device_id: row.device_id,
      tracker_kind: row.tracker_kind,
      tracker_id: row.tracker_id,
      type: row.alert_type,
      class: legacyClassOf(row.alert_type),
      active: row.active === 1,
      severity: row.severity,
      last_state: row.last_state,
      last_fired_at: iso(row.last_fired_at),
      fired_count: row.fired_count,
      maintenance_window_ids: repo.windowsOfLegacyAlert(this.db, row.id).map((w) => w.id),
    };
  }

  legacyList(identity: Identity) {
    return listLegacyAlerts(this.db)
      .filter(
        (row) => row.device_id === null || this.deps.devices.visibleDevice(identity, row.device_id),
      )
      .map((row) => this.legacyRecord(row));
  }

  /** The latency tracker's device-down alert (designed legacy alert definition). */
  createDeviceDown(trackerId: number, deviceId: number, severity: number) {
    return this.createLegacy('latency', trackerId, deviceId, DEVICE_DOWN_ALERT, severity);
  }

  /** A URL tracker's check-failed alert (designed legacy alert definition; no device). */
  createUrlDown(trackerId: number, severity: number) {
    return this.createLegacy('url', trackerId, null, URL_DOWN_ALERT, severity);
  }

  private createLegacy(
    kind: 'latency' | 'url',
    trackerId: number,
    deviceId: number | null,
    type: string,
    severity: number,
  ) {
    const existing = findAlert(this.db, kind, trackerId, type);
    if (existing) return { id: existing.id, row: existing, created: false };
    const row = ensureLegacyAlert(
      this.db,
      { deviceId, kind, trackerId, type, severity },
      this.now(),
    );
    return { id: row.id, row, created: true };
  }

  deleteLegacy(identity: Identity, id: number) {
    this.legacyAlert(identity, id);
    deleteLegacyAlert(this.db, id);
    return { deleted: true as const };
  }

  legacyWindows(identity: Identity, id: number) {
    this.legacyAlert(identity, id);
    return repo.windowsOfLegacyAlert(this.db, id);
  }

  changeLegacyWindows(
    identity: Identity,
    id: number,
    ids: readonly number[],
    how: 'attach' | 'detach' | 'sync',
  ) {
    this.legacyAlert(identity, id);
    const unique = [...new Set(ids)];
    if (how !== 'detach') {
      const found = new Set(repo.existingWindowIds(this.db, unique));
      const missing = unique.filter((w) => !found.has(w));
      if (missing.length > 0)
        throw invalid(
          { maintenance_window_ids: [`Unknown maintenance windows: ${missing.join(', ')}.`] },
          422,
        );
    }
    this.db.transaction(() => {
      if (how === 'attach') repo.attachWindows(this.db, id, unique);
      else if (how === 'detach') repo.detachWindows(this.db, id, unique);
      else repo.syncWindows(this.db, id, unique);
    })();
    const verb = { attach: 'attached', detach: 'detached', sync: 'synchronised' }[how];
    return { message: `Maintenance windows ${verb}` };
  }

  // --- router configuration -----------------------------------------------------------------------

  routerConfig(identity: Identity, source: 'modern' | 'legacy', id: number) {
    const row =
      source === 'modern' ? repo.findAlertById(this.db, id) : this.legacyAlert(identity, id);
    if (!row) throw ALERT_NOT_FOUND();
    return {
      renotify_minutes: row.renotify_minutes ?? 0,
      throttle_flip_count: row.throttle_flip_count ?? 0,
      throttle_flip_window_minutes: row.throttle_flip_window_minutes ?? 0,
      throttle_stable_minutes: row.throttle_stable_minutes ?? 0,
      severity: row.severity,
    };
  }

  setRouterConfig(
    identity: Identity,
    source: 'modern' | 'legacy',
    id: number,
    body: RouterConfigBody,
  ) {
    this.routerConfig(identity, source, id);
    const fields = Object.fromEntries(
      Object.entries(body).filter(([, v]) => typeof v === 'number'),
    ) as Record<string, number>;
    if (source === 'modern') repo.setAlertRouterConfig(this.db, id, fields, this.now());
    else setLegacyRouterConfig(this.db, id, fields, this.now());
    return { message: 'Router configuration saved' };
  }

  // --- outlets ----------------------------------------------------------------------------------

  outlets() {
    return repo.listOutlets(this.db).map(outletRecord);
  }

  outlet(id: number) {
    const row = repo.findOutlet(this.db, id);
    if (!row) throw OUTLET_NOT_FOUND();
    return outletRecord(row);
  }

  private checkUrl(url: unknown): void {
    if (typeof url !== 'string') return;
    const verdict = this.deps.delivery?.checkOutletUrl(url) ?? {
      ok: false as const,
      reason: NOT_INSTALLED,
    };
    if (!verdict.ok) throw invalid({ 'config.url': [`The url is not allowed: ${verdict.reason}`] });
  }

  private checkReferences(
    templateId: number | null | undefined,
    emailId: number | null | undefined,
  ) {
    const errors: FieldErrors = {};
    if (templateId != null && !repo.outletTemplateExists(this.db, templateId))
      errors.template_id = ['The selected template id is invalid.'];
    if (emailId != null && !repo.emailTemplateExists(this.db, emailId))
      errors.email_template_id = ['The selected email template id is invalid.'];
    if (Object.keys(errors).length > 0) throw invalid(errors);
  }

  private sealSecrets(incoming: Record<string, unknown>, stored: string | null): string | null {
    const sealed = stored ? parse<Record<string, string>>(stored) : {};
    for (const [key, value] of Object.entries(incoming)) {
      // The sentinel, an empty value or an omitted key keep the stored secret.
      if (value === undefined || value === null || value === '' || isSentinel(value)) continue;
      if (typeof value !== 'string')
        throw invalid({ [`config.${key}`]: ['The value must be a text.'] });
      sealed[key] = this.secrets.seal(value);
    }
    return Object.keys(sealed).length > 0 ? JSON.stringify(sealed) : null;
  }

  createOutlet(body: CreateOutletBody) {
    if (body.type === 'o365')
      throw invalid({ type: ['The o365 type is no longer accepted for new outlets.'] });
    if (!['email', 'webhook', 'slack', 'teams', 'discord'].includes(body.type))
      throw invalid({ type: ['The type must be one of email, webhook, slack, teams, discord.'] });
    const split = splitOutletConfig(body.type, body.config ?? {}, true);
    if ('errors' in split) throw invalid(split.errors);
    this.checkUrl(split.plain.url);
    this.checkReferences(body.template_id, body.email_template_id);
    const name = body.name.trim();
    if (repo.outletNameTaken(this.db, name, null))
      throw failure(409, 'An outlet with this name already exists.');
    const id = repo.insertOutlet(
      this.db,
      {
        name,
        type: body.type,
        config: JSON.stringify(split.plain),
        secret: this.sealSecrets(split.secrets, null),
        enabled: body.enabled === false ? 0 : 1,
        rate_limit_per_min: body.rate_limit_per_min ?? null,
        template_id: body.template_id ?? null,
        email_template_id: body.email_template_id ?? null,
      },
      this.now(),
    );
    return this.outlet(id);
  }

  /**
   * Outlet update (designed): the type is fixed; config keys sent replace the stored ones (a
   * config object sent whole replaces the non-secret keys); a masked secret is kept on the
   * sentinel, an empty value or omission, replaced on plaintext. System outlets are read only.
   */
  updateOutlet(id: number, body: UpdateOutletBody) {
    const row = repo.findOutlet(this.db, id);
    if (!row) throw OUTLET_NOT_FOUND();
    if (row.system === 1) throw failure(403, 'A system outlet cannot be changed.');
    let plain = parse<Record<string, unknown>>(row.config);
    let secret = row.secret;
    if (body.config !== undefined) {
      const split = splitOutletConfig(row.type, body.config, false);
      if ('errors' in split) throw invalid(split.errors);
      plain = split.plain;
      if (plain.url === undefined && row.type !== 'email')
        throw invalid({ 'config.url': ['The url field is required.'] });
      this.checkUrl(plain.url);
      secret = this.sealSecrets(split.secrets, row.secret);
    }
    this.checkReferences(body.template_id, body.email_template_id);
    const name = body.name?.trim() ?? row.name;
    if (repo.outletNameTaken(this.db, name, id))
      throw failure(409, 'An outlet with this name already exists.');
    repo.updateOutlet(
      this.db,
      id,
      {
        name,
        type: row.type,
        config: JSON.stringify(plain),
        secret,
        enabled: body.enabled === undefined ? row.enabled : body.enabled ? 1 : 0,
        rate_limit_per_min:
          body.rate_limit_per_min === undefined ? row.rate_limit_per_min : body.rate_limit_per_min,
        template_id: body.template_id === undefined ? row.template_id : body.template_id,
        email_template_id:
          body.email_template_id === undefined ? row.email_template_id : body.email_template_id,
      },
      this.now(),
    );
    return this.outlet(id);
  }

  deleteOutlet(id: number) {
    const row = repo.findOutlet(this.db, id);
    if (!row) throw OUTLET_NOT_FOUND();
    if (row.system === 1) throw failure(403, 'A system outlet cannot be deleted.');
    repo.deleteOutlet(this.db, id);
    return { deleted: true as const };
  }

  /** The outlet with its secrets in clear, for the delivery queue only (never a response). */
  target(row: repo.OutletRow): OutletTarget {
    const config = parse<Record<string, unknown>>(row.config);
    if (row.secret)
      for (const [key, sealed] of Object.entries(parse<Record<string, string>>(row.secret)))
        config[key] = this.secrets.open(sealed);
    return {
      id: row.id,
      type: row.type as OutletTarget['type'],
      name: row.name,
      config,
      rate_limit_per_min: row.rate_limit_per_min,
    };
  }

  async sendTest(id: number) {
    const row = repo.findOutlet(this.db, id);
    if (!row) throw OUTLET_NOT_FOUND();
    const url = parse<Record<string, unknown>>(row.config).url;
    this.checkUrl(url);
    if (!this.deps.delivery) return { ok: false, error: NOT_INSTALLED };
    return this.deps.delivery.queue.sendTest(this.target(row));
  }

  // --- outlet templates (designed) -------------------------------------------------------------

  outletTemplates() {
    return repo.listOutletTemplates(this.db);
  }

  outletTemplate(id: number) {
    const row = repo.findOutletTemplate(this.db, id);
    if (!row) throw failure(404, 'Outlet template not found');
    return row;
  }

  saveOutletTemplate(id: number | null, body: OutletTemplateBody) {
    if (id !== null) this.outletTemplate(id);
    const name = body.name.trim();
    if (repo.outletTemplateNameTaken(this.db, name, id))
      throw failure(409, 'An outlet template with this name already exists.');
    const saved = repo.saveOutletTemplate(this.db, id, { ...body, name }, this.now());
    return this.outletTemplate(saved);
  }

  deleteOutletTemplate(id: number) {
    if (!repo.deleteOutletTemplate(this.db, id)) throw failure(404, 'Outlet template not found');
    return { deleted: true as const };
  }

  // --- routing rules (tag filtered) ------------------------------------------------------------

  /** A restricted caller sees a rule anchored to devices or tags, all inside their tags. */
  private ruleInScope(identity: Identity, rule: { device_ids: number[]; tag_slugs: string[] }) {
    if (identity.tagIds === null) return true;
    if (rule.device_ids.length === 0 && rule.tag_slugs.length === 0) return false;
    return (
      rule.device_ids.every((d) => this.deps.devices.visibleDevice(identity, d) !== null) &&
      rule.tag_slugs.every((t) => identity.tagSlugs.includes(t))
    );
  }

  rules(identity: Identity) {
    return repo
      .listRules(this.db)
      .map(ruleRecord)
      .filter((r) => this.ruleInScope(identity, r));
  }

  rule(identity: Identity, id: number) {
    const row = repo.findRule(this.db, id);
    const record = row && ruleRecord(row);
    if (!record || !this.ruleInScope(identity, record)) throw RULE_NOT_FOUND();
    return record;
  }

  saveRule(identity: Identity, id: number | null, body: RoutingRuleBody) {
    if (id !== null) this.rule(identity, id);
    const devices = [...new Set(body.device_ids ?? [])];
    const tags = [...new Set(body.tag_slugs ?? [])];
    if (identity.tagIds !== null) {
      if (devices.length === 0 && tags.length === 0)
        throw failure(
          403,
          'Your access is limited to tags: a routing rule must name devices or tags inside your tags.',
        );
      if (!devices.every((d) => this.deps.devices.visibleDevice(identity, d)))
        throw failure(403, 'You may only route devices inside your tags.');
      if (!tags.every((t) => identity.tagSlugs.includes(t)))
        throw failure(403, 'You may only route tags inside your tags.');
    }
    const errors: FieldErrors = {};
    const known = new Set(this.deps.devices.entries().map((d) => d.id));
    if (devices.some((d) => !known.has(d)))
      errors.device_ids = ['The selected devices are invalid.'];
    const outlets = [...new Set(body.outlet_ids)];
    if (repo.existingOutletIds(this.db, outlets).length !== outlets.length)
      errors.outlet_ids = ['The selected outlets are invalid.'];
    const windows = [...new Set(body.maintenance_window_ids ?? [])];
    if (repo.existingWindowIds(this.db, windows).length !== windows.length)
      errors.maintenance_window_ids = ['The selected maintenance windows are invalid.'];
    if (Object.keys(errors).length > 0) throw invalid(errors);
    const saved = this.db.transaction(() =>
      repo.saveRule(
        this.db,
        id,
        {
          label: body.label,
          enabled: body.enabled === false ? 0 : 1,
          alert_ids: [...new Set(body.alert_ids ?? [])],
          legacy_alert_ids: [...new Set(body.legacy_alert_ids ?? [])],
          severities: [...new Set(body.severities ?? [])],
          device_ids: devices,
          tag_slugs: tags,
          outlet_ids: outlets,
          window_ids: windows,
        },
        this.now(),
      ),
    )();
    return this.rule(identity, saved);
  }

  deleteRule(identity: Identity, id: number) {
    this.rule(identity, id);
    repo.deleteRule(this.db, id);
    return { deleted: true as const };
  }

  /** Enabled rules with their outlets, windows and tag ids resolved (the engine's routing table). */
  routingTable() {
    const rules = repo.listEnabledRules(this.db).map(ruleRecord);
    const slugs = [...new Set(rules.flatMap((r) => r.tag_slugs))];
    const tagIds = new Map(repo.tagIdsOfSlugs(this.db, slugs).map((t) => [t.slug, t.id]));
    const windows = new Map(repo.listWindows(this.db).map((w) => [w.id, w]));
    return rules.map((r) => ({
      id: r.id,
      criteria: {
        alert_ids: r.alert_ids,
        legacy_alert_ids: r.legacy_alert_ids,
        severities: r.severities,
        device_ids: r.device_ids,
        tag_ids: r.tag_slugs.flatMap((s) => (tagIds.has(s) ? [tagIds.get(s) as number] : [])),
        tag_slug_count: r.tag_slugs.length,
      } satisfies RuleCriteria,
      outletIds: r.outlet_ids,
      windows: r.maintenance_window_ids.flatMap((w) => (windows.has(w) ? [windows.get(w)!] : [])),
    }));
  }

  // --- device parents ---------------------------------------------------------------------------

  parent(identity: Identity, deviceId: number) {
    if (!this.deps.devices.visibleDevice(identity, deviceId))
      throw failure(404, 'Device not found');
    return { device_id: deviceId, parent_id: repo.parentOf(this.db, deviceId) };
  }

  setParent(identity: Identity, deviceId: number, parentId: number | null) {
    if (!this.deps.devices.visibleDevice(identity, deviceId))
      throw failure(404, 'Device not found');
    if (parentId !== null) {
      if (parentId === deviceId)
        throw invalid({ parent_id: ['A device cannot be its own parent.'] });
      if (!this.deps.devices.visibleDevice(identity, parentId))
        throw invalid({ parent_id: ['The selected parent device is invalid.'] });
      // No cycles: walk up from the parent.
      const parents = new Map(repo.allParents(this.db).map((p) => [p.device_id, p.parent_id]));
      for (let at: number | undefined = parentId, i = 0; at !== undefined && i < 10_000; i++) {
        if (at === deviceId)
          throw invalid({ parent_id: ['The parent would make a dependency loop.'] });
        at = parents.get(at);
      }
    }
    repo.setParent(this.db, deviceId, parentId);
    return this.parent(identity, deviceId);
  }

  // --- history ------------------------------------------------------------------------------------

  history(q: { limit?: number; before_id?: number; alert_id?: number; source?: string }) {
    return repo
      .listOccurrences(this.db, {
        limit: q.limit ?? 100,
        ...(q.before_id !== undefined ? { beforeId: q.before_id } : {}),
        ...(q.alert_id !== undefined ? { alertId: q.alert_id } : {}),
        ...(q.source !== undefined ? { source: q.source } : {}),
      })
      .map((o) => ({
        id: o.id,
        source: o.source,
        alert_id: o.alert_id,
        alert_label: o.alert_label,
        alert_class: o.alert_class,
        severity: o.severity,
        device_id: o.device_id,
        device_label: o.device_label,
        opened_at: toIsoWithOffset(o.opened_at),
        closed_at: iso(o.closed_at),
        match_count: o.match_count,
        message: o.message,
        suppressed_by: o.suppressed_by,
        notifications: parse<
          {
            outlet_id: number;
            outlet_name: string;
            delivery_id: number | null;
            suppressed_by: string | null;
            queued_at: number;
            status: string | null;
            attempts: number | null;
            error: string | null;
            rate_delay_ms: number | null;
            sent_at: number | null;
          }[]
        >(o.notifications).map((n) => ({
          ...n,
          queued_at: toIsoWithOffset(n.queued_at),
          sent_at: iso(n.sent_at),
        })),
      }));
  }
}
