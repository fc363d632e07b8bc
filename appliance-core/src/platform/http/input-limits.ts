/**
 * Input limits every route gets, whatever its schema says:
 *
 * - Numbers are finite. JSON cannot write Infinity, but `1e309` parses to it, and a query
 *   string `?hours=1e309` coerces to it; Ajv's integer and range checks let it through (and
 *   -Infinity passes any maximum). A non-finite number anywhere in params, query or body fails
 *   validation, in the route's validation family, before a handler sees it.
 * - JSON nesting is at most MAX_JSON_DEPTH levels. Free-form bodies (dashboards, layouts) are
 *   stored and serialised recursively; 6,000 levels overflowed the stack. The depth is measured
 *   on the text before parsing, in one pass.
 */

export const MAX_JSON_DEPTH = 64;

interface ValidationError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message: string;
}

type Validate = ((data: unknown) => unknown) & { errors?: unknown };

/** The JSON-pointer path of the first non-finite number in `data`, or null. */
export function nonFinitePath(data: unknown, path = ''): string | null {
  if (typeof data === 'number') return Number.isFinite(data) ? null : path;
  if (data === null || typeof data !== 'object') return null;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      const found = nonFinitePath(data[i], `${path}/${i}`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, value] of Object.entries(data)) {
    const found = nonFinitePath(value, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (found !== null) return found;
  }
  return null;
}

/** Wraps a compiled validator so that a non-finite number fails it like a type error. */
export function requireFiniteNumbers(validate: Validate): Validate {
  const checked: Validate = (data) => {
    const result = validate(data);
    // Fastify's compilers may answer `{value}`/`{error}` objects or booleans: only judge success.
    const passed =
      result === true || (typeof result === 'object' && result !== null && !('error' in result));
    if (!passed) {
      checked.errors = validate.errors;
      return result;
    }
    const path = nonFinitePath(data);
    if (path === null) {
      checked.errors = null;
      return result;
    }
    const error: ValidationError = {
      keyword: 'type',
      instancePath: path,
      schemaPath: '#/type',
      params: { type: 'number' },
      message: 'must be a finite number',
    };
    checked.errors = [error];
    return false;
  };
  return checked;
}

/** How deeply `text` (JSON) nests arrays and objects; strings are skipped. */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}
