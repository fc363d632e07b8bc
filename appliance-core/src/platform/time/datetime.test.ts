import { describe, expect, it } from 'vitest';
import { daysInMonth, isLeapYear, parseDateTime } from './datetime.js';

describe('parseDateTime', () => {
  it('parses the spec’s date-times (the cases of devices.service.test.ts)', () => {
    expect(parseDateTime('2026-11-21 10:20:30')).toBe(Date.UTC(2026, 10, 21, 10, 20, 30));
    expect(parseDateTime('2026-11-21T10:20:30.5Z')).toBe(Date.UTC(2026, 10, 21, 10, 20, 30, 500));
    expect(parseDateTime('2026-11-21T10:20:30-02:30')).toBe(Date.UTC(2026, 10, 21, 12, 50, 30));
    expect(parseDateTime('2026-11-21')).toBe(Date.UTC(2026, 10, 21));
    for (const bad of ['2026-02-30', '2026-11-21 24:00:00', 'yesterday', '1700000000'])
      expect(parseDateTime(bad), bad).toBeNull();
  });

  it('accepts every form listed in the module header', () => {
    const at = (h: number, mi: number, s = 0, ms = 0) => Date.UTC(2026, 10, 21, h, mi, s, ms);
    const cases: [string, number][] = [
      ['2026-11-21', at(0, 0)],
      ['2026-11-21 10:20', at(10, 20)],
      ['2026-11-21T10:20', at(10, 20)],
      ['2026-11-21 10:20:30', at(10, 20, 30)],
      ['2026-11-21T10:20:30', at(10, 20, 30)],
      ['2026-11-21t10:20:30z', at(10, 20, 30)],
      ['2026-11-21T10:20:30.123Z', at(10, 20, 30, 123)],
      ['2026-11-21T10:20:30.123456789Z', at(10, 20, 30, 123)],
      ['2026-11-21T10:20:30.9999Z', at(10, 20, 30, 999)],
      ['2026-11-21T10:20Z', at(10, 20)],
      ['2026-11-21T10:20:30+02:00', at(8, 20, 30)],
      ['2026-11-21T10:20:30+0200', at(8, 20, 30)],
      ['2026-11-21T10:20:30+02', at(8, 20, 30)],
      ['2026-11-21 10:20:30-05:30', at(15, 50, 30)],
      ['2026-11-21T00:30:00+01:00', Date.UTC(2026, 10, 20, 23, 30)],
      ['  2026-11-21 10:20:30  ', at(10, 20, 30)],
      ['2024-02-29', Date.UTC(2024, 1, 29)],
      ['2000-02-29', Date.UTC(2000, 1, 29)],
    ];
    for (const [text, expected] of cases) expect(parseDateTime(text), text).toBe(expected);
    // Years below 100 are not read as 19xx.
    expect(new Date(parseDateTime('0050-01-01') as number).getUTCFullYear()).toBe(50);
  });

  it('refuses impossible values and every form not listed', () => {
    for (const bad of [
      '',
      '2026-13-01',
      '2026-00-10',
      '2026-11-00',
      '2026-11-31',
      '2025-02-29',
      '1900-02-29',
      '2026-11-21 23:60',
      '2026-11-21 23:59:60',
      '2026-11-21T10:20:30+24:00',
      '2026-11-21T10:20:30+02:60',
      '2026-11-21Z',
      '2026-11-21+02:00',
      '2026-11-21T10',
      '2026-11-21T10:20:30.',
      '2026-11-21T10:20:30.1234567890Z',
      '2026-11-21T10:20:30 02:00',
      '20261121T102030Z',
      '2026-W47-6',
      '2026-325',
      '26-11-21',
      '2026-11-21T10:20:30GMT',
      'Sat, 21 Nov 2026 10:20:30 GMT',
      'now',
      '1700000000000',
    ])
      expect(parseDateTime(bad), bad).toBeNull();
  });

  it('reads wall times in a named zone, with the DST rule of schedules', () => {
    const berlin = { timeZone: 'Europe/Berlin' };
    expect(parseDateTime('2026-07-01 12:00', berlin)).toBe(Date.UTC(2026, 6, 1, 10));
    expect(parseDateTime('2026-01-01', berlin)).toBe(Date.UTC(2025, 11, 31, 23));
    // An offset wins over the zone.
    expect(parseDateTime('2026-07-01T12:00Z', berlin)).toBe(Date.UTC(2026, 6, 1, 12));
    // 02:30 does not exist on 29 March 2026: the first instant after the gap (03:00 CEST).
    expect(parseDateTime('2026-03-29 02:30', berlin)).toBe(Date.UTC(2026, 2, 29, 1));
    // 02:30 happens twice on 25 October 2026: the first one (CEST).
    expect(parseDateTime('2026-10-25 02:30', berlin)).toBe(Date.UTC(2026, 9, 25, 0, 30));
    expect(() => parseDateTime('2026-01-01', { timeZone: 'Mars/Olympus' })).toThrow(RangeError);
  });
});

describe('calendar helpers', () => {
  it('knows month lengths and leap years', () => {
    expect([2024, 2025, 1900, 2000, 2100].map(isLeapYear)).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => daysInMonth(2026, m))).toEqual([
      31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
    ]);
    expect(daysInMonth(2028, 2)).toBe(29);
  });
});
