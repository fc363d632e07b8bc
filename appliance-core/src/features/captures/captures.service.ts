/**
 * Packet captures: the state machine of a capture, its engine run, the chunk stream read from
 * the growing pcapng file, the caps, and restart recovery. docs/features/captures.md describes
 * the behaviour; the routes only translate HTTP to these calls.
 *
 * States: `starting` (row inserted, engine starting) -> `running` (engine captures, the file has
 * its header; only then does POST answer 201) -> `stopped` (stop request, byte cap reached, the
 * device deleted, appliance shutdown or restart) | `expired` (deadline_s passed, or an ephemeral
 * capture not polled for `idleMs`) | `failed` (the engine ended with an error, or could not start:
 * the row is kept with the reason).
 *
 * Invariants:
 * - the file path is derived from the id only (<data dir>/captures/capture-<id>.pcapng); it is
 *   opened without following symlinks, and a path planted before a start is removed first;
 * - chunks tile the file after its header: `pcapng_shb` + every chunk in order = the file, once
 *   the capture has ended (a trailing partial block of an engine that was killed is cut off);
 * - nothing runs without a row: shutdown stops every run; a restart finds rows left active,
 *   ends their engine process if it is still there, and keeps them as stopped rows with their file;
 * - the ended captures' files are bounded in total by `diskMax`, oldest ended pruned first.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DB } from '../../platform/db/database.js';
import type { Clock } from '../../platform/time/time.js';
import {
  EngineRejected,
  EngineUnavailable,
  oneLine,
  type CaptureEngine,
  type EngineExit,
  type EngineRun,
} from './capture-engine.rules.js';
import { ChunkPlanner, splitBlocks, type SplitError } from './pcapng.rules.js';
import {
  activeCaptures,
  captureFileName,
  chunksSince,
  countActive,
  deleteCaptureRow,
  deleteChunksPast,
  endedBefore,
  endedOldestFirst,
  findCapture,
  finishCapture,
  insertCapture,
  insertChunks,
  lastChunk,
  listCaptures,
  markRunning,
  setEngine,
  totalBytes,
  touchPolled,
  updateCounters,
  type CaptureRow,
  type CaptureStatus,
  type ChunkRow,
} from './captures.repository.js';

/** Longest read of the growing file per tick and capture. */
const READ_BYTES = 8 * 1024 * 1024;
export const TICK_MS = 100;
/** At most this much chunk data per poll (spec). */
export const MAX_POLL_BYTES = 4 * 1024 * 1024;

export interface CapturesOptions {
  db: DB;
  clock: Clock;
  /** Directory of the capture files (created 0700). */
  dir: string;
  /** Engines in order of preference; the first usable one captures. */
  engines: readonly CaptureEngine[];
  maxActive: number;
  diskMax: number;
  /** An ephemeral capture not polled for this long expires. */
  idleMs: number;
  log?: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void };
}

export interface CreateCapture {
  userId: number;
  deviceId: number | null;
  label: string | null;
  filter: unknown;
  bpf: string;
  ifaces: string[];
  ephemeral: boolean;
  byteCap: number;
  deadlineS: number;
}

/** The reason-coded failures of the service (the routes map them to the spec's statuses). */
export class CaptureFailure extends Error {
  constructor(
    readonly kind: 'too-many' | 'still-active' | 'unavailable' | 'rejected',
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

interface Active {
  id: number;
  file: string;
  row: CaptureRow;
  run: EngineRun | null;
  planner: ChunkPlanner;
  /** File offset up to which complete blocks were split. */
  parsed: number;
  littleEndian: boolean | null;
  size: number;
  ending: Promise<void> | null;
  corrupt: SplitError | null;
}

export class CapturesService {
  private readonly active = new Map<number, Active>();
  private timer: NodeJS.Timeout | null = null;
  private starting = 0;
  private lastEngine: CaptureEngine | null = null;

  private readonly defaults: Pick<CapturesOptions, 'maxActive' | 'diskMax' | 'idleMs'>;

  constructor(private readonly o: CapturesOptions) {
    this.defaults = { maxActive: o.maxActive, diskMax: o.diskMax, idleMs: o.idleMs };
  }

  /**
   * The limits the next start uses: the daemon's variables where set (the maintenance feature's
   * daemon catalogue: `max_active`, `disk_max_bytes`, `idle_seconds`), the configuration's
   * values otherwise. Called by the engine's start, so a daemon restart applies them.
   */
  applyLimits(limits: { maxActive?: number; diskMax?: number; idleMs?: number }): void {
    this.o.maxActive = limits.maxActive ?? this.defaults.maxActive;
    this.o.diskMax = limits.diskMax ?? this.defaults.diskMax;
    this.o.idleMs = limits.idleMs ?? this.defaults.idleMs;
  }

  /** The limits in force. */
  limits(): { maxActive: number; diskMax: number; idleMs: number } {
    return { maxActive: this.o.maxActive, diskMax: this.o.diskMax, idleMs: this.o.idleMs };
  }

  fileOf(id: number): string {
    return path.join(this.o.dir, captureFileName(id));
  }

  // --- engine lifecycle ------------------------------------------------------------------------

  async start(): Promise<void> {
    fs.mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
    await this.recover();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(
      [...this.active.values()].map((a) => this.end(a, 'stopped', 'shutdown', true)),
    );
  }

  /** Rows left active by a process that ended without stopping them: stopped, file kept. */
  private async recover(): Promise<void> {
    for (const row of activeCaptures(this.o.db)) {
      if (row.pid !== null) await endLeftover(row.pid, this.fileOf(row.id));
      const a = this.track(row, null);
      this.active.delete(row.id);
      this.finalize(a, 'stopped', 'restart', null);
    }
  }

  // --- the usable engine -----------------------------------------------------------------------

  /** The first usable engine, or CaptureFailure('unavailable') naming every cause. */
  async engine(): Promise<CaptureEngine> {
    if (this.lastEngine && (await this.lastEngine.unusable()) === null) return this.lastEngine;
    const causes: string[] = [];
    for (const engine of this.o.engines) {
      const cause = await engine.unusable();
      if (cause === null) {
        this.lastEngine = engine;
        return engine;
      }
      causes.push(`${engine.name}: ${cause}`);
    }
    throw new CaptureFailure(
      'unavailable',
      `No capture engine is available (${causes.join('; ') || 'none configured'}).`,
    );
  }

  // --- reads ------------------------------------------------------------------------------------

  list(userId: number | null): CaptureRow[] {
    return listCaptures(this.o.db, userId);
  }

  find(id: number): CaptureRow | null {
    return findCapture(this.o.db, id);
  }

  // --- create, stop, delete --------------------------------------------------------------------

  async create(input: CreateCapture): Promise<CaptureRow> {
    if (countActive(this.o.db) + this.starting >= this.o.maxActive)
      throw new CaptureFailure(
        'too-many',
        `The appliance runs at most ${this.o.maxActive} captures at once; stop one and try again.`,
      );
    // Starts in flight count against the cap until their row exists (then the row counts).
    this.starting++;
    let inFlight = true;
    const landed = () => {
      if (inFlight) this.starting--;
      inFlight = false;
    };
    try {
      const engine = await this.engine();
      if (countActive(this.o.db) + this.starting - 1 >= this.o.maxActive)
        throw new CaptureFailure(
          'too-many',
          `The appliance runs at most ${this.o.maxActive} captures at once; stop one and try again.`,
        );
      const now = this.o.clock.now();
      const id = insertCapture(this.o.db, { ...input, now });
      landed();
      setEngine(this.o.db, id, engine.name);
      const file = this.fileOf(id);
      // Never write through a path planted before the start (a symlink out of the data dir).
      fs.rmSync(file, { force: true });
      let run: EngineRun;
      try {
        run = await engine.start({
          ifaces: input.ifaces,
          bpf: input.bpf,
          file,
          byteCap: input.byteCap,
        });
      } catch (err) {
        const message = oneLine((err as Error).message);
        // A start the engine refused leaves no row (the spec's "no row created" for 503 alike).
        fs.rmSync(file, { force: true });
        deleteCaptureRow(this.o.db, id);
        if (err instanceof EngineRejected)
          throw new CaptureFailure('rejected', message, err.reason);
        if (err instanceof EngineUnavailable) throw new CaptureFailure('unavailable', message);
        throw err;
      }
      const started = this.o.clock.now();
      markRunning(this.o.db, id, {
        engine: engine.name,
        pid: run.pid,
        headerBytes: 0,
        now: started,
        expiresAt: started + input.deadlineS * 1000,
      });
      const a = this.track(findCapture(this.o.db, id)!, run);
      this.read(a);
      this.saveCounters(a);
      void run.exited.then((exit) => {
        if (!a.ending) a.ending = this.afterExit(a, exit);
      });
      return findCapture(this.o.db, id)!;
    } finally {
      landed();
    }
  }

  /** Stops a capture (idempotent on ended ones) and answers the row with final totals. */
  async stopCapture(id: number): Promise<CaptureRow | null> {
    const a = this.active.get(id);
    if (a) await this.end(a, 'stopped', 'stopped', false);
    return findCapture(this.o.db, id);
  }

  /** Deletes an ended capture with its chunk pointers and file. */
  remove(id: number): boolean {
    const row = findCapture(this.o.db, id);
    if (!row) return false;
    if (row.status === 'starting' || row.status === 'running' || this.active.has(id))
      throw new CaptureFailure(
        'still-active',
        'The capture is still active; stop it before deleting it.',
      );
    this.purge(id);
    return true;
  }

  /** Device deletion: active captures of the device are stopped (their rows and files stay). */
  stopLater(ids: readonly number[]): void {
    for (const id of ids) {
      const a = this.active.get(id);
      if (a) void this.end(a, 'stopped', 'device-deleted', false);
    }
  }

  // --- chunks and the file -------------------------------------------------------------------

  /** The header (when since is 0) and the chunks after `since`; polling keeps ephemeral ones alive. */
  chunks(
    row: CaptureRow,
    since: number,
  ): { header: Buffer | null; chunks: { seq: number; data: Buffer }[] } {
    if (this.active.has(row.id)) touchPolled(this.o.db, row.id, this.o.clock.now());
    const fd = this.openFile(row.id);
    if (fd === null) return { header: since === 0 ? Buffer.alloc(0) : null, chunks: [] };
    try {
      const header = since === 0 ? readAt(fd, 0, this.headerBytes(row)) : null;
      const rows = chunksSince(this.o.db, row.id, since, MAX_POLL_BYTES);
      return {
        header,
        chunks: rows.map((c) => ({ seq: c.seq, data: readAt(fd, c.offset, c.length) })),
      };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** A read stream of the whole file (regular file, not followed through a symlink), or null. */
  openDownload(id: number): { stream: fs.ReadStream; size: number } | null {
    const fd = this.openFile(id);
    if (fd === null) return null;
    const size = fs.fstatSync(fd).size;
    return { stream: fs.createReadStream('', { fd, start: 0, end: Math.max(0, size - 1) }), size };
  }

  private headerBytes(row: CaptureRow): number {
    return this.active.get(row.id)?.planner.headerEnd ?? row.header_bytes;
  }

  /** Opens the capture's file read-only without following a symlink; null unless a regular file. */
  private openFile(id: number): number | null {
    let fd: number;
    try {
      fd = fs.openSync(this.fileOf(id), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch {
      return null;
    }
    if (!fs.fstatSync(fd).isFile()) {
      fs.closeSync(fd);
      return null;
    }
    return fd;
  }

  // --- the running capture --------------------------------------------------------------------

  private track(row: CaptureRow, run: EngineRun | null): Active {
    const last = lastChunk(this.o.db, row.id);
    const planner = new ChunkPlanner({
      nextSeq: (last?.seq ?? 0) + 1,
      ...(last ? { headerEnd: row.header_bytes } : {}),
    });
    const a: Active = {
      id: row.id,
      file: this.fileOf(row.id),
      row,
      run,
      planner,
      parsed: 0,
      littleEndian: null,
      size: 0,
      ending: null,
      corrupt: null,
    };
    if (last) {
      // Resume after the last chunk (restart recovery): the byte order comes from the SHB.
      const fd = this.openFile(row.id);
      if (fd !== null) {
        try {
          const head = splitBlocks(readAt(fd, 0, Math.min(row.header_bytes, 65536)), 0, null);
          a.littleEndian = head.littleEndian;
        } finally {
          fs.closeSync(fd);
        }
      }
      a.parsed = last.offset + last.length;
      planner.packets = row.packets;
    }
    this.active.set(row.id, a);
    return a;
  }

  /** Reads what the engine appended and records the chunks due. */
  private read(a: Active, final = false): void {
    if (a.corrupt) return;
    const fd = this.openFile(a.id);
    if (fd === null) return;
    const now = this.o.clock.now();
    try {
      a.size = fs.fstatSync(fd).size;
      for (let rounds = 0; rounds < 64 && a.parsed < a.size; rounds++) {
        const data = readAt(fd, a.parsed, Math.min(READ_BYTES, a.size - a.parsed));
        const split = splitBlocks(data, a.parsed, a.littleEndian);
        a.planner.add(split.blocks, now);
        a.parsed += split.consumed;
        a.littleEndian = split.littleEndian;
        if (split.error) {
          a.corrupt = split.error;
          break;
        }
        if (split.consumed === 0 || !final) break;
      }
    } finally {
      fs.closeSync(fd);
    }
    const chunks: ChunkRow[] = a.planner.take(now, final);
    insertChunks(this.o.db, a.id, chunks);
  }

  private saveCounters(a: Active): void {
    updateCounters(this.o.db, a.id, {
      packets: a.planner.packets,
      bytes: a.size,
      headerBytes: a.planner.headerEnd,
    });
  }

  private tick(): void {
    const now = this.o.clock.now();
    for (const a of this.active.values()) {
      if (a.ending) continue;
      try {
        this.read(a);
        this.saveCounters(a);
        if (a.corrupt) {
          void this.end(a, 'failed', `The capture file is malformed: ${a.corrupt.message}`, false);
          continue;
        }
        const row = findCapture(this.o.db, a.id);
        if (!row) continue;
        if (a.size >= row.byte_cap) void this.end(a, 'stopped', 'byte-cap', false);
        else if (row.expires_at !== null && now >= row.expires_at)
          void this.end(a, 'expired', 'deadline', false);
        else if (row.ephemeral === 1 && now - (row.polled_at ?? row.created_at) >= this.o.idleMs)
          void this.end(a, 'expired', 'idle', false);
      } catch (err) {
        this.o.log?.error({ err, capture: a.id }, 'capture tick failed');
      }
    }
  }

  /** Ends a run (once): stops the engine, reads the rest, finalizes the row. */
  private end(
    a: Active,
    status: Exclude<CaptureStatus, 'starting' | 'running'>,
    reason: string,
    shutdown: boolean,
  ): Promise<void> {
    a.ending ??= (async () => {
      const exit: EngineExit = a.run ? await a.run.stop() : { error: null, drops: null };
      this.finalize(
        a,
        exit.error && !shutdown ? 'failed' : status,
        exit.error ?? reason,
        exit.drops,
      );
      this.active.delete(a.id);
      this.prune();
    })();
    return a.ending;
  }

  /** The engine ended by itself: its own byte-cap stop, or an error. */
  private async afterExit(a: Active, exit: EngineExit): Promise<void> {
    this.read(a, true);
    const status = exit.error ? 'failed' : 'stopped';
    const reason = exit.error ?? (a.size >= a.row.byte_cap - 2048 ? 'byte-cap' : 'engine-ended');
    this.finalize(a, status, reason, exit.drops);
    this.active.delete(a.id);
    this.prune();
  }

  private finalize(
    a: Active,
    status: Exclude<CaptureStatus, 'starting' | 'running'>,
    reason: string,
    drops: number | null,
  ): void {
    this.read(a, true);
    // A killed engine may leave half a block: cut it so the file is what the chunks tile.
    if (!a.corrupt && a.size > a.parsed) {
      try {
        const fd = fs.openSync(a.file, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
        try {
          fs.ftruncateSync(fd, a.parsed);
        } finally {
          fs.closeSync(fd);
        }
        a.size = a.parsed;
      } catch (err) {
        this.o.log?.warn({ err, capture: a.id }, 'could not cut a partial block');
      }
    }
    if (a.corrupt) deleteChunksPast(this.o.db, a.id, a.parsed);
    finishCapture(this.o.db, a.id, {
      status: a.corrupt ? 'failed' : status,
      reason: a.corrupt ? `The capture file is malformed: ${a.corrupt.message}` : reason,
      packets: a.planner.packets,
      bytes: a.size,
      drops,
      headerBytes: a.planner.headerEnd,
      now: this.o.clock.now(),
    });
  }

  private purge(id: number): void {
    fs.rmSync(this.fileOf(id), { force: true });
    deleteCaptureRow(this.o.db, id);
  }

  /**
   * Retention: removes the ended captures (file and row) that ended before `cutoff`, 100 at a
   * time with a turn of the event loop between; a running capture is never touched. Returns how
   * many were removed.
   */
  async pruneEndedBefore(cutoff: number): Promise<number> {
    let removed = 0;
    for (let round = 0; round < 100_000; round++) {
      const rows = endedBefore(this.o.db, cutoff, 100);
      for (const row of rows) this.purge(row.id);
      removed += rows.length;
      if (rows.length < 100) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return removed;
  }

  /** Bytes of the capture files on disk (their recorded sizes). */
  fileBytes(): number {
    return totalBytes(this.o.db);
  }

  /** Keeps the capture files within diskMax: oldest ended captures go first. */
  prune(): void {
    let total = totalBytes(this.o.db);
    if (total <= this.o.diskMax) return;
    for (const row of endedOldestFirst(this.o.db)) {
      if (total <= this.o.diskMax) break;
      this.purge(row.id);
      total -= row.bytes;
    }
  }
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buffer, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buffer : buffer.subarray(0, got);
}

/** Ends an engine process a previous run left behind, when it is still writing our file. */
async function endLeftover(pid: number, file: string): Promise<void> {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.split('\u0000').includes(file)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    if (!fs.existsSync(`/proc/${pid}`)) return;
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
