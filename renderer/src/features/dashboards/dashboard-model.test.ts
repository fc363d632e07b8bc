import { describe, expect, it } from 'vitest';
import {
  addWidget,
  deleteDashboard,
  normalize,
  deviceless,
  removeWidget,
  renameDashboard,
} from './dashboard-model.js';

describe('dashboard model', () => {
  it('adds widgets below each other, renames, removes and deletes', () => {
    let doc = normalize({ dashboards: { NOC: { widgets: [] } }, layouts: { NOC: [] } });
    doc = addWidget(doc, 'NOC', { i: 'a', kind: 'status', title: 'Status' });
    doc = addWidget(doc, 'NOC', { i: 'b', kind: 'latency', deviceId: 1, title: 'Latency' });
    expect(doc.layouts.NOC).toEqual([
      { i: 'a', x: 0, y: 0, w: 4, h: 3 },
      { i: 'b', x: 0, y: 3, w: 6, h: 4 },
    ]);
    doc = renameDashboard(doc, 'NOC', 'Wall');
    expect(Object.keys(doc.dashboards)).toEqual(['Wall']);
    doc = removeWidget(doc, 'Wall', 'a');
    expect(doc.dashboards.Wall!.widgets.map((w) => w.i)).toEqual(['b']);
    expect(deleteDashboard(doc, 'Wall')).toEqual({ dashboards: {}, layouts: {} });
  });
  it('ignores what it does not understand in stored documents', () => {
    expect(
      normalize({
        dashboards: { X: { widgets: [null, 3, { i: 'ok', kind: 'status', title: 't' }] } },
      }),
    ).toEqual({
      dashboards: { X: { widgets: [{ i: 'ok', kind: 'status', title: 't' }] } },
      layouts: { X: [] },
    });
  });

  it('places a Recent syslog widget taller, without a device', () => {
    let doc = normalize({ dashboards: { Logs: { widgets: [] } }, layouts: { Logs: [] } });
    doc = addWidget(doc, 'Logs', { i: 's', kind: 'syslog', title: 'Recent syslog' });
    expect(doc.layouts.Logs).toEqual([{ i: 's', x: 0, y: 0, w: 6, h: 5 }]);
    expect(deviceless('syslog')).toBe(true);
    expect(deviceless('latency')).toBe(false);
  });
});
