/**
 * Five-field cron expressions, `minute hour day-of-month month day-of-week`, read as Vixie cron
 * (and cronie, Debian's cron, pg_cron) read them, with next-due computation in an IANA time zone.
 *
 * Syntax, per field: a comma-separated list of `*`, `N`, `N-M`, `*\/S` or `N-M/S`.
 * - minute 0–59, hour 0–23, day-of-month 1–31, month 1–12 or `jan`–`dec`, day-of-week 0–7 or
 *   `sun`–`sat` (0 and 7 are both Sunday). Names are three letters, any case, and may bound a
 *   range (`mon-fri`); a step is a plain number.
 * - Refused, with a message naming the field (`CronSyntaxError.field`): a count of fields other
 *   than five, an empty field or list item, a value out of the field's range, a range that runs
 *   backwards (`5-1`), a step of 0, a step after a single value (`5/15`: cron refuses it; write
 *   `5-59/15`), anything else (`?`, `L`, `W`, `#`, `@daily` and the other macros, seconds or year
 *   fields). Cron accepts, and never runs, a date that no month has (`0 0 30 2 *`); here that is
 *   refused too, because a job that silently never runs is a configuration error.
 * - The day rule of Vixie cron: a day matches when both day-of-month and day-of-week match, except
 *   that when both fields are restricted (neither starts with `*`) a day matching either runs.
 *   As in cron, a field that starts with `*` counts as unrestricted even with a step: `0 0 *\/2 * 1`
 *   runs on odd days that are Mondays, `0 0 1-31/2 * 1` on odd days and on Mondays.
 *
 * Next due (`nextCronRun`): the first run strictly after an instant. Runs fall on whole minutes of
 * the zone's wall clock (UTC by default). A wall time that a DST change skips runs once, at the
 * first instant after the gap (several matching wall times inside one gap run once together); a
 * wall time that a DST change repeats runs once, at its first occurrence, so `*\/15 * * * *` in
 * Europe/Berlin does not run during the repeated hour 02:00–02:59 CET (unlike Vixie cron, which
 * reruns jobs whose minute or hour field starts with `*`; a job that must keep an elapsed-time
 * cadence uses UTC or an interval). See `zone.ts` for how wall times resolve.
 */
import { daysInMonth } from './datetime.js';
import { UTC, fromWall, requireTimeZone, toWall } from './zone.js';

const MINUTE_MS = 60_000;

export type CronFieldName = 'minute' | 'hour' | 'day-of-month' | 'month' | 'day-of-week';

export class CronSyntaxError extends Error {
  constructor(
    /** The field at fault, or null when the expression as a whole is (count of fields). */
    readonly field: CronFieldName | null,
    message: string,
  ) {
    super(field === null ? message : `${field}: ${message}`);
    this.name = 'CronSyntaxError';
  }
}

export interface CronExpression {
  /** The expression as given, trimmed, blanks collapsed. */
  readonly source: string;
  /** Allowed values, ascending; day-of-week folds 7 into 0. */
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  readonly daysOfWeek: readonly number[];
  /** The field starts with `*` (the Vixie day rule above). */
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
}

interface FieldSpec {
  name: CronFieldName;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
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

/** Parses an expression or throws `CronSyntaxError`. */
export function parseCron(text: string): CronExpression {
  if (typeof text !== 'string') throw new CronSyntaxError(null, 'the schedule must be a string');
  const parts = text.trim().split(/\s+/).filter(Boolean);
  if (parts[0]?.startsWith('@'))
    throw new CronSyntaxError(
      null,
      `macros such as ${parts[0]} are not accepted, write the five fields (@daily is 0 0 * * *)`,
    );
  if (parts.length !== 5)
    throw new CronSyntaxError(
      null,
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`,
    );
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = FIELDS.map((spec, i) =>
    parseField(spec, parts[i] as string),
  ) as [number[], number[], number[], number[], number[]];
  const expression: CronExpression = {
    source: parts.join(' '),
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek: [...new Set(daysOfWeek.map((d) => d % 7))].sort((a, b) => a - b),
    dayOfMonthStar: (parts[2] as string).startsWith('*'),
    dayOfWeekStar: (parts[4] as string).startsWith('*'),
  };
  // Day-of-month alone decides the day when day-of-week is `*`: at least one listed day must
  // exist in a listed month (29 February counts: it comes in leap years).
  if (expression.dayOfWeekStar && !expression.dayOfMonthStar) {
    const shortest = Math.min(...daysOfMonth);
    if (!months.some((m) => shortest <= daysInMonth(2000, m)))
      throw new CronSyntaxError(
        'day-of-month',
        `no listed day occurs in a listed month (${parts[2]} in ${parts[3]}), the job would never run`,
      );
  }
  return expression;
}

/** The expression, or the reason it is refused (for validation that answers a message). */
export function tryParseCron(
  text: string,
): { ok: true; expression: CronExpression } | { ok: false; error: CronSyntaxError } {
  try {
    return { ok: true, expression: parseCron(text) };
  } catch (err) {
    if (err instanceof CronSyntaxError) return { ok: false, error: err };
    throw err;
  }
}

function parseField(spec: FieldSpec, text: string): number[] {
  const fail = (message: string) => new CronSyntaxError(spec.name, message);
  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw fail(`empty list item in ${JSON.stringify(text)}`);
    const slash = item.indexOf('/');
    const rangeText = slash < 0 ? item : item.slice(0, slash);
    let low: number;
    let high: number;
    if (rangeText === '*') {
      low = spec.min;
      high = spec.max;
    } else {
      const dash = rangeText.indexOf('-');
      if (dash < 0) {
        low = high = parseValue(spec, rangeText);
        if (slash >= 0)
          throw fail(
            `a step needs * or a range before it (${item}: write ${rangeText}-${spec.max}${item.slice(slash)})`,
          );
      } else {
        low = parseValue(spec, rangeText.slice(0, dash));
        high = parseValue(spec, rangeText.slice(dash + 1));
        if (low > high) throw fail(`range ${rangeText} runs backwards`);
      }
    }
    let step = 1;
    if (slash >= 0) {
      const stepText = item.slice(slash + 1);
      if (!/^\d+$/.test(stepText))
        throw fail(`step ${JSON.stringify(stepText)} is not a whole number`);
      step = Number(stepText);
      if (step === 0) throw fail('a step of 0 is not allowed');
    }
    for (let v = low; v <= high; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

function parseValue(spec: FieldSpec, text: string): number {
  const fail = (message: string) => new CronSyntaxError(spec.name, message);
  if (text === '') throw fail('a range needs a value on both sides of -');
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max)
      throw fail(`${text} is out of range (${spec.min}-${spec.max})`);
    return value;
  }
  const index = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (index >= 0) return index + spec.min;
  throw fail(
    spec.names
      ? `${JSON.stringify(text)} is neither a number nor a name (${spec.names[0]}-${spec.names.at(-1)})`
      : `${JSON.stringify(text)} is not a number`,
  );
}

/** Whether a wall time (a wall number, see `zone.ts`) matches, to the minute. */
export function cronMatchesWall(expression: CronExpression, wall: number): boolean {
  const d = new Date(wall);
  return (
    expression.minutes.includes(d.getUTCMinutes()) &&
    expression.hours.includes(d.getUTCHours()) &&
    expression.months.includes(d.getUTCMonth() + 1) &&
    dayMatches(expression, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())
  );
}

function dayMatches(expression: CronExpression, year: number, month: number, day: number): boolean {
  const byDate = expression.daysOfMonth.includes(day);
  const byWeekday = expression.daysOfWeek.includes(weekday(year, month, day));
  return expression.dayOfMonthStar || expression.dayOfWeekStar
    ? byDate && byWeekday
    : byDate || byWeekday;
}

function weekday(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCDay();
}

/** The smallest allowed value >= from, or undefined. */
function nextAllowed(values: readonly number[], from: number): number | undefined {
  for (const v of values) if (v >= from) return v;
  return undefined;
}

function wallOf(year: number, month: number, day: number, hour: number, minute: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, 0, 0);
  return d.getTime();
}

/**
 * The first matching wall minute at or after a wall time (rounded up to the minute). Every parsed
 * expression matches again within a few years (29 February waits at most eight; a day-of-month
 * that starts with `*` always holds the 1st, and the 1st of a month falls on any weekday within
 * about a dozen years), so the search stops at fifty as a guard.
 */
export function nextCronWall(expression: CronExpression, from: number): number {
  const start = new Date(Math.ceil(from / MINUTE_MS) * MINUTE_MS);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth() + 1;
  let day = start.getUTCDate();
  let hour = start.getUTCHours();
  let minute = start.getUTCMinutes();
  const lastYear = year + 50;
  const firstHour = expression.hours[0] as number;
  const firstMinute = expression.minutes[0] as number;
  while (year <= lastYear) {
    const nextMonth = nextAllowed(expression.months, month);
    if (nextMonth === undefined) {
      year++;
      month = expression.months[0] as number;
      day = 1;
      hour = firstHour;
      minute = firstMinute;
      continue;
    }
    if (nextMonth !== month) {
      month = nextMonth;
      day = 1;
      hour = firstHour;
      minute = firstMinute;
    }
    if (day > daysInMonth(year, month) || !dayMatches(expression, year, month, day)) {
      day++;
      hour = firstHour;
      minute = firstMinute;
      if (day > daysInMonth(year, month)) {
        day = 1;
        month++;
        if (month > 12) {
          month = 1;
          year++;
        }
      }
      continue;
    }
    const nextHour = nextAllowed(expression.hours, hour);
    if (nextHour === undefined) {
      day++;
      hour = firstHour;
      minute = firstMinute;
      continue; // an overflowing day is carried by the day check above
    }
    if (nextHour !== hour) {
      hour = nextHour;
      minute = firstMinute;
    }
    const nextMinute = nextAllowed(expression.minutes, minute);
    if (nextMinute === undefined) {
      hour++;
      minute = firstMinute;
      if (hour > 23) {
        day++;
        hour = firstHour;
      }
      continue;
    }
    return wallOf(year, month, day, hour, nextMinute);
  }
  throw new Error(`cron ${expression.source}: no match within fifty years`);
}

/**
 * The first run strictly after `after` (an instant, ms), in an IANA zone (default UTC). A string
 * is parsed first (throws `CronSyntaxError`); an unknown zone throws a RangeError.
 */
export function nextCronRun(
  expression: CronExpression | string,
  after: number,
  timeZone: string = UTC,
): number {
  const parsed = typeof expression === 'string' ? parseCron(expression) : expression;
  const zone = timeZone === UTC ? UTC : requireTimeZone(timeZone);
  // Wall minutes resolve to non-decreasing instants, so the answer is the first matching wall
  // minute after wall(after) whose instant lies after `after`. Matches whose instant does not
  // (the first pass of a repeated hour, when `after` is in the second pass; matches inside a gap
  // that already ran at its end) are stepped over.
  let wall = Math.floor(toWall(zone, after) / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  for (;;) {
    wall = nextCronWall(parsed, wall);
    const instant = fromWall(zone, wall);
    if (instant > after) return instant;
    wall += MINUTE_MS;
  }
}
