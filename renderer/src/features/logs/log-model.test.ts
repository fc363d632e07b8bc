import { describe, expect, it } from 'vitest';
import {
  FEEDS,
  buildFilters,
  describeFilter,
  filtersFromParam,
  formOf,
  pageCount,
  parseFilterValue,
  savableFilter,
} from './log-model.js';

describe('log feeds model', () => {
  it('sends severity by name, an OR array for several levels', () => {
    expect(buildFilters(FEEDS.syslog, {}, [3])).toEqual({ severity: 'error' });
    expect(buildFilters(FEEDS.syslog, {}, [4, 0])).toEqual({ severity: ['emergency', 'warning'] });
    expect(buildFilters(FEEDS.eventlog, {}, [0])).toEqual({ severity: 'information' });
    expect(buildFilters(FEEDS.eve, {}, [1, 3])).toEqual({ severity: ['high', 'low'] });
  });

  it('keeps a message whole and turns integer keys into numbers (commas: OR)', () => {
    expect(parseFilterValue(FEEDS.syslog, 'message', ' a, b ')).toBe(' a, b ');
    expect(parseFilterValue(FEEDS.syslog, 'device_id', '3')).toBe(3);
    expect(parseFilterValue(FEEDS.eve, 'port', '22, 443')).toEqual([22, 443]);
    expect(parseFilterValue(FEEDS.eve, 'src_ip', '  ')).toBeNull();
    expect(buildFilters(FEEDS.syslog, { message: 'link down', source: '' }, [])).toEqual({
      message: 'link down',
    });
  });

  it('round-trips the form through the URL', () => {
    const filters = buildFilters(FEEDS.eve, { ip: '10.0.0.1', port: '22,23' }, [2]);
    const again = filtersFromParam(JSON.stringify(filters));
    expect(again).toEqual(filters);
    expect(formOf(FEEDS.eve, again)).toEqual({
      values: { ip: '10.0.0.1', port: '22, 23' },
      severities: [2],
    });
    expect(formOf(FEEDS.syslog, { severity: ['ERROR', 7] }).severities).toEqual([3, 7]);
    expect(filtersFromParam('{not json')).toEqual({});
    expect(filtersFromParam('[1]')).toEqual({});
    expect(filtersFromParam('{"a":{"b":1},"c":"d"}')).toEqual({ c: 'd' });
  });

  it('keeps only the keys a saved filter accepts, and says which it left out', () => {
    expect(savableFilter(FEEDS.syslog, { message: 'x', timestamp: '2026-01-01' })).toEqual({
      filter: { message: 'x' },
      dropped: ['timestamp'],
    });
    expect(savableFilter(FEEDS.eve, { device_id: 3, ip: '10.0.0.1' }).dropped).toEqual([
      'device_id',
    ]);
  });

  it('describes a filter as text', () => {
    expect(describeFilter({ message: '<b>x</b>', severity: ['error', 'warning'] })).toBe(
      'message: "<b>x</b>" · severity: "error" or "warning"',
    );
  });

  it('counts pages; a capped total always offers the next page after a full one', () => {
    expect(pageCount(0, 100, false, 1, 0)).toBe(1);
    expect(pageCount(250, 100, false, 1, 100)).toBe(3);
    expect(pageCount(10_000, 1000, true, 10, 1000)).toBe(11);
    expect(pageCount(10_000, 1000, true, 3, 1000)).toBe(10);
    expect(pageCount(10_000, 1000, true, 12, 20)).toBe(12);
  });
});
