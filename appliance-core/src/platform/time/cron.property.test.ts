/**
 * Property tests of cron next-due against brute force. The expressions are generated as syntax
 * trees (lists of `*`, `*\/S`, `N`, `N-M`, `N-M/S`, with month and weekday names in any case) and
 * rendered to text; the test expands the trees itself, so the parser is checked too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextCronRun, parseCron, tryParseCron } from './cron.js';
import { toWall } from './zone.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

type Item =
  | { kind: 'star'; step?: number }
  | { kind: 'value'; value: number }
  | { kind: 'range'; low: number; high: number; step?: number };

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day-of-week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

function itemArb(field: Field, focus: number[]): fc.Arbitrary<Item> {
  // Values near the ends of the field (and `focus`, such as 29–31 for days) come often.
  const value = fc.oneof(
    fc.integer({ min: field.min, max: field.max }),
    fc.constantFrom(field.min, field.max, ...focus),
  );
  const step = fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: field.max + 2 }));
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('star' as const) }) },
    fc.record({ kind: fc.constant('star' as const), step }),
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('value' as const), value }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(value, value, fc.option(step, { nil: undefined }))
        .map(([a, b, s]): Item => {
          const range: Item = { kind: 'range', low: Math.min(a, b), high: Math.max(a, b) };
          return s === undefined ? range : { ...range, step: s };
        }),
    },
  );
}

function fieldArb(
  field: Field,
  focus: number[] = [],
): fc.Arbitrary<{ items: Item[]; text: string }> {
  return fc
    .tuple(
      fc.array(itemArb(field, focus), { minLength: 1, maxLength: 3 }),
      fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    )
    .map(([items, useNames]) => ({
      items,
      text: items.map((item, i) => render(field, item, useNames, i)).join(','),
    }));
}

/** Renders an item; values of month and weekday are sometimes names, in mixed case. */
function render(field: Field, item: Item, useNames: boolean[], i: number): string {
  const show = (v: number, j: number) => {
    // 7 has no name of its own (`sun` is 0, so `mon-sun` runs backwards, as cron says too).
    const name = field.names?.[v - field.min];
    if (name === undefined || !useNames[(i * 2 + j) % useNames.length]) return String(v);
    return j === 0 ? name.toUpperCase() : name[0]?.toUpperCase() + name.slice(1);
  };
  const step = 'step' in item && item.step !== undefined ? `/${item.step}` : '';
  if (item.kind === 'star') return `*${step}`;
  if (item.kind === 'value') return show(item.value, 0);
  return `${show(item.low, 0)}-${show(item.high, 1)}${step}`;
}

/** The set a field's items allow, expanded independently of the parser. */
function expand(field: Field, items: Item[]): Set<number> {
  const out = new Set<number>();
  for (const item of items) {
    const [low, high, step] =
      item.kind === 'star'
        ? [field.min, field.max, item.step ?? 1]
        : item.kind === 'value'
          ? [item.value, item.value, 1]
          : [item.low, item.high, item.step ?? 1];
    for (let v = low; v <= high; v += step) out.add(field.name === 'day-of-week' ? v % 7 : v);
  }
  return out;
}

const expressionArb = fc
  .tuple(
    fieldArb(FIELDS[0] as Field, [0, 30]),
    fieldArb(FIELDS[1] as Field, [0, 23]),
    fieldArb(FIELDS[2] as Field, [28, 29, 30, 31]),
    fieldArb(FIELDS[3] as Field, [2, 4, 12]),
    fieldArb(FIELDS[4] as Field, [0, 7]),
  )
  .map((fields) => {
    const sets = fields.map((f, i) => expand(FIELDS[i] as Field, f.items));
    return {
      text: fields.map((f) => f.text).join(' '),
      minutes: sets[0] as Set<number>,
      hours: sets[1] as Set<number>,
      days: sets[2] as Set<number>,
      months: sets[3] as Set<number>,
      weekdays: sets[4] as Set<number>,
      domStar: fields[2].items[0]?.kind === 'star',
      dowStar: fields[4].items[0]?.kind === 'star',
    };
  });
type Expected = typeof expressionArb extends fc.Arbitrary<infer E> ? E : never;

function dayMatches(e: Expected, date: Date): boolean {
  if (!e.months.has(date.getUTCMonth() + 1)) return false;
  const byDate = e.days.has(date.getUTCDate());
  const byWeekday = e.weekdays.has(date.getUTCDay());
  return e.domStar || e.dowStar ? byDate && byWeekday : byDate || byWeekday;
}

/** Whether any day of any year can ever match (the parser must refuse exactly the others). */
function canEverRun(e: Expected): boolean {
  if (!(e.dowStar && !e.domStar)) return true;
  const longest = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return [...e.days].some((d) => [...e.months].some((m) => d <= (longest[m] as number)));
}

/**
 * The first matching minute strictly after `after`, walking minute by minute (UTC). A day whose
 * date fails the day rule cannot hold a matching minute, so its 1440 minutes are skipped at once.
 */
function bruteForceNext(e: Expected, after: number, limitDays: number): number | null {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  const end = after + limitDays * DAY;
  while (t <= end) {
    const date = new Date(t);
    if (!dayMatches(e, date)) {
      t = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
      continue;
    }
    if (e.hours.has(date.getUTCHours()) && e.minutes.has(date.getUTCMinutes())) return t;
    t += MINUTE;
  }
  return null;
}

const instantArb = fc.oneof(
  // Anywhere from 1970 to 2100.
  fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }),
  // Close to a month end, in leap and common years (28 February, 29 February, 30/31 ...).
  fc
    .record({
      year: fc.oneof(
        fc.constantFrom(1999, 2000, 2023, 2024, 2099, 2100),
        fc.integer({ min: 1970, max: 2099 }),
      ),
      month: fc.integer({ min: 0, max: 11 }),
      day: fc.integer({ min: 26, max: 31 }),
      minute: fc.integer({ min: 0, max: 1439 }),
      ms: fc.integer({ min: 0, max: 59_999 }),
    })
    .map(({ year, month, day, minute, ms }) => Date.UTC(year, month, day, 0, minute, ms)),
);

// Month ends and leap days, where day-of-month alone decides the day (day-of-week `*`).
const monthEndExpressionArb = fc
  .tuple(
    fieldArb(FIELDS[0] as Field, [0, 59]),
    fieldArb(FIELDS[1] as Field, [0, 23]),
    fc.uniqueArray(fc.integer({ min: 27, max: 31 }), { minLength: 1, maxLength: 3 }),
    fc.uniqueArray(fc.oneof(fc.constant(2), fc.integer({ min: 1, max: 12 })), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([minute, hour, days, months]) => ({
    text: `${minute.text} ${hour.text} ${days.join(',')} ${months.join(',')} *`,
    minutes: expand(FIELDS[0] as Field, minute.items),
    hours: expand(FIELDS[1] as Field, hour.items),
    days: new Set(days),
    months: new Set(months),
    weekdays: new Set([0, 1, 2, 3, 4, 5, 6]),
    domStar: false,
    dowStar: true,
  }));

describe('cron next-due, property-based', () => {
  it('the parser refuses exactly the expressions that can never run, and expands the rest as cron does', () => {
    fc.assert(
      fc.property(expressionArb, (e) => {
        const result = tryParseCron(e.text);
        expect(result.ok).toBe(canEverRun(e));
        if (!result.ok) return;
        const p = result.expression;
        expect(new Set(p.minutes)).toEqual(e.minutes);
        expect(new Set(p.hours)).toEqual(e.hours);
        expect(new Set(p.daysOfMonth)).toEqual(e.days);
        expect(new Set(p.months)).toEqual(e.months);
        expect(new Set(p.daysOfWeek)).toEqual(e.weekdays);
        expect([p.dayOfMonthStar, p.dayOfWeekStar]).toEqual([e.domStar, e.dowStar]);
      }),
      { numRuns: 1000 },
    );
  });

  it('equals a brute-force minute walk in UTC, run after run (month ends, leap years)', () => {
    fc.assert(
      fc.property(expressionArb.filter(canEverRun), instantArb, (e, after) => {
        const expression = parseCron(e.text);
        let t = after;
        for (let i = 0; i < 3; i++) {
          const expected = bruteForceNext(e, t, 20 * 366);
          const actual = nextCronRun(expression, t);
          expect(
            new Date(actual).toISOString(),
            `${e.text} after ${new Date(t).toISOString()}`,
          ).toBe(expected === null ? 'no run within 20 years' : new Date(expected).toISOString());
          t = actual;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('equals the brute-force walk on the days that month ends and leap years decide', () => {
    fc.assert(
      fc.property(monthEndExpressionArb.filter(canEverRun), instantArb, (e, after) => {
        const expression = parseCron(e.text);
        let t = after;
        for (let i = 0; i < 4; i++) {
          const expected = bruteForceNext(e, t, 20 * 366);
          const actual = nextCronRun(expression, t);
          expect(
            new Date(actual).toISOString(),
            `${e.text} after ${new Date(t).toISOString()}`,
          ).toBe(expected === null ? 'no run within 20 years' : new Date(expected).toISOString());
          t = actual;
        }
      }),
      { numRuns: 500 },
    );
  });
});

/**
 * In a zone with DST the oracle walks instants (UTC minutes; the offsets of Europe/Berlin and
 * America/New_York are whole hours) and applies the documented rule directly: an instant runs when
 * its wall time matches and has not occurred before (overlaps run once, first), or when the wall
 * clock jumps over a gap to it and a matching wall minute lies inside the gap.
 */
function bruteForceNextInZone(
  e: Expected,
  zone: string,
  after: number,
  limitMinutes: number,
): number | null {
  const walls = new Map<number, number>();
  const wallAt = (t: number) => {
    let w = walls.get(t);
    if (w === undefined) walls.set(t, (w = toWall(zone, t)));
    return w;
  };
  const matches = (w: number) => {
    const d = new Date(w);
    return dayMatches(e, d) && e.hours.has(d.getUTCHours()) && e.minutes.has(d.getUTCMinutes());
  };
  const start = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  for (let t = start; t <= start + limitMinutes * MINUTE; t += MINUTE) {
    const w = wallAt(t);
    const seenBefore = [30, 60, 90, 120].some((m) => wallAt(t - m * MINUTE) === w);
    if (matches(w) && !seenBefore) return t;
    const previous = wallAt(t - MINUTE);
    for (let gap = previous + MINUTE; gap < w; gap += MINUTE) if (matches(gap)) return t;
  }
  return null;
}

const transitions: Record<string, number[]> = {
  'Europe/Berlin': [
    Date.UTC(2026, 2, 29, 1),
    Date.UTC(2026, 9, 25, 1),
    Date.UTC(2027, 2, 28, 1),
    Date.UTC(2027, 9, 31, 1),
  ],
  'America/New_York': [
    Date.UTC(2026, 2, 8, 7),
    Date.UTC(2026, 10, 1, 6),
    Date.UTC(2027, 2, 14, 7),
    Date.UTC(2027, 10, 7, 6),
  ],
};

const hourField = (items: Item[], text: string) => ({ items, text });

// Expressions that fire around the transitions often enough for a walk of two days.
const denseExpressionArb = fc
  .tuple(
    fieldArb(FIELDS[0] as Field, [0, 15, 30, 45]),
    fc.oneof(
      fc.constant(hourField([{ kind: 'star' }], '*')),
      fc
        .integer({ min: 0, max: 4 })
        .map((h) => hourField([{ kind: 'value', value: h }], String(h))),
      fieldArb(FIELDS[1] as Field, [1, 2, 3]),
    ),
  )
  .map(([minute, hour]) => ({
    text: `${minute.text} ${hour.text} * * *`,
    minutes: expand(FIELDS[0] as Field, minute.items),
    hours: expand(FIELDS[1] as Field, hour.items),
    days: expand(FIELDS[2] as Field, [{ kind: 'star' }]),
    months: expand(FIELDS[3] as Field, [{ kind: 'star' }]),
    weekdays: expand(FIELDS[4] as Field, [{ kind: 'star' }]),
    domStar: true,
    dowStar: true,
  }));

describe('cron next-due across DST, property-based', () => {
  for (const zone of Object.keys(transitions)) {
    it(`follows the gap and overlap rule in ${zone}`, () => {
      fc.assert(
        fc.property(
          denseExpressionArb,
          fc.constantFrom(...(transitions[zone] as number[])),
          fc.integer({ min: -4 * 60, max: 3 * 60 }),
          (e, transition, offsetMinutes) => {
            const after = transition + offsetMinutes * MINUTE;
            const expected = bruteForceNextInZone(e, zone, after, 2 * 24 * 60);
            const actual = nextCronRun(e.text, after, zone);
            if (expected === null) expect(actual).toBeGreaterThan(after + 2 * DAY);
            else
              expect(
                new Date(actual).toISOString(),
                `${e.text} after ${new Date(after).toISOString()}`,
              ).toBe(new Date(expected).toISOString());
          },
        ),
        { numRuns: 100 },
      );
    });
  }
});
