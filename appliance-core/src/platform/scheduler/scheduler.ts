/**
 * One scheduler for every periodic job: interval jobs (pollers, discovery sweeps, housekeeping)
 * and cron jobs (partition rotation, reports).
 *
 * Invariants:
 * - An interval job runs on its own interval, first after a random jitter within one interval,
 *   then at a fixed rate (due times do not drift with run duration).
 * - A cron job (`cron: '<five fields>'`, optional IANA `timeZone`, UTC by default) is due at each
 *   run of its expression, without jitter (`platform/time/cron.ts` defines the runs, DST gaps and
 *   overlaps included). Its first due time is the first run after it is added.
 * - Slots missed while the process could not run (a suspended laptop, a blocked event loop) are
 *   skipped, not caught up: the next due time is the first slot after now.
 * - Jobs of one kind run at most `concurrency` at a time; a kind may instead collect due jobs into
 *   batches (one fping process for many targets) of at most `maxBatch`.
 * - A job whose previous run is still in flight when it falls due again is skipped (counted as an
 *   overrun), so a slow or dead target never piles up work or delays other jobs.
 * - Changes (add, update, remove) take effect at once; a job keeps its place when its schedule is
 *   unchanged. Time and timers are injectable for tests.
 * - No timer is asked for more than 2^31 - 1 ms (Node fires longer ones at once): a job due later
 *   (a yearly cron job) is reached through intermediate wake-ups.
 */
import { setMaxListeners } from 'node:events';
import { nextCronRun, parseCron, type CronExpression } from '../time/cron.js';
import type { Clock } from '../time/time.js';
import { UTC, requireTimeZone } from '../time/zone.js';

interface JobBase<T> {
  id: string;
  kind: string;
  /** Data handed to the runner (the tracker, device or network the job is about). */
  payload: T;
}

/** An interval job: every `intervalMs`, first after a jitter within one interval. */
export interface IntervalJobSpec<T = unknown> extends JobBase<T> {
  intervalMs: number;
  cron?: undefined;
  timeZone?: undefined;
}

/** A cron job: at each run of a five-field expression in `timeZone` (default UTC). */
export interface CronJobSpec<T = unknown> extends JobBase<T> {
  cron: string;
  timeZone?: string;
  intervalMs?: undefined;
}

export type JobSpec<T = unknown> = IntervalJobSpec<T> | CronJobSpec<T>;

export interface KindOptions<T = unknown> {
  /** How many runs (or batches) of this kind may be in flight at once. */
  concurrency: number;
  /** Runs one job. Exactly one of run / runBatch is given. */
  run?: (job: JobSpec<T>, signal: AbortSignal) => Promise<void>;
  /** Runs several due jobs together. */
  runBatch?: (jobs: JobSpec<T>[], signal: AbortSignal) => Promise<void>;
  maxBatch?: number;
  /**
   * Batch kinds: a batch smaller than `maxBatch` waits up to this long (from when its oldest job
   * fell due) for more due jobs, so jobs spread by jitter form a few large batches rather than many
   * small ones (a process start per batch costs far more than a target in it). Adds at most this
   * much lateness. 0 (default): start batches at once.
   */
  gatherMs?: number;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SchedulerStats {
  jobs: number;
  running: number;
  queued: number;
  runs: number;
  overruns: number;
  failures: number;
  /** Start time minus due time of recent runs, in ms. */
  lateness: { p50: number; p99: number; max: number; samples: number };
}

/** How a job's due times follow one another. */
type Cadence =
  { key: string; intervalMs: number } | { key: string; cron: CronExpression; timeZone: string };

interface Entry {
  spec: JobSpec;
  cadence: Cadence;
  dueAt: number;
  /** The due time of the run queued or in flight (lateness is measured from it). */
  lastDue: number;
  running: boolean;
  queued: boolean;
  /** When the job last joined its kind's queue. */
  queuedAt: number;
  removed: boolean;
  heapIndex: number;
}

const LATENESS_WINDOW = 10_000;
/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Validates a job's schedule once, when it is added (throws with the job id in the message). */
function cadenceOf(spec: JobSpec): Cadence {
  if (spec.cron !== undefined) {
    // Callers outside TypeScript's reach (a spec built from stored rows) may send both.
    if ((spec as { intervalMs?: unknown }).intervalMs !== undefined)
      throw new Error(`job ${spec.id}: give either intervalMs or cron, not both`);
    try {
      const cron = parseCron(spec.cron);
      const timeZone = spec.timeZone === undefined ? UTC : requireTimeZone(spec.timeZone);
      return { key: `cron ${cron.source} ${timeZone}`, cron, timeZone };
    } catch (err) {
      throw new Error(`job ${spec.id}: ${(err as Error).message}`, { cause: err });
    }
  }
  const intervalMs: unknown = spec.intervalMs;
  if (!(typeof intervalMs === 'number' && intervalMs > 0))
    throw new Error(`job ${spec.id}: interval must be positive`);
  return { key: `interval ${intervalMs}`, intervalMs };
}

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly heap: Entry[] = [];
  private readonly kinds = new Map<
    string,
    KindOptions & { running: number; queue: Entry[]; gatherTimer: unknown }
  >();
  private timer: unknown = null;
  private timerAt = Infinity;
  private started = false;
  private readonly abort = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly lateness: number[] = [];
  private counters = { runs: 0, overruns: 0, failures: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers = {
      setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    },
    private readonly random: () => number = Math.random,
    private readonly onError: (err: unknown, jobs: JobSpec[]) => void = () => {},
  ) {
    // One signal is handed to every run in flight (hundreds of TCP checks at once); each run
    // removes its listener when it ends, so the default limit of 10 would only warn falsely.
    setMaxListeners(0, this.abort.signal);
  }

  defineKind<T>(kind: string, options: KindOptions<T>): void {
    if (!options.run === !options.runBatch)
      throw new Error(`kind ${kind}: give exactly one of run or runBatch`);
    // Jobs of a kind carry that kind's payload type; the map stores them type-erased.
    this.kinds.set(kind, { ...(options as KindOptions), running: 0, queue: [], gatherTimer: null });
  }

  /** Adds a job, or replaces it (new schedule or payload) keeping its place when the schedule is unchanged. */
  upsert<T>(spec: JobSpec<T>): void {
    if (!this.kinds.has(spec.kind)) throw new Error(`unknown job kind ${spec.kind}`);
    const cadence = cadenceOf(spec);
    const existing = this.entries.get(spec.id);
    const now = this.clock.now();
    if (existing) {
      const changed = existing.cadence.key !== cadence.key;
      existing.spec = spec;
      existing.cadence = cadence;
      if (changed) this.reschedule(existing, this.firstDue(cadence, now));
      return;
    }
    const entry: Entry = {
      spec: spec,
      cadence,
      dueAt: this.firstDue(cadence, now),
      lastDue: 0,
      running: false,
      queued: false,
      queuedAt: 0,
      removed: false,
      heapIndex: -1,
    };
    this.entries.set(spec.id, entry);
    this.push(entry);
    this.arm();
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.removed = true;
    this.entries.delete(id);
    if (entry.heapIndex >= 0) this.removeAt(entry.heapIndex);
  }

  /** Runs a job as soon as a slot is free (for example "recrawl now"), then keeps its rate. */
  runSoon(id: string): void {
    const entry = this.entries.get(id);
    if (entry) this.reschedule(entry, this.clock.now());
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** The interval of an interval job; undefined for a cron job or an unknown id. */
  intervalOf(id: string): number | undefined {
    const cadence = this.entries.get(id)?.cadence;
    return cadence && 'intervalMs' in cadence ? cadence.intervalMs : undefined;
  }

  async start(): Promise<void> {
    this.started = true;
    this.arm();
  }

  /** Stops scheduling, aborts runs in flight and waits for them to settle. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    for (const kind of this.kinds.values()) {
      if (kind.gatherTimer !== null) this.timers.clearTimeout(kind.gatherTimer);
      kind.gatherTimer = null;
    }
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  stats(): SchedulerStats {
    const sorted = [...this.lateness].sort((a, b) => a - b);
    const pick = (q: number) =>
      sorted.length === 0
        ? 0
        : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
    let running = 0;
    let queued = 0;
    for (const kind of this.kinds.values()) {
      running += kind.running;
      queued += kind.queue.length;
    }
    return {
      jobs: this.entries.size,
      running,
      queued,
      ...this.counters,
      lateness: {
        p50: pick(0.5),
        p99: pick(0.99),
        max: sorted.at(-1) ?? 0,
        samples: sorted.length,
      },
    };
  }

  // --- timing ------------------------------------------------------------------------------

  private firstDue(cadence: Cadence, now: number): number {
    return 'intervalMs' in cadence
      ? now + this.random() * cadence.intervalMs
      : nextCronRun(cadence.cron, now, cadence.timeZone);
  }

  /** The first slot after `now` that follows `dueAt` (missed slots are skipped). */
  private nextDue(cadence: Cadence, dueAt: number, now: number): number {
    if ('intervalMs' in cadence) {
      // Fixed rate: the next due time follows from this one.
      const interval = cadence.intervalMs;
      return dueAt + interval * Math.max(1, Math.ceil((now - dueAt + 1) / interval));
    }
    return nextCronRun(cadence.cron, Math.max(now, dueAt), cadence.timeZone);
  }

  private arm(): void {
    if (!this.started) return;
    const next = this.heap[0];
    if (!next) return;
    if (this.timer !== null && this.timerAt <= next.dueAt) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    const now = this.clock.now();
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next.dueAt - now));
    this.timerAt = delay === MAX_TIMER_MS ? now + delay : next.dueAt;
    this.timer = this.timers.setTimeout(() => this.tick(), delay);
  }

  private tick(): void {
    this.timer = null;
    this.timerAt = Infinity;
    if (!this.started) return;
    const now = this.clock.now();
    const touched = new Set<string>();
    while (this.heap[0] && this.heap[0].dueAt <= now) {
      const entry = this.pop() as Entry;
      const dueAt = entry.dueAt;
      entry.dueAt = this.nextDue(entry.cadence, dueAt, now);
      this.push(entry);
      if (entry.running || entry.queued) {
        this.counters.overruns++;
        continue;
      }
      entry.queued = true;
      entry.queuedAt = now;
      entry.lastDue = dueAt;
      this.kinds.get(entry.spec.kind)?.queue.push(entry);
      touched.add(entry.spec.kind);
    }
    for (const kind of touched) this.drain(kind);
    this.arm();
  }

  private drain(kindName: string): void {
    const kind = this.kinds.get(kindName);
    if (!kind) return;
    while (kind.running < kind.concurrency && kind.queue.length > 0) {
      const size = kind.runBatch ? Math.max(1, kind.maxBatch ?? 100) : 1;
      if (kind.runBatch && (kind.gatherMs ?? 0) > 0 && kind.queue.length < size) {
        const waitMs =
          (kind.queue[0] as Entry).queuedAt + (kind.gatherMs as number) - this.clock.now();
        if (waitMs > 0) {
          if (kind.gatherTimer === null) {
            kind.gatherTimer = this.timers.setTimeout(() => {
              kind.gatherTimer = null;
              if (this.started) this.drain(kindName);
            }, waitMs);
          }
          return;
        }
      }
      const batch = kind.queue.splice(0, size).filter((e) => !e.removed);
      if (batch.length === 0) continue;
      const now = this.clock.now();
      for (const entry of batch) {
        entry.queued = false;
        entry.running = true;
        this.recordLateness(now - entry.lastDue);
      }
      kind.running++;
      this.counters.runs += batch.length;
      const specs = batch.map((e) => e.spec);
      const work = (
        kind.runBatch
          ? kind.runBatch(specs, this.abort.signal)
          : kind.run!(specs[0]!, this.abort.signal)
      )
        .catch((err: unknown) => {
          this.counters.failures += batch.length;
          this.onError(err, specs);
        })
        .finally(() => {
          kind.running--;
          for (const entry of batch) entry.running = false;
          this.inFlight.delete(work);
          if (this.started) this.drain(kindName);
        });
      this.inFlight.add(work);
    }
  }

  private recordLateness(ms: number): void {
    if (this.lateness.length >= LATENESS_WINDOW) this.lateness.shift();
    this.lateness.push(Math.max(0, ms));
  }

  private reschedule(entry: Entry, dueAt: number): void {
    if (entry.heapIndex >= 0) this.removeAt(entry.heapIndex);
    entry.dueAt = dueAt;
    this.push(entry);
    this.arm();
  }

  // --- binary min-heap on dueAt --------------------------------------------------------------

  private push(entry: Entry): void {
    entry.heapIndex = this.heap.length;
    this.heap.push(entry);
    this.up(entry.heapIndex);
  }

  private pop(): Entry | undefined {
    const top = this.heap[0];
    if (!top) return undefined;
    this.removeAt(0);
    return top;
  }

  private removeAt(index: number): void {
    const removed = this.heap[index] as Entry;
    const last = this.heap.pop() as Entry;
    removed.heapIndex = -1;
    if (last !== removed) {
      this.heap[index] = last;
      last.heapIndex = index;
      this.down(index);
      this.up(index);
    }
  }

  private up(index: number): void {
    const heap = this.heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((heap[parent] as Entry).dueAt <= (heap[index] as Entry).dueAt) break;
      this.swap(index, parent);
      index = parent;
    }
  }

  private down(index: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && (heap[left] as Entry).dueAt < (heap[smallest] as Entry).dueAt)
        smallest = left;
      if (right < heap.length && (heap[right] as Entry).dueAt < (heap[smallest] as Entry).dueAt)
        smallest = right;
      if (smallest === index) return;
      this.swap(index, smallest);
      index = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const heap = this.heap;
    const x = heap[a] as Entry;
    const y = heap[b] as Entry;
    heap[a] = y;
    heap[b] = x;
    x.heapIndex = b;
    y.heapIndex = a;
  }
}
