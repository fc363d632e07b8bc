import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isInMaintenance,
  maintenanceWindowAt,
  nextMaintenanceStart,
  previousMaintenanceStart,
  recurrenceDayInMonth,
  recurrenceFromSchedule,
  type MaintenanceSchedule,
  type Recurrence,
} from './calendar.js';
import { daysInMonth } from './datetime.js';

const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');
const HOUR = 3_600_000;
const MINUTE = 60_000;

function starts(schedule: MaintenanceSchedule, from: string, count: number, zone?: string) {
  const out: string[] = [];
  let t = Date.parse(from);
  for (let i = 0; i < count; i++) {
    t = nextMaintenanceStart(schedule, t, zone);
    out.push(iso(t));
  }
  return out;
}

const every = (recurrence: Recurrence, durationMinutes = 60): MaintenanceSchedule => ({
  recurrence,
  durationMinutes,
});

describe('maintenance recurrences', () => {
  it('day and week', () => {
    expect(starts(every({ unit: 'day', hour: 3 }), '2026-01-01T03:00:00Z', 3)).toEqual([
      '2026-01-02T03:00:00Z',
      '2026-01-03T03:00:00Z',
      '2026-01-04T03:00:00Z',
    ]);
    // 1 January 2026 is a Thursday; Sunday as 0 or 7.
    expect(
      starts(every({ unit: 'week', hour: 22, weekday: 0 }), '2026-01-01T00:00:00Z', 2),
    ).toEqual(['2026-01-04T22:00:00Z', '2026-01-11T22:00:00Z']);
    expect(
      starts(every({ unit: 'week', hour: 22, weekday: 7 }), '2026-01-01T00:00:00Z', 1),
    ).toEqual(['2026-01-04T22:00:00Z']);
    expect(starts(every({ unit: 'week', hour: 0, weekday: 4 }), '2026-01-01T00:00:00Z', 1)).toEqual(
      ['2026-01-08T00:00:00Z'],
    );
  });

  it('month: a day the month lacks means its last day', () => {
    expect(starts(every({ unit: 'month', hour: 1, day: 31 }), '2026-01-01T00:00:00Z', 6)).toEqual([
      '2026-01-31T01:00:00Z',
      '2026-02-28T01:00:00Z',
      '2026-03-31T01:00:00Z',
      '2026-04-30T01:00:00Z',
      '2026-05-31T01:00:00Z',
      '2026-06-30T01:00:00Z',
    ]);
    expect(starts(every({ unit: 'month', hour: 1, day: 30 }), '2028-01-29T00:00:00Z', 2)).toEqual([
      '2028-01-30T01:00:00Z',
      '2028-02-29T01:00:00Z',
    ]);
    expect(starts(every({ unit: 'month', hour: 1, day: 29 }), '2100-02-01T00:00:00Z', 1)).toEqual([
      '2100-02-28T01:00:00Z',
    ]);
    expect(starts(every({ unit: 'month', hour: 23, day: 1 }), '2026-12-01T23:00:00Z', 1)).toEqual([
      '2027-01-01T23:00:00Z',
    ]);
  });

  it('dawom: the nth and the last weekday of the month', () => {
    // Second Tuesday ("patch Tuesday") of 2026.
    expect(
      starts(every({ unit: 'dawom', hour: 20, weekday: 2, nth: 2 }), '2026-01-01T00:00:00Z', 3),
    ).toEqual(['2026-01-13T20:00:00Z', '2026-02-10T20:00:00Z', '2026-03-10T20:00:00Z']);
    // First Thursday: 1 January 2026 itself.
    expect(
      starts(every({ unit: 'dawom', hour: 20, weekday: 4, nth: 1 }), '2025-12-31T00:00:00Z', 2),
    ).toEqual(['2026-01-01T20:00:00Z', '2026-02-05T20:00:00Z']);
    // Fourth Sunday and last Sunday differ when a month has five.
    expect(
      starts(every({ unit: 'dawom', hour: 0, weekday: 0, nth: 4 }), '2026-03-01T01:00:00Z', 1),
    ).toEqual(['2026-03-22T00:00:00Z']);
    expect(
      starts(every({ unit: 'dawom', hour: 0, weekday: 7, nth: 'last' }), '2026-03-01T01:00:00Z', 2),
    ).toEqual(['2026-03-29T00:00:00Z', '2026-04-26T00:00:00Z']);
    // The last Sunday of February in a leap year that ends on a Sunday (2032-02-29).
    expect(recurrenceDayInMonth({ unit: 'dawom', hour: 0, weekday: 0, nth: 'last' }, 2032, 2)).toBe(
      29,
    );
    expect(recurrenceDayInMonth({ unit: 'dawom', hour: 0, weekday: 1, nth: 'last' }, 2032, 2)).toBe(
      23,
    );
  });

  it('follows the zone, with the DST rule of schedules', () => {
    const berlin = 'Europe/Berlin';
    // Daily at 02:00: 29 March 2026 has no 02:00 (starts at 03:00 CEST), 25 October has it twice.
    expect(starts(every({ unit: 'day', hour: 2 }), '2026-03-28T00:00:00Z', 3, berlin)).toEqual([
      '2026-03-28T01:00:00Z',
      '2026-03-29T01:00:00Z',
      '2026-03-30T00:00:00Z',
    ]);
    expect(starts(every({ unit: 'day', hour: 2 }), '2026-10-24T12:00:00Z', 2, berlin)).toEqual([
      '2026-10-25T00:00:00Z',
      '2026-10-26T01:00:00Z',
    ]);
    expect(
      starts(
        every({ unit: 'week', hour: 2, weekday: 0 }),
        '2026-03-01T12:00:00Z',
        1,
        'America/New_York',
      ),
    ).toEqual(['2026-03-08T07:00:00Z']);
  });
});

describe('inside a maintenance window', () => {
  it('start <= t < start + duration, windows begun before t included', () => {
    const nightly = every({ unit: 'day', hour: 23 }, 120);
    const start = Date.UTC(2026, 0, 10, 23);
    expect(maintenanceWindowAt(nightly, start)).toEqual({ start, end: start + 2 * HOUR });
    expect(isInMaintenance(nightly, start - 1)).toBe(false);
    // Past midnight, the window that began the day before still holds.
    expect(maintenanceWindowAt(nightly, start + 90 * MINUTE)).toEqual({
      start,
      end: start + 2 * HOUR,
    });
    expect(isInMaintenance(nightly, start + 2 * HOUR - 1)).toBe(true);
    expect(isInMaintenance(nightly, start + 2 * HOUR)).toBe(false);
    expect(previousMaintenanceStart(nightly, start + 5 * HOUR)).toBe(start);
  });

  it('a window longer than its recurrence keeps overlapping the next', () => {
    const long = every({ unit: 'day', hour: 0 }, 36 * 60);
    expect(isInMaintenance(long, Date.UTC(2026, 0, 10, 23))).toBe(true);
    expect(maintenanceWindowAt(long, Date.UTC(2026, 0, 11, 5))?.start).toBe(Date.UTC(2026, 0, 11));
  });

  it('a window spanning a DST change lasts its duration in real minutes', () => {
    // Last Sunday of March, 01:00 Berlin (00:00 UTC), 3 hours: ends 03:00 UTC = 05:00 CEST.
    const window = every({ unit: 'dawom', hour: 1, weekday: 0, nth: 'last' }, 180);
    const at = Date.UTC(2026, 2, 29, 2, 59);
    expect(maintenanceWindowAt(window, at, 'Europe/Berlin')).toEqual({
      start: Date.UTC(2026, 2, 29, 0),
      end: Date.UTC(2026, 2, 29, 3),
    });
    // Starting in the gap (02:00): from 03:00 CEST on.
    const inGap = every({ unit: 'dawom', hour: 2, weekday: 0, nth: 'last' }, 60);
    expect(isInMaintenance(inGap, Date.UTC(2026, 2, 29, 0, 59), 'Europe/Berlin')).toBe(false);
    expect(isInMaintenance(inGap, Date.UTC(2026, 2, 29, 1, 0), 'Europe/Berlin')).toBe(true);
    expect(isInMaintenance(inGap, Date.UTC(2026, 2, 29, 2, 0), 'Europe/Berlin')).toBe(false);
  });

  it('refuses a malformed schedule', () => {
    expect(() => nextMaintenanceStart(every({ unit: 'day', hour: 24 }), 0)).toThrow(RangeError);
    expect(() => nextMaintenanceStart(every({ unit: 'day', hour: 1 }, 0), 0)).toThrow(/duration/);
    expect(() => nextMaintenanceStart(every({ unit: 'month', hour: 1, day: 32 }), 0)).toThrow(
      /day 32/,
    );
    expect(() =>
      nextMaintenanceStart(every({ unit: 'dawom', hour: 1, weekday: 1, nth: 5 as 4 }), 0),
    ).toThrow(/nth 5/);
    expect(() => nextMaintenanceStart(every({ unit: 'day', hour: 1 }), 0, 'Nowhere/Land')).toThrow(
      RangeError,
    );
  });
});

describe('the spec’s write shape', () => {
  it('maps recurrence_unit and the schedule_* fields', () => {
    expect(
      recurrenceFromSchedule({
        recurrence_unit: 'dawom',
        maintenance_duration: 90,
        schedule_hour: '2',
        schedule_week: 0,
        schedule_month: 5,
        schedule_day: 99, // ignored: not used by dawom
      }),
    ).toEqual({
      schedule: {
        recurrence: { unit: 'dawom', hour: 2, weekday: 0, nth: 'last' },
        durationMinutes: 90,
      },
    });
    expect(
      recurrenceFromSchedule({
        recurrence_unit: 'month',
        maintenance_duration: 30,
        schedule_hour: 0,
        schedule_day: 31,
      }),
    ).toEqual({
      schedule: { recurrence: { unit: 'month', hour: 0, day: 31 }, durationMinutes: 30 },
    });
    expect(
      recurrenceFromSchedule({
        recurrence_unit: 'week',
        maintenance_duration: 1,
        schedule_hour: 23,
        schedule_week: 7,
      }),
    ).toEqual({
      schedule: { recurrence: { unit: 'week', hour: 23, weekday: 7 }, durationMinutes: 1 },
    });
  });

  it('names the first field at fault', () => {
    const base = { recurrence_unit: 'day', maintenance_duration: 60, schedule_hour: 3 };
    const field = (fields: Record<string, unknown>) => {
      const result = recurrenceFromSchedule(fields);
      return 'field' in result ? result.field : null;
    };
    expect(field(base)).toBeNull();
    expect(field({ ...base, recurrence_unit: 'year' })).toBe('recurrence_unit');
    expect(field({ ...base, maintenance_duration: 0 })).toBe('maintenance_duration');
    expect(field({ ...base, maintenance_duration: 1.5 })).toBe('maintenance_duration');
    expect(field({ ...base, schedule_hour: 24 })).toBe('schedule_hour');
    expect(field({ ...base, schedule_hour: undefined })).toBe('schedule_hour');
    expect(field({ ...base, recurrence_unit: 'week' })).toBe('schedule_week');
    expect(field({ ...base, recurrence_unit: 'week', schedule_week: 8 })).toBe('schedule_week');
    expect(field({ ...base, recurrence_unit: 'month', schedule_day: 0 })).toBe('schedule_day');
    expect(field({ ...base, recurrence_unit: 'dawom', schedule_week: 1 })).toBe('schedule_month');
    expect(field({ ...base, recurrence_unit: 'dawom', schedule_week: 1, schedule_month: 6 })).toBe(
      'schedule_month',
    );
  });
});

// --- property-based, against a walk over whole hours in UTC -------------------------------------

const recurrenceArb: fc.Arbitrary<Recurrence> = fc.oneof(
  fc.record({ unit: fc.constant('day' as const), hour: fc.integer({ min: 0, max: 23 }) }),
  fc.record({
    unit: fc.constant('week' as const),
    hour: fc.integer({ min: 0, max: 23 }),
    weekday: fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 7 as const),
  }),
  fc.record({
    unit: fc.constant('month' as const),
    hour: fc.integer({ min: 0, max: 23 }),
    day: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31)),
  }),
  fc.record({
    unit: fc.constant('dawom' as const),
    hour: fc.integer({ min: 0, max: 23 }),
    weekday: fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 7 as const),
    nth: fc.constantFrom<(1 | 2 | 3 | 4 | 'last')[]>(1, 2, 3, 4, 'last'),
  }),
);

/** Whether a whole UTC hour is a start, judged from the date alone (independent of the module). */
function isStart(recurrence: Recurrence, t: number): boolean {
  const d = new Date(t);
  if (d.getUTCHours() !== recurrence.hour || d.getUTCMinutes() !== 0) return false;
  const day = d.getUTCDate();
  const length = daysInMonth(d.getUTCFullYear(), d.getUTCMonth() + 1);
  switch (recurrence.unit) {
    case 'day':
      return true;
    case 'week':
      return d.getUTCDay() === recurrence.weekday % 7;
    case 'month':
      return day === Math.min(recurrence.day, length);
    case 'dawom': {
      if (d.getUTCDay() !== recurrence.weekday % 7) return false;
      const ordinal = Math.ceil(day / 7);
      return recurrence.nth === 'last' ? day + 7 > length : ordinal === recurrence.nth;
    }
  }
}

const instantArb = fc.oneof(
  fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
  fc
    .record({
      year: fc.constantFrom(2023, 2024, 2028, 2100, 2000),
      month: fc.integer({ min: 0, max: 11 }),
      day: fc.integer({ min: 25, max: 31 }),
      minute: fc.integer({ min: 0, max: 1439 }),
    })
    .map(({ year, month, day, minute }) => Date.UTC(year, month, day, 0, minute)),
);

describe('maintenance windows, property-based', () => {
  it('next start, previous start and membership equal an hour-by-hour walk in UTC', () => {
    fc.assert(
      fc.property(
        recurrenceArb,
        fc.integer({ min: 1, max: 3 * 24 * 60 }),
        instantArb,
        (recurrence, durationMinutes, at) => {
          const schedule = { recurrence, durationMinutes };
          let next = Math.floor(at / HOUR) * HOUR + HOUR;
          while (!isStart(recurrence, next)) next += HOUR;
          expect(iso(nextMaintenanceStart(schedule, at))).toBe(iso(next));
          let previous = Math.floor(at / HOUR) * HOUR;
          while (!isStart(recurrence, previous)) previous -= HOUR;
          expect(iso(previousMaintenanceStart(schedule, at))).toBe(iso(previous));
          // Inside when some start lies in (at - duration, at].
          let inside = false;
          for (let s = previous; s > at - durationMinutes * MINUTE; s -= HOUR)
            if (isStart(recurrence, s)) inside = true;
          expect(isInMaintenance(schedule, at)).toBe(inside);
        },
      ),
      { numRuns: 400 },
    );
  });
});
