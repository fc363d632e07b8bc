import { describe, expect, it } from 'vitest';
import {
  describeWindow,
  formErrors,
  nextBeforeId,
  notificationStatus,
  outletBody,
  outletDraft,
  paramDraft,
  paramFields,
  paramsFromDraft,
  parseJsonParams,
  windowBody,
  windowDraftOf,
  windowFields,
  type WindowDraft,
} from './alert-model.js';
/**
 * The parameter schemas the appliance seeds for syslog_log and event_log (0014_alerting.sql, as
 * `GET /api/alert-classes` returns them; the console may not import appliance-core).
 */
const SEEDED: Record<string, string> = {
  syslog_log:
    '[{"name":"facility","label":"Facility","type":"select","required":false,"default":null,"options":[{"value":0,"label":"kern"},{"value":1,"label":"user"},{"value":2,"label":"mail"},{"value":3,"label":"daemon"},{"value":4,"label":"auth"},{"value":5,"label":"syslog"},{"value":6,"label":"lpr"},{"value":7,"label":"news"},{"value":8,"label":"uucp"},{"value":9,"label":"cron"},{"value":10,"label":"authpriv"},{"value":11,"label":"ftp"},{"value":12,"label":"ntp"},{"value":13,"label":"security"},{"value":14,"label":"console"},{"value":15,"label":"solaris-cron"},{"value":16,"label":"local0"},{"value":17,"label":"local1"},{"value":18,"label":"local2"},{"value":19,"label":"local3"},{"value":20,"label":"local4"},{"value":21,"label":"local5"},{"value":22,"label":"local6"},{"value":23,"label":"local7"}]},{"name":"severity_ceiling","label":"Severity at most","type":"select","required":false,"default":null,"options":[{"value":0,"label":"emergency"},{"value":1,"label":"alert"},{"value":2,"label":"critical"},{"value":3,"label":"error"},{"value":4,"label":"warning"},{"value":5,"label":"notice"},{"value":6,"label":"informational"},{"value":7,"label":"debug"}]},{"name":"contains","label":"Message contains","type":"string[]","required":false,"default":[]},{"name":"combine_op","label":"Combine","type":"select","required":false,"default":"AND","options":[{"value":"AND","label":"all of them"},{"value":"OR","label":"any of them"}]},{"name":"invert","label":"Fire on absence","type":"boolean","required":false,"default":false},{"name":"occurrences_min","label":"Occurrences at least","type":"number","required":true,"default":1,"min":1},{"name":"lookback_minutes","label":"Lookback (minutes)","type":"number","required":true,"default":5,"min":1,"max":10080}]',
  event_log:
    '[{"name":"log","label":"Channel","type":"string","required":false,"default":null},{"name":"source","label":"Provider","type":"string","required":false,"default":null},{"name":"event_ids","label":"Event ids","type":"number[]","required":false,"default":[]},{"name":"severity_ceiling","label":"Severity at most","type":"select","required":false,"default":null,"options":[{"value":1,"label":"critical"},{"value":2,"label":"error"},{"value":3,"label":"warning"},{"value":4,"label":"level 4"},{"value":5,"label":"verbose"}]},{"name":"contains","label":"Message contains","type":"string[]","required":false,"default":[]},{"name":"combine_op","label":"Combine","type":"select","required":false,"default":"AND","options":[{"value":"AND","label":"all of them"},{"value":"OR","label":"any of them"}]},{"name":"invert","label":"Fire on absence","type":"boolean","required":false,"default":false},{"name":"occurrences_min","label":"Occurrences at least","type":"number","required":true,"default":1,"min":1},{"name":"lookback_minutes","label":"Lookback (minutes)","type":"number","required":true,"default":5,"min":1,"max":10080}]',
};
const seededSchema = (cls: string) => JSON.parse(SEEDED[cls]!) as Record<string, unknown>[];

describe('class parameter form', () => {
  const syslog = paramFields(seededSchema('syslog_log'))!;

  it("builds the syslog_log form from the class's own schema", () => {
    expect(syslog.map((f) => [f.name, f.type])).toEqual([
      ['facility', 'select'],
      ['severity_ceiling', 'select'],
      ['contains', 'string[]'],
      ['combine_op', 'select'],
      ['invert', 'boolean'],
      ['occurrences_min', 'number'],
      ['lookback_minutes', 'number'],
    ]);
    expect(syslog.find((f) => f.name === 'lookback_minutes')).toMatchObject({ min: 1, max: 10080 });
    expect(paramFields(seededSchema('event_log'))!.map((f) => f.type)).toContain('number[]');
  });

  it('round-trips stored parameters, keeping option and list types', () => {
    const stored = {
      facility: 4,
      severity_ceiling: null,
      contains: ['link down', 'ge-0/0/1'],
      combine_op: 'OR',
      invert: false,
      occurrences_min: 3,
      lookback_minutes: 15,
    };
    const draft = paramDraft(syslog, stored);
    expect(draft.contains).toBe('link down\nge-0/0/1');
    expect(draft.facility).toBe('4');
    expect(paramsFromDraft(syslog, draft)).toEqual({ parameters: stored });
  });

  it('fills defaults for a new alert and refuses out-of-range numbers', () => {
    const draft = paramDraft(syslog, {});
    expect(draft).toMatchObject({ combine_op: 'AND', occurrences_min: '1', lookback_minutes: '5' });
    expect(paramsFromDraft(syslog, { ...draft, lookback_minutes: '10081' })).toEqual({
      errors: { lookback_minutes: 'At most 10080' },
    });
    expect(paramsFromDraft(syslog, { ...draft, occurrences_min: '0' })).toEqual({
      errors: { occurrences_min: 'At least 1' },
    });
    expect(paramsFromDraft(syslog, { ...draft, occurrences_min: '' })).toEqual({
      errors: { occurrences_min: 'Occurrences at least is required' },
    });
    const events = paramFields(seededSchema('event_log'))!;
    const e = paramDraft(events, {});
    expect(paramsFromDraft(events, { ...e, event_ids: '4625, 4740' })).toMatchObject({
      parameters: { event_ids: [4625, 4740] },
    });
    expect(paramsFromDraft(events, { ...e, event_ids: '46x' })).toEqual({
      errors: { event_ids: 'Whole numbers, comma separated' },
    });
  });

  it('gives unknown classes (no schema, or a type it cannot draw) the JSON editor', () => {
    expect(paramFields([])).toBeNull();
    expect(paramFields(undefined)).toBeNull();
    expect(paramFields([{ name: 'x', type: 'regex' }])).toBeNull();
    expect(parseJsonParams('{"anything": [1, 2]}')).toEqual({ anything: [1, 2] });
    expect(parseJsonParams('')).toEqual({});
    expect(parseJsonParams('[1]')).toBe('The parameters must be a JSON object');
    expect(parseJsonParams('{')).toMatch(/^Not valid JSON/);
  });
});

describe('maintenance window form', () => {
  const base: WindowDraft = {
    label: 'Patch night',
    recurrence_unit: 'day',
    maintenance_duration: 90,
    schedule_hour: 2,
    schedule_week: 3,
    schedule_day: 15,
    schedule_month: 2,
  };

  it('uses the hour always, the weekday for week/dawom, the date for month, nth for dawom', () => {
    expect(windowFields('day')).toEqual({ week: false, day: false, month: false });
    expect(windowFields('week')).toEqual({ week: true, day: false, month: false });
    expect(windowFields('month')).toEqual({ week: false, day: true, month: false });
    expect(windowFields('dawom')).toEqual({ week: true, day: false, month: true });
  });

  it('sends null for the fields the unit does not use', () => {
    expect(windowBody(base)).toEqual({
      body: {
        label: 'Patch night',
        recurrence_unit: 'day',
        maintenance_duration: 90,
        schedule_hour: 2,
        schedule_week: null,
        schedule_day: null,
        schedule_month: null,
      },
    });
    expect(windowBody({ ...base, recurrence_unit: 'dawom' })).toMatchObject({
      body: { schedule_week: 3, schedule_day: null, schedule_month: 2 },
    });
    expect(windowBody({ ...base, recurrence_unit: 'month', id: 7 })).toMatchObject({
      body: { id: 7, schedule_week: null, schedule_day: 15, schedule_month: null },
    });
  });

  it('refuses what the API would refuse, per field', () => {
    expect(
      windowBody({
        ...base,
        recurrence_unit: 'dawom',
        label: ' ',
        schedule_hour: 24,
        schedule_week: null,
        schedule_month: 6,
        maintenance_duration: 0,
      }),
    ).toEqual({
      errors: {
        label: 'A label is required',
        maintenance_duration: 'Minutes, 1 to 44640 (31 days)',
        schedule_hour: 'An hour from 0 to 23',
        schedule_week: 'Pick a weekday',
        schedule_month: 'Pick which weekday of the month',
      },
    });
    expect(windowBody({ ...base, recurrence_unit: 'month', schedule_day: 32 })).toEqual({
      errors: { schedule_day: 'A day of the month, 1 to 31' },
    });
    expect(windowBody({ ...base, schedule_hour: 1.5 })).toEqual({
      errors: { schedule_hour: 'An hour from 0 to 23' },
    });
  });

  it('reads the short shape (Sunday = 0, 5 = the last)', () => {
    const short = {
      id: 4,
      label: 'L',
      hour: 3,
      day: 0,
      date: null,
      month: 5,
      unit: 'dawom',
      duration: 60,
    };
    expect(describeWindow(short)).toBe('The last Sunday of every month at 03:00 for 60 min');
    expect(windowDraftOf(short)).toMatchObject({
      id: 4,
      recurrence_unit: 'dawom',
      schedule_week: 0,
      schedule_month: 5,
      schedule_hour: 3,
    });
    expect(describeWindow({ ...short, unit: 'week', day: 6 })).toBe(
      'Every Saturday at 03:00 for 60 min',
    );
  });
});

describe('outlet form', () => {
  const stored = {
    name: 'ops hook',
    type: 'webhook',
    enabled: true,
    rate_limit_per_min: 10,
    template_id: null,
    email_template_id: null,
    config: {
      url: 'https://hooks.example.test/x',
      headers: { 'X-Team': 'ops' },
      authorization_header: { __encrypted__: true },
    },
  };

  it('keeps a masked authorization header by sending the sentinel back', () => {
    const d = outletDraft(stored);
    expect(d.authorizationStored).toBe(true);
    expect(d.authorization_header).toBe('');
    expect(d.headers).toBe('X-Team: ops');
    const built = outletBody(d);
    expect(built).toMatchObject({
      body: {
        config: {
          url: 'https://hooks.example.test/x',
          headers: { 'X-Team': 'ops' },
          authorization_header: { __encrypted__: true },
        },
        rate_limit_per_min: 10,
      },
    });
  });

  it('replaces it when a new value is typed, and sends none when none is stored', () => {
    const typed = outletBody({ ...outletDraft(stored), authorization_header: 'Bearer new' });
    expect(typed).toMatchObject({ body: { config: { authorization_header: 'Bearer new' } } });
    const fresh = outletBody({ ...outletDraft(), name: 'n', url: 'https://h.example.test/' });
    expect('body' in fresh && 'authorization_header' in fresh.body.config).toBe(false);
  });

  it('checks recipients, URL, headers and the rate limit before sending', () => {
    expect(outletBody({ ...outletDraft(), type: 'email', name: 'mail', emails: ' ' })).toEqual({
      errors: { emails: 'At least one recipient' },
    });
    expect(
      outletBody({ ...outletDraft(), type: 'email', name: 'm', emails: 'a@x.test\nb@x.test' }),
    ).toMatchObject({ body: { config: { emails: ['a@x.test', 'b@x.test'] } } });
    expect(
      outletBody({ ...outletDraft(stored), headers: 'no colon here', rate_limit_per_min: 0 }),
    ).toEqual({
      errors: {
        rate_limit_per_min: 'At least 1, or empty for none',
        headers: 'Not a header line: no colon here',
      },
    });
    expect(outletBody({ ...outletDraft(stored), rate_limit_per_min: '' })).toMatchObject({
      body: { rate_limit_per_min: null },
    });
  });
});

describe('history and errors', () => {
  it('reads a notification as queued, suppressed or not queued', () => {
    expect(notificationStatus({ delivery_id: 12, suppressed_by: null }).label).toBe(
      'queued as delivery #12',
    );
    expect(
      notificationStatus({ delivery_id: null, suppressed_by: 'maintenance window 3' }).label,
    ).toBe('suppressed: maintenance window 3');
    expect(notificationStatus({ delivery_id: null, suppressed_by: null }).label).toBe('not queued');
    const d = { delivery_id: 4, suppressed_by: null };
    expect(notificationStatus({ ...d, status: 'sent', attempts: 1, rate_delay_ms: 0 }).label).toBe(
      'sent',
    );
    expect(
      notificationStatus({ ...d, status: 'sent', attempts: 2, rate_delay_ms: 42_000 }).label,
    ).toBe('sent after 2 attempts, held 42 s by the rate limit');
    expect(notificationStatus({ ...d, status: 'failed', attempts: 5, error: 'HTTP 500' })).toEqual({
      label: 'failed after 5 attempts: HTTP 500',
      color: 'red',
    });
    expect(
      notificationStatus({ ...d, status: 'pending', attempts: 1, error: 'HTTP 503' }).label,
    ).toBe('pending (attempt 2 next): HTTP 503');
    expect(notificationStatus({ ...d, status: 'coalesced' }).label).toBe(
      'coalesced into a summary notification',
    );
  });

  it('pages by the smallest id of a full page', () => {
    expect(nextBeforeId([{ id: 9 }, { id: 7 }, { id: 8 }], 3)).toBe(7);
    expect(nextBeforeId([{ id: 9 }], 3)).toBeNull();
  });

  it("maps the API's field errors onto the form's fields", () => {
    expect(
      formErrors({
        label: ['The label field is required.'],
        'parameters.lookback_minutes': [
          'The lookback minutes must be a whole number from 1 to 10080.',
        ],
        'config.url': ['The url field is required.'],
      }),
    ).toEqual({
      label: 'The label field is required.',
      lookback_minutes: 'The lookback minutes must be a whole number from 1 to 10080.',
      url: 'The url field is required.',
    });
  });
});
