/**
 * What the crawl reads out of a walk: IF-MIB interfaces and HOST-RESOURCES-MIB disks (the
 * end-to-end crawl against snmpd is in devices/snmp.routes.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseDisks, parseInterfaces } from './trackers.crawl.js';
import type { DecodedVarbind } from '../../platform/snmp/snmp.client.js';

const vb = (oid: string, type: string, value: DecodedVarbind['value']): DecodedVarbind => ({
  oid,
  type,
  value,
});
const ifEntry = (column: number, index: number, type: string, value: DecodedVarbind['value']) =>
  vb(`1.3.6.1.2.1.2.2.1.${column}.${index}`, type, value);
const ifX = (column: number, index: number, type: string, value: DecodedVarbind['value']) =>
  vb(`1.3.6.1.2.1.31.1.1.1.${column}.${index}`, type, value);
const hr = (column: number, index: number, type: string, value: DecodedVarbind['value']) =>
  vb(`1.3.6.1.2.1.25.2.3.1.${column}.${index}`, type, value);

describe('crawl parsing', () => {
  it('reads interfaces: ifName before ifDescr, ifHighSpeed above 4 Gbit/s, MACs from binary or printable octets', () => {
    const interfaces = parseInterfaces([
      ifEntry(1, 1, 'Integer', 1),
      ifEntry(2, 1, 'OctetString', 'lo'),
      ifEntry(3, 1, 'Integer', 24),
      ifEntry(5, 1, 'Gauge', 10_000_000),
      ifEntry(6, 1, 'OctetString', ''),
      ifEntry(7, 1, 'Integer', 1),
      ifEntry(8, 1, 'Integer', 1),
      ifEntry(2, 2, 'OctetString', 'Intel Corporation 82599 10 Gigabit'),
      ifEntry(3, 2, 'Integer', 6),
      ifEntry(4, 2, 'Integer', 9000),
      ifEntry(5, 2, 'Gauge', 4_294_967_295),
      ifEntry(6, 2, 'Hex-STRING', '00:1b:21:3a:4c:5d'),
      ifEntry(7, 2, 'Integer', 1),
      ifEntry(8, 2, 'Integer', 2),
      ifEntry(2, 3, 'OctetString', 'weird'),
      ifEntry(6, 3, 'OctetString', 'ABCDEF'),
      ifX(1, 2, 'OctetString', 'eth0'),
      ifX(15, 2, 'Gauge', 10_000),
      ifX(18, 2, 'OctetString', 'uplink to core'),
    ]);
    expect(interfaces).toEqual([
      {
        index: 1,
        name: 'lo',
        descr: 'lo',
        alias: null,
        type: 24,
        mtu: null,
        speed: 10_000_000,
        mac: null,
        adminStatus: 1,
        operStatus: 1,
      },
      {
        index: 2,
        name: 'eth0',
        descr: 'Intel Corporation 82599 10 Gigabit',
        alias: 'uplink to core',
        type: 6,
        mtu: 9000,
        speed: 10_000_000_000,
        mac: '00:1b:21:3a:4c:5d',
        adminStatus: 1,
        operStatus: 2,
      },
      {
        index: 3,
        name: 'weird',
        descr: 'weird',
        alias: null,
        type: null,
        mtu: null,
        speed: null,
        mac: '41:42:43:44:45:46',
        adminStatus: null,
        operStatus: null,
      },
    ]);
  });

  it('reads fixed, flash and network disks (not memory) in bytes', () => {
    const disks = parseDisks([
      hr(2, 1, 'OID', '1.3.6.1.2.1.25.2.1.2'),
      hr(3, 1, 'OctetString', 'Physical memory'),
      hr(2, 31, 'OID', '1.3.6.1.2.1.25.2.1.4'),
      hr(3, 31, 'OctetString', '/'),
      hr(4, 31, 'Integer', 4096),
      hr(5, 31, 'Integer', 1000),
      hr(6, 31, 'Integer', 250),
      hr(2, 40, 'OID', '1.3.6.1.2.1.25.2.1.10'),
      hr(3, 40, 'OctetString', '/mnt/nfs'),
      hr(4, 40, 'Integer', 1024),
      hr(5, 40, 'Integer', 10),
      hr(6, 40, 'Integer', 12),
    ]);
    expect(disks).toEqual([
      {
        index: 31,
        name: '/',
        storageType: '1.3.6.1.2.1.25.2.1.4',
        allocationUnits: 4096,
        total: 4_096_000,
        available: 3_072_000,
      },
      {
        index: 40,
        name: '/mnt/nfs',
        storageType: '1.3.6.1.2.1.25.2.1.10',
        allocationUnits: 1024,
        total: 10_240,
        available: 0,
      },
    ]);
  });
});
