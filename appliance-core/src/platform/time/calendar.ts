/**
 * Calendar recurrences of maintenance windows (spec part 3 > Alerting > Maintenance windows): when
 * a window starts next, and whether an instant falls inside one.
 *
 * A window starts at `hour`:00 on the wall clock of a time zone (the appliance's configured zone;
 * UTC by default) and lasts `durationMinutes` of elapsed time: start <= t < start + duration. Its
 * recurrences (`recurrence_unit`):
 * - `day`: every day;
 * - `week`: every `weekday` (0 = Sunday … 6 = Saturday; 7 is Sunday too, as in cron);
 * - `month`: day `day` (1–31) of every month; a day the month lacks means the month's last day
 *   (31 → 30 April, 28 or 29 February; 29 and 30 likewise in February), so a window never skips a
 *   month;
 * - `dawom` (day of week of month): the `nth` (1–4, or `'last'`) `weekday` of every month
 *   (the second Tuesday, the last Sunday). A fifth occurrence is asked for as `'last'`.
 * DST: a start hour that a change skips starts at the first instant after the gap; a start hour
 * that a change repeats starts at its first occurrence (see `zone.ts`). A window that spans a change
 * still lasts its duration in real minutes, so its wall-clock end moves by the change.
 *
 * Windows longer than their recurrence overlap one another; an instant is inside as long as the
 * latest start at or before it is less than a duration ago (an earlier start, with the same
 * duration, ends earlier still).
 *
 * `recurrenceFromSchedule` maps the spec's write shape (`recurrence_unit`, `schedule_hour`,
 * `schedule_week`, `schedule_day`, `schedule_month`, `maintenance_duration`) onto this model:
 * `schedule_week` is the weekday, `schedule_day` the day of the month, and `schedule_month`, for
 * `dawom`, which occurrence in the month (1–4, 5 = the last).
 */
import { daysInMonth } from './datetime.js';
import { UTC, fromWall, requireTimeZone, toWall } from './zone.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Candidate starts looked at before giving up (a guard: a week holds one, a month one). */
const MAX_CANDIDATES = 64;

export type Weekday = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;
export type Nth = 1 | 2 | 3 | 4 | 'last';

export type Recurrence =
  | { unit: 'day'; hour: number }
  | { unit: 'week'; hour: number; weekday: Weekday }
  | { unit: 'month'; hour: number; day: number }
  | { unit: 'dawom'; hour: number; weekday: Weekday; nth: Nth };

export interface MaintenanceSchedule {
  recurrence: Recurrence;
  /** Length of each window in minutes (at least 1). */
  durationMinutes: number;
}

export interface WindowSpan {
  start: number;
  end: number;
}

function checkSchedule(schedule: MaintenanceSchedule): void {
  const { recurrence: r, durationMinutes } = schedule;
  const whole = (v: unknown, lo: number, hi: number) =>
    Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;
  if (!whole(r.hour, 0, 23)) throw new RangeError(`hour ${r.hour} is not 0-23`);
  if (!(Number.isInteger(durationMinutes) && durationMinutes >= 1))
    throw new RangeError(`duration ${durationMinutes} is not a whole number of minutes >= 1`);
  if ((r.unit === 'week' || r.unit === 'dawom') && !whole(r.weekday, 0, 7))
    throw new RangeError(`weekday ${r.weekday} is not 0-7`);
  if (r.unit === 'month' && !whole(r.day, 1, 31)) throw new RangeError(`day ${r.day} is not 1-31`);
  if (r.unit === 'dawom' && r.nth !== 'last' && !whole(r.nth, 1, 4))
    throw new RangeError(`nth ${String(r.nth)} is not 1-4 or 'last'`);
}

/** Wall number of a date's midnight, and its fields. */
function dateOf(wall: number): { year: number; month: number; day: number } {
  const d = new Date(wall);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function wallOf(year: number, month: number, day: number, hour: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, 0, 0, 0);
  return d.getTime();
}

/** The day of the month a monthly recurrence starts on in a given month. */
export function recurrenceDayInMonth(
  recurrence: Extract<Recurrence, { unit: 'month' | 'dawom' }>,
  year: number,
  month: number,
): number {
  const length = daysInMonth(year, month);
  if (recurrence.unit === 'month') return Math.min(recurrence.day, length);
  const weekday = recurrence.weekday % 7;
  if (recurrence.nth === 'last') {
    const lastWeekday = new Date(wallOf(year, month, length, 0)).getUTCDay();
    return length - ((lastWeekday - weekday + 7) % 7);
  }
  const firstWeekday = new Date(wallOf(year, month, 1, 0)).getUTCDay();
  return 1 + ((weekday - firstWeekday + 7) % 7) + (recurrence.nth - 1) * 7;
}

/**
 * Start wall times, ascending (`direction` 1) or descending (-1), from the period (day or month)
 * that holds `wall` on, without end.
 */
function* startWalls(recurrence: Recurrence, wall: number, direction: 1 | -1): Generator<number> {
  const { year, month, day } = dateOf(wall);
  if (recurrence.unit === 'day' || recurrence.unit === 'week') {
    for (let k = 0; k < 366 * 2; k++) {
      const date = wallOf(year, month, day, 0) + direction * k * DAY_MS;
      if (recurrence.unit === 'week' && new Date(date).getUTCDay() !== recurrence.weekday % 7)
        continue;
      yield date + recurrence.hour * 3_600_000;
    }
    return;
  }
  for (let k = 0; ; k++) {
    const index = year * 12 + (month - 1) + direction * k;
    const y = Math.floor(index / 12);
    const m = (index % 12) + 1;
    yield wallOf(y, m, recurrenceDayInMonth(recurrence, y, m), recurrence.hour);
  }
}

/** The first window start strictly after `after`, in an IANA zone (default UTC). */
export function nextMaintenanceStart(
  schedule: MaintenanceSchedule,
  after: number,
  timeZone: string = UTC,
): number {
  checkSchedule(schedule);
  const zone = requireTimeZone(timeZone);
  // Start one day early: a start resolved across a DST gap may lie later than its wall time.
  let tries = 0;
  for (const wall of startWalls(schedule.recurrence, toWall(zone, after) - DAY_MS, 1)) {
    const start = fromWall(zone, wall);
    if (start > after) return start;
    if (++tries > MAX_CANDIDATES) break;
  }
  throw new Error('no maintenance start found (a bug: every recurrence starts within a month)');
}

/** The latest window start at or before `at`. */
export function previousMaintenanceStart(
  schedule: MaintenanceSchedule,
  at: number,
  timeZone: string = UTC,
): number {
  checkSchedule(schedule);
  const zone = requireTimeZone(timeZone);
  let tries = 0;
  for (const wall of startWalls(schedule.recurrence, toWall(zone, at) + DAY_MS, -1)) {
    const start = fromWall(zone, wall);
    if (start <= at) return start;
    if (++tries > MAX_CANDIDATES) break;
  }
  throw new Error('no maintenance start found (a bug: every recurrence starts within a month)');
}

/** The window `at` falls in (start <= at < end), or null. */
export function maintenanceWindowAt(
  schedule: MaintenanceSchedule,
  at: number,
  timeZone: string = UTC,
): WindowSpan | null {
  const start = previousMaintenanceStart(schedule, at, timeZone);
  const end = start + schedule.durationMinutes * MINUTE_MS;
  return at < end ? { start, end } : null;
}

export function isInMaintenance(
  schedule: MaintenanceSchedule,
  at: number,
  timeZone: string = UTC,
): boolean {
  return maintenanceWindowAt(schedule, at, timeZone) !== null;
}

// --- the spec's write shape --------------------------------------------------------------------

export interface MaintenanceScheduleFields {
  recurrence_unit?: unknown;
  maintenance_duration?: unknown;
  schedule_hour?: unknown;
  schedule_week?: unknown;
  schedule_day?: unknown;
  schedule_month?: unknown;
}

/** Integers or their decimal strings (form posts), else NaN. */
function integer(value: unknown): number {
  if (typeof value === 'number') return Number.isInteger(value) ? value : NaN;
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return NaN;
}

/**
 * The schedule a write-shape body describes, or the first field at fault with a message. The
 * field a unit does not use is ignored (a `week` window may carry a stale `schedule_day`).
 */
export function recurrenceFromSchedule(
  fields: MaintenanceScheduleFields,
): { schedule: MaintenanceSchedule } | { field: keyof MaintenanceScheduleFields; message: string } {
  const unit = fields.recurrence_unit;
  if (unit !== 'day' && unit !== 'week' && unit !== 'month' && unit !== 'dawom')
    return {
      field: 'recurrence_unit',
      message: 'The recurrence unit must be one of day, week, month, dawom.',
    };
  const duration = integer(fields.maintenance_duration);
  if (!(duration >= 1))
    return {
      field: 'maintenance_duration',
      message: 'The maintenance duration must be a whole number of minutes of at least 1.',
    };
  const hour = integer(fields.schedule_hour);
  if (!(hour >= 0 && hour <= 23))
    return { field: 'schedule_hour', message: 'The schedule hour must be a whole number 0 to 23.' };
  if (unit === 'day')
    return { schedule: { recurrence: { unit, hour }, durationMinutes: duration } };
  if (unit === 'month') {
    const day = integer(fields.schedule_day);
    if (!(day >= 1 && day <= 31))
      return {
        field: 'schedule_day',
        message: 'The schedule day must be a whole number 1 to 31 for a monthly window.',
      };
    return { schedule: { recurrence: { unit, hour, day }, durationMinutes: duration } };
  }
  const weekday = integer(fields.schedule_week);
  if (!(weekday >= 0 && weekday <= 7))
    return {
      field: 'schedule_week',
      message: `The schedule week must be a day of the week 0 to 7 (0 and 7 are Sunday) for a ${unit === 'week' ? 'weekly' : 'dawom'} window.`,
    };
  if (unit === 'week')
    return {
      schedule: {
        recurrence: { unit, hour, weekday: weekday as Weekday },
        durationMinutes: duration,
      },
    };
  const nth = integer(fields.schedule_month);
  if (!(nth >= 1 && nth <= 5))
    return {
      field: 'schedule_month',
      message:
        'The schedule month must be the occurrence in the month 1 to 4, or 5 for the last, for a dawom window.',
    };
  return {
    schedule: {
      recurrence: {
        unit,
        hour,
        weekday: weekday as Weekday,
        nth: nth === 5 ? 'last' : (nth as 1 | 2 | 3 | 4),
      },
      durationMinutes: duration,
    },
  };
}
