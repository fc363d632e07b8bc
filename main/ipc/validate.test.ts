import { describe, expect, it } from 'vitest';

import { boolean, integer, optional, parseInput, text } from './validate.js';

const shape = {
  name: text({ min: 1, max: 5 }),
  size: integer(1, 10),
  on: boolean,
  note: optional(text({ max: 3, pattern: /^[a-z]*$/, what: 'lower-case letters' })),
};

describe('parseInput', () => {
  it('accepts exactly the declared fields', () => {
    expect(parseInput([{ name: 'abc', size: 3, on: true }], shape)).toEqual({
      name: 'abc',
      size: 3,
      on: true,
    });
    expect(parseInput([{ name: 'a', size: 1, on: false, note: 'xy' }], shape)).toMatchObject({
      note: 'xy',
    });
  });

  it.each([
    [[], 'expected one argument, received 0'],
    [[{}, {}], 'expected one argument, received 2'],
    [[null], 'expected an object'],
    [[['name']], 'expected an object'],
    [[new Date()], 'expected a plain object'],
    [[{ name: 'abc', size: 3, on: true, extra: 1 }], 'unknown field extra'],
    [[{ size: 3, on: true }], 'name is required'],
    [[{ name: '', size: 3, on: true }], 'name must be 1 to 5 characters long'],
    [[{ name: 'abcdef', size: 3, on: true }], 'name must be 1 to 5 characters long'],
    [[{ name: 5, size: 3, on: true }], 'name must be text'],
    [[{ name: 'a', size: 3.5, on: true }], 'size must be a whole number from 1 to 10'],
    [[{ name: 'a', size: '3', on: true }], 'size must be a whole number from 1 to 10'],
    [[{ name: 'a', size: 11, on: true }], 'size must be a whole number from 1 to 10'],
    [[{ name: 'a', size: 1, on: 'yes' }], 'on must be true or false'],
    [[{ name: 'a', size: 1, on: true, note: 'X' }], 'note must be lower-case letters'],
    [
      [JSON.parse('{"__proto__": {"x": 1}, "name": "a", "size": 1, "on": true}')],
      'unknown field __proto__',
    ],
  ])('refuses %j', (args, message) => {
    expect(() => parseInput(args, shape)).toThrow(message);
  });
});
