/**
 * SNMP conceptual tables out of a walk (ifTable, hrStorageTable ...): rows by index, columns by
 * number, for tables with a single-component integer index.
 */
import { oidUnder, type DecodedVarbind } from './snmp.client.js';

/** Rows of a conceptual table under `entryOid`: index -> column -> varbind. */
export function tableRows(
  varbinds: readonly DecodedVarbind[],
  entryOid: string,
): Map<number, Map<number, DecodedVarbind>> {
  const rows = new Map<number, Map<number, DecodedVarbind>>();
  for (const varbind of varbinds) {
    if (!oidUnder(varbind.oid, entryOid)) continue;
    const [column, index, ...rest] = varbind.oid
      .slice(entryOid.length + 1)
      .split('.')
      .map(Number);
    if (column === undefined || index === undefined || rest.length > 0 || !Number.isInteger(index))
      continue;
    let row = rows.get(index);
    if (!row) rows.set(index, (row = new Map<number, DecodedVarbind>()));
    row.set(column, varbind);
  }
  return rows;
}

/** A column value as a number (integers and all-digit text such as Counter64 strings), else null. */
export const numberOf = (v: DecodedVarbind | undefined): number | null =>
  v && typeof v.value === 'number'
    ? v.value
    : v && typeof v.value === 'string' && /^\d+$/.test(v.value)
      ? Number(v.value)
      : null;

/** A column value as non-empty text, else null. */
export const textOf = (v: DecodedVarbind | undefined): string | null =>
  v && v.value !== null && v.value !== '' ? String(v.value) : null;
