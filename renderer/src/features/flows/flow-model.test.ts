import { describe, expect, it } from 'vitest';
import {
  barWidths,
  buildFlowFilters,
  flowFormOf,
  flowListHref,
  flowWindowKey,
  flowWindowOf,
  flowWindowQuery,
  LIST_KEYS,
  parseFlowValue,
  SAVED_KEYS,
  seriesPoints,
} from './flow-model.js';

const shared = { kind: 'relative', hours: 8 } as const;

describe('flow model', () => {
  it('turns typed text into filter values: ports are numbers, protocols numbers or names, commas an OR', () => {
    expect(parseFlowValue('port', '443')).toBe(443);
    expect(parseFlowValue('src_port', '22, 443')).toEqual([22, 443]);
    expect(parseFlowValue('protocol', 'TCP')).toBe('tcp');
    expect(parseFlowValue('protocol', 'udp, 47')).toEqual(['udp', 47]);
    expect(parseFlowValue('ip', ' 10.0.0.1 ')).toBe('10.0.0.1');
    expect(parseFlowValue('src_ip', '10.0.0.1,2001:db8::1')).toEqual(['10.0.0.1', '2001:db8::1']);
    expect(parseFlowValue('vlan', '  ')).toBeNull();
    // An address is never made a number.
    expect(parseFlowValue('flow_src', '12')).toBe('12');
  });

  it('builds the filters the lists take and reads them back into the form', () => {
    const filters = buildFlowFilters(LIST_KEYS, {
      ip: '10.0.0.1',
      port: '53',
      vlan: '',
      bytes: '9',
    });
    expect(filters).toEqual({ ip: '10.0.0.1', port: 53 });
    expect(flowFormOf(LIST_KEYS, { ip: ['a', 'b'], port: 53, bytes: 1 })).toEqual({
      ip: 'a, b',
      port: '53',
    });
  });

  it('offers the spec’s saved-filter keys, never measures or times', () => {
    expect([...SAVED_KEYS].sort()).toEqual(
      [
        'src_ip',
        'src_port',
        'dst_ip',
        'dst_port',
        'protocol',
        'in_iface',
        'out_iface',
        'flow_src',
        'vlan',
        'ip',
        'port',
      ].sort(),
    );
    for (const key of ['bytes', 'packets', 'start_time', 'end_time'])
      expect(SAVED_KEYS).not.toContain(key);
  });

  it('active flows by default; ?window=1 the shared window; a linked range wins', () => {
    const active = flowWindowOf(new URLSearchParams(''), shared, true);
    expect(active).toEqual({ kind: 'active' });
    expect(flowWindowQuery(active)).toEqual({});
    const windowed = flowWindowOf(new URLSearchParams('window=1'), shared, true);
    expect(flowWindowQuery(windowed)).toEqual({ hours: 8 });
    // The aggregated list and top talkers always take a window.
    expect(flowWindowOf(new URLSearchParams(''), shared, false)).toEqual(windowed);
    const custom = flowWindowOf(
      new URLSearchParams(''),
      { kind: 'custom', start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' },
      false,
    );
    expect(flowWindowQuery(custom)).toEqual({
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-01-02T00:00:00Z',
    });
    // An inverted pair is sent as it is: the appliance answers with its message.
    const linked = flowWindowOf(
      new URLSearchParams('startTime=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z'),
      shared,
      true,
    );
    expect(flowWindowQuery(linked)).toEqual({
      startTime: '2026-01-02T00:00:00Z',
      endTime: '2026-01-01T00:00:00Z',
    });
    expect(new Set([active, windowed, custom, linked].map(flowWindowKey)).size).toBe(4);
  });

  it('links to the flow list with filters and a window', () => {
    expect(flowListHref({})).toBe('/flows');
    const href = flowListHref({ ip: '10.0.0.1' }, true);
    const url = new URL(href, 'https://x');
    expect(url.pathname).toBe('/flows');
    expect(url.searchParams.get('window')).toBe('1');
    expect(JSON.parse(url.searchParams.get('filters')!)).toEqual({ ip: '10.0.0.1' });
  });

  it('bars on a square-root scale; hours sorted as points', () => {
    expect(barWidths([100, 25, 0])).toEqual([100, 50, 0]);
    expect(barWidths([1_000_000, 1])[1]).toBe(2);
    expect(
      seriesPoints([
        { time: '2026-01-01T01:00:00.000Z', bps: 2, bytes: 900 },
        { time: '2026-01-01T00:00:00.000Z', bps: 1, bytes: 450 },
        { time: 'nonsense', bps: 9, bytes: 9 },
      ]),
    ).toEqual([
      { t: Date.parse('2026-01-01T00:00:00.000Z'), bps: 1, bytes: 450 },
      { t: Date.parse('2026-01-01T01:00:00.000Z'), bps: 2, bytes: 900 },
    ]);
  });
});
