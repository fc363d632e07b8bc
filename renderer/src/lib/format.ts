/** Formatting of numbers and times as the console shows them (text only, never markup). */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  if (value < 0) return 'down';
  if (value < 10) return `${value.toFixed(2)} ms`;
  if (value < 100) return `${value.toFixed(1)} ms`;
  return `${Math.round(value)} ms`;
}

export function formatPercent(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return `${value.toFixed(digits)}%`;
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

export function formatBytes(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  let v = Math.abs(value);
  let unit = 0;
  while (v >= 1024 && unit < UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  return `${value < 0 ? '-' : ''}${v < 10 && unit > 0 ? v.toFixed(1) : Math.round(v)} ${UNITS[unit]}`;
}

export function formatBits(bitsPerSecond: number | null | undefined): string {
  if (bitsPerSecond === null || bitsPerSecond === undefined || Number.isNaN(bitsPerSecond))
    return '–';
  const units = ['bit/s', 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s'];
  let v = bitsPerSecond;
  let unit = 0;
  while (v >= 1000 && unit < units.length - 1) {
    v /= 1000;
    unit++;
  }
  return `${v < 10 && unit > 0 ? v.toFixed(2) : v.toFixed(unit > 0 ? 1 : 0)} ${units[unit]}`;
}

/** Parses the spec's time formats (ISO 8601, `YYYY-MM-DD HH:MM:SS` UTC, Unix seconds or ms). */
export function parseTime(value: string | number | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return value < 1e12 ? value * 1000 : value;
  if (/^\d+$/.test(value)) return parseTime(Number(value));
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(value)
    ? `${value.replace(' ', 'T')}Z`
    : value;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
  timeZoneName: 'short',
});

/** Absolute time with its zone (every timestamp says which zone it is in). */
export function formatTime(value: string | number | null | undefined): string {
  const ms = parseTime(value);
  return ms === null ? '–' : dateTime.format(ms);
}

/** "3 min ago" for recent times; the absolute time belongs in a title attribute. */
export function formatAgo(value: string | number | null | undefined, now = Date.now()): string {
  const ms = parseTime(value);
  if (ms === null) return '–';
  const seconds = Math.round((now - ms) / 1000);
  if (seconds < 0) return `in ${formatDuration(-seconds)}`;
  if (seconds < 45) return 'just now';
  return `${formatDuration(seconds)} ago`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
