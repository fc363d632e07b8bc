/**
 * The syslog parser and the TCP framer (syslog-message.rules.mjs): examples from real `logger`
 * output and the RFCs, then fast-check properties seeded from them (random bytes, truncation at
 * every offset, over-long fields, splicing): every input gives a row to store (typed fields in
 * range, malformed input kept raw), never a throw, in well under 100 ms.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_FIELD,
  MAX_MESSAGE,
  parseSyslog,
  SyslogFramer,
  type SyslogRecord,
} from './syslog-message.rules.mjs';
import { LOGGER_LINES, LOGGER_TCP_STREAM, RFC_LINES } from './testing/syslog-fixtures.js';

const RECEIVED = Date.UTC(2026, 10, 26, 10, 41, 0);
const SEEDS = [...LOGGER_LINES, ...RFC_LINES];
const BUDGET_MS = 100;

function checkRecord(record: SyslogRecord, input: string): void {
  expect(Number.isInteger(record.facility) && record.facility >= 0 && record.facility <= 23).toBe(
    true,
  );
  expect(Number.isInteger(record.severity) && record.severity >= 0 && record.severity <= 7).toBe(
    true,
  );
  expect(typeof record.source).toBe('string');
  expect(record.source.length).toBeLessThanOrEqual(MAX_FIELD);
  expect(typeof record.message).toBe('string');
  expect(record.message.length).toBeLessThanOrEqual(MAX_MESSAGE);
  if (record.host !== null) expect(record.host.length).toBeLessThanOrEqual(MAX_FIELD);
  if (record.reportedAt !== null) expect(Number.isFinite(record.reportedAt)).toBe(true);
  if (record.malformed)
    expect(record.message).toBe(input.replace(/[\r\n\0]+$/, '').slice(0, MAX_MESSAGE));
}

function timed(input: string): SyslogRecord {
  const started = performance.now();
  const record = parseSyslog(input, '127.0.0.1', RECEIVED);
  expect(performance.now() - started).toBeLessThan(BUDGET_MS);
  checkRecord(record, input);
  return record;
}

describe('parseSyslog on real lines', () => {
  it('reads logger RFC 3164 output: PRI, timestamp without year, host and tag', () => {
    expect(timed(LOGGER_LINES[0]!)).toEqual({
      facility: 9,
      severity: 6,
      host: 'vm',
      source: 'cron',
      message: '(root) CMD (run-parts /etc/cron.hourly)',
      reportedAt: Date.UTC(2026, 10, 26, 10, 40, 4),
      malformed: false,
    });
  });

  it('reads logger RFC 5424 output with structured data, NILVALUEs and zones', () => {
    expect(timed(LOGGER_LINES[1]!)).toMatchObject({
      facility: 4,
      severity: 5,
      host: 'vm',
      source: 'sshd',
      message: 'Accepted publickey for admin from 127.0.0.1 port 50022',
      reportedAt: Date.UTC(2026, 10, 26, 10, 40, 4, 554),
    });
    expect(timed(LOGGER_LINES[2]!)).toMatchObject({
      host: null,
      source: 'app',
      message: 'no time quality, no host',
    });
    expect(timed(LOGGER_LINES[3]!).message).toBe('structured');
    expect(timed(RFC_LINES[0]!)).toMatchObject({
      message: "'su root' failed for lonvick on /dev/pts/8",
      source: 'su',
    });
    expect(timed(RFC_LINES[1]!).reportedAt).toBe(Date.UTC(2003, 7, 24, 12, 14, 15, 0));
    expect(timed(RFC_LINES[3]!)).toMatchObject({ message: '', source: 'evntslog' });
  });

  it('reads RFC 3164 variants: no host, a year, a zone name', () => {
    expect(timed(RFC_LINES[5]!)).toMatchObject({
      host: '10.0.0.99',
      message: 'Use the BFG!',
      source: '127.0.0.1',
    });
    expect(timed(RFC_LINES[6]!)).toMatchObject({
      host: 'mymachine',
      source: 'myproc',
      reportedAt: Date.UTC(1987, 7, 24, 5, 34),
    });
    expect(timed('<13>Dec 31 23:59:59 host tag: year before').reportedAt).toBe(
      Date.UTC(2026, 11, 31, 23, 59, 59),
    );
    expect(
      parseSyslog('<13>Dec 31 23:59:59 host tag: late', '127.0.0.1', Date.UTC(2027, 0, 1, 0, 0, 5))
        .reportedAt,
    ).toBe(Date.UTC(2026, 11, 31, 23, 59, 59));
  });

  it('keeps what it cannot read raw, with the sender as source and user.notice', () => {
    for (const input of ['', 'no pri', '<>x', '<192>too high', '<1234>x', '<-1>x'])
      expect(parseSyslog(input, '10.1.1.1', RECEIVED)).toEqual({
        facility: 1,
        severity: 5,
        source: '10.1.1.1',
        message: input,
        host: null,
        reportedAt: null,
        malformed: true,
      });
  });
});

describe('SyslogFramer', () => {
  it('splits RFC 6587 octet-counted and newline frames, across any chunking', () => {
    const expected = [
      '<10>1 2026-11-26T10:40:04.588583+00:00 vm kernel - - [timeQuality tzKnown="1" isSynced="0"] counted frame',
      '<188>Nov 26 10:40:04 vm nginx: newline frame',
    ];
    const stream = Buffer.from(LOGGER_TCP_STREAM);
    for (let cut = 0; cut <= stream.length; cut++) {
      const frames: string[] = [];
      const framer = new SyslogFramer((f) => frames.push(f.toString()));
      framer.push(stream.subarray(0, cut));
      framer.push(stream.subarray(cut));
      framer.end();
      expect(frames, `cut at ${cut}`).toEqual(expected);
    }
  });

  it('bounds what it holds of an endless frame', () => {
    const frames: Buffer[] = [];
    const framer = new SyslogFramer((f) => frames.push(f), 1024);
    for (let i = 0; i < 10; i++) framer.push(Buffer.alloc(500, 0x61));
    expect(frames.map((f) => f.length)).toEqual([1024, 1024, 1024, 1024]);
  });

  it('never throws and never loses bytes on random streams (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4096 }),
        fc.array(fc.nat(4096), { maxLength: 8 }),
        (bytes, cuts) => {
          const frames: Buffer[] = [];
          const framer = new SyslogFramer((f) => frames.push(Buffer.from(f)), 1024);
          let at = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            framer.push(Buffer.from(bytes.subarray(at, Math.max(at, cut))));
            at = Math.max(at, cut);
          }
          framer.push(Buffer.from(bytes.subarray(at)));
          framer.end();
          const total = frames.reduce((n, f) => n + f.length, 0);
          expect(total).toBeLessThanOrEqual(bytes.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('parseSyslog properties (fast-check, seeded from real lines)', () => {
  it('random bytes decoded as UTF-8 give a row, never a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        timed(Buffer.from(bytes).toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });

  it('every truncation of every seed gives a row', () => {
    for (const seed of SEEDS)
      for (let cut = 0; cut <= seed.length; cut++) timed(seed.slice(0, cut));
  });

  it('seeds with spliced random text, over-long fields and random header tokens give a row', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SEEDS),
        fc.nat(),
        fc.string({ maxLength: 64 }),
        fc.nat(200_000),
        (seed, at, insert, repeat) => {
          const i = at % (seed.length + 1);
          timed(seed.slice(0, i) + insert + seed.slice(i));
          // An over-long field at the cut: hostname, tag or message of up to 200,000 characters.
          timed(seed.slice(0, i) + 'h'.repeat(repeat) + seed.slice(i));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('over-long lines are cut to the bounds and stay fast', () => {
    const huge = `<13>1 2026-11-26T10:40:04Z ${'h'.repeat(70_000)} ${'a'.repeat(70_000)} - - - ${'m'.repeat(70_000)}`;
    const record = timed(huge);
    expect(record.host!.length).toBe(MAX_FIELD);
    const bsd = timed(`<13>Nov 26 10:40:04 host ${'t'.repeat(70_000)}: x`);
    expect(bsd.message.length).toBeLessThanOrEqual(MAX_MESSAGE);
    const brackets = timed(`<13>1 - - - - - ${'['.repeat(65_536)}`);
    expect(brackets.malformed).toBe(false);
  });
});
