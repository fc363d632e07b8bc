/**
 * The one parser for date-times the API accepts (spec part 2: `start_time`/`end_time` of
 * `GET /api/device/{device}`; part 3: `startTime`/`endTime` of the log, flow and summary lists,
 * the `manual` ISO 8601 timestamp of `setTimeSettings`; the spec writes its own times as
 * `YYYY-MM-DD HH:MM:SS` and ISO 8601, part 1). Exactly these forms are accepted:
 *
 *   2026-11-21                          a date: its midnight
 *   2026-11-21 10:20                    `YYYY-MM-DD HH:MM`, also with `T` (what an HTML
 *   2026-11-21T10:20                      datetime-local field sends)
 *   2026-11-21 10:20:30                 `YYYY-MM-DD HH:MM:SS`, also with `T`
 *   2026-11-21T10:20:30.5               a fraction of 1 to 9 digits (kept to the millisecond,
 *                                         truncated)
 *   ...Z  ...+02:00  ...-0230  ...+05   after a time: `Z` or an offset `±HH:MM`, `±HHMM`, `±HH`
 *                                         (hours 00–23, minutes 00–59)
 *
 * `T` and `Z` may be lower case (RFC 3339); surrounding blanks are ignored. A date-time without an
 * offset (and a date) is UTC, unless the caller names a time zone for wall times: then the wall
 * time resolves as schedules do (a time skipped by a DST change means the first instant after the
 * gap, a repeated one its first occurrence; see `zone.ts`).
 *
 * Refused (null): impossible dates (2026-02-30) and times (24:00, 23:60, leap second :60), a date
 * with an offset but no time, Unix timestamps, week and ordinal dates, the basic format without
 * separators, names of days and months, relative words. A `+` sent unencoded in a query string
 * arrives as a blank, so `10:20:30 02:00` is refused rather than read as UTC.
 */
import { UTC, fromWall, requireTimeZone } from './zone.js';

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

export interface ParseDateTimeOptions {
  /** IANA zone for date-times without an offset (default UTC). */
  timeZone?: string;
}

/** UTC milliseconds of a date-time in one of the forms above, or null. */
export function parseDateTime(text: string, options: ParseDateTimeOptions = {}): number | null {
  if (typeof text !== 'string') return null;
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const wall = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, minute, second, Number(frac.slice(0, 3).padEnd(3, '0')));
  const wallMs = wall.getTime();
  if (zone === undefined) {
    const timeZone = options.timeZone === undefined ? UTC : requireTimeZone(options.timeZone);
    return fromWall(timeZone, wallMs);
  }
  if (zone === 'Z' || zone === 'z') return wallMs;
  const digits = zone.slice(1).replace(':', '');
  const offsetHours = Number(digits.slice(0, 2));
  const offsetMinutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  const sign = zone.startsWith('-') ? -1 : 1;
  return wallMs - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

/** Days in a month (1–12) of the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
