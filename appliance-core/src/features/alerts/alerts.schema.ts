/**
 * TypeBox schemas of the alerting endpoints (spec part 3 > Alerting) and of the designed ones
 * (outlet update/delete/send-test, outlet templates, routing rules, legacy alert definitions,
 * the history ledger, device parents).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdParam } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const NonNegative = Type.Integer({ minimum: 0, maximum: 1_000_000 });
const Severity = Type.Integer({ minimum: 1, maximum: 5 });
const Slug = Type.String({ minLength: 1, maxLength: 255 });

export const IdParams = Type.Object({ id: IdParam() });
export const SourceParams = Type.Object({
  source: Type.Unsafe<'modern' | 'legacy'>({ type: 'string', enum: ['modern', 'legacy'] }),
  id: IdParam(),
});

// --- alerts -------------------------------------------------------------------------------------

export const Scope = Type.Union([
  Type.Literal('global'),
  Type.Literal('device'),
  Type.Literal('tag'),
]);
const AlertFields = {
  label: Type.String({ minLength: 1, maxLength: 255 }),
  class: Type.String({ minLength: 1, maxLength: 64 }),
  severity: Severity,
  parameters: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  scope: Scope,
  scope_id: Nullable(Type.Union([Type.String({ maxLength: 255 }), Type.Integer()])),
  tag_filters: Type.Array(Slug, { maxItems: 64 }),
  renotify_minutes: Nullable(NonNegative),
  throttle_flip_count: Nullable(NonNegative),
  throttle_flip_window_minutes: Nullable(NonNegative),
  throttle_stable_minutes: Nullable(NonNegative),
};
export const CreateAlertBody = Type.Object({
  label: AlertFields.label,
  class: AlertFields.class,
  severity: AlertFields.severity,
  parameters: Type.Optional(AlertFields.parameters),
  enabled: Type.Optional(AlertFields.enabled),
  scope: Type.Optional(AlertFields.scope),
  scope_id: Type.Optional(AlertFields.scope_id),
  tag_filters: Type.Optional(AlertFields.tag_filters),
  renotify_minutes: Type.Optional(AlertFields.renotify_minutes),
  throttle_flip_count: Type.Optional(AlertFields.throttle_flip_count),
  throttle_flip_window_minutes: Type.Optional(AlertFields.throttle_flip_window_minutes),
  throttle_stable_minutes: Type.Optional(AlertFields.throttle_stable_minutes),
});
export type CreateAlertBody = Static<typeof CreateAlertBody>;
export const UpdateAlertBody = Type.Partial(CreateAlertBody);
export type UpdateAlertBody = Static<typeof UpdateAlertBody>;

export const AlertRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  class: Type.String(),
  severity: Type.Integer(),
  parameters: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  scope: Scope,
  scope_id: Nullable(Type.String()),
  tag_filters: Type.Array(Type.String()),
  renotify_minutes: Nullable(Type.Integer()),
  throttle_flip_count: Nullable(Type.Integer()),
  throttle_flip_window_minutes: Nullable(Type.Integer()),
  throttle_stable_minutes: Nullable(Type.Integer()),
  disabled_reason: Nullable(Type.String()),
  last_evaluated_at: Nullable(Type.String()),
  last_result_count: Nullable(Type.Integer()),
});
export type AlertRecord = Static<typeof AlertRecord>;
export const Deleted = Type.Object({ deleted: Type.Literal(true) });

// --- classes and email templates -----------------------------------------------------------------

const Variable = Type.Object({ slug: Type.String(), label: Type.String() });
export const AlertClassRecord = Type.Object({
  name: Type.String(),
  label: Type.String(),
  description: Type.String(),
  parameters: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  variables: Type.Array(Variable),
  default_email_template_id: Nullable(Type.Integer()),
  default_email_template_label: Nullable(Type.String()),
});
export const TemplateClassRecord = Type.Object({
  name: Type.String(),
  label: Type.String(),
  variables: Type.Array(Variable),
  restorable: Type.Boolean(),
});
export const EmailTemplateRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  description: Nullable(Type.String()),
  class: Nullable(Type.String()),
  email_template: Type.String(),
  alt_template: Type.String(),
});
export const UpdateTemplateBody = Type.Object({
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
  email_template: Type.Optional(Type.String({ maxLength: 262_144 })),
  alt_template: Type.Optional(Type.String({ maxLength: 262_144 })),
  class: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
});
export type UpdateTemplateBody = Static<typeof UpdateTemplateBody>;

// --- maintenance windows -------------------------------------------------------------------------

export const WindowShort = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  hour: Type.Integer(),
  day: Nullable(Type.Integer()),
  date: Nullable(Type.Integer()),
  month: Nullable(Type.Integer()),
  unit: Type.String(),
  duration: Type.Integer(),
});
export const WindowWrite = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  recurrence_unit: Type.String(),
  maintenance_duration: Type.Integer(),
  schedule_hour: Type.Integer(),
  schedule_week: Nullable(Type.Integer()),
  schedule_day: Nullable(Type.Integer()),
  schedule_month: Nullable(Type.Integer()),
});
export const SaveWindowBody = Type.Object({
  id: Type.Optional(Id),
  label: Type.String({ minLength: 1, maxLength: 255 }),
  recurrence_unit: Type.Union([
    Type.Literal('day'),
    Type.Literal('week'),
    Type.Literal('month'),
    Type.Literal('dawom'),
  ]),
  maintenance_duration: Type.Integer({ minimum: 1, maximum: 44_640, description: 'minutes' }),
  schedule_hour: Type.Integer({ minimum: 0, maximum: 23 }),
  schedule_week: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 6 }))),
  schedule_day: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 31 }))),
  schedule_month: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 5 }))),
});
export type SaveWindowBody = Static<typeof SaveWindowBody>;
export const IdOnlyBody = Type.Object({ id: Id });
export const IdResult = Type.Object({ id: Type.Integer() });
export const WindowIdsBody = Type.Object({
  maintenance_window_ids: Type.Array(Id, { maxItems: 1000 }),
});

// --- router configuration ------------------------------------------------------------------------

export const RouterConfig = Type.Object({
  renotify_minutes: Type.Integer(),
  throttle_flip_count: Type.Integer(),
  throttle_flip_window_minutes: Type.Integer(),
  throttle_stable_minutes: Type.Integer(),
  severity: Type.Integer(),
});
export const RouterConfigBody = Type.Object({
  severity: Type.Optional(Severity),
  renotify_minutes: Type.Optional(NonNegative),
  throttle_flip_count: Type.Optional(NonNegative),
  throttle_flip_window_minutes: Type.Optional(NonNegative),
  throttle_stable_minutes: Type.Optional(NonNegative),
});
export type RouterConfigBody = Static<typeof RouterConfigBody>;
export const Message = Type.Object({ message: Type.String() });

// --- outlets ---------------------------------------------------------------------------------------

export const OUTLET_TYPES = ['email', 'webhook', 'slack', 'teams', 'discord'] as const;
export type OutletType = (typeof OUTLET_TYPES)[number] | 'o365';
export const OutletRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  rate_limit_per_min: Nullable(Type.Integer()),
  template_id: Nullable(Type.Integer()),
  email_template_id: Nullable(Type.Integer()),
  template: Nullable(
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      outlet_type: Type.String(),
      label: Type.String(),
    }),
  ),
});
const OutletFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.String({ minLength: 1, maxLength: 32 }),
  config: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  rate_limit_per_min: Nullable(Type.Integer({ minimum: 1, maximum: 100_000 })),
  template_id: Nullable(Id),
  email_template_id: Nullable(Id),
};
export const CreateOutletBody = Type.Object({
  name: OutletFields.name,
  type: OutletFields.type,
  config: Type.Optional(OutletFields.config),
  enabled: Type.Optional(OutletFields.enabled),
  rate_limit_per_min: Type.Optional(OutletFields.rate_limit_per_min),
  template_id: Type.Optional(OutletFields.template_id),
  email_template_id: Type.Optional(OutletFields.email_template_id),
});
export type CreateOutletBody = Static<typeof CreateOutletBody>;
export const UpdateOutletBody = Type.Partial(Type.Omit(CreateOutletBody, ['type']));
export type UpdateOutletBody = Static<typeof UpdateOutletBody>;
export const SendTestResult = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
});

// --- routing rules --------------------------------------------------------------------------------

export const RoutingRuleBody = Type.Object({
  label: Type.String({ minLength: 1, maxLength: 255 }),
  enabled: Type.Optional(Type.Boolean()),
  alert_ids: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
  legacy_alert_ids: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
  severities: Type.Optional(Type.Array(Severity, { maxItems: 5 })),
  device_ids: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
  tag_slugs: Type.Optional(Type.Array(Slug, { maxItems: 64 })),
  outlet_ids: Type.Array(Id, { minItems: 1, maxItems: 100 }),
  maintenance_window_ids: Type.Optional(Type.Array(Id, { maxItems: 100 })),
});
export type RoutingRuleBody = Static<typeof RoutingRuleBody>;
export const RoutingRuleRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  enabled: Type.Boolean(),
  alert_ids: Type.Array(Type.Integer()),
  legacy_alert_ids: Type.Array(Type.Integer()),
  severities: Type.Array(Type.Integer()),
  device_ids: Type.Array(Type.Integer()),
  tag_slugs: Type.Array(Type.String()),
  outlet_ids: Type.Array(Type.Integer()),
  maintenance_window_ids: Type.Array(Type.Integer()),
});
export type RoutingRuleRecord = Static<typeof RoutingRuleRecord>;

// --- history ---------------------------------------------------------------------------------------

export const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  before_id: Type.Optional(Id),
  alert_id: Type.Optional(Id),
  source: Type.Optional(Type.Union([Type.Literal('modern'), Type.Literal('legacy')])),
});
export const HistoryRecord = Type.Object({
  id: Type.Integer(),
  source: Type.String(),
  alert_id: Type.Integer(),
  alert_label: Type.String(),
  alert_class: Type.String(),
  severity: Type.Integer(),
  device_id: Nullable(Type.Integer()),
  device_label: Nullable(Type.String()),
  opened_at: Type.String(),
  closed_at: Nullable(Type.String()),
  match_count: Type.Integer(),
  message: Nullable(Type.String()),
  suppressed_by: Nullable(Type.String()),
  notifications: Type.Array(
    Type.Object({
      outlet_id: Type.Integer(),
      outlet_name: Type.String(),
      delivery_id: Nullable(Type.Integer()),
      suppressed_by: Nullable(Type.String()),
      queued_at: Type.String(),
      /** The delivery queue's row: null when none was queued (or it was pruned). */
      status: Nullable(
        Type.String({ description: 'pending, sending, sent, failed, suppressed or coalesced' }),
      ),
      attempts: Nullable(Type.Integer()),
      error: Nullable(Type.String()),
      rate_delay_ms: Nullable(Type.Integer({ description: 'how long the rate limit held it' })),
      sent_at: Nullable(Type.String()),
    }),
  ),
});

// --- legacy alert definitions ---------------------------------------------------------------------

export const LegacyAlertRecord = Type.Object({
  id: Type.Integer(),
  device_id: Nullable(Type.Integer()),
  tracker_kind: Type.String(),
  tracker_id: Type.Integer(),
  type: Type.String(),
  class: Type.String(),
  active: Type.Boolean(),
  severity: Type.Integer(),
  last_state: Nullable(Type.Integer()),
  last_fired_at: Nullable(Type.String()),
  fired_count: Type.Integer(),
  maintenance_window_ids: Type.Array(Type.Integer()),
});
/** Flap control of legacy alerts (designed; legacy-flap.rules.ts). */
export const FlapControlBody = Type.Object(
  {
    enabled: Type.Boolean(),
    transitions: Type.Integer({ minimum: 2, maximum: 100 }),
    window_minutes: Type.Integer({ minimum: 1, maximum: 1440 }),
    stable_minutes: Type.Integer({ minimum: 1, maximum: 1440 }),
  },
  { additionalProperties: false },
);
export type FlapControlBody = Static<typeof FlapControlBody>;
export const FlapControlRecord = Type.Object({
  enabled: Type.Boolean(),
  transitions: Type.Integer(),
  window_minutes: Type.Integer(),
  stable_minutes: Type.Integer(),
  /** Legacy alerts flapping now (ids the caller may see), notifications held. */
  flapping: Type.Array(Type.Integer()),
});
/** A legacy alert inside its tracker's `alerts` (alertRecord in legacy-alerts.repository.ts). */
export const LegacyAlertSummary = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: '`linkstate`, `device_down` or `url_down`' }),
  active: Type.Boolean(),
  last_state: Nullable(Type.Integer({ description: 'the state the alert last saw' })),
  last_fired_at: Nullable(Type.Integer({ description: 'UTC milliseconds' })),
  fired_count: Type.Integer(),
});

export const CreateLegacyAlertBody = Type.Object({
  tracker_kind: Type.Union([Type.Literal('latency'), Type.Literal('url')]),
  tracker_id: Id,
  alert_type: Type.Union([Type.Literal('device_down'), Type.Literal('url_down')], {
    description: '`device_down` for a latency tracker, `url_down` for a URL tracker',
  }),
  severity: Type.Optional(Severity),
});

// --- device parents (dependency-aware suppression) ------------------------------------------------

export const DeviceParentParams = Type.Object({ device: IdParam() });
export const DeviceParentBody = Type.Object({ parent_id: Nullable(Id) });
export const DeviceParentRecord = Type.Object({
  device_id: Type.Integer(),
  parent_id: Nullable(Type.Integer()),
});

// --- outlet templates -------------------------------------------------------------------------------

export const OutletTemplateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  outlet_type: Type.Union(
    ['email', 'webhook', 'slack', 'teams', 'discord'].map((t) => Type.Literal(t)),
  ),
  label: Type.String({ minLength: 1, maxLength: 255 }),
  body: Type.String({ maxLength: 65_536, description: 'logic-less {$variable} substitutions' }),
});
export type OutletTemplateBody = Static<typeof OutletTemplateBody>;
export const OutletTemplateRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  outlet_type: Type.String(),
  label: Type.String(),
  body: Type.String(),
});
