/**
 * The UDP soak of issue 14 ("Decoder fuzzing"), opt-in: `SOAK=1 npx vitest run
 * appliance-core/src/features/logs/syslog.soak.test.ts` (SOAK_SECONDS per phase, default 60,
 * at most 600; SOAK_RATE valid datagrams a second, default 2,000; as many malformed ones).
 *
 * Two phases against one appliance, from a second process on loopback
 * (test/bench/syslog-soak-sender.mjs): a clean run of valid datagrams only, then the same valid
 * traffic with malformed datagrams mixed in (random bytes, invalid UTF-8, no or bad PRI, empty,
 * 60 KB, over-long fields). Pass: the appliance lives and its receiver was never restarted;
 * every valid datagram of the dirty phase is stored as parsed, with the clean phase's loss at
 * most (plus 1 % of what was sent: the kernel may drop a burst on a loaded machine); every
 * malformed one is counted and stored raw (never dropped for being malformed); the counters
 * add up (received = stored + dropped + filtered); peak RSS of the dirty phase stays within
 * 64 MB of the clean phase's.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const SOAK = process.env.SOAK === '1';
const SECONDS = Math.min(600, Math.max(5, Number(process.env.SOAK_SECONDS ?? 60)));
const RATE = Math.min(50_000, Math.max(100, Number(process.env.SOAK_RATE ?? 2000)));
const SENDER = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../test/bench/syslog-soak-sender.mjs',
);

let h: Harness;
let port: number;

interface Counters {
  received: number;
  stored: number;
  dropped: number;
  filtered: number;
  malformed: number;
}

function send(
  validRate: number,
  malformedRate: number,
  label: string,
): Promise<{ valid: number; malformed: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [SENDER, String(port), String(validRate), String(malformedRate), String(SECONDS), label],
      { timeout: (SECONDS + 30) * 1000 },
      (err, stdout) =>
        err ? reject(new Error(err.message)) : resolve(JSON.parse(stdout.trim()) as never),
    );
  });
}

const counters = (): Counters => engine().counts();
const engine = () =>
  h.appliance.engines.find((e) => e.name === 'syslog') as unknown as {
    counts(): Counters;
    worker: unknown;
  };

/** Waits (bounded) until every received datagram is settled, then returns the counters. */
async function settled(): Promise<Counters> {
  let last = counters();
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const next = counters();
    const done =
      next.received === next.stored + next.dropped + next.filtered && next.stored === last.stored;
    last = next;
    if (done) break;
  }
  return last;
}

/** Runs one phase while sampling RSS every 500 ms; returns what was sent and the peak RSS. */
async function phase(label: string, malformedRate: number) {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 500);
  try {
    const before = counters();
    const sent = await send(RATE, malformedRate, label);
    const after = await settled();
    const validStored = h.appliance.db
      .prepare(
        `SELECT count(*) FROM syslog_log WHERE source = 'soakvalid' AND malformed = 0 AND message LIKE ?`,
      )
      .pluck()
      .get(`${label} %`) as number;
    return {
      sent,
      validStored,
      validLost: sent.valid - validStored,
      received: after.received - before.received,
      stored: after.stored - before.stored,
      dropped: after.dropped - before.dropped,
      malformed: after.malformed - before.malformed,
      after,
      peakRssMb: Math.round(peak / 1024 / 1024),
    };
  } finally {
    clearInterval(sampler);
  }
}

beforeAll(async () => {
  if (!SOAK) return;
  h = await startAppliance({ APPLIANCE_SYSLOG_PORT: 'auto' });
  port = h.appliance.ctx.collectorPorts.report().syslog!.udp!;
}, 60_000);
afterAll(() => h?.close());

describe.runIf(SOAK)('syslog UDP soak: malformed datagrams amid valid traffic', () => {
  it(
    'lives, loses no more valid datagrams than the clean run, stores every malformed one raw, and keeps its memory',
    async () => {
      const receiver = engine().worker;
      const clean = await phase('clean', 0);
      const dirty = await phase('dirty', RATE);
      console.log(
        JSON.stringify({ seconds: SECONDS, rate: RATE, clean, dirty }, (k, v) =>
          k === 'after' ? undefined : v,
        ),
      );
      expect(engine().worker).toBe(receiver);
      expect(clean.sent.valid).toBeGreaterThan(RATE * SECONDS * 0.9);
      expect(dirty.validLost).toBeLessThanOrEqual(
        Math.max(0, clean.validLost) + Math.ceil(dirty.sent.valid * 0.01),
      );
      // Nothing the receiver read was lost past it; malformed ones counted as such.
      expect(dirty.after.received).toBe(
        dirty.after.stored + dirty.after.dropped + dirty.after.filtered,
      );
      expect(dirty.dropped).toBe(0);
      expect(dirty.malformed).toBe(dirty.received - dirty.validStored);
      expect(dirty.malformed).toBeGreaterThan(dirty.sent.malformed * 0.9);
      expect(dirty.peakRssMb).toBeLessThanOrEqual(clean.peakRssMb + 64);
      const res = await h.request('GET', '/api/syslog/list?limit=1', { token: await h.login() });
      expect(res.status).toBe(200);
    },
    (SECONDS * 2 + 120) * 1000,
  );
});
