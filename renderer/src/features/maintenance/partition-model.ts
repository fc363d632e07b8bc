/**
 * A partition row as the page shows it. The spec names the list (`message` is an array of
 * partitions) but not its fields, so common spellings are accepted: the name, the bounds (first and
 * last row time, or from/to), the row count and the size in bytes. Unknown fields are ignored.
 */
export interface PartitionView {
  name: string;
  from: string | number | null;
  to: string | number | null;
  rows: number | null;
  bytes: number | null;
  live: boolean;
}

const pick = (row: Record<string, unknown>, names: string[]): unknown => {
  for (const n of names) if (row[n] !== undefined && row[n] !== null) return row[n];
  return null;
};

const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v)
      ? Number(v)
      : null;

const time = (v: unknown): string | number | null =>
  typeof v === 'string' || typeof v === 'number' ? v : null;

export function partitionView(row: Record<string, unknown> | string): PartitionView {
  if (typeof row === 'string')
    return {
      name: row,
      from: null,
      to: null,
      rows: null,
      bytes: null,
      live: row.endsWith('_latest'),
    };
  const rawName = pick(row, ['name', 'partition', 'partition_name', 'partitionName']);
  const name = typeof rawName === 'string' || typeof rawName === 'number' ? String(rawName) : '';
  return {
    name,
    from: time(pick(row, ['first_time', 'from', 'start', 'lower_bound', 'min_time', 'first'])),
    to: time(pick(row, ['last_time', 'to', 'end', 'upper_bound', 'max_time', 'last'])),
    rows: num(pick(row, ['rows', 'row_count', 'count'])),
    bytes: num(pick(row, ['size', 'bytes', 'size_bytes'])),
    live: name.endsWith('_latest') || row.live === true,
  };
}

/** A 5-field cron expression (minute hour day month weekday), checked loosely before sending. */
export function looksLikeCron(text: string): boolean {
  return /^\S+(\s+\S+){4}$/.test(text.trim());
}
