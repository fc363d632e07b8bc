import { describe, expect, it } from 'vitest';

import {
  flowLayout,
  layoutFor,
  layoutsDoc,
  sameLayout,
  pinnedOf,
  togglePin,
  widgetKey,
  type TrackerWidget,
} from './device-layout-model.js';

const widgets: TrackerWidget[] = [
  { trackerId: 1, trackerTable: 'latency', widgetId: 1, w: 6, h: 3 },
  { trackerId: 7, trackerTable: 'interfaces', widgetId: 2, w: 6, h: 4 },
  { trackerId: 9, trackerTable: 'disks', widgetId: 3, w: 4, h: 3 },
];

describe('device layout model', () => {
  it('flows widgets at their default sizes, wrapping at 12 columns', () => {
    expect(flowLayout(widgets)).toEqual([
      { i: 'latency:1', x: 0, y: 0, w: 6, h: 3 },
      { i: 'interfaces:7', x: 6, y: 0, w: 6, h: 4 },
      { i: 'disks:9', x: 0, y: 4, w: 4, h: 3 },
    ]);
  });

  it('keeps saved positions and flows the widgets without one below them', () => {
    const saved = {
      lg: [
        { i: 'disks:9', x: 0, y: 0, w: 12, h: 2, moved: false },
        { i: 'ports:404', x: 0, y: 2, w: 4, h: 3 },
        { i: 'latency:1', x: 'left', y: 0, w: 6, h: 3 },
      ],
    };
    expect(layoutFor(widgets, saved)).toEqual([
      { i: 'disks:9', x: 0, y: 0, w: 12, h: 2 },
      { i: 'latency:1', x: 0, y: 2, w: 6, h: 3 },
      { i: 'interfaces:7', x: 6, y: 2, w: 6, h: 4 },
    ]);
  });

  it('ignores layouts of another shape', () => {
    expect(layoutFor(widgets, [])).toEqual(flowLayout(widgets));
    expect(layoutFor(widgets, { lg: 'x' })).toEqual(flowLayout(widgets));
    expect(layoutFor(widgets, null)).toEqual(flowLayout(widgets));
  });

  it('keeps pinned keys that still exist, in order, once', () => {
    expect(pinnedOf(widgets, ['disks:9', 'gone:1', 3, 'latency:1', 'disks:9'])).toEqual([
      'disks:9',
      'latency:1',
    ]);
    expect(pinnedOf(widgets, { 'disks:9': true })).toEqual([]);
  });

  it('pins at the end and unpins in place', () => {
    expect(togglePin(['a', 'b'], 'c')).toEqual(['a', 'b', 'c']);
    expect(togglePin(['a', 'b', 'c'], 'b')).toEqual(['a', 'c']);
  });

  it('compares layouts whatever the order of their items', () => {
    const a = flowLayout(widgets);
    expect(sameLayout(a, [...a].reverse())).toBe(true);
    expect(sameLayout(a, [{ ...a[0]!, x: 1 }, a[1]!, a[2]!])).toBe(false);
  });

  it('saves only the item fields', () => {
    expect(layoutsDoc([{ i: 'a', x: 1, y: 2, w: 3, h: 4, moved: true } as never])).toEqual({
      lg: [{ i: 'a', x: 1, y: 2, w: 3, h: 4 }],
    });
    expect(widgetKey(widgets[1]!)).toBe('interfaces:7');
  });
});
