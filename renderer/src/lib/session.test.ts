// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { usePrefs, windowKey, windowQuery } from './prefs.js';
import { browserId, useSession } from './session.js';

beforeEach(() => sessionStorage.clear());

describe('session store', () => {
  it('keeps the token in memory and sessionStorage, and forgets it on sign-out', () => {
    useSession.getState().signIn('t-1', { id: 1, email: 'a@x', name: 'A' });
    expect(useSession.getState().token).toBe('t-1');
    expect(JSON.parse(sessionStorage.getItem('console.session')!)).toMatchObject({ token: 't-1' });
    useSession.getState().signOut();
    expect(useSession.getState().token).toBeNull();
    expect(sessionStorage.getItem('console.session')).toBeNull();
  });

  it('browser_id is spa:<uuid per tab>:<fp>, stable within the tab, new in another tab', () => {
    const first = browserId();
    expect(first).toMatch(/^spa:[0-9a-f-]{36}:[0-9a-f]{8}$/);
    expect(browserId()).toBe(first);
    sessionStorage.clear(); // another tab has its own sessionStorage
    const other = browserId();
    expect(other).not.toBe(first);
    expect(other.split(':')[2]).toBe(first.split(':')[2]);
  });
});

describe('prefs store', () => {
  it('shares one time window and turns it into the API query', () => {
    usePrefs.getState().setWindow({ kind: 'relative', hours: 24 });
    expect(windowKey(usePrefs.getState().window)).toBe('24h');
    expect(windowQuery(usePrefs.getState().window)).toEqual({ hours: 24 });
    usePrefs
      .getState()
      .setWindow({ kind: 'custom', start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' });
    expect(windowQuery(usePrefs.getState().window)).toEqual({
      start_time: '2026-01-01T00:00:00Z',
      end_time: '2026-01-02T00:00:00Z',
    });
  });
});
