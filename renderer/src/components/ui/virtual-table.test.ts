import { describe, expect, it } from 'vitest';

import { sortedOrder } from './virtual-table.js';

interface Row {
  name: string;
  latency: number | null;
}

const rows: Row[] = [
  { name: 'switch-10', latency: 2.5 },
  { name: 'switch-9', latency: null },
  { name: 'Switch-2', latency: -1 },
  { name: 'switch-1', latency: 2.5 },
  { name: 'router', latency: 0.4 },
];

describe('sortedOrder', () => {
  it('keeps the data order when the column does not sort', () => {
    expect(sortedOrder(rows, undefined, false)).toBeNull();
  });

  it('sorts numbers numerically, nulls last, ties in data order', () => {
    const order = sortedOrder(rows, (r) => r.latency, false)!;
    expect(order.map((i) => rows[i]!.name)).toEqual([
      'Switch-2',
      'router',
      'switch-10',
      'switch-1',
      'switch-9',
    ]);
  });

  it('descending reverses values but still puts nulls last', () => {
    const order = sortedOrder(rows, (r) => r.latency, true)!;
    expect(order.map((i) => rows[i]!.name)).toEqual([
      'switch-10',
      'switch-1',
      'router',
      'Switch-2',
      'switch-9',
    ]);
  });

  it('compares text case-insensitively with numbers in it as numbers', () => {
    const order = sortedOrder(rows, (r) => r.name, false)!;
    expect(order.map((i) => rows[i]!.name)).toEqual([
      'router',
      'switch-1',
      'Switch-2',
      'switch-9',
      'switch-10',
    ]);
  });

  it('orders 20,000 rows without building anything per row but one key', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => ({
      name: `d-${19_999 - i}`,
      latency: i,
    }));
    const order = sortedOrder(many, (r) => r.name, false)!;
    expect(order).toHaveLength(20_000);
    expect(many[order[0]!]!.name).toBe('d-0');
    expect(many[order[19_999]!]!.name).toBe('d-19999');
  });
});
