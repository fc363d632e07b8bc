import { describe, expect, it } from 'vitest';
import { Scheduler, type JobSpec, type Timers } from './scheduler.js';

/** Virtual time: timers fire only when the test advances the clock. */
class VirtualTime implements Timers {
  now = 0;
  private pending: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  clock = { now: () => this.now };
  setTimeout(fn: () => void, ms: number) {
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
