import { describe, expect, it } from 'vitest';
import { FlowDecoder, ipv6, MAX_TEMPLATE_FIELDS } from './flow-packet.rules.mjs';
import {
  dataRecords,
  ipfixOptionsRecord,
  ipfixPacket,
  IPV4_FIELDS,
  IPV6_FIELDS,
  padded,
  set,
  templateRecord,
  v5Packet,
  V9_FIELDS,
  v9OptionsRecord,
  v9Packet,
  type Field,
} from './testing/flow-packets.js';

const NOW = 1_800_000_000_000;
const T0 = 1_799_999_990_000;

describe('NetFlow v5', () => {
  const record = {
    src: '10.0.0.1',
    dst: '10.0.0.2',
    srcPort: 40000,
    dstPort: 443,
    protocol: 6,
    packets: 10,
    bytes: 1500,
    first: 90_000,
    last: 99_000,
  };

  it('reads every record with times against the header uptime and export time', () => {
    const result = new FlowDecoder().decode(
      v5Packet([record, { ...record, protocol: 17 }]),
      'x',
      NOW,
    );
    expect(result.error).toBeNull();
    expect(result.records).toHaveLength(2);
    expect(result.records[0]).toMatchObject({
      srcIp: '10.0.0.1',
      dstIp: '10.0.0.2',
      srcPort: 40000,
      dstPort: 443,
      protocol: 6,
      packets: 10,
      bytes: 1500,
      startTime: 1_800_000_000_000 - 10_000,
      endTime: 1_800_000_000_000 - 1_000,
      inIface: 1,
      outIface: 2,
    });
  });

  it('applies the sampling interval of the header', () => {
    const [r] = new FlowDecoder().decode(
      v5Packet([record], { sampling: 0x4000 | 100 }),
      'x',
      NOW,
    ).records;
    expect(r).toMatchObject({ packets: 1000, bytes: 150_000 });
  });

  it('dates a flow that started before an uptime wrap in the past, not 49.7 days ahead', () => {
    const [r] = new FlowDecoder().decode(
      v5Packet([{ ...record, first: 4_294_967_000, last: 200 }], { uptime: 1000 }),
      'x',
      NOW,
    ).records;
    expect(r!.startTime).toBe(NOW - 1000 - 296);
    expect(r!.endTime).toBe(NOW - 800);
  });

  it('keeps the records before a truncation and reports it', () => {
    const bytes = v5Packet([record, record]);
    const decoder = new FlowDecoder();
    const result = decoder.decode(bytes.subarray(0, 24 + 48 + 20), 'x', NOW);
    expect(result.records).toHaveLength(1);
    expect(result.error).toBe('truncated');
    expect(decoder.counters.malformed).toBe(1);
  });
});

describe('NetFlow v9', () => {
  const row = ['192.0.2.1', '198.51.100.7', 5353, 53, 17, 3, 300, 95_000, 99_500, 4, 5, 100];

  it('decodes data with the template of the same datagram, uptime-relative times', () => {
    const packet = v9Packet([
      set(0, templateRecord(300, V9_FIELDS)),
      set(300, dataRecords(V9_FIELDS, [row, row])),
    ]);
    const result = new FlowDecoder().decode(packet, '10.1.1.1', NOW);
    expect(result.error).toBeNull();
    expect(result.records).toHaveLength(2);
    expect(result.records[0]).toEqual({
      srcIp: '192.0.2.1',
      dstIp: '198.51.100.7',
      srcPort: 5353,
      dstPort: 53,
      protocol: 17,
      packets: 3,
      bytes: 300,
      startTime: 1_800_000_000_000 - 5_000,
      endTime: 1_800_000_000_000 - 500,
      inIface: 4,
      outIface: 5,
      vlan: 100,
      tcpFlags: null,
      tos: null,
    });
  });

  it('holds data that arrives before its template and releases it with the template', () => {
    const decoder = new FlowDecoder();
    const early = decoder.decode(v9Packet([set(300, dataRecords(V9_FIELDS, [row]))]), 'e', NOW);
    expect(early.records).toEqual([]);
    expect(early.error).toBeNull();
    expect(decoder.counters.heldSets).toBe(1);
    const later = decoder.decode(
      v9Packet([set(0, templateRecord(300, V9_FIELDS))]),
      'e',
      NOW + 500,
    );
    expect(later.records).toHaveLength(1);
    expect(later.released).toBe(1);
    expect(decoder.counters.releasedSets).toBe(1);
    expect(decoder.held).toHaveLength(0);
  });

  it('drops held data after the hold time, counted, and keeps templates apart per source id', () => {
    const decoder = new FlowDecoder({ holdMs: 1000 });
    decoder.decode(v9Packet([set(300, dataRecords(V9_FIELDS, [row]))], { sourceId: 1 }), 'e', NOW);
    // The template of another source id of the same exporter does not release it.
    const other = decoder.decode(
      v9Packet([set(0, templateRecord(300, V9_FIELDS))], { sourceId: 2 }),
      'e',
      NOW + 10,
    );
    expect(other.records).toEqual([]);
    decoder.decode(v9Packet([], { sourceId: 1 }), 'e', NOW + 2000);
    expect(decoder.counters.expiredSets).toBe(1);
    expect(decoder.held).toHaveLength(0);
  });

  it('applies the sampling interval of an options data record to that exporter only', () => {
    const scope: Field[] = [[1, 4]];
    const options: Field[] = [
      [34, 4],
      [35, 1],
    ];
    const decoder = new FlowDecoder();
    decoder.decode(
      v9Packet([
        set(1, v9OptionsRecord(400, scope, options)),
        set(400, dataRecords([...scope, ...options], [[0, 10, 2]])),
        set(0, templateRecord(300, V9_FIELDS)),
      ]),
      's',
      NOW,
    );
    const [sampled] = decoder.decode(
      v9Packet([set(300, dataRecords(V9_FIELDS, [row]))]),
      's',
      NOW,
    ).records;
    expect(sampled).toMatchObject({ packets: 30, bytes: 3000 });
    decoder.decode(v9Packet([set(0, templateRecord(300, V9_FIELDS))]), 'u', NOW);
    const [plain] = decoder.decode(
      v9Packet([set(300, dataRecords(V9_FIELDS, [row]))]),
      'u',
      NOW,
    ).records;
    expect(plain).toMatchObject({ packets: 3, bytes: 300 });
  });

  it('refuses a variable-length field (IPFIX only) and a template with no bytes', () => {
    const decoder = new FlowDecoder();
    expect(
      decoder.decode(v9Packet([set(0, templateRecord(300, [[8, 0xffff]]))]), 'v', NOW).error,
    ).toBe('bad-template');
    expect(decoder.decode(v9Packet([set(0, templateRecord(301, [[8, 0]]))]), 'v', NOW).error).toBe(
      'bad-template',
    );
    expect(decoder.templateCount).toBe(0);
  });
});

describe('IPFIX', () => {
  const v4row = ['10.9.8.7', '10.9.8.6', 1234, 80, 6, 5, 4000, T0, T0 + 2500];

  it('decodes IPv4 and IPv6 records with absolute ms times, skipping padding', () => {
    const packet = ipfixPacket([
      set(2, templateRecord(256, IPV4_FIELDS), templateRecord(257, IPV6_FIELDS)),
      padded(set(256, dataRecords(IPV4_FIELDS, [v4row])), 3),
      set(257, dataRecords(IPV6_FIELDS, [['2001:db8::1', 'fe80::1:2', 1, 2, 58, 1, 64, T0, T0]])),
    ]);
    const result = new FlowDecoder().decode(packet, 'i', NOW);
    expect(result.error).toBeNull();
    expect(result.records).toEqual([
      expect.objectContaining({
        srcIp: '10.9.8.7',
        dstIp: '10.9.8.6',
        bytes: 4000,
        packets: 5,
        startTime: T0,
        endTime: T0 + 2500,
      }),
      expect.objectContaining({ srcIp: '2001:db8::1', dstIp: 'fe80::1:2', protocol: 58 }),
    ]);
  });

  it('reads variable-length fields (short and long form) and skips enterprise fields', () => {
    const fields: Field[] = [[82, 0xffff], [0x8000 | 12, 4, 29305], ...IPV4_FIELDS, [83, 0xffff]];
    const long = new Uint8Array(300).fill(65);
    const packet = ipfixPacket([
      set(2, templateRecord(300, fields)),
      set(300, dataRecords(fields, [[new Uint8Array([101, 116, 104]), 7, ...v4row, long]])),
    ]);
    const result = new FlowDecoder().decode(packet, 'i', NOW);
    expect(result.error).toBeNull();
    // The enterprise field's id (12 without the bit) is dstIPv4; skipped, it must not win.
    expect(result.records).toEqual([
      expect.objectContaining({ srcIp: '10.9.8.7', dstIp: '10.9.8.6' }),
    ]);
  });

  it('withdraws a template: its later data is held, not decoded with the old layout', () => {
    const decoder = new FlowDecoder();
    decoder.decode(ipfixPacket([set(2, templateRecord(256, IPV4_FIELDS))]), 'w', NOW);
    decoder.decode(ipfixPacket([set(2, templateRecord(256, []))]), 'w', NOW);
    expect(decoder.counters.withdrawn).toBe(1);
    expect(decoder.templateCount).toBe(0);
    const after = decoder.decode(
      ipfixPacket([set(256, dataRecords(IPV4_FIELDS, [v4row]))]),
      'w',
      NOW,
    );
    expect(after.records).toEqual([]);
    expect(decoder.counters.heldSets).toBe(1);
  });

  it('withdraws every template of a domain with id 2, and options templates with id 3', () => {
    const decoder = new FlowDecoder();
    decoder.decode(
      ipfixPacket([
        set(2, templateRecord(256, IPV4_FIELDS), templateRecord(257, IPV6_FIELDS)),
        set(
          3,
          ipfixOptionsRecord(258, 1, [
            [149, 4],
            [305, 4],
          ]),
        ),
      ]),
      'w',
      NOW,
    );
    expect(decoder.templateCount).toBe(3);
    decoder.decode(ipfixPacket([set(2, templateRecord(2, []))]), 'w', NOW);
    expect(decoder.templateCount).toBe(1);
    decoder.decode(ipfixPacket([set(3, templateRecord(3, []))]), 'w', NOW);
    expect(decoder.templateCount).toBe(0);
  });

  it('applies samplingPacketInterval of an options record, and population/size', () => {
    const decoder = new FlowDecoder();
    decoder.decode(
      ipfixPacket(
        [
          set(
            3,
            ipfixOptionsRecord(400, 1, [
              [149, 4],
              [305, 4],
            ]),
          ),
          set(
            400,
            dataRecords(
              [
                [149, 4],
                [305, 4],
              ],
              [[7, 4]],
            ),
          ),
          set(2, templateRecord(256, IPV4_FIELDS)),
        ],
        { domain: 7 },
      ),
      'p',
      NOW,
    );
    const [r] = decoder.decode(
      ipfixPacket([set(256, dataRecords(IPV4_FIELDS, [v4row]))], { domain: 7 }),
      'p',
      NOW,
    ).records;
    expect(r).toMatchObject({ packets: 20, bytes: 16000 });
    decoder.decode(
      ipfixPacket(
        [
          set(
            3,
            ipfixOptionsRecord(401, 1, [
              [149, 4],
              [309, 4],
              [310, 4],
            ]),
          ),
          set(
            401,
            dataRecords(
              [
                [149, 4],
                [309, 4],
                [310, 4],
              ],
              [[7, 1, 50]],
            ),
          ),
        ],
        { domain: 7 },
      ),
      'p',
      NOW,
    );
    const [r2] = decoder.decode(
      ipfixPacket([set(256, dataRecords(IPV4_FIELDS, [v4row]))], { domain: 7 }),
      'p',
      NOW,
    ).records;
    expect(r2).toMatchObject({ packets: 250 });
  });

  it('reads delta-microsecond and NTP-microsecond times', () => {
    const fields: Field[] = [
      [8, 4],
      [12, 4],
      [158, 4],
      [159, 4],
    ];
    const [r] = new FlowDecoder().decode(
      ipfixPacket([
        set(2, templateRecord(256, fields)),
        set(256, dataRecords(fields, [['1.1.1.1', '2.2.2.2', 3_000_000, 1_000_000]])),
      ]),
      'd',
      NOW,
    ).records;
    expect(r).toMatchObject({
      startTime: 1_800_000_000_000 - 3000,
      endTime: 1_800_000_000_000 - 1000,
    });
    const ntp: Field[] = [
      [8, 4],
      [12, 4],
      [154, 8],
      [155, 8],
    ];
    const seconds = 1_800_000_000 + 2_208_988_800;
    const [n] = new FlowDecoder().decode(
      ipfixPacket([
        set(2, templateRecord(256, ntp)),
        set(
          256,
          dataRecords(ntp, [
            ['1.1.1.1', '2.2.2.2', seconds * 2 ** 32, seconds * 2 ** 32 + 2 ** 31],
          ]),
        ),
      ]),
      'd',
      NOW,
    ).records;
    expect(n).toMatchObject({ startTime: 1_800_000_000_000, endTime: 1_800_000_000_500 });
  });

  it('refuses a template wider than the field cap without reading on', () => {
    const fields: Field[] = Array.from({ length: MAX_TEMPLATE_FIELDS + 1 }, () => [1, 4] as const);
    const result = new FlowDecoder().decode(
      ipfixPacket([set(2, templateRecord(256, fields))]),
      'c',
      NOW,
    );
    expect(result.error).toBe('bad-template');
  });

  it('caps templates per exporter key and overall, evicting the least recently used', () => {
    const decoder = new FlowDecoder({ maxTemplatesPerExporter: 4, maxTemplates: 6 });
    for (let id = 256; id < 266; id++)
      decoder.decode(ipfixPacket([set(2, templateRecord(id, IPV4_FIELDS))]), 'a', NOW);
    expect(decoder.templatesOf('a|0')).toBe(4);
    expect(decoder.counters.evictions).toBe(6);
    // The newest four survive.
    const kept = decoder.decode(
      ipfixPacket([set(265, dataRecords(IPV4_FIELDS, [v4row]))]),
      'a',
      NOW,
    );
    expect(kept.records).toHaveLength(1);
    for (let domain = 1; domain <= 3; domain++)
      decoder.decode(ipfixPacket([set(2, templateRecord(256, IPV4_FIELDS))], { domain }), 'b', NOW);
    expect(decoder.templateCount).toBe(6);
    decoder.decode(
      ipfixPacket([set(2, templateRecord(256, IPV4_FIELDS))], { domain: 4 }),
      'b',
      NOW,
    );
    expect(decoder.templateCount).toBe(6);
  });

  it('a template refresh with a new layout replaces the old one', () => {
    const decoder = new FlowDecoder();
    decoder.decode(ipfixPacket([set(2, templateRecord(256, IPV4_FIELDS))]), 'r', NOW);
    decoder.decode(ipfixPacket([set(2, templateRecord(256, IPV6_FIELDS))]), 'r', NOW);
    const [r] = decoder.decode(
      ipfixPacket([set(256, dataRecords(IPV6_FIELDS, [['::1', '::2', 1, 2, 6, 1, 1, T0, T0]]))]),
      'r',
      NOW,
    ).records;
    expect(r).toMatchObject({ srcIp: '::1', dstIp: '::2' });
    expect(decoder.templateCount).toBe(1);
  });
});

describe('ipv6 text', () => {
  const text = (groups: number[]) =>
    ipv6(Uint8Array.from(groups.flatMap((g) => [g >> 8, g & 255])), 0);
  it('compresses the longest zero run and maps IPv4-mapped addresses to IPv4', () => {
    expect(text([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])).toBe('2001:db8::1:0:0:1');
    expect(text([0, 0, 0, 0, 0, 0, 0, 0])).toBe('::');
    expect(text([1, 0, 2, 0, 3, 0, 4, 0])).toBe('1:0:2:0:3:0:4:0');
    expect(text([0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001])).toBe('10.0.0.1');
  });
});
