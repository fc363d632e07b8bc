/**
 * Pure rules of the alerting pages, free of React and I/O: the parameter form built from a
 * class's parameter schema, the maintenance-window fields per recurrence unit, the outlet config
 * per type with masked secrets kept on save, and how a history notification reads.
 */

// --- class parameters ----------------------------------------------------------------------------

export type ParamType = 'select' | 'string' | 'string[]' | 'number' | 'number[]' | 'boolean';

export interface ParamField {
  name: string;
  label: string;
  type: ParamType;
  required: boolean;
  default: unknown;
  min?: number;
  max?: number;
  options?: { value: string | number; label: string }[];
}

const PARAM_TYPES: readonly string[] = [
  'select',
  'string',
  'string[]',
  'number',
  'number[]',
  'boolean',
];

/**
 * The fields of a class's parameter schema, or null when the schema is missing or holds a type
 * this form does not know (the page then offers a JSON editor).
 */
export function paramFields(schema: readonly Record<string, unknown>[] | undefined) {
  if (!schema || schema.length === 0) return null;
  const fields: ParamField[] = [];
  for (const raw of schema) {
    if (typeof raw.name !== 'string' || !PARAM_TYPES.includes(String(raw.type))) return null;
    fields.push({
      name: raw.name,
      label: typeof raw.label === 'string' ? raw.label : raw.name,
      type: raw.type as ParamType,
      required: raw.required === true,
      default: raw.default ?? null,
      ...(typeof raw.min === 'number' ? { min: raw.min } : {}),
      ...(typeof raw.max === 'number' ? { max: raw.max } : {}),
      ...(Array.isArray(raw.options)
        ? { options: raw.options as { value: string | number; label: string }[] }
        : {}),
    });
  }
  return fields;
}

/** What the form holds per field: text for lists and numbers (as typed), booleans as booleans. */
export type ParamDraft = Record<string, string | boolean>;

export function paramDraft(fields: ParamField[], stored: Record<string, unknown>): ParamDraft {
  const draft: ParamDraft = {};
  for (const f of fields) {
    const value = stored[f.name] !== undefined ? stored[f.name] : f.default;
    if (f.type === 'boolean') draft[f.name] = value === true;
    else if (f.type === 'string[]')
      draft[f.name] = Array.isArray(value) ? value.map(String).join('\n') : '';
    else if (f.type === 'number[]')
      draft[f.name] = Array.isArray(value) ? value.map(String).join(', ') : '';
    else
      draft[f.name] =
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : '';
  }
  return draft;
}

/**
 * The parameters object from the form, or the errors per field. Numbers must be whole; empty
 * optional fields are sent as null (lists as []); select values keep their option's type.
 */
export function paramsFromDraft(
  fields: ParamField[],
  draft: ParamDraft,
): { parameters: Record<string, unknown> } | { errors: Record<string, string> } {
  const parameters: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const value = draft[f.name];
    if (f.type === 'boolean') {
      parameters[f.name] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (f.type === 'string[]') {
      parameters[f.name] = text
        .split('\n')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    } else if (f.type === 'number[]') {
      const parts = text.split(/[\s,]+/).filter((s) => s !== '');
      if (parts.some((p) => !/^\d+$/.test(p))) errors[f.name] = 'Whole numbers, comma separated';
      else parameters[f.name] = parts.map(Number);
    } else if (text === '') {
      if (f.required) errors[f.name] = `${f.label} is required`;
      else parameters[f.name] = null;
    } else if (f.type === 'number') {
      const n = Number(text);
      if (!Number.isInteger(n)) errors[f.name] = 'A whole number';
      else if (f.min !== undefined && n < f.min) errors[f.name] = `At least ${f.min}`;
      else if (f.max !== undefined && n > f.max) errors[f.name] = `At most ${f.max}`;
      else parameters[f.name] = n;
    } else if (f.type === 'select') {
      const option = f.options?.find((o) => String(o.value) === text);
      if (!option) errors[f.name] = 'Pick one of the options';
      else parameters[f.name] = option.value;
    } else parameters[f.name] = text;
  }
  return Object.keys(errors).length ? { errors } : { parameters };
}

/** The JSON editor's text as a parameters object (unknown classes accept any object). */
export function parseJsonParams(text: string): Record<string, unknown> | string {
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return 'The parameters must be a JSON object';
    return value as Record<string, unknown>;
  } catch (err) {
    return `Not valid JSON: ${(err as Error).message}`;
  }
}

// --- maintenance windows -------------------------------------------------------------------------

export type Unit = 'day' | 'week' | 'month' | 'dawom';
export const UNITS: { value: Unit; label: string }[] = [
  { value: 'day', label: 'Every day' },
  { value: 'week', label: 'Every week' },
  { value: 'month', label: 'Every month (on a date)' },
  { value: 'dawom', label: 'Every month (nth weekday)' },
];
export const WEEKDAYS = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
];
export const NTH = ['first', 'second', 'third', 'fourth', 'last'];

/** Which schedule fields a unit uses (schedule_hour always). */
export function windowFields(unit: Unit) {
  return {
    week: unit === 'week' || unit === 'dawom',
    day: unit === 'month',
    month: unit === 'dawom',
  };
}

export interface WindowDraft {
  id?: number;
  label: string;
  recurrence_unit: Unit;
  maintenance_duration: number | string;
  schedule_hour: number | string;
  schedule_week: number | string | null;
  schedule_day: number | string | null;
  schedule_month: number | string | null;
}

const whole = (v: unknown, lo: number, hi: number): number | null => {
  if (v === null || v === '' || v === undefined) return null;
  const n = Number(v);
  return Number.isInteger(n) && n >= lo && n <= hi ? n : null;
};

/**
 * The write body from the form, or its errors. Fields the unit does not use are sent as null so
 * a window changed from `week` to `day` keeps no stale weekday.
 */
export function windowBody(d: WindowDraft):
  | {
      body: {
        id?: number;
        label: string;
        recurrence_unit: Unit;
        maintenance_duration: number;
        schedule_hour: number;
        schedule_week: number | null;
        schedule_day: number | null;
        schedule_month: number | null;
      };
    }
  | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const use = windowFields(d.recurrence_unit);
  const label = d.label.trim();
  if (label === '') errors.label = 'A label is required';
  const duration = whole(d.maintenance_duration, 1, 44_640);
  if (duration === null) errors.maintenance_duration = 'Minutes, 1 to 44640 (31 days)';
  const hour = whole(d.schedule_hour, 0, 23);
  if (hour === null) errors.schedule_hour = 'An hour from 0 to 23';
  const week = use.week ? whole(d.schedule_week, 0, 6) : null;
  if (use.week && week === null) errors.schedule_week = 'Pick a weekday';
  const day = use.day ? whole(d.schedule_day, 1, 31) : null;
  if (use.day && day === null) errors.schedule_day = 'A day of the month, 1 to 31';
  const month = use.month ? whole(d.schedule_month, 1, 5) : null;
  if (use.month && month === null) errors.schedule_month = 'Pick which weekday of the month';
  if (Object.keys(errors).length) return { errors };
  return {
    body: {
      ...(d.id !== undefined ? { id: d.id } : {}),
      label,
      recurrence_unit: d.recurrence_unit,
      maintenance_duration: duration!,
      schedule_hour: hour!,
      schedule_week: week,
      schedule_day: day,
      schedule_month: month,
    },
  };
}

/** The short read shape (`GET /api/alerts/maintenance-windows`) as the form's draft. */
export function windowDraftOf(w: {
  id: number;
  label: string;
  hour: number;
  day: number | null;
  date: number | null;
  month: number | null;
  unit: string;
  duration: number;
}): WindowDraft {
  const unit = (['day', 'week', 'month', 'dawom'] as const).find((u) => u === w.unit) ?? 'day';
  return {
    id: w.id,
    label: w.label,
    recurrence_unit: unit,
    maintenance_duration: w.duration,
    schedule_hour: w.hour,
    schedule_week: w.day,
    schedule_day: w.date,
    schedule_month: w.month,
  };
}

/** "Every second Tuesday at 02:00 for 90 min" and the like. */
export function describeWindow(w: {
  unit: string;
  hour: number;
  day: number | null;
  date: number | null;
  month: number | null;
  duration: number;
}): string {
  const at = `at ${String(w.hour).padStart(2, '0')}:00 for ${w.duration} min`;
  const weekday = w.day !== null ? (WEEKDAYS[w.day] ?? `day ${w.day}`) : '?';
  switch (w.unit) {
    case 'day':
      return `Every day ${at}`;
    case 'week':
      return `Every ${weekday} ${at}`;
    case 'month':
      return `Every month on day ${w.date ?? '?'} ${at}`;
    case 'dawom':
      return `The ${w.month !== null ? (NTH[w.month - 1] ?? '?') : '?'} ${weekday} of every month ${at}`;
    default:
      return `${w.unit} ${at}`;
  }
}

// --- outlets ------------------------------------------------------------------------------------

export const OUTLET_TYPES = ['email', 'webhook', 'slack', 'teams', 'discord'] as const;
export type OutletType = (typeof OUTLET_TYPES)[number];

export interface OutletDraft {
  name: string;
  type: string;
  enabled: boolean;
  rate_limit_per_min: number | string;
  template_id: string | null;
  email_template_id: string | null;
  url: string;
  /** Email recipients, one a line. */
  emails: string;
  /** Custom headers, `Name: value` one a line. */
  headers: string;
  /** Plaintext to set, or '' to keep what is stored. */
  authorization_header: string;
  /** The stored outlet has an authorization header (the API masked it). */
  authorizationStored: boolean;
}

export const isSentinel = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && (v as { __encrypted__?: unknown }).__encrypted__ === true;

export const SENTINEL = { __encrypted__: true } as const;

export function outletDraft(o?: {
  name: string;
  type: string;
  enabled: boolean;
  rate_limit_per_min: number | null;
  template_id: number | null;
  email_template_id: number | null;
  config: Record<string, unknown>;
}): OutletDraft {
  const c = o?.config ?? {};
  const emails = [
    ...(typeof c.email === 'string' ? [c.email] : []),
    ...(Array.isArray(c.emails) ? c.emails.map(String) : []),
  ];
  const headers =
    typeof c.headers === 'object' && c.headers !== null
      ? Object.entries(c.headers as Record<string, unknown>)
          .map(([k, v]) => `${k}: ${String(v)}`)
          .join('\n')
      : '';
  return {
    name: o?.name ?? '',
    type: o?.type ?? 'webhook',
    enabled: o?.enabled ?? true,
    rate_limit_per_min: o?.rate_limit_per_min ?? '',
    template_id: o?.template_id != null ? String(o.template_id) : null,
    email_template_id: o?.email_template_id != null ? String(o.email_template_id) : null,
    url: typeof c.url === 'string' ? c.url : '',
    emails: emails.join('\n'),
    headers,
    authorization_header: '',
    authorizationStored: isSentinel(c.authorization_header),
  };
}

/**
 * The outlet body from the form, or its errors. A stored (masked) authorization header is kept by
 * sending the sentinel when the field is left empty; typing replaces it.
 */
export function outletBody(d: OutletDraft):
  | {
      body: {
        name: string;
        type: string;
        enabled: boolean;
        rate_limit_per_min: number | null;
        template_id: number | null;
        email_template_id: number | null;
        config: Record<string, unknown>;
      };
    }
  | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const name = d.name.trim();
  if (name === '') errors.name = 'A name is required';
  let rate: number | null = null;
  if (String(d.rate_limit_per_min).trim() !== '') {
    const n = Number(d.rate_limit_per_min);
    if (!Number.isInteger(n) || n < 1) errors.rate_limit_per_min = 'At least 1, or empty for none';
    else rate = n;
  }
  const config: Record<string, unknown> = {};
  if (d.type === 'email') {
    const list = d.emails
      .split(/[\n,]+/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (list.length === 0) errors.emails = 'At least one recipient';
    else config.emails = list;
  } else {
    const url = d.url.trim();
    if (url === '') errors.url = 'A URL is required';
    else config.url = url;
    const headers: Record<string, string> = {};
    for (const line of d.headers.split('\n')) {
      if (line.trim() === '') continue;
      const at = line.indexOf(':');
      const key = at > 0 ? line.slice(0, at).trim() : '';
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/.test(key)) {
        errors.headers = `Not a header line: ${line.slice(0, 40)}`;
        break;
      }
      headers[key] = line.slice(at + 1).trim();
    }
    config.headers = headers;
    if (d.type === 'webhook') {
      if (d.authorization_header.trim() !== '')
        config.authorization_header = d.authorization_header.trim();
      else if (d.authorizationStored) config.authorization_header = SENTINEL;
    }
  }
  if (Object.keys(errors).length) return { errors };
  return {
    body: {
      name,
      type: d.type,
      enabled: d.enabled,
      rate_limit_per_min: rate,
      template_id: d.template_id ? Number(d.template_id) : null,
      email_template_id: d.email_template_id ? Number(d.email_template_id) : null,
      config,
    },
  };
}

// --- history ------------------------------------------------------------------------------------

/** How one queued notification reads in the ledger (its delivery's status when known). */
export function notificationStatus(n: {
  delivery_id: number | null;
  suppressed_by: string | null;
  status?: string | null;
  attempts?: number | null;
  error?: string | null;
  rate_delay_ms?: number | null;
}): { label: string; color: string } {
  const delay =
    n.rate_delay_ms && n.rate_delay_ms > 0
      ? `, held ${Math.round(n.rate_delay_ms / 1000)} s by the rate limit`
      : '';
  const tries = n.attempts && n.attempts > 1 ? ` after ${n.attempts} attempts` : '';
  if (n.suppressed_by) return { label: `suppressed: ${n.suppressed_by}`, color: 'gray' };
  switch (n.status) {
    case 'sent':
      return { label: `sent${tries}${delay}`, color: 'teal' };
    case 'failed':
      return { label: `failed${tries}: ${n.error ?? 'no reason given'}${delay}`, color: 'red' };
    case 'pending':
      return {
        label: `pending${n.attempts ? ` (attempt ${n.attempts + 1} next)` : ''}${n.error ? `: ${n.error}` : ''}${delay}`,
        color: 'yellow',
      };
    case 'sending':
      return { label: `sending${delay}`, color: 'yellow' };
    case 'coalesced':
      return { label: 'coalesced into a summary notification', color: 'gray' };
    case 'suppressed':
      return { label: 'suppressed', color: 'gray' };
    default:
      break;
  }
  if (n.delivery_id !== null)
    return { label: `queued as delivery #${n.delivery_id}`, color: 'teal' };
  return { label: 'not queued', color: 'yellow' };
}

/** The `before_id` of the page after `rows` (null when the page was the last). */
export function nextBeforeId(rows: { id: number }[], pageSize: number): number | null {
  if (rows.length < pageSize) return null;
  return rows.reduce((min, r) => Math.min(min, r.id), Number.POSITIVE_INFINITY);
}

/** The API's field errors (`{errors: {field: [..]}}`) flattened to one text per form field. */
export function formErrors(fields: Record<string, string[]> | null | undefined) {
  const out: Record<string, string> = {};
  for (const [key, list] of Object.entries(fields ?? {})) {
    const name = key.replace(/^(parameters|config)\./, '');
    if (list[0]) out[name] = list[0];
  }
  return out;
}
