/**
 * The time window of GET /api/device/{device}: `hours` back from now (default 8), or an explicit
 * `start_time` plus `end_time`. Date-times without an offset are UTC.
 */
import { parseDateTime } from '../../platform/time/datetime.js';
import { HOUR_MS } from '../../platform/time/time.js';
import type { DeviceWindow } from './devices.service.js';

export const DEFAULT_DEVICE_HOURS = 8;

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
