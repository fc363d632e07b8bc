import { describe, expect, it } from 'vitest';
import { isActivePage, PAGES } from './navigation.js';

describe('navigation', () => {
  const active = (pathname: string) =>
    PAGES.filter((p) => isActivePage(p.path, pathname, PAGES)).map((p) => p.path);

  it('marks only the deepest matching page active', () => {
    expect(active('/alerts')).toEqual(['/alerts']);
    expect(active('/alerts/history')).toEqual(['/alerts/history']);
    expect(active('/devices/12')).toEqual(['/devices']);
    expect(active('/logs/ids/7')).toEqual(['/logs/ids']);
    expect(active('/')).toEqual(['/']);
  });

  it('lists the alerting pages behind alerts and the mail relay behind system', () => {
    const alerting = PAGES.filter((p) => p.group === 'Alerting');
    expect(alerting.map((p) => p.path)).toEqual([
      '/alerts',
      '/alerts/history',
      '/alerts/outlets',
      '/alerts/templates',
      '/alerts/windows',
      '/alerts/legacy',
    ]);
    expect(alerting.every((p) => p.anyOf?.join() === 'alerts')).toBe(true);
    expect(PAGES.find((p) => p.path === '/mail-relay')?.anyOf).toEqual(['system']);
  });

  it('gates the settings pages behind system, and daemons and the certificate behind sa', () => {
    const settings = PAGES.filter((p) => p.path.startsWith('/settings/'));
    expect(Object.fromEntries(settings.map((p) => [p.path, p.anyOf?.join()]))).toEqual({
      '/settings/services': 'system',
      '/settings/network': 'system',
      '/settings/hostname': 'system',
      '/settings/time': 'system',
      '/settings/license': 'system',
      '/settings/retention': 'system',
      '/settings/daemons': 'sa',
      '/settings/certificate': 'sa',
    });
    expect(settings.every((p) => p.group === 'Administration')).toBe(true);
  });
});
