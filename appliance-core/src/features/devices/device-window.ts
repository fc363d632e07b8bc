/**
 * The time window of GET /api/device/{device}: `hours` back from now (default 8), or an explicit
 * `start_time` plus `end_time`. Date-times without an offset are UTC.
 */
import { HOUR_MS } from '../../platform/time/time.js';
import type { DeviceWindow } from './devices.service.js';

export const DEFAULT_DEVICE_HOURS = 8;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** UTC milliseconds of a date-time in the spec's formats (`YYYY-MM-DD HH:MM:SS`, ISO 8601), or null. */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '0', zone] = m;
  const ms = Number(`0.${frac}`) * 1000;
  const base = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Math.round(ms),
  );
  const check = new Date(base);
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    return null;
  }
  if (!zone || zone.toUpperCase() === 'Z') return base;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  return base - sign * offset;
}

export function deviceWindow(
  query: {
    hours?: number | undefined;
    start_time?: string | undefined;
    end_time?: string | undefined;
  },
  now: number,
): { window: DeviceWindow } | { field: string; message: string } {
  if (query.start_time !== undefined || query.end_time !== undefined) {
    if (query.start_time === undefined)
      return {
        field: 'start_time',
        message: 'The start time field is required when end time is present.',
      };
    if (query.end_time === undefined)
      return {
        field: 'end_time',
        message: 'The end time field is required when start time is present.',
      };
    const start = parseDateTime(query.start_time);
    if (start === null)
      return { field: 'start_time', message: 'The start time is not a valid date-time.' };
    const end = parseDateTime(query.end_time);
    if (end === null)
      return { field: 'end_time', message: 'The end time is not a valid date-time.' };
    if (start >= end)
      return { field: 'start_time', message: 'The start time must be before the end time.' };
    return { window: { start, end } };
  }
  const hours = query.hours ?? DEFAULT_DEVICE_HOURS;
  return { window: { start: now - hours * HOUR_MS, end: now } };
}
