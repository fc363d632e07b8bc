import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toWall } from '../../platform/time/zone.js';
import {
  coveringWindow,
  normaliseParameters,
  ruleMatches,
  splitOutletConfig,
  windowErrors,
  windowShort,
  type WindowFields,
} from './alerts.rules.js';

const window = (w: Partial<WindowFields>): WindowFields & { id: number } => ({
  id: 1,
  label: 'w',
  recurrence_unit: 'day',
  maintenance_duration: 60,
  schedule_hour: 2,
  schedule_week: null,
  schedule_day: null,
  schedule_month: null,
  ...w,
});
const wall = (zone: string, t: number) => new Date(toWall(zone, t));

describe('maintenance windows (appliance time zone, Sunday = 0, 5 = the last)', () => {
  it('reads the write shape into the short shape', () => {
    expect(
      windowShort(window({ recurrence_unit: 'dawom', schedule_week: 0, schedule_month: 5 })),
    ).toEqual({
      id: 1,
      label: 'w',
      hour: 2,
      day: 0,
      date: null,
      month: 5,
      unit: 'dawom',
      duration: 60,
    });
  });

  it('requires the fields of each unit', () => {
    expect(windowErrors({ recurrence_unit: 'day' })).toEqual({});
    expect(Object.keys(windowErrors({ recurrence_unit: 'week' }))).toEqual(['schedule_week']);
    expect(Object.keys(windowErrors({ recurrence_unit: 'month' }))).toEqual(['schedule_day']);
    expect(Object.keys(windowErrors({ recurrence_unit: 'dawom' }))).toEqual([
      'schedule_week',
      'schedule_month',
    ]);
  });

  it('the last Sunday of March 2026 at 01:00 in Berlin (a DST change day) is covered, the Saturday before is not', () => {
    const lastSunday = window({
      recurrence_unit: 'dawom',
      schedule_week: 0,
      schedule_month: 5,
      schedule_hour: 1,
      maintenance_duration: 90,
    });
    const inside = Date.UTC(2026, 2, 29, 0, 30); // 01:30 CET
    expect(coveringWindow([lastSunday], inside, 'Europe/Berlin')).not.toBeNull();
    expect(coveringWindow([lastSunday], inside - 86_400_000, 'Europe/Berlin')).toBeNull();
  });

  it('property: every instant covered is on the right weekday and within duration of the start hour (across DST)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'UTC'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 1, max: 180 }),
        fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 11, 31) }),
        (zone, weekday, hour, duration, t) => {
          const w = window({
            recurrence_unit: 'week',
            schedule_week: weekday,
            schedule_hour: hour,
            maintenance_duration: duration,
          });
          const covered = coveringWindow([w], t, zone) !== null;
          // Walk back minute by minute (bounded by the duration) to find a start on the wall clock.
          let started = false;
          for (let m = 0; m < duration && !started; m++) {
            const at = t - m * 60_000;
            const d = wall(zone, at);
            const w1 = wall(zone, at - 60_000);
            const isStart =
              d.getUTCDay() === weekday &&
              (d.getUTCHours() === hour ||
                (d.getUTCHours() > hour &&
                  w1.getUTCHours() < hour &&
                  w1.getUTCDay() === weekday)) &&
              d.getUTCMinutes() === 0;
            const skipped =
              d.getUTCDay() === weekday && d.getUTCHours() > hour && w1.getUTCHours() < hour;
            if (isStart || skipped) started = true;
          }
          if (covered) expect(started).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('class parameters', () => {
  it('fills syslog defaults and drops unknown keys of a known class', () => {
    expect(normaliseParameters('syslog_log', { extra: 1 })).toEqual({
      parameters: {
        occurrences_min: 1,
        lookback_minutes: 5,
        combine_op: 'AND',
        invert: false,
        contains: [],
        severity_ceiling: null,
        facility: null,
      },
    });
  });
  it('designs event_log and eve_log in the same style', () => {
    expect(
      normaliseParameters('event_log', { event_ids: [4625], log: 'Security', severity_ceiling: 2 }),
    ).toMatchObject({
      parameters: { event_ids: [4625], log: 'Security', source: null, severity_ceiling: 2 },
    });
    expect(normaliseParameters('eve_log', { severity_ceiling: 4 })).toEqual({
      errors: { 'parameters.severity_ceiling': ['The severity ceiling must be 1 to 3.'] },
    });
  });
});

describe('outlet config', () => {
  it('keeps the keys of the type only and splits the secret', () => {
    expect(
      splitOutletConfig(
        'webhook',
        { url: 'https://a.test', authorization_header: 'x', email: 'a@b.test' },
        true,
      ),
    ).toEqual({ plain: { url: 'https://a.test' }, secrets: { authorization_header: 'x' } });
    expect(
      splitOutletConfig('slack', { url: 'https://a.test', authorization_header: 'x' }, true),
    ).toEqual({
      plain: { url: 'https://a.test' },
      secrets: {},
    });
  });
});

describe('routing rules', () => {
  const rule = {
    alert_ids: [],
    legacy_alert_ids: [],
    severities: [],
    device_ids: [],
    tag_ids: [],
    tag_slug_count: 0,
  };
  const event = {
    source: 'modern' as const,
    alertId: 1,
    severity: 2,
    deviceId: 5,
    deviceTagIds: [7],
  };
  it('an empty rule takes everything; criteria combine with AND, values with OR', () => {
    expect(ruleMatches(rule, event)).toBe(true);
    expect(ruleMatches({ ...rule, severities: [1, 2] }, event)).toBe(true);
    expect(ruleMatches({ ...rule, severities: [1], device_ids: [5] }, event)).toBe(false);
    expect(ruleMatches({ ...rule, tag_ids: [7], tag_slug_count: 1 }, event)).toBe(true);
    expect(ruleMatches({ ...rule, tag_ids: [], tag_slug_count: 1 }, event)).toBe(false);
    expect(ruleMatches({ ...rule, legacy_alert_ids: [1] }, event)).toBe(false);
  });
});
