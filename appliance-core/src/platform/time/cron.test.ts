import { describe, expect, it } from 'vitest';
import { CronSyntaxError, nextCronRun, parseCron, tryParseCron } from './cron.js';

const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

/** The next `count` runs after `from` (an ISO instant), as ISO strings. */
function runs(expression: string, from: string, count: number, timeZone?: string): string[] {
  const out: string[] = [];
  let t = Date.parse(from);
  for (let i = 0; i < count; i++) {
    t = nextCronRun(expression, t, timeZone);
    out.push(iso(t));
  }
  return out;
}

describe('parseCron', () => {
  it('reads lists, ranges, steps, names and both Sundays', () => {
    const e = parseCron('  0,30 9-17/4 1-31/10 JAN-mar,Dec sun,Sat,7  ');
    expect(e.source).toBe('0,30 9-17/4 1-31/10 JAN-mar,Dec sun,Sat,7');
    expect(e.minutes).toEqual([0, 30]);
    expect(e.hours).toEqual([9, 13, 17]);
    expect(e.daysOfMonth).toEqual([1, 11, 21, 31]);
    expect(e.months).toEqual([1, 2, 3, 12]);
    expect(e.daysOfWeek).toEqual([0, 6]);
    expect(parseCron('* * * * 7').daysOfWeek).toEqual([0]);
    expect(parseCron('* * * * */2').daysOfWeek).toEqual([0, 2, 4, 6]);
    expect(parseCron('* * * * 5-7').daysOfWeek).toEqual([0, 5, 6]);
    expect(parseCron('*/25 * * * *').minutes).toEqual([0, 25, 50]);
    expect(parseCron('*/100 * * * *').minutes).toEqual([0]);
    expect(parseCron('0 0 29 2 *').daysOfMonth).toEqual([29]);
  });

  it('marks a day field as unrestricted exactly when it starts with *', () => {
    const flags = (text: string) => {
      const e = parseCron(text);
      return [e.dayOfMonthStar, e.dayOfWeekStar];
    };
    expect(flags('0 0 * * *')).toEqual([true, true]);
    expect(flags('0 0 */2 * 1')).toEqual([true, false]);
    expect(flags('0 0 1-31 * 0-7')).toEqual([false, false]);
    expect(flags('0 0 *,5 * 1,*')).toEqual([true, false]);
  });

  it('refuses what cron refuses, naming the field', () => {
    const cases: [string, string | null, RegExp][] = [
      ['* * * *', null, /expected 5 fields .* got 4/],
      ['* * * * * *', null, /got 6/],
      ['', null, /got 0/],
      ['@daily', null, /macros such as @daily/],
      ['60 * * * *', 'minute', /60 is out of range \(0-59\)/],
      ['* 24 * * *', 'hour', /24 is out of range \(0-23\)/],
      ['* * 0 * *', 'day-of-month', /0 is out of range \(1-31\)/],
      ['* * 32 * *', 'day-of-month', /32 is out of range/],
      ['* * * 13 *', 'month', /13 is out of range \(1-12\)/],
      ['* * * 0 *', 'month', /0 is out of range/],
      ['* * * * 8', 'day-of-week', /8 is out of range \(0-7\)/],
      ['1,,2 * * * *', 'minute', /empty list item/],
      ['1, * * * *', 'minute', /empty list item/],
      ['*/0 * * * *', 'minute', /step of 0/],
      ['* 1-5/0 * * *', 'hour', /step of 0/],
      ['5/15 * * * *', 'minute', /step needs \* or a range .*write 5-59\/15/],
      ['* */ * * *', 'hour', /step "" is not a whole number/],
      ['* */x * * *', 'hour', /step "x" is not a whole number/],
      ['5-1 * * * *', 'minute', /range 5-1 runs backwards/],
      ['* * * * fri-mon', 'day-of-week', /runs backwards/],
      ['* * * * 1-', 'day-of-week', /both sides/],
      ['* * * foo *', 'month', /"foo" is neither a number nor a name \(jan-dec\)/],
      ['* * * * monday', 'day-of-week', /"monday" is neither/],
      ['* * mon * *', 'day-of-month', /"mon" is not a number/],
      ['* * * * sun/2', 'day-of-week', /step needs/],
      ['? * * * *', 'minute', /"\?" is not a number/],
      ['* * L * *', 'day-of-month', /"L" is not a number/],
      ['* * * * 1#2', 'day-of-week', /"1#2" is neither/],
      ['*5 * * * *', 'minute', /"\*5" is not a number/],
      ['-1 * * * *', 'minute', /both sides/],
      ['1.5 * * * *', 'minute', /"1.5" is not a number/],
      ['0 0 30 2 *', 'day-of-month', /never run/],
      ['0 0 31 4,6,9,11 *', 'day-of-month', /never run/],
    ];
    for (const [text, field, message] of cases) {
      const result = tryParseCron(text);
      expect(result.ok, text).toBe(false);
      if (result.ok) continue;
      expect(result.error, text).toBeInstanceOf(CronSyntaxError);
      expect(result.error.field, text).toBe(field);
      expect(result.error.message, text).toMatch(message);
      if (field !== null) expect(result.error.message.startsWith(`${field}: `), text).toBe(true);
    }
    // Impossible dates are fine when another rule can fire the job.
    expect(tryParseCron('0 0 30 2 1').ok).toBe(true);
    expect(tryParseCron('0 0 30,31 2,4 *').ok).toBe(true);
  });
});

describe('nextCronRun in UTC', () => {
  it('steps to the next matching minute, strictly after the instant', () => {
    expect(runs('*/15 * * * *', '2026-01-01T10:07:30Z', 3)).toEqual([
      '2026-01-01T10:15:00Z',
      '2026-01-01T10:30:00Z',
      '2026-01-01T10:45:00Z',
    ]);
    expect(runs('* * * * *', '2026-01-01T10:15:00Z', 1)).toEqual(['2026-01-01T10:16:00Z']);
    expect(runs('0 0 1 1 *', '2026-12-31T23:59:59.999Z', 2)).toEqual([
      '2027-01-01T00:00:00Z',
      '2028-01-01T00:00:00Z',
    ]);
  });

  it('honours month ends and leap years', () => {
    expect(runs('0 12 31 * *', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-31T12:00:00Z',
      '2026-03-31T12:00:00Z',
      '2026-05-31T12:00:00Z',
      '2026-07-31T12:00:00Z',
    ]);
    expect(runs('0 0 29 feb *', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2028-02-29T00:00:00Z',
      '2032-02-29T00:00:00Z',
      '2036-02-29T00:00:00Z',
    ]);
    // 2100 is not a leap year.
    expect(runs('0 0 29 2 *', '2096-03-01T00:00:00Z', 1)).toEqual(['2104-02-29T00:00:00Z']);
  });

  it('applies the Vixie day rule: either day field when both are restricted', () => {
    // 1 January 2026 is a Thursday.
    expect(runs('0 12 13 * fri', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-02T12:00:00Z',
      '2026-01-09T12:00:00Z',
      '2026-01-13T12:00:00Z',
      '2026-01-16T12:00:00Z',
    ]);
    // A day-of-month starting with * is unrestricted: both must match (odd days that are Mondays).
    expect(runs('0 12 */2 * mon', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-05T12:00:00Z',
      '2026-01-19T12:00:00Z',
      '2026-02-09T12:00:00Z',
    ]);
    // The same days written as a range are restricted: odd days or Mondays.
    expect(runs('0 12 1-31/2 * mon', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-01T12:00:00Z',
      '2026-01-03T12:00:00Z',
      '2026-01-05T12:00:00Z',
      '2026-01-07T12:00:00Z',
    ]);
    // Sunday as 0 or 7.
    expect(runs('0 0 * * 7', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-04T00:00:00Z']);
    expect(runs('0 0 * * 0', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-04T00:00:00Z']);
  });

  it('takes an expression already parsed, and refuses an unknown zone', () => {
    const e = parseCron('0 * * * *');
    expect(iso(nextCronRun(e, Date.parse('2026-01-01T00:30:00Z')))).toBe('2026-01-01T01:00:00Z');
    expect(() => nextCronRun(e, 0, 'Mars/Olympus')).toThrow(RangeError);
    expect(() => nextCronRun('61 * * * *', 0)).toThrow(CronSyntaxError);
  });
});

describe('nextCronRun across DST changes', () => {
  it('Europe/Berlin spring-forward: a skipped time runs once, at the first instant after the gap', () => {
    // 29 March 2026, 02:00 CET → 03:00 CEST (01:00 UTC).
    expect(runs('30 2 * * *', '2026-03-27T12:00:00Z', 4, 'Europe/Berlin')).toEqual([
      '2026-03-28T01:30:00Z', // 02:30 CET
      '2026-03-29T01:00:00Z', // 03:00 CEST: 02:30 does not exist that night
      '2026-03-30T00:30:00Z', // 02:30 CEST
      '2026-03-31T00:30:00Z',
    ]);
    // Four matching times inside the gap, and 03:00 itself: one run.
    expect(runs('*/15 2,3 * * *', '2026-03-28T23:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-03-29T01:00:00Z', // 03:00 CEST stands for 02:00, 02:15, 02:30, 02:45 and 03:00
      '2026-03-29T01:15:00Z', // 03:15 CEST
      '2026-03-29T01:30:00Z',
    ]);
    // Hourly jobs lose nothing but the hour that does not exist.
    expect(runs('0 * * * *', '2026-03-28T23:30:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-03-29T00:00:00Z', // 01:00 CET
      '2026-03-29T01:00:00Z', // 03:00 CEST (02:00 skipped, merged)
      '2026-03-29T02:00:00Z', // 04:00 CEST
    ]);
  });

  it('Europe/Berlin fall-back: a repeated time runs once, at its first occurrence', () => {
    // 25 October 2026, 03:00 CEST → 02:00 CET (01:00 UTC): 02:00–02:59 happens twice.
    expect(runs('30 2 * * *', '2026-10-24T12:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-10-25T00:30:00Z', // 02:30 CEST, not 02:30 CET
      '2026-10-26T01:30:00Z', // 02:30 CET
      '2026-10-27T01:30:00Z',
    ]);
    expect(runs('*/30 * * * *', '2026-10-24T23:50:00Z', 5, 'Europe/Berlin')).toEqual([
      '2026-10-25T00:00:00Z', // 02:00 CEST
      '2026-10-25T00:30:00Z', // 02:30 CEST; 02:00 and 02:30 CET do not run again
      '2026-10-25T02:00:00Z', // 03:00 CET
      '2026-10-25T02:30:00Z',
      '2026-10-25T03:00:00Z',
    ]);
    // Asked from inside the second pass, the next run is the first wall time not yet run.
    expect(runs('*/30 * * * *', '2026-10-25T01:10:00Z', 1, 'Europe/Berlin')).toEqual([
      '2026-10-25T02:00:00Z',
    ]);
  });

  it('America/New_York: gap at 02:00 in March, 01:00–01:59 twice in November', () => {
    expect(runs('30 2 * * *', '2026-03-07T12:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-03-08T07:00:00Z', // 03:00 EDT
      '2026-03-09T06:30:00Z', // 02:30 EDT
      '2026-03-10T06:30:00Z',
    ]);
    expect(runs('30 1 * * *', '2026-10-31T12:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-11-01T05:30:00Z', // 01:30 EDT, not again at 01:30 EST (06:30 UTC)
      '2026-11-02T06:30:00Z', // 01:30 EST
      '2026-11-03T06:30:00Z',
    ]);
    expect(runs('0 0 * * *', '2026-07-01T12:00:00Z', 1, 'America/New_York')).toEqual([
      '2026-07-02T04:00:00Z',
    ]);
  });
});
