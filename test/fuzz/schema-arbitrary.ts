/**
 * fast-check arbitraries from the JSON Schema (2020-12) subset that /openapi.json uses: what a
 * schema accepts, plus, with a smaller weight, what it does not (wrong types, missing required
 * properties, extra properties, hostile strings), so that both the handlers and the validation
 * failures are exercised.
 */
import fc from 'fast-check';

export type Schema = Record<string, any>;

export interface ArbitraryOptions {
  /** Resolves a `$ref` (`#/components/schemas/...`). */
  resolve(ref: string): Schema;
  /** Weight of out-of-schema values against schema-conforming ones (0 disables them). */
  invalidWeight: number;
}

/** Strings that have broken parsers, paths and shells before. */
const HOSTILE = [
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  '-1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '../../../../etc/passwd',
  '127.0.0.1; id',
  '$(id)',
  '`id`',
  '-oProxyCommand=id',
  '--help',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '%00',
  '\u0000',
  '\u202e\u200b',
  'аdmin',
  '\ud800',
  '::1',
  '127.0.0.1',
  '169.254.169.254',
  '0x7f.1',
  'http://127.0.0.1:1/',
  'x'.repeat(300),
  'é'.repeat(2000),
];

/** Strings that fields without a declared format often want: addresses, hosts, ports, names. */
const PLAUSIBLE = [
  '127.0.0.1',
  '127.0.0.2',
  '::1',
  '10.0.0.1',
  'localhost',
  '22,80',
  '1-1024',
  '1.3.6.1.2.1.1.5.0',
  'public',
  'https://127.0.0.1:1/',
  'fuzz',
  'Fuzz label',
];

const MAX_STRING = 40;
const MAX_ARRAY = 4;

function anyJson(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, ...HOSTILE),
    fc.jsonValue({ maxDepth: 2 }),
  );
}

/** A value of another JSON type than `types` allows. */
function wrongType(types: string[]): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.constantFrom(...HOSTILE),
    integer: fc.constantFrom(0, -1, 2 ** 31, -(2 ** 53), 1e21),
    number: fc.constantFrom(0.5, -0.5, 1e308, -1e308),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.array(anyJson(), { maxLength: 2 }),
    object: fc.dictionary(fc.string({ maxLength: 6 }), anyJson(), { maxKeys: 2 }),
  };
  const other = Object.entries(all)
    .filter(([t]) => !types.includes(t) && !(t === 'integer' && types.includes('number')))
    .map(([, arb]) => arb);
  return other.length > 0 ? fc.oneof(...other) : anyJson();
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
  switch (schema.format) {
    case 'ipv4':
      return fc.oneof(fc.ipV4(), fc.constantFrom('127.0.0.1', '127.0.0.2', '10.0.0.1'));
    case 'ipv6':
      return fc.oneof(fc.ipV6(), fc.constant('::1'));
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'uri':
    case 'url':
      return fc.oneof(
        fc.webUrl(),
        fc.constantFrom('https://127.0.0.1:1/', 'http://127.0.0.2/x?y=1', 'http://[::1]:1/'),
      );
    default:
      break;
  }
  if (typeof schema.pattern === 'string') {
    try {
      const re = new RegExp(schema.pattern);
      return fc
        .stringMatching(re)
        .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
    } catch {
      // A pattern JavaScript cannot read: fall back to plain strings.
    }
  }
  // The fixed lists are cut to the field's lengths before they become arbitraries: a filter that
  // no value passes (a 32-character minimum against short constants) makes fast-check retry forever.
  const plausible = PLAUSIBLE.filter((s) => s.length >= minLength && s.length <= maxLength);
  const hostile = HOSTILE.filter((s) => s.length >= minLength);
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength }), weight: 3 },
    // Values that fields without a declared format often want (addresses, hosts, port lists).
    ...(plausible.length > 0 ? [{ arbitrary: fc.constantFrom(...plausible), weight: 2 }] : []),
    { arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }), weight: 1 },
    ...(hostile.length > 0 ? [{ arbitrary: fc.constantFrom(...hostile), weight: 1 }] : []),
  );
}

function integerArbitrary(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum ?? -(2 ** 31)) + 1;
  const max = schema.maximum ?? (schema.exclusiveMaximum ?? 2 ** 31) - 1;
  const lo = Math.max(Number.MIN_SAFE_INTEGER, Math.ceil(min));
  const hi = Math.min(Number.MAX_SAFE_INTEGER, Math.floor(max));
  if (lo > hi) return fc.constant(lo);
  const edges = fc.constantFrom(lo, hi);
  // Small values name rows that exist (device 1, user 1, the first trackers).
  return Math.max(lo, 0) <= Math.min(hi, 5)
    ? fc.oneof(
        { arbitrary: fc.integer({ min: Math.max(lo, 0), max: Math.min(hi, 5) }), weight: 3 },
        { arbitrary: fc.integer({ min: lo, max: hi }), weight: 2 },
        { arbitrary: edges, weight: 1 },
      )
    : fc.oneof(fc.integer({ min: lo, max: hi }), edges);
}

function numberArbitrary(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? schema.exclusiveMinimum ?? -1e9;
  const max = schema.maximum ?? schema.exclusiveMaximum ?? 1e9;
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true })
    .filter(
      (n) =>
        (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) &&
        (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum),
    );
}

/** Values the schema accepts (as far as this subset goes). */
export function validArbitrary(
  schema: Schema,
  options: ArbitraryOptions,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (schema.$ref) return validArbitrary(options.resolve(schema.$ref as string), options, depth);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives?.length)
    return fc.oneof(
      ...alternatives.map((s) => arbitraryOf({ ...omitCombinators(schema), ...s }, options, depth)),
    );
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0)
    return validArbitrary(
      Object.assign({}, omitCombinators(schema), ...(schema.allOf as Schema[])),
      options,
      depth,
    );
  const types = typesOf(schema);
  if (types.length === 0) return depth > 3 ? fc.constant({}) : anyJson();
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return stringArbitrary(schema);
        case 'integer':
          return integerArbitrary(schema);
        case 'number':
          return numberArbitrary(schema);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return fc.array(
            schema.items ? arbitraryOf(schema.items as Schema, options, depth + 1) : anyJson(),
            {
              minLength: schema.minItems ?? 0,
              maxLength: Math.max(
                schema.minItems ?? 0,
                Math.min(schema.maxItems ?? MAX_ARRAY, MAX_ARRAY),
              ),
            },
          );
        case 'object':
          return objectArbitrary(schema, options, depth);
        default:
          return anyJson();
      }
    }),
  );
}

function omitCombinators(schema: Schema): Schema {
  const { anyOf: _a, oneOf: _o, allOf: _l, ...rest } = schema;
  return rest;
}

function objectArbitrary(schema: Schema, options: ArbitraryOptions, depth: number) {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  if (depth > 4) return fc.constant({});
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties))
    model[name] = arbitraryOf(sub, options, depth + 1);
  const record = fc.record(model, {
    requiredKeys: Object.keys(properties).filter((k) => required.has(k)),
  });
  if (options.invalidWeight === 0) return record;
  if (depth > 0) return record;
  // Now and then, at the top, a property the schema does not name.
  const extraKey = fc.oneof(
    { arbitrary: fc.constant('extra'), weight: 3 },
    { arbitrary: fc.constantFrom('__proto__', 'constructor'), weight: 1 },
  );
  return fc
    .tuple(record, fc.option(fc.tuple(extraKey, anyJson()), { freq: 10 }))
    .map(([value, extra]) => {
      if (!extra) return value;
      const copy: Record<string, unknown> = { ...value };
      Object.defineProperty(copy, extra[0], {
        value: extra[1],
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return copy;
    });
}

/** Values of the schema, and now and then values it refuses. */
export function arbitraryOf(
  schema: Schema,
  options: ArbitraryOptions,
  depth = 0,
): fc.Arbitrary<unknown> {
  const valid = validArbitrary(schema, options, depth);
  if (options.invalidWeight === 0) return valid;
  const resolved = schema.$ref ? options.resolve(schema.$ref as string) : schema;
  const invalid: fc.Arbitrary<unknown>[] = [wrongType(typesOf(resolved))];
  const required = (resolved.required ?? []) as string[];
  if (typesOf(resolved).includes('object') && required.length > 0)
    invalid.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([value, drop]) => {
        if (!value || typeof value !== 'object') return value;
        const copy = { ...(value as Record<string, unknown>) };
        delete copy[drop];
        return copy;
      }),
    );
  // Nested values mutate less, so that most requests still reach the handler.
  return fc.oneof(
    { arbitrary: valid, weight: depth === 0 ? 10 : 30 },
    { arbitrary: fc.oneof(...invalid), weight: options.invalidWeight },
  );
}
