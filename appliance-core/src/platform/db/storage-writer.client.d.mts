/**
 * Types of storage-writer.client.mjs (plain JavaScript so that worker threads import it under
 * the build and Vitest alike; its JSDoc says the same). Keep the two in step.
 */
import type { MessagePort } from 'node:worker_threads';

export type SqlParam = number | string | bigint | null;

/** One write of an atomic group. */
export interface GroupOp {
  statement: string;
  params: readonly SqlParam[];
}

/** The outcome of an atomic group. */
export type GroupResult = { committed: true } | { committed: false; error: string };

/** What one batch committed for one producer. */
export interface CommitNotice {
  producer: string;
  /** Every write of the producer with a sequence number up to this one is settled (committed or failed). */
  upTo: number;
  /** Writes of the producer committed, and failed (skipped), in this batch. */
  written: number;
  failed: number;
  /** Writes committed in this batch, by statement name. */
  statements: Record<string, number>;
  /** When the batch committed (ms since the epoch). */
  at: number;
}

/** received = written + dropped + failed + lost + queued + inFlight. */
export interface ProducerStats {
  /** Writes asked for (write() calls, and each op of a group). */
  received: number;
  /** Writes committed. */
  written: number;
  /** Writes refused because the producer's queue was full (its newest writes). */
  dropped: number;
  /** Writes skipped because they failed (constraint, missing row ...), or in a group that failed. */
  failed: number;
  /** Writes in flight when the worker ended (crash, close() out of time) and writes after close. */
  lost: number;
  /** Writes buffered on the producer's thread, not yet posted. */
  queued: number;
  /** Writes posted, not yet answered. */
  inFlight: number;
}

export interface LaneOptions {
  /** Writes accepted and not settled beyond this are dropped. */
  maxQueued: number;
  /** Buffered writes are posted at most this long after the first of them (ms). */
  flushMs: number;
  /** Buffered writes are posted as soon as this many are buffered. */
  postEvery: number;
}

export interface LaneHooks {
  resolve(name: string): number | undefined;
  wake(): void;
  failed(count: number, error: string | null): void;
  dropped(count: number): void;
  lost(count: number, reason: string): void;
  listenerError(err: unknown): void;
}

export const COUNTER_FIELDS: readonly (keyof ProducerStats)[];
export function newCounters(): BigInt64Array;
export function readCounters(counters: BigInt64Array): ProducerStats;

/** One producer's queue, sequence numbers, counters and commit notices (see the .mjs header). */
export class Lane {
  constructor(
    name: string,
    options: LaneOptions,
    hooks: LaneHooks,
    counters?: BigInt64Array | null,
  );
  readonly name: string;
  /** Queues a write; returns its sequence number, or 0 when dropped or lost. Throws for an unknown statement. */
  write(statement: string, params: readonly SqlParam[]): number;
  /** Queues writes committed all-or-nothing in one transaction. */
  group(ops: readonly GroupOp[]): Promise<GroupResult>;
  /** Resolves when every write accepted before the call is settled. */
  flush(): Promise<void>;
  onCommit(listener: (notice: CommitNotice) => void): () => void;
  stats(): ProducerStats;
  post(): void;
  attach(port: MessagePort): void;
  detach(reason?: string): void;
  detached(): Promise<void>;
  readonly attached: boolean;
  shut(): void;
  open(): void;
}

/** A producer in another worker thread, built from the port StorageWriter.connect() returned. */
export class StorageWriterClient extends Lane {
  constructor(port: MessagePort);
  /** Flushes (bounded by timeoutMs, 5000 by default) and closes the link; later writes are counted lost. */
  close(timeoutMs?: number): Promise<void>;
}
