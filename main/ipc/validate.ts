/**
 * Input validation for IPC handlers: every channel takes no argument or exactly one plain object
 * whose keys are all known and whose values have the declared type and bounds. A failure is an
 * IpcPublicError naming the field (the renderer shows it; nothing runs).
 */
import { IpcPublicError } from './wrap-result.js';

export type Field<T> = (value: unknown, name: string) => T;

export interface FieldSpec<T> {
  parse: Field<T>;
  optional: boolean;
}

export function text(options: {
  max: number;
  min?: number;
  pattern?: RegExp;
  what?: string;
}): FieldSpec<string> {
  return {
    optional: false,
    parse(value, name) {
      if (typeof value !== 'string') throw new IpcPublicError(`${name} must be text`);
      if (value.length < (options.min ?? 0) || value.length > options.max) {
        throw new IpcPublicError(
          `${name} must be ${options.min ?? 0} to ${options.max} characters long`,
        );
      }
      if (options.pattern && !options.pattern.test(value)) {
        throw new IpcPublicError(`${name} must be ${options.what ?? 'well-formed'}`);
      }
      return value;
    },
  };
}

export function integer(min: number, max: number): FieldSpec<number> {
  return {
    optional: false,
    parse(value, name) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new IpcPublicError(`${name} must be a whole number from ${min} to ${max}`);
      }
      return value;
    },
  };
}

export const boolean: FieldSpec<boolean> = {
  optional: false,
  parse(value, name) {
    if (typeof value !== 'boolean') throw new IpcPublicError(`${name} must be true or false`);
    return value;
  },
};

export function optional<T>(spec: FieldSpec<T>): FieldSpec<T | undefined> {
  return { optional: true, parse: spec.parse };
}

type Shape = Record<string, FieldSpec<unknown>>;
type Parsed<S extends Shape> = {
  [K in keyof S]: S[K] extends FieldSpec<infer T> ? T : never;
};

/** The one argument of a channel, checked against its shape. */
export function parseInput<S extends Shape>(args: readonly unknown[], shape: S): Parsed<S> {
  if (args.length !== 1) {
    throw new IpcPublicError(`expected one argument, received ${args.length}`);
  }
  const input = args[0];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new IpcPublicError('expected an object');
  }
  const prototype = Object.getPrototypeOf(input) as unknown;
  if (prototype !== Object.prototype && prototype !== null) {
    throw new IpcPublicError('expected a plain object');
  }
  const record = input as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(shape, key)) throw new IpcPublicError(`unknown field ${key}`);
  }
  const result: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(shape)) {
    const value = record[key];
    if (value === undefined) {
      if (!spec.optional) throw new IpcPublicError(`${key} is required`);
      continue;
    }
    result[key] = spec.parse(value, key);
  }
  return result as Parsed<S>;
}
