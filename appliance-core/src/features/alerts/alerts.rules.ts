/**
 * Pure rules of alerting, free of I/O: class parameters (syslog_log exactly as the spec lists
 * them; event_log and eve_log designed in its style), outlet config keys per type, routing-rule
 * matching, and which maintenance window covers an instant (platform/time/calendar.ts does the
 * calendar arithmetic: appliance time zone, Sunday = 0, nth weekday with 5 = the last).
 */
import {
  isInMaintenance,
  recurrenceFromSchedule,
  type MaintenanceSchedule,
} from '../../platform/time/calendar.js';

export type FieldErrors = Record<string, string[]>;

export interface ClassParameters {
  facility: number | null;
  severity_ceiling: number | null;
  contains: string[];
  combine_op: 'AND' | 'OR';
  invert: boolean;
  occurrences_min: number;
  lookback_minutes: number;
  log?: string | null;
  source?: string | null;
  event_ids?: number[];
  signature_ids?: number[];
  proto?: string | null;
}

export const MODERN_CLASSES = ['syslog_log', 'event_log', 'eve_log'] as const;
export type ModernClass = (typeof MODERN_CLASSES)[number];
export const isModernClass = (c: string): c is ModernClass =>
  (MODERN_CLASSES as readonly string[]).includes(c);

const CEILING: Record<ModernClass, [number, number]> = {
  syslog_log: [0, 7],
  event_log: [1, 5],
  eve_log: [1, 3],
};
const MAX_PATTERN = 1024;

const isInt = (v: unknown, lo: number, hi: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi;

/**
 * The stored parameters of a known class (defaults filled, unknown keys dropped) or the errors,
 * keyed `parameters.<name>`. An unknown class keeps whatever object it was given.
 */
export function normaliseParameters(
  cls: string,
  input: Record<string, unknown>,
): { parameters: Record<string, unknown> } | { errors: FieldErrors } {
  if (!isModernClass(cls)) return { parameters: input };
  const errors: FieldErrors = {};
  const fail = (name: string, message: string) => (errors[`parameters.${name}`] = [message]);
  const out: Record<string, unknown> = {};
  const get = (name: string) => (input[name] === undefined ? null : input[name]);

  const occurrences = get('occurrences_min') ?? 1;
  if (!isInt(occurrences, 1, 1_000_000))
    fail('occurrences_min', 'The occurrences min must be a whole number of at least 1.');
  out.occurrences_min = occurrences;
  const lookback = get('lookback_minutes') ?? 5;
  if (!isInt(lookback, 1, 10080))
    fail('lookback_minutes', 'The lookback minutes must be a whole number from 1 to 10080.');
  out.lookback_minutes = lookback;
  const op = get('combine_op') ?? 'AND';
  if (op !== 'AND' && op !== 'OR') fail('combine_op', 'The combine op must be AND or OR.');
  out.combine_op = op;
  const invert = get('invert') ?? false;
  if (typeof invert !== 'boolean') fail('invert', 'The invert field must be true or false.');
  out.invert = invert;
  const contains = get('contains') ?? [];
  if (
    !Array.isArray(contains) ||
    contains.length > 64 ||
    contains.some((c) => typeof c !== 'string' || c.length === 0 || c.length > MAX_PATTERN)
  )
    fail(
      'contains',
      `The contains field must be a list of at most 64 non-empty texts of at most ${MAX_PATTERN} characters.`,
    );
  out.contains = contains;
  const [lo, hi] = CEILING[cls];
  const ceiling = get('severity_ceiling');
  if (ceiling !== null && !isInt(ceiling, lo, hi))
    fail('severity_ceiling', `The severity ceiling must be ${lo} to ${hi}.`);
  out.severity_ceiling = ceiling;

  const intList = (name: string) => {
    const v = get(name) ?? [];
    if (!Array.isArray(v) || v.length > 256 || v.some((x) => !isInt(x, 0, 2 ** 31)))
      fail(name, `The ${name.replace('_', ' ')} field must be a list of whole numbers.`);
    out[name] = v;
  };
  const text = (name: string) => {
    const v = get(name);
    if (v !== null && (typeof v !== 'string' || v.length > 255))
      fail(name, `The ${name} field must be a text of at most 255 characters.`);
    out[name] = v === '' ? null : v;
  };
  if (cls === 'syslog_log') {
    const facility = get('facility');
    if (facility !== null && !isInt(facility, 0, 23))
      fail('facility', 'The facility must be 0 to 23.');
    out.facility = facility;
  } else if (cls === 'event_log') {
    text('log');
    text('source');
    intList('event_ids');
  } else {
    intList('signature_ids');
    text('proto');
  }
  return Object.keys(errors).length > 0 ? { errors } : { parameters: out };
}

// --- outlets -------------------------------------------------------------------------------------

export const OUTLET_KEYS: Record<string, readonly string[]> = {
  email: ['email', 'emails'],
  webhook: ['url', 'authorization_header', 'headers'],
  slack: ['url', 'headers'],
  teams: ['url', 'headers'],
  discord: ['url', 'headers'],
  o365: ['url', 'headers'],
};
export const SECRET_KEYS = new Set(['authorization_header']);
const EMAIL = /^[^\s@<>",;]{1,64}@[^\s@<>",;]{1,255}$/;

/**
 * The outlet config split into its stored parts: non-secret keys (unknown keys dropped) and the
 * incoming secret values (undefined when not sent), or field errors keyed `config.<key>`.
 */
export function splitOutletConfig(
  type: string,
  config: Record<string, unknown>,
  creating: boolean,
): { plain: Record<string, unknown>; secrets: Record<string, unknown> } | { errors: FieldErrors } {
  const keys = OUTLET_KEYS[type] ?? [];
  const errors: FieldErrors = {};
  const plain: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const key of keys) {
    const value = config[key];
    if (value === undefined) continue;
    if (SECRET_KEYS.has(key)) {
      if (typeof value === 'string' && (value.length > 4096 || /[\r\n]/.test(value)))
        errors[`config.${key}`] = [
          'The authorization header must be one line of at most 4096 characters.',
        ];
      secrets[key] = value;
      continue;
    }
    if (key === 'url') {
      if (typeof value !== 'string' || value.length === 0 || value.length > 2048)
        errors['config.url'] = ['The url must be a text of at most 2048 characters.'];
      else plain.url = value;
    } else if (key === 'headers') {
      const ok =
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.entries(value).length <= 32 &&
        Object.entries(value).every(
          ([k, v]) =>
            /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/.test(k) &&
            typeof v === 'string' &&
            v.length <= 4096 &&
            !/[\r\n\0]/.test(v),
        );
      if (!ok)
        errors['config.headers'] = [
          'The headers must be an object of header names to one-line texts (no CR or LF).',
        ];
      else plain.headers = value;
    } else if (key === 'email') {
      if (typeof value !== 'string' || !EMAIL.test(value))
        errors['config.email'] = ['The email must be a valid email address.'];
      else plain.email = value;
    } else if (key === 'emails') {
      if (
        !Array.isArray(value) ||
        value.length > 100 ||
        value.some((v) => typeof v !== 'string' || !EMAIL.test(v))
      )
        errors['config.emails'] = ['The emails must be a list of valid email addresses.'];
      else plain.emails = value;
    }
  }
  if (creating && Object.keys(errors).length === 0) {
    if (type === 'email' && plain.email === undefined && plain.emails === undefined)
      errors['config.email'] = ['An email outlet needs email or emails.'];
    if (type !== 'email' && plain.url === undefined)
      errors['config.url'] = ['The url field is required.'];
  }
  return Object.keys(errors).length > 0 ? { errors } : { plain, secrets };
}

// --- routing -------------------------------------------------------------------------------------

export interface RuleCriteria {
  alert_ids: readonly number[];
  legacy_alert_ids: readonly number[];
  severities: readonly number[];
  device_ids: readonly number[];
  /** Tag ids resolved from the rule's slugs. */
  tag_ids: readonly number[];
  /** The rule names tags some of which do not exist: it matches nothing through tags. */
  tag_slug_count: number;
}

export interface RoutedEvent {
  source: 'modern' | 'legacy';
  alertId: number;
  severity: number;
  deviceId: number | null;
  deviceTagIds: readonly number[];
}

/** Whether a rule takes an event: every non-empty criterion holds (values of one: any). */
export function ruleMatches(rule: RuleCriteria, event: RoutedEvent): boolean {
  const anchoredToAlerts = rule.alert_ids.length > 0 || rule.legacy_alert_ids.length > 0;
  if (anchoredToAlerts) {
    const ids = event.source === 'modern' ? rule.alert_ids : rule.legacy_alert_ids;
    if (!ids.includes(event.alertId)) return false;
  }
  if (rule.severities.length > 0 && !rule.severities.includes(event.severity)) return false;
  if (
    rule.device_ids.length > 0 &&
    (event.deviceId === null || !rule.device_ids.includes(event.deviceId))
  )
    return false;
  if (rule.tag_slug_count > 0 && !rule.tag_ids.some((t) => event.deviceTagIds.includes(t)))
    return false;
  return true;
}

// --- maintenance windows -------------------------------------------------------------------------

export interface WindowFields {
  label: string;
  recurrence_unit: string;
  maintenance_duration: number;
  schedule_hour: number;
  schedule_week: number | null;
  schedule_day: number | null;
  schedule_month: number | null;
}

/** The calendar schedule of a stored window (5 = the last nth weekday). */
export function scheduleOf(w: WindowFields): MaintenanceSchedule {
  const parsed = recurrenceFromSchedule(w);
  if ('field' in parsed) throw new RangeError(`${parsed.field}: ${parsed.message}`);
  return parsed.schedule;
}

/** The write-shape fields a unit needs, or the errors (the spec: which field each unit requires). */
export function windowErrors(w: Partial<WindowFields>): FieldErrors {
  const errors: FieldErrors = {};
  const need = (field: keyof WindowFields, units: string) => {
    if (w[field] === undefined || w[field] === null)
      errors[field] = [
        `The ${field.replace('_', ' ')} field is required when recurrence unit is ${units}.`,
      ];
  };
  if (w.recurrence_unit === 'week' || w.recurrence_unit === 'dawom')
    need('schedule_week', w.recurrence_unit);
  if (w.recurrence_unit === 'month') need('schedule_day', 'month');
  if (w.recurrence_unit === 'dawom') need('schedule_month', 'dawom');
  return errors;
}

/** The first of `windows` that covers `at`, or null. */
export function coveringWindow<W extends WindowFields>(
  windows: readonly W[],
  at: number,
  timeZone: string,
): W | null {
  for (const w of windows) if (isInMaintenance(scheduleOf(w), at, timeZone)) return w;
  return null;
}

/** The read shape of a window: hour, day (weekday), date (day of month), month (nth), unit, duration. */
export function windowShort(w: WindowFields & { id: number }) {
  return {
    id: w.id,
    label: w.label,
    hour: w.schedule_hour,
    day: w.schedule_week,
    date: w.schedule_day,
    month: w.schedule_month,
    unit: w.recurrence_unit,
    duration: w.maintenance_duration,
  };
}
