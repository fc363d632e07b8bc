import { describe, expect, it } from 'vitest';
import {
  canonicalIp,
  MAX_EVE_LINE,
  MAX_TEXT,
  parseEveLine,
  parseEveTimestamp,
} from './eve-line.rules.js';
import {
  alertLine,
  SURICATA_ALERT,
  SURICATA_ALERT_VLAN,
  SURICATA_FLOW,
} from './testing/eve-lines.js';

function alertOf(line: string) {
  const result = parseEveLine(line);
  if (result.kind !== 'alert') throw new Error(`expected an alert, got ${JSON.stringify(result)}`);
  return result.alert;
}

function errorOf(line: string) {
  const result = parseEveLine(line);
  if (result.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  return result.error;
}

describe('parseEveLine on real Suricata lines', () => {
  it('reads an alert into the eve_log columns', () => {
    expect(alertOf(SURICATA_ALERT)).toEqual({
      timestamp: Date.UTC(2026, 10, 26, 10, 0, 0, 6),
      signatureId: 1000001,
      signature: 'test EVIL-ONE',
      category: 'Misc activity',
      severity: 1,
      proto: 'TCP',
      iface: null,
      vlan: null,
      srcIp: '127.0.0.1',
      srcPort: 40000,
      dstIp: '127.0.0.2',
      dstPort: 8080,
      flowId: 1630060595,
      raw: SURICATA_ALERT,
    });
  });

  it('stores a severity above 3 as 3 and keeps the first VLAN', () => {
    const alert = alertOf(SURICATA_ALERT_VLAN);
    expect(alert.severity).toBe(3);
    expect(alert.vlan).toBe(42);
    expect(alertOf(alertLine({ vlan: [7, 42] })).vlan).toBe(7);
    expect(alertOf(alertLine({}, { severity: 255 })).severity).toBe(3);
    expect(alertOf(alertLine({}, { severity: 2 })).severity).toBe(2);
  });

  it('ignores other event types, counted by their type', () => {
    expect(parseEveLine(SURICATA_FLOW)).toEqual({ kind: 'ignored', eventType: 'flow' });
    expect(parseEveLine('{"event_type":"stats","stats":{"uptime":1}}')).toEqual({
      kind: 'ignored',
      eventType: 'stats',
    });
    // An "alert" only inside a nested object is not an alert event.
    expect(parseEveLine('{"event_type":"flow","x":{"event_type":"alert"}}')).toEqual({
      kind: 'ignored',
      eventType: 'flow',
    });
  });
});

describe('parseEveLine field rules', () => {
  it('reads in_iface, ICMP without ports, protocol numbers and IPv6 endpoints (canonical)', () => {
    const alert = alertOf(
      alertLine({
        in_iface: 'eth1',
        proto: 'IPv6-ICMP',
        src_ip: '2001:0DB8:0000:0000:0000:0000:0000:0001',
        dest_ip: '::ffff:10.0.0.9',
        src_port: undefined,
        dest_port: undefined,
      }),
    );
    expect(alert).toMatchObject({
      iface: 'eth1',
      proto: 'IPv6-ICMP',
      srcIp: '2001:db8::1',
      dstIp: '10.0.0.9',
      srcPort: null,
      dstPort: null,
    });
    expect(alertOf(alertLine({ proto: 47 })).proto).toBe('47');
  });

  it('keeps a flow id beyond 2^53 exact (from the text), as a bigint', () => {
    const line = SURICATA_ALERT.replace('"flow_id":1630060595', '"flow_id":9223372036854775807');
    expect(alertOf(line).flowId).toBe(9223372036854775807n);
    expect(alertOf(alertLine({ flow_id: undefined })).flowId).toBeNull();
  });

  it('caps signature and category text (the raw line keeps them whole)', () => {
    const long = 'S'.repeat(MAX_TEXT * 3);
    const alert = alertOf(alertLine({}, { signature: long, category: long }));
    expect(alert.signature).toHaveLength(MAX_TEXT);
    expect(alert.category).toHaveLength(MAX_TEXT);
    expect(alert.raw).toContain(long);
  });

  it('keeps hostile text verbatim as data', () => {
    const text = `'; DROP TABLE x;-- <img src=x onerror=alert(1)>`;
    expect(alertOf(alertLine({}, { signature: text })).signature).toBe(text);
  });

  it('answers a typed error, naming the field, for every broken alert', () => {
    expect(errorOf('not json at all')).toMatchObject({ code: 'not-json' });
    expect(errorOf('{"event_type":"alert",')).toMatchObject({ code: 'not-json' });
    expect(errorOf('{"event_type":"alert"}')).toMatchObject({
      code: 'missing-field',
      field: 'alert',
    });
    expect(errorOf(alertLine({ timestamp: 'yesterday' }))).toMatchObject({ field: 'timestamp' });
    expect(errorOf(alertLine({ timestamp: undefined }))).toMatchObject({
      code: 'missing-field',
      field: 'timestamp',
    });
    expect(errorOf(alertLine({}, { severity: 0 }))).toMatchObject({ field: 'alert.severity' });
    expect(errorOf(alertLine({}, { severity: '1' }))).toMatchObject({ field: 'alert.severity' });
    expect(errorOf(alertLine({}, { severity: 1.5 }))).toMatchObject({ field: 'alert.severity' });
    expect(errorOf(alertLine({}, { signature_id: -1 }))).toMatchObject({
      field: 'alert.signature_id',
    });
    expect(errorOf(alertLine({}, { signature_id: 2 ** 32 }))).toMatchObject({
      field: 'alert.signature_id',
    });
    expect(errorOf(alertLine({}, { signature: undefined }))).toMatchObject({
      field: 'alert.signature',
    });
    expect(errorOf(alertLine({ src_ip: '999.1.1.1' }))).toMatchObject({ field: 'src_ip' });
    expect(errorOf(alertLine({ dest_ip: 'host.example' }))).toMatchObject({ field: 'dest_ip' });
    expect(errorOf(alertLine({ src_port: 65536 }))).toMatchObject({ field: 'src_port' });
    expect(errorOf(alertLine({ vlan: [4096] }))).toMatchObject({ field: 'vlan' });
    expect(errorOf(alertLine({ vlan: 'x' }))).toMatchObject({ field: 'vlan' });
    expect(errorOf(alertLine({ in_iface: 3 }))).toMatchObject({ field: 'in_iface' });
    expect(errorOf('[{"event_type":"alert"}]')).toMatchObject({ code: 'not-object' });
    expect(errorOf('{' + ' '.repeat(MAX_EVE_LINE) + '}')).toMatchObject({ code: 'too-long' });
  });
});

describe('parseEveTimestamp', () => {
  it("reads Suricata's form and its variants to UTC milliseconds", () => {
    expect(parseEveTimestamp('2026-11-26T10:00:00.123456+0000')).toBe(
      Date.UTC(2026, 10, 26, 10, 0, 0, 123),
    );
    expect(parseEveTimestamp('2026-11-26T11:30:00.000000+0130')).toBe(
      Date.UTC(2026, 10, 26, 10, 0, 0),
    );
    expect(parseEveTimestamp('2026-11-26T05:00:00-05:00')).toBe(Date.UTC(2026, 10, 26, 10));
    expect(parseEveTimestamp('2026-11-26T10:00:00.9Z')).toBe(Date.UTC(2026, 10, 26, 10, 0, 0, 900));
    expect(parseEveTimestamp('2028-02-29T00:00:00+0000')).toBe(Date.UTC(2028, 1, 29));
  });

  it('refuses dates that do not exist and other forms', () => {
    for (const text of [
      '2026-02-29T00:00:00+0000',
      '2026-13-01T00:00:00+0000',
      '2026-11-26T24:00:00+0000',
      '2026-11-26T10:00:60+0000',
      '2026-11-26 10:00:00+0000',
      '2026-11-26T10:00:00',
      '2026-11-26T10:00:00+2500',
      '0069-11-26T10:00:00+0000',
      '',
    ])
      expect(parseEveTimestamp(text), text).toBeNull();
  });
});

describe('canonicalIp', () => {
  it('gives the text the devices store', () => {
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIp('FE80:0:0:0:0:0:0:1')).toBe('fe80::1');
    expect(canonicalIp('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(canonicalIp('10.0.0.256')).toBeNull();
    expect(canonicalIp(42)).toBeNull();
  });
});
