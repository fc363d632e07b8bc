import { describe, expect, it } from 'vitest';
import { argument, includeIndexesOf, weeksOf } from './maintenance.rules.js';

describe('maintenance argument rules', () => {
  it('takes the long form whenever it is present, else the short one', () => {
    expect(argument({ table: 'a', tableName: 'b' }, 'table', 'tableName')).toBe('b');
    expect(argument({ table: 'a' }, 'table', 'tableName')).toBe('a');
    expect(argument({ table: 'a', tableName: '' }, 'table', 'tableName')).toBe('');
    expect(argument({ table: 'a', tableName: null }, 'table', 'tableName')).toBeNull();
    expect(argument({}, 'table', 'tableName')).toBeUndefined();
  });

  it('accepts weeks as an integer >= 1 only', () => {
    expect(weeksOf(1)).toBe(1);
    expect(weeksOf('12')).toBe(12);
    for (const bad of [0, -1, 1.5, '1.5', '', 'x', null, undefined, true, '1e3', 1e9])
      expect(weeksOf(bad), String(bad)).toBeNull();
  });

  it('reads includeIndexes with a default of true', () => {
    expect(includeIndexesOf(undefined)).toBe(true);
    expect(includeIndexesOf(false)).toBe(false);
    expect(includeIndexesOf('false')).toBe(false);
    expect(includeIndexesOf(1)).toBe(true);
    expect(includeIndexesOf('maybe')).toBeNull();
  });
});
