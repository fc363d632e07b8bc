/**
 * Property tests of the flow decoders (issue 15, "Decoder fuzzing"): whatever the bytes, decode()
 * answers a result (records, maybe an error) and never throws, within 100 ms per input, with the
 * template cache and the held data within their caps. Seeds: valid v5, v9 and IPFIX datagrams
 * (hand-built in the layout softflowd sends) mutated, truncated at every offset, with length
 * fields forced to 0, 1 and 0xFFFF.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlowDecoder, MAX_HELD_BYTES } from './flow-packet.rules.mjs';
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
const CAPS = { maxTemplatesPerExporter: 8, maxTemplates: 32 };
const T0 = NOW - 5000;

const SEEDS: Record<string, Uint8Array> = {
  v5: v5Packet(
    Array.from({ length: 3 }, (_, i) => ({
      src: `10.0.0.${i + 1}`,
      dst: '10.0.0.200',
      srcPort: 1000 + i,
      dstPort: 80,
      protocol: 6,
      packets: 5,
      bytes: 500,
      first: 1000,
      last: 2000,
    })),
  ),
  v9: v9Packet([
    set(0, templateRecord(300, V9_FIELDS)),
    set(1, v9OptionsRecord(301, [[1, 4]], [[34, 4]])),
    set(
      301,
      dataRecords(
        [
          [1, 4],
          [34, 4],
        ],
        [[0, 4]],
      ),
    ),
    set(300, dataRecords(V9_FIELDS, [['192.0.2.1', '192.0.2.2', 1, 2, 17, 1, 100, 1, 2, 3, 4, 5]])),
  ]),
  ipfix: ipfixPacket([
    set(2, templateRecord(256, IPV4_FIELDS), templateRecord(257, IPV6_FIELDS)),
    set(
      3,
      ipfixOptionsRecord(258, 1, [
        [149, 4],
        [305, 4],
      ]),
    ),
    set(
      258,
      dataRecords(
        [
          [149, 4],
          [305, 4],
        ],
        [[1, 2]],
      ),
    ),
    padded(
      set(256, dataRecords(IPV4_FIELDS, [['10.1.1.1', '10.1.1.2', 1, 2, 6, 3, 300, T0, NOW]])),
      3,
    ),
    set(257, dataRecords(IPV6_FIELDS, [['2001:db8::1', '2001:db8::2', 1, 2, 6, 3, 300, T0, NOW]])),
  ]),
  ipfixVariable: ipfixPacket([
    set(2, templateRecord(259, [[82, 0xffff], [0x8000 | 1, 4, 9], ...IPV4_FIELDS] as Field[])),
    set(
      259,
      dataRecords([[82, 0xffff], [0x8000 | 1, 4, 9], ...IPV4_FIELDS] as Field[], [
        [new Uint8Array([1, 2, 3]), 5, '10.1.1.1', '10.1.1.2', 1, 2, 6, 3, 300, T0, NOW],
      ]),
    ),
  ]),
};

/** Decodes and checks the invariants; returns the time taken. */
function check(decoder: FlowDecoder, bytes: Uint8Array, exporter = 'fuzz'): number {
  const started = performance.now();
  const result = decoder.decode(bytes, exporter, NOW);
  const took = performance.now() - started;
  expect(Array.isArray(result.records)).toBe(true);
  expect(result.error === null || typeof result.error === 'string').toBe(true);
  for (const r of result.records) {
    expect(typeof r.srcIp).toBe('string');
    expect(Number.isFinite(r.bytes) && r.bytes >= 0).toBe(true);
    expect(Number.isFinite(r.startTime)).toBe(true);
  }
  expect(decoder.templateCount).toBeLessThanOrEqual(CAPS.maxTemplates);
  expect(decoder.heldBytes).toBeLessThanOrEqual(MAX_HELD_BYTES);
  expect(took).toBeLessThan(100);
  return took;
}

describe('flow decoders under arbitrary input', () => {
  it('random bytes, and random bytes behind each version header', () => {
    const decoder = new FlowDecoder(CAPS);
    fc.assert(
      fc.property(
        fc.constantFrom(null, 5, 9, 10),
        fc.uint8Array({ maxLength: 1500 }),
        (version, body) => {
          const bytes =
            version === null ? body : Uint8Array.from([0, version, ...body.subarray(2)]);
          check(decoder, bytes);
        },
      ),
      { numRuns: 3000, seed: 15 },
    );
  });

  it('every seed truncated at every offset', () => {
    for (const [name, seed] of Object.entries(SEEDS)) {
      const decoder = new FlowDecoder(CAPS);
      for (let n = 0; n <= seed.length; n++) check(decoder, seed.subarray(0, n), name);
      // The untruncated seed decodes without an error.
      expect(new FlowDecoder().decode(seed, name, NOW).error, name).toBeNull();
    }
  });

  it('every 16-bit word of every seed set to 0, 1 and 0xFFFF (length fields among them)', () => {
    for (const [name, seed] of Object.entries(SEEDS)) {
      const decoder = new FlowDecoder(CAPS);
      for (let o = 0; o + 1 < seed.length; o++)
        for (const value of [0, 1, 0xffff]) {
          const bytes = Uint8Array.from(seed);
          bytes[o] = value >> 8;
          bytes[o + 1] = value & 255;
          check(decoder, bytes, name);
        }
    }
  });

  it('seeds with random bytes flipped', () => {
    const decoder = new FlowDecoder(CAPS);
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.values(SEEDS)),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        (seed, flips) => {
          const bytes = Uint8Array.from(seed);
          for (const [at, v] of flips) bytes[at % bytes.length] = v;
          check(decoder, bytes);
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
  });

  it('a template announcing 65,535 fields, and one that carries as many as a datagram holds', () => {
    const decoder = new FlowDecoder(CAPS);
    const header = Uint8Array.from([1, 0, 0xff, 0xff]);
    check(decoder, ipfixPacket([{ id: 2, body: header }]));
    check(decoder, v9Packet([{ id: 0, body: header }]));
    // 16,377 fields: what fits in one IPFIX datagram (65,535 bytes).
    const fields: Field[] = Array.from({ length: 16_377 }, () => [1, 1] as const);
    const big = ipfixPacket([set(2, templateRecord(256, fields))]);
    expect(big.length).toBeLessThanOrEqual(65_535);
    const result = decoder.decode(big, 'fuzz', NOW);
    expect(result.error).toBe('bad-template');
  });

  it('template-id churn keeps the cache within its caps and counts evictions', () => {
    const decoder = new FlowDecoder(CAPS);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 256, max: 65535 }), fc.integer({ min: 0, max: 9 })), {
          minLength: 1,
          maxLength: 50,
        }),
        (ids) => {
          for (const [id, domain] of ids) {
            check(decoder, ipfixPacket([set(2, templateRecord(id, IPV4_FIELDS))], { domain }));
            check(decoder, ipfixPacket([set(id, dataRecords(IPV4_FIELDS, []))], { domain }));
          }
          for (let domain = 0; domain < 10; domain++)
            expect(decoder.templatesOf(`fuzz|${domain}`)).toBeLessThanOrEqual(
              CAPS.maxTemplatesPerExporter,
            );
        },
      ),
      { numRuns: 200, seed: 3 },
    );
    expect(decoder.counters.evictions).toBeGreaterThan(0);
  });

  it('data sets without templates from many exporters stay within the held caps', () => {
    const decoder = new FlowDecoder(CAPS);
    const body = new Uint8Array(1400).fill(7);
    const packets = Array.from({ length: 100 }, (_, i) => ipfixPacket([{ id: 256 + i, body }]));
    for (let i = 0; i < 10_000; i++) check(decoder, packets[i % 100]!, `10.0.${i % 200}.1`);
    expect(decoder.heldCount).toBeLessThanOrEqual(Math.floor(MAX_HELD_BYTES / 1400));
    expect(decoder.counters.expiredSets).toBeGreaterThan(0);
  });
});
