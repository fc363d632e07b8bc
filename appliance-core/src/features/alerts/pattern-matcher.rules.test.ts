import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PatternMatcher } from './pattern-matcher.rules.js';

describe('PatternMatcher', () => {
  it('finds every pattern that occurs, overlapping and nested ones included', () => {
    const m = new PatternMatcher(['he', 'she', 'his', 'hers', 'link down']);
    expect([...m.matches('ushers')].sort()).toEqual([0, 1, 3]);
    expect([...m.matches('Interface eth0 LINK DOWN')]).toEqual([4]);
    expect(m.matches('nothing at all').size).toBe(0);
  });

  it('treats template and regex syntax as plain text', () => {
    const m = new PatternMatcher(['.*', "{{constructor.constructor('return process')()}}"]);
    expect(m.matches('abc').size).toBe(0);
    expect([...m.matches("x {{constructor.constructor('return process')()}} y")]).toEqual([1]);
  });

  it('agrees with includes() on random texts (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'A'), minLength: 1, maxLength: 4 }),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'B', ' '), maxLength: 40 }),
        (patterns, text) => {
          const expected = patterns
            .map((p, i) => (text.toLowerCase().includes(p.toLowerCase()) ? i : -1))
            .filter((i) => i >= 0);
          expect([...new PatternMatcher(patterns).matches(text)].sort((a, b) => a - b)).toEqual(
            expected,
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});
