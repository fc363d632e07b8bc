import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, Scheduler, type JobSpec, type Timers } from './scheduler.js';

/** Virtual time: timers fire only when the test advances the clock. */
class VirtualTime implements Timers {
  now = 0;
  private pending: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  /** The longest delay asked for (Node fires a delay above 2^31 - 1 ms at once). */
  longestDelay = 0;
  clock = { now: () => this.now };
  setTimeout(fn: () => void, ms: number) {
    this.longestDelay = Math.max(this.longestDelay, ms);
    const id = ++this.ids;
    this.pending.push({ at: this.now + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }
  async advance(ms: number) {
    const end = this.now + ms;
    for (;;) {
      this.pending.sort((a, b) => a.at - b.at);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.now = next.at;
      next.fn();
      await new Promise((r) => setImmediate(r));
    }
    this.now = end;
    await new Promise((r) => setImmediate(r));
  }
}

const job = (id: string, intervalMs: number, kind = 'k'): JobSpec<string> => ({
  id,
  kind,
  intervalMs,
  payload: id,
});

describe('Scheduler', () => {
  it('runs each job at its own fixed rate after a jitter within one interval', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0.5);
    const runs: [string, number][] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 10,
      run: async (j) => void runs.push([j.payload, time.now]),
    });
    scheduler.upsert(job('a', 1000));
    scheduler.upsert(job('b', 3000));
    await scheduler.start();
    await time.advance(6000);
    expect(runs.filter(([id]) => id === 'a').map(([, t]) => t)).toEqual([
      500, 1500, 2500, 3500, 4500, 5500,
    ]);
    expect(runs.filter(([id]) => id === 'b').map(([, t]) => t)).toEqual([1500, 4500]);
    expect(scheduler.stats().lateness.max).toBe(0);
    await scheduler.stop();
  });

  it('bounds concurrency per kind and skips a job still running when it falls due again', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0);
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    scheduler.defineKind('slow', {
      concurrency: 2,
      run: () =>
        new Promise<void>((resolve) => {
          running++;
          peak = Math.max(peak, running);
          release.push(() => {
            running--;
            resolve();
          });
        }),
    });
    for (const id of ['a', 'b', 'c']) scheduler.upsert(job(id, 1000, 'slow'));
    await scheduler.start();
    await time.advance(2500);
    expect(peak).toBe(2);
    const stats = scheduler.stats();
    expect(stats.overruns).toBeGreaterThan(0);
    expect(stats.queued).toBe(1);
    release.splice(0).forEach((r) => r());
    await time.advance(1);
    expect(running).toBe(1);
    release.splice(0).forEach((r) => r());
    await scheduler.stop();
  });

  it('a failing job is counted and reported but keeps its cadence, and others are unaffected', async () => {
    const time = new VirtualTime();
    const errors: string[] = [];
    const scheduler = new Scheduler(
      time.clock,
      time,
      () => 0,
      (err, jobs) => errors.push(`${jobs[0]?.id}: ${(err as Error).message}`),
    );
    const runs: string[] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 5,
      run: async (j) => {
        runs.push(j.id);
        if (j.id === 'bad') throw new Error('timeout');
      },
    });
    scheduler.upsert(job('bad', 1000));
    scheduler.upsert(job('good', 1000));
    await scheduler.start();
    await time.advance(2500);
    expect(runs.filter((r) => r === 'bad')).toHaveLength(3);
    expect(runs.filter((r) => r === 'good')).toHaveLength(3);
    expect(errors[0]).toBe('bad: timeout');
    expect(scheduler.stats().failures).toBe(3);
    await scheduler.stop();
  });

  it('applies interval changes and removals at once', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0);
    const runs: [string, number][] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 5,
      run: async (j) => void runs.push([j.id, time.now]),
    });
    scheduler.upsert(job('a', 1000));
    scheduler.upsert(job('b', 1000));
    await scheduler.start();
    await time.advance(1500);
    scheduler.upsert(job('a', 5000));
    scheduler.remove('b');
    await time.advance(10_000);
    expect(runs.filter(([id]) => id === 'b').length).toBe(2);
    expect(runs.filter(([id, t]) => id === 'a' && t >= 1500).map(([, t]) => t)).toEqual([
      1500, 6500, 11500,
    ]);
    expect(scheduler.has('b')).toBe(false);
    await scheduler.stop();
  });

  it('batches due jobs of a batch kind up to maxBatch', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0);
    const batches: number[] = [];
    scheduler.defineKind('icmp', {
      concurrency: 1,
      maxBatch: 40,
      runBatch: async (jobs) => void batches.push(jobs.length),
    });
    for (let i = 0; i < 100; i++) scheduler.upsert(job(`t${i}`, 10_000, 'icmp'));
    await scheduler.start();
    await time.advance(1);
    expect(batches).toEqual([40, 40, 20]);
    await scheduler.stop();
  });

  it('gathers jobs that fall due close together into one batch, waiting at most gatherMs', async () => {
    const time = new VirtualTime();
    // Jitter spreads the 10 jobs over their first interval: job i falls due at i * 10 ms.
    let n = 0;
    const scheduler = new Scheduler(time.clock, time, () => (n++ * 10) / 10_000);
    const batches: [number, number][] = [];
    scheduler.defineKind('icmp', {
      concurrency: 4,
      maxBatch: 100,
      gatherMs: 50,
      runBatch: async (jobs) => void batches.push([time.now, jobs.length]),
    });
    for (let i = 0; i < 10; i++) scheduler.upsert(job(`t${i}`, 10_000, 'icmp'));
    await scheduler.start();
    await time.advance(200);
    // Without gathering: ten batches of one. With it: each batch starts 50 ms after its oldest job
    // fell due (0 and 50), with the jobs due before then.
    expect(batches).toEqual([
      [50, 5],
      [100, 5],
    ]);
    expect(scheduler.stats().lateness.max).toBeLessThanOrEqual(50);
    await scheduler.stop();
  });

  it('starts a gathering batch at once when it reaches maxBatch', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0);
    const batches: [number, number][] = [];
    scheduler.defineKind('icmp', {
      concurrency: 1,
      maxBatch: 40,
      gatherMs: 1000,
      runBatch: async (jobs) => void batches.push([time.now, jobs.length]),
    });
    for (let i = 0; i < 100; i++) scheduler.upsert(job(`t${i}`, 10_000, 'icmp'));
    await scheduler.start();
    await time.advance(1);
    expect(batches).toEqual([
      [0, 40],
      [0, 40],
    ]);
    await time.advance(1000);
    expect(batches.at(-1)).toEqual([1000, 20]);
    await scheduler.stop();
  });

  it('stop() aborts runs in flight and waits for them', async () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time, () => 0);
    let aborted = false;
    scheduler.defineKind('k', {
      concurrency: 1,
      run: (_j, signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => ((aborted = true), resolve())),
        ),
    });
    scheduler.upsert(job('a', 1000));
    await scheduler.start();
    await time.advance(1);
    await scheduler.stop();
    expect(aborted).toBe(true);
  });
});

const cronJob = (id: string, cron: string, timeZone?: string, kind = 'k'): JobSpec<string> => ({
  id,
  kind,
  cron,
  ...(timeZone === undefined ? {} : { timeZone }),
  payload: id,
});

const at = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

describe('Scheduler cron jobs', () => {
  it('runs a cron job at each run of its expression, without jitter', async () => {
    const time = new VirtualTime();
    time.now = at('2026-01-01T10:07:30Z');
    const scheduler = new Scheduler(time.clock, time, () => 0.5);
    const runs: string[] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 10,
      run: async (j) => void runs.push(`${j.id}@${iso(time.now)}`),
    });
    scheduler.upsert(cronJob('quarter', '*/15 * * * *'));
    scheduler.upsert(cronJob('noon-weekdays', '0 12 * * mon-fri'));
    scheduler.upsert(job('interval', 30 * 60_000)); // interval jobs keep their jitter
    await scheduler.start();
    await time.advance(3 * 86_400_000); // Thursday 1 January to Sunday 4 January
    const of = (id: string) =>
      runs.filter((r) => r.startsWith(`${id}@`)).map((r) => r.slice(id.length + 1));
    expect(of('quarter').slice(0, 4)).toEqual([
      '2026-01-01T10:15:00Z',
      '2026-01-01T10:30:00Z',
      '2026-01-01T10:45:00Z',
      '2026-01-01T11:00:00Z',
    ]);
    expect(of('quarter')).toHaveLength(4 * 24 * 3); // 10:15 on day 1 to 10:00 on day 4
    expect(of('noon-weekdays')).toEqual(['2026-01-01T12:00:00Z', '2026-01-02T12:00:00Z']);
    expect(of('interval')[0]).toBe('2026-01-01T10:22:30Z');
    expect(scheduler.stats().lateness.max).toBe(0);
    expect(scheduler.stats().jobs).toBe(3);
    await scheduler.stop();
  });

  it('follows the job’s time zone through a DST gap and overlap', async () => {
    const time = new VirtualTime();
    time.now = at('2026-03-27T12:00:00Z');
    const scheduler = new Scheduler(time.clock, time);
    const runs: string[] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 1,
      run: async () => void runs.push(iso(time.now)),
    });
    scheduler.upsert(cronJob('nightly', '30 2 * * *', 'Europe/Berlin'));
    await scheduler.start();
    await time.advance(4 * 86_400_000);
    expect(runs).toEqual([
      '2026-03-28T01:30:00Z', // 02:30 CET
      '2026-03-29T01:00:00Z', // 02:30 does not exist: 03:00 CEST, once
      '2026-03-30T00:30:00Z', // 02:30 CEST
      '2026-03-31T00:30:00Z',
    ]);
    await scheduler.stop();

    const autumn = new VirtualTime();
    autumn.now = at('2026-10-24T12:00:00Z');
    const later = new Scheduler(autumn.clock, autumn);
    const autumnRuns: string[] = [];
    later.defineKind<string>('k', {
      concurrency: 1,
      run: async () => void autumnRuns.push(iso(autumn.now)),
    });
    later.upsert(cronJob('nightly', '30 2 * * *', 'Europe/Berlin'));
    await later.start();
    later.runSoon('nightly'); // "run now" keeps the cron slots afterwards
    await autumn.advance(2 * 86_400_000);
    expect(autumnRuns).toEqual([
      '2026-10-24T12:00:00Z', // the run asked for
      '2026-10-25T00:30:00Z', // 02:30 CEST; not again at 02:30 CET (01:30 UTC)
      '2026-10-26T01:30:00Z', // 02:30 CET
    ]);
    await later.stop();
  });

  it('skips a cron run while the previous one is still running, and bounds concurrency', async () => {
    const time = new VirtualTime();
    time.now = at('2026-01-01T00:00:00Z');
    const scheduler = new Scheduler(time.clock, time);
    const started: { id: string; at: string }[] = [];
    const release = new Map<string, () => void>();
    scheduler.defineKind<string>('slow', {
      concurrency: 2,
      run: (j) =>
        new Promise<void>((resolve) => {
          started.push({ id: j.id, at: iso(time.now) });
          release.set(j.id, resolve);
        }),
    });
    for (const id of ['a', 'b', 'c']) scheduler.upsert(cronJob(id, '* * * * *', undefined, 'slow'));
    await scheduler.start();
    await time.advance(60_000); // 00:01: two start, the third queues
    expect(started.map((s) => s.at)).toEqual(['2026-01-01T00:01:00Z', '2026-01-01T00:01:00Z']);
    expect(scheduler.stats()).toMatchObject({ running: 2, queued: 1, overruns: 0 });
    const waiting = ['a', 'b', 'c'].find((id) => !started.some((s) => s.id === id)) as string;
    await time.advance(60_000); // 00:02: all three still running or queued: three overruns
    expect(scheduler.stats()).toMatchObject({ running: 2, queued: 1, overruns: 3 });
    release.get(started[0]?.id as string)?.(); // one ends: the queued job takes its slot, 60 s late
    await time.advance(0);
    expect(started[2]).toEqual({ id: waiting, at: '2026-01-01T00:02:00Z' });
    expect(scheduler.stats().lateness.max).toBe(60_000);
    for (const r of release.values()) r();
    await time.advance(0); // the runs settle
    expect(scheduler.stats().running).toBe(0);
    await time.advance(60_000); // 00:03: due again, two start at their slot, one queues
    expect(started.slice(3).map((s) => s.at)).toEqual([
      '2026-01-01T00:03:00Z',
      '2026-01-01T00:03:00Z',
    ]);
    expect(scheduler.stats()).toMatchObject({ runs: 5, queued: 1, overruns: 3 });
    for (const r of release.values()) r();
    await scheduler.stop();
  });

  it('reschedules when the schedule changes and keeps its place when it does not', async () => {
    const time = new VirtualTime();
    time.now = at('2026-01-01T00:00:00Z');
    const scheduler = new Scheduler(time.clock, time, () => 0);
    const runs: string[] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 1,
      run: async () => void runs.push(iso(time.now)),
    });
    scheduler.upsert(cronJob('j', '0 * * * *'));
    await scheduler.start();
    await time.advance(30 * 60_000);
    scheduler.upsert({ ...cronJob('j', '0  *  *  *  *'), payload: 'new payload' }); // same schedule
    await time.advance(30 * 60_000);
    expect(runs).toEqual(['2026-01-01T01:00:00Z']);
    scheduler.upsert(cronJob('j', '0 * * * *', 'Asia/Kolkata')); // +05:30: on the half hour in UTC
    await time.advance(60 * 60_000);
    expect(runs.at(-1)).toBe('2026-01-01T01:30:00Z');
    scheduler.upsert(job('j', 10 * 60_000)); // to an interval (jitter 0: due at once)
    await time.advance(25 * 60_000);
    expect(runs.slice(-3)).toEqual([
      '2026-01-01T02:00:00Z',
      '2026-01-01T02:10:00Z',
      '2026-01-01T02:20:00Z',
    ]);
    await scheduler.stop();
  });

  it('refuses a bad cron job with the job and the field named', () => {
    const time = new VirtualTime();
    const scheduler = new Scheduler(time.clock, time);
    scheduler.defineKind('k', { concurrency: 1, run: async () => {} });
    expect(() => scheduler.upsert(cronJob('rotate', '0 0 * * 8'))).toThrow(
      'job rotate: day-of-week: 8 is out of range (0-7)',
    );
    expect(() => scheduler.upsert(cronJob('rotate', '0 0 * *'))).toThrow(
      /job rotate: expected 5 fields/,
    );
    expect(() => scheduler.upsert(cronJob('rotate', '0 0 * * *', 'Mars/Olympus'))).toThrow(
      /job rotate: unknown time zone/,
    );
    expect(() =>
      scheduler.upsert({
        ...cronJob('rotate', '0 0 * * *'),
        intervalMs: 1000,
      } as unknown as JobSpec),
    ).toThrow(/either intervalMs or cron/);
    expect(() => scheduler.upsert(job('tick', 0))).toThrow(/interval must be positive/);
    expect(scheduler.has('rotate')).toBe(false);
  });

  it('never asks for a timer beyond 2^31 - 1 ms and still runs a yearly job on time', async () => {
    const time = new VirtualTime();
    time.now = at('2026-01-01T00:00:01Z');
    const scheduler = new Scheduler(time.clock, time);
    const runs: string[] = [];
    scheduler.defineKind<string>('k', {
      concurrency: 1,
      run: async () => void runs.push(iso(time.now)),
    });
    scheduler.upsert(cronJob('new-year', '0 0 1 1 *'));
    scheduler.upsert(job('every-40-days', 40 * 86_400_000));
    await scheduler.start();
    await time.advance(2 * 366 * 86_400_000);
    expect(time.longestDelay).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect(runs.filter((r) => r.endsWith('-01-01T00:00:00Z'))).toEqual([
      '2027-01-01T00:00:00Z',
      '2028-01-01T00:00:00Z',
    ]);
    expect(scheduler.stats().lateness.max).toBe(0);
    await scheduler.stop();
  });
});
