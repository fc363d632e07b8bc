/**
 * A device page's widgets (GET /api/getDeviceTrackers): one per tracker, keyed
 * `<trackerTable>:<trackerId>`, arranged by the caller's saved layout and pinned list. The API
 * keeps both as given; the console stores `layouts = {lg: LayoutItem[]}` (react-grid-layout's
 * item shape) and `pinnedWidgets = ["latency:3", ...]` in pinning order. Anything it does not
 * understand (another client's shape, trackers since deleted) is ignored, never an error.
 */
export interface TrackerWidget {
  trackerId: number;
  trackerTable: string;
  widgetId: number;
  w: number;
  h: number;
}

export interface LayoutItem {
  i: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export const GRID_COLS = 12;

export function widgetKey(t: Pick<TrackerWidget, 'trackerTable' | 'trackerId'>): string {
  return `${t.trackerTable}:${t.trackerId}`;
}

function isItem(value: unknown): value is LayoutItem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.i === 'string' &&
    ['x', 'y', 'w', 'h'].every((k) => Number.isInteger(v[k]) && (v[k] as number) >= 0)
  );
}

/** Flows widgets left to right, top to bottom, at their default sizes. */
export function flowLayout(widgets: readonly TrackerWidget[]): LayoutItem[] {
  const items: LayoutItem[] = [];
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const t of widgets) {
    const w = Math.min(GRID_COLS, Math.max(1, t.w));
    if (x + w > GRID_COLS) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    items.push({ i: widgetKey(t), x, y, w, h: Math.max(1, t.h) });
    x += w;
    rowHeight = Math.max(rowHeight, Math.max(1, t.h));
  }
  return items;
}

/**
 * The grid's layout: the saved position of every widget that has one, the others flowed below
 * them at their default sizes (a tracker added since the layout was saved appears at the end).
 */
export function layoutFor(widgets: readonly TrackerWidget[], saved: unknown): LayoutItem[] {
  const keys = new Set(widgets.map(widgetKey));
  const stored = (saved as { lg?: unknown } | null)?.lg;
  const kept = Array.isArray(stored)
    ? stored.filter(isItem).filter((item) => keys.has(item.i))
    : [];
  const placed = new Set(kept.map((k) => k.i));
  const bottom = kept.reduce((m, l) => Math.max(m, l.y + l.h), 0);
  const rest = flowLayout(widgets.filter((t) => !placed.has(widgetKey(t)))).map((item) => ({
    ...item,
    y: item.y + bottom,
  }));
  return [...kept.map(({ i, x, y, w, h }) => ({ i, x, y, w, h })), ...rest];
}

/** The pinned widget keys that still exist, in pinning order, without repeats. */
export function pinnedOf(widgets: readonly TrackerWidget[], saved: unknown): string[] {
  if (!Array.isArray(saved)) return [];
  const keys = new Set(widgets.map(widgetKey));
  return [...new Set(saved.filter((k): k is string => typeof k === 'string' && keys.has(k)))];
}

export function togglePin(pinned: readonly string[], key: string): string[] {
  return pinned.includes(key) ? pinned.filter((k) => k !== key) : [...pinned, key];
}

/** The layouts document to save (react-grid-layout adds fields of its own to each item). */
export function layoutsDoc(items: readonly LayoutItem[]): { lg: LayoutItem[] } {
  return { lg: items.map(({ i, x, y, w, h }) => ({ i, x, y, w, h })) };
}

/** Same positions for the same widgets, whatever the order of the items. */
export function sameLayout(a: readonly LayoutItem[], b: readonly LayoutItem[]): boolean {
  const text = (items: readonly LayoutItem[]) =>
    JSON.stringify(
      [...items].sort((x, y) => (x.i < y.i ? -1 : 1)).map(({ i, x, y, w, h }) => [i, x, y, w, h]),
    );
  return text(a) === text(b);
}
