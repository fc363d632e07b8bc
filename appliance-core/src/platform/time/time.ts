/**
 * The one place that turns stored times (UTC integer milliseconds) into the spec's formats.
 */

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DD HH:MM:SS` in UTC (token list rows). */
export function toSqlDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** ISO 8601 with an explicit offset, `2026-11-21T19:30:00+00:00` (token creation response). */
export function toIsoWithOffset(ms: number): string {
  return `${toSqlDateTime(ms).replace(' ', 'T')}+00:00`;
}

/** ISO 8601 in UTC with milliseconds (`/api/me`). */
export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
