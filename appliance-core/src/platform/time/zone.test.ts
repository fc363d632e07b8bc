import { describe, expect, it } from 'vitest';
import { UTC, canonicalTimeZone, fromWall, offsetAt, requireTimeZone, toWall } from './zone.js';

const HOUR = 3_600_000;
const wall = (y: number, mo: number, d: number, h: number, mi = 0) => Date.UTC(y, mo - 1, d, h, mi);

describe('time zones', () => {
  it('names zones canonically and refuses what is not an IANA zone', () => {
    expect(canonicalTimeZone('utc')).toBe(UTC);
    expect(canonicalTimeZone('Etc/UTC')).toBe(UTC);
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    for (const bad of ['', ' ', '+02:00', '-0500', 'Mars/Olympus', 'CEST+1'])
      expect(canonicalTimeZone(bad), bad).toBeNull();
    expect(() => requireTimeZone('Mars/Olympus')).toThrow(/unknown time zone "Mars\/Olympus"/);
  });

  it('gives offsets, including old ones with seconds', () => {
    expect(offsetAt('Europe/Berlin', Date.UTC(2026, 0, 15))).toBe(1 * HOUR);
    expect(offsetAt('Europe/Berlin', Date.UTC(2026, 6, 15))).toBe(2 * HOUR);
    expect(offsetAt('America/New_York', Date.UTC(2026, 0, 15))).toBe(-5 * HOUR);
    expect(offsetAt('Asia/Kolkata', Date.UTC(2026, 0, 15))).toBe(5.5 * HOUR);
    // Liberia kept local mean time, -0:44:30, until 1972.
    expect(offsetAt('Africa/Monrovia', Date.UTC(1960, 0, 1))).toBe(-(44 * 60 + 30) * 1000);
    expect(offsetAt(UTC, 123)).toBe(0);
    // Milliseconds do not disturb the offset.
    expect(toWall('Europe/Berlin', Date.UTC(2026, 0, 15, 10, 0, 0, 789))).toBe(
      Date.UTC(2026, 0, 15, 11, 0, 0, 789),
    );
  });

  it('resolves a wall time skipped by spring-forward to the first instant after the gap', () => {
    // Europe/Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
    const transition = Date.UTC(2026, 2, 29, 1);
    expect(fromWall('Europe/Berlin', wall(2026, 3, 29, 2, 0))).toBe(transition);
    expect(fromWall('Europe/Berlin', wall(2026, 3, 29, 2, 30))).toBe(transition);
    expect(fromWall('Europe/Berlin', wall(2026, 3, 29, 2, 59))).toBe(transition);
    expect(fromWall('Europe/Berlin', wall(2026, 3, 29, 3, 0))).toBe(transition);
    expect(fromWall('Europe/Berlin', wall(2026, 3, 29, 1, 59))).toBe(transition - 60_000);
    // America/New_York, 8 March 2026: 02:00 EST becomes 03:00 EDT at 07:00 UTC.
    expect(fromWall('America/New_York', wall(2026, 3, 8, 2, 30))).toBe(Date.UTC(2026, 2, 8, 7));
    // Samoa skipped 30 December 2011 entirely (-10 to +14): the whole day is one gap.
    expect(fromWall('Pacific/Apia', wall(2011, 12, 30, 12))).toBe(Date.UTC(2011, 11, 30, 10));
  });

  it('resolves a wall time repeated by fall-back to its first occurrence', () => {
    // Europe/Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET at 01:00 UTC.
    expect(fromWall('Europe/Berlin', wall(2026, 10, 25, 2, 0))).toBe(Date.UTC(2026, 9, 25, 0));
    expect(fromWall('Europe/Berlin', wall(2026, 10, 25, 2, 30))).toBe(Date.UTC(2026, 9, 25, 0, 30));
    expect(fromWall('Europe/Berlin', wall(2026, 10, 25, 3, 0))).toBe(Date.UTC(2026, 9, 25, 2));
    // America/New_York, 1 November 2026: 01:00–01:59 twice (EDT, then EST).
    expect(fromWall('America/New_York', wall(2026, 11, 1, 1, 30))).toBe(
      Date.UTC(2026, 10, 1, 5, 30),
    );
  });

  it('round-trips every instant of a transition day that is a first occurrence', () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']) {
      for (const day of [Date.UTC(2026, 2, 29), Date.UTC(2026, 9, 25), Date.UTC(2026, 3, 5)]) {
        for (let t = day - 12 * HOUR; t < day + 36 * HOUR; t += 15 * 60_000) {
          const w = toWall(zone, t);
          const earlier = [30, 60].some((m) => toWall(zone, t - m * 60_000) === w);
          if (!earlier) expect(fromWall(zone, w), `${zone} ${new Date(t).toISOString()}`).toBe(t);
        }
      }
    }
  });
});
