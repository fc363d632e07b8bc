/**
 * Property tests of the eve line parser, seeded from real Suricata lines (testing/eve-lines.ts):
 * random bytes, every truncation of a real line, real lines with fields replaced by random or
 * over-long values. Pass: a typed result (`alert` with columns in range, `ignored`, or `error`
 * with a known code), never a throw, each input under 100 ms.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SHORT, MAX_TEXT, parseEveLine, type EveLineResult } from './eve-line.rules.js';
import { alertLine, REAL_EVE_LINES, SURICATA_ALERT } from './testing/eve-lines.js';

const CODES = ['too-long', 'not-json', 'not-object', 'missing-field', 'bad-field'];
const LIMIT_MS = 100;

/** Parses, timing it, and checks the shape of the result. */
function checked(line: string): EveLineResult {
  const started = performance.now();
  const result = parseEveLine(line);
  const took = performance.now() - started;
  expect(took).toBeLessThan(LIMIT_MS);
  if (result.kind === 'error') expect(CODES).toContain(result.error.code);
  else if (result.kind === 'ignored') expect(typeof result.eventType).toBe('string');
  else {
    const a = result.alert;
    expect(Number.isSafeInteger(a.timestamp)).toBe(true);
    expect([1, 2, 3]).toContain(a.severity);
    expect(a.signature.length).toBeLessThanOrEqual(MAX_TEXT);
    expect((a.category ?? '').length).toBeLessThanOrEqual(MAX_TEXT);
    expect((a.iface ?? '').length).toBeLessThanOrEqual(MAX_SHORT);
    for (const port of [a.srcPort, a.dstPort])
      if (port !== null) expect(port >= 0 && port <= 65535).toBe(true);
    if (a.vlan !== null) expect(a.vlan >= 0 && a.vlan <= 4095).toBe(true);
    expect(a.raw).toBe(line);
  }
  return result;
}

const anyValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ minLength: 5000, maxLength: 70_000 }),
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => Number(n)),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer({ min: -10, max: 5000 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
);
const TOP = [
  'timestamp',
  'src_ip',
  'dest_ip',
  'src_port',
  'dest_port',
  'proto',
  'in_iface',
  'vlan',
  'flow_id',
  'event_type',
];
const ALERT = ['severity', 'signature_id', 'signature', 'category'];

describe('parseEveLine properties', () => {
  it('random bytes: a typed result, never a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        checked(Buffer.from(bytes).toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });

  it('random text around an alert member: a typed result', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (a, b) => {
        checked(`{${a}"event_type":"alert"${b}}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('every truncation of every real line: a typed result (never a half alert)', () => {
    for (const line of REAL_EVE_LINES) {
      const whole = checked(line);
      for (let cut = 0; cut < line.length; cut++) {
        const result = checked(line.slice(0, cut));
        // A cut alert line is never an alert (the closing brace is gone).
        if (whole.kind === 'alert') expect(result.kind).not.toBe('alert');
      }
    }
  });

  it('real alert lines with fields replaced by random or over-long values: a typed result', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...TOP), anyValue, { maxKeys: 4 }),
        fc.dictionary(fc.constantFrom(...ALERT), anyValue, { maxKeys: 3 }),
        (top, alert) => {
          checked(alertLine(top, alert));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('lines near and beyond the cap, deep nesting and many members: a typed result in time', () => {
    checked(alertLine({ payload: 'A'.repeat(250_000) }));
    checked(alertLine({ payload: 'A'.repeat(300_000) }));
    checked('['.repeat(100_000) + ']'.repeat(100_000));
    checked('{"event_type":"alert","a":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}');
    checked(
      '{"event_type":"alert",' +
        Array.from({ length: 20_000 }, (_, i) => `"k${i}":${i}`).join(',') +
        '}',
    );
    checked(SURICATA_ALERT.replace('"flow_id":1630060595', '"flow_id":' + '9'.repeat(5000)));
    checked(SURICATA_ALERT + ' '.repeat(10_000));
  });
});
