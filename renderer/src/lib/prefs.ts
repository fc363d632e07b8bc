/**
 * UI state that is not server state: the time window shared by device pages and dashboards, table
 * density. Kept in zustand; the window follows the person across pages (and is never silently
 * saved as a default), density is remembered in localStorage.
 */
import { create } from 'zustand';

export type TimeWindow =
  { kind: 'relative'; hours: number } | { kind: 'custom'; start: string; end: string };

export const WINDOW_CHOICES: { label: string; hours: number }[] = [
  { label: 'Last hour', hours: 1 },
  { label: '8 hours', hours: 8 },
  { label: 'Day', hours: 24 },
  { label: 'Week', hours: 24 * 7 },
  { label: '30 days', hours: 24 * 30 },
];

export type Density = 'compact' | 'comfortable';

interface PrefsState {
  window: TimeWindow;
  density: Density;
  navCollapsed: boolean;
  setWindow: (window: TimeWindow) => void;
  setDensity: (density: Density) => void;
  toggleNav: () => void;
}

function stored(key: string): string | null {
  try {
    return globalThis.localStorage?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function remember(key: string, value: string): void {
  try {
    globalThis.localStorage?.setItem(key, value);
  } catch {
    // private mode: nothing to remember
  }
}

export const usePrefs = create<PrefsState>()((set) => ({
  window: { kind: 'relative', hours: 8 },
  density: stored('console.density') === 'comfortable' ? 'comfortable' : 'compact',
  navCollapsed: stored('console.nav') === 'collapsed',
  setWindow: (window) => set({ window }),
  setDensity(density) {
    remember('console.density', density);
    set({ density });
  },
  toggleNav: () =>
    set((s) => {
      remember('console.nav', s.navCollapsed ? 'open' : 'collapsed');
      return { navCollapsed: !s.navCollapsed };
    }),
}));

/** A stable key for a window (query keys). */
export function windowKey(window: TimeWindow): string {
  return window.kind === 'relative' ? `${window.hours}h` : `${window.start}/${window.end}`;
}

/** The query of GET /api/device/{device} for a window. */
export function windowQuery(window: TimeWindow): Record<string, string | number> {
  return window.kind === 'relative'
    ? { hours: window.hours }
    : { start_time: window.start, end_time: window.end };
}

/** Hours covered by a window (for endpoints that only take `hours`). */
export function windowHours(window: TimeWindow, now = Date.now()): number {
  if (window.kind === 'relative') return window.hours;
  return Math.max(1, Math.ceil((now - Date.parse(window.start)) / 3_600_000));
}
