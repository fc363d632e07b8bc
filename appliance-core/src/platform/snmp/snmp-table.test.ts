import { describe, expect, it } from 'vitest';
import type { DecodedVarbind } from './snmp.client.js';
import { numberOf, tableRows, textOf } from './snmp-table.js';

const vb = (oid: string, type: string, value: DecodedVarbind['value']) => ({ oid, type, value });
const IF_ENTRY = '1.3.6.1.2.1.2.2.1';

describe('SNMP tables', () => {
  it('groups a table walk into rows by index and column', () => {
    const rows = tableRows(
      [
        vb(`${IF_ENTRY}.2.1`, 'OctetString', 'lo'),
        vb(`${IF_ENTRY}.2.10`, 'OctetString', 'eth0'),
        vb(`${IF_ENTRY}.3.10`, 'Integer', 6),
        vb('1.3.6.1.2.1.2.2.1.3.10.5', 'Integer', 7),
        vb('1.3.6.1.2.1.1.5.0', 'OctetString', 'x'),
        vb('1.3.6.1.2.1.2.2.10.3.1', 'Integer', 8),
      ],
      IF_ENTRY,
    );
    expect([...rows.keys()]).toEqual([1, 10]);
    expect(rows.get(10)?.get(3)?.value).toBe(6);
    expect(rows.get(1)?.size).toBe(1);
  });

  it('reads numbers and text out of columns', () => {
    expect(numberOf(vb('1', 'Integer', 5))).toBe(5);
    expect(numberOf(vb('1', 'Counter64', '4294967296'))).toBe(4_294_967_296);
    expect(numberOf(vb('1', 'OctetString', 'eth0'))).toBeNull();
    expect(numberOf(undefined)).toBeNull();
    expect(textOf(vb('1', 'OctetString', ''))).toBeNull();
    expect(textOf(vb('1', 'Integer', 0))).toBe('0');
  });
});
