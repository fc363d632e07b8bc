/**
 * Pure rules of the data-maintenance arguments (spec part 3, "Data maintenance"): free of I/O.
 * Every partition endpoint takes a short and a long argument name; the long form wins whenever
 * it is present (even when it is empty or wrong: the caller named it, so it is what they meant).
 */

/** The long-form argument when present, else the short one. */
export function argument(body: Record<string, unknown>, short: string, long: string): unknown {
  return body[long] !== undefined ? body[long] : body[short];
}

/** `weeks` of deleteOldPartitions: an integer >= 1 (a JSON number or its decimal text); null when not. */
export function weeksOf(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d{1,6}\s*$/.test(value)
        ? Number(value)
        : NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= 100_000 ? n : null;
}

/** `includeIndexes`: absent means true; a boolean, 0/1 or their text; null when none of those. */
export function includeIndexesOf(value: unknown): boolean | null {
  if (value === undefined) return true;
  if (value === true || value === 1 || value === 'true' || value === '1') return true;
  if (value === false || value === 0 || value === 'false' || value === '0') return false;
  return null;
}
