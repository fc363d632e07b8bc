/**
 * The console's dashboards, stored per user through getDashboards / setDashboards (the API keeps
 * both objects as given): `dashboards[name] = {widgets: Widget[]}`, `layouts[name] = Layout[]`.
 */
export type WidgetKind = 'latency' | 'traffic' | 'disk' | 'port' | 'status' | 'syslog';

export interface Widget {
  i: string;
  kind: WidgetKind;
  deviceId?: number;
  trackerId?: number;
  title: string;
}

export interface LayoutItem {
  i: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface DashboardsDoc {
  dashboards: Record<string, { widgets: Widget[] }>;
  layouts: Record<string, LayoutItem[]>;
}

export const WIDGET_KINDS: {
  value: WidgetKind;
  label: string;
  needsTracker: boolean;
  /** Shown in the widget picker only to callers holding it. */
  permission?: 'logs';
}[] = [
  { value: 'latency', label: 'Device latency', needsTracker: false },
  { value: 'traffic', label: 'Interface traffic', needsTracker: true },
  { value: 'disk', label: 'Disk usage', needsTracker: true },
  { value: 'port', label: 'TCP port', needsTracker: true },
  { value: 'status', label: 'Device status summary', needsTracker: false },
  { value: 'syslog', label: 'Recent syslog', needsTracker: false, permission: 'logs' },
];

/** Widgets that read no device (the picker asks for none). */
export const deviceless = (kind: WidgetKind) => kind === 'status' || kind === 'syslog';

/** Reads whatever the API holds into the console's shape, dropping what it does not understand. */
export function normalize(raw: { dashboards?: unknown; layouts?: unknown }): DashboardsDoc {
  const doc: DashboardsDoc = { dashboards: {}, layouts: {} };
  const dashboards = (raw.dashboards ?? {}) as Record<string, unknown>;
  const layouts = (raw.layouts ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(dashboards)) {
    const widgets = Array.isArray((value as { widgets?: unknown })?.widgets)
      ? ((value as { widgets: unknown[] }).widgets.filter(
          (w) => typeof w === 'object' && w !== null && typeof (w as Widget).i === 'string',
        ) as Widget[])
      : [];
    doc.dashboards[name] = { widgets };
    const layout = layouts[name];
    doc.layouts[name] = Array.isArray(layout) ? (layout as LayoutItem[]) : [];
  }
  return doc;
}

export function addWidget(doc: DashboardsDoc, name: string, widget: Widget): DashboardsDoc {
  const current = doc.dashboards[name] ?? { widgets: [] };
  const layout = doc.layouts[name] ?? [];
  const bottom = layout.reduce((m, l) => Math.max(m, l.y + l.h), 0);
  const size =
    widget.kind === 'status'
      ? { w: 4, h: 3 }
      : widget.kind === 'syslog'
        ? { w: 6, h: 5 }
        : { w: 6, h: 4 };
  return {
    dashboards: { ...doc.dashboards, [name]: { widgets: [...current.widgets, widget] } },
    layouts: { ...doc.layouts, [name]: [...layout, { i: widget.i, x: 0, y: bottom, ...size }] },
  };
}

export function removeWidget(doc: DashboardsDoc, name: string, id: string): DashboardsDoc {
  const current = doc.dashboards[name] ?? { widgets: [] };
  return {
    dashboards: {
      ...doc.dashboards,
      [name]: { widgets: current.widgets.filter((w) => w.i !== id) },
    },
    layouts: { ...doc.layouts, [name]: (doc.layouts[name] ?? []).filter((l) => l.i !== id) },
  };
}

export function renameDashboard(doc: DashboardsDoc, from: string, to: string): DashboardsDoc {
  if (from === to || !(from in doc.dashboards) || to in doc.dashboards) return doc;
  const dashboards: DashboardsDoc['dashboards'] = {};
  const layouts: DashboardsDoc['layouts'] = {};
  for (const [name, value] of Object.entries(doc.dashboards)) {
    const key = name === from ? to : name;
    dashboards[key] = value;
    layouts[key] = doc.layouts[name] ?? [];
  }
  return { dashboards, layouts };
}

export function deleteDashboard(doc: DashboardsDoc, name: string): DashboardsDoc {
  const dashboards = { ...doc.dashboards };
  const layouts = { ...doc.layouts };
  delete dashboards[name];
  delete layouts[name];
  return { dashboards, layouts };
}

/** Keeps only x, y, w, h of react-grid-layout's items (it adds fields of its own). */
export function layoutOf(items: readonly LayoutItem[]): LayoutItem[] {
  return items.map(({ i, x, y, w, h }) => ({ i, x, y, w, h }));
}
