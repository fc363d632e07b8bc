/**
 * The IDS intake: follows Suricata's eve.json (the daemon variable `eve_file`, read at each start;
 * APPLIANCE_EVE_FILE when it is left out; idle with neither) and stores each `alert` event
 * exactly once in `eve_log_latest`, with the severity rollup and the file position in the same
 * atomic group of the storage writer (eve-intake.writes.ts). docs/features/ids-intake.md has the
 * whole behaviour; the invariants:
 *
 * - Exactly once. The file is read from the stored position (always the start of a line), in
 *   chunks of whole lines; each chunk's rows, rollup counts and the position just past its last
 *   line commit in one transaction, and the next chunk is read only once that group is settled.
 *   A group whose outcome is unknown (the writer's worker died) or refused (the compare-and-set
 *   of the position) is settled by reading the stored position back: the database, never memory,
 *   says where to go on. A kill -9 at any point therefore resumes where the stored rows end.
 * - Rotation (logrotate's rename, then Suricata's SIGHUP reopen): when the path names another
 *   file and that file has content (Suricata writes there now, so never again to the old one),
 *   the old file is read to its end, then the new one is followed from 0. Until then the old file
 *   stays open and followed (between the rename and the SIGHUP Suricata still writes to it). A
 *   rotation while the appliance was down is found at start: the old file is looked up by its
 *   inode among the path's siblings (`eve.json.1`, `eve.json-2026...`) and finished. At start a
 *   file is recognised by inode alone (st_dev may change across reboots), with the check that
 *   the stored position follows a newline.
 * - Truncation (copytruncate, or `> eve.json`): a size below the position starts over from 0; so
 *   does a stored position that is not just after a newline (the file was replaced in place).
 * - A missing file is waited for (polled), never an error. A partial last line is left unread
 *   until its newline arrives. A line over MAX_EVE_LINE bytes is skipped up to its newline and
 *   counted dropped; a rotated file's unterminated last line is counted dropped too.
 * - Never blocks the API thread: reads are asynchronous (libuv's pool), a chunk is at most
 *   `readBytes` (512 KiB), and parsing yields to the event loop every PARSE_SLICE lines.
 *
 * Counters (this process's lifetime): received = every complete line read and settled; of those,
 * stored (alert rows committed) + ignored (other event types) + dropped (malformed, over-long,
 * unterminated at rotation) = received.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import type { StorageWriterProducer } from '../../platform/db/storage-writer.js';
import type { Clock } from '../../platform/time/time.js';
import { storedEvePosition } from './eve-intake.repository.js';
import {
  chunkOps,
  type EnrichedAlert,
  type EveEndpointDevice,
  type EvePosition,
} from './eve-intake.writes.js';
import { MAX_EVE_LINE, parseEveLine, type EveLineErrorCode } from './eve-line.rules.js';

/** What enrichment needs of the device IP map (features/devices: DeviceIpMap). */
export interface EveDeviceLookup {
  byIp(ip: string): { id: number; label: string; profile: string } | undefined;
}

export interface EveIntakeOptions {
  /** The eve.json to follow (absolute), when `fileOf` names none. */
  file?: string;
  /**
   * Read at each start: the eve.json to follow then (the daemon variable `eve_file`), or
   * undefined to keep `file`. With neither, the engine runs idle (nothing is followed).
   */
  fileOf?: () => string | undefined;
  /** The API connection: the stored position is read from it. */
  db: DB;
  /** The `ids` producer of the storage writer. */
  writer: StorageWriterProducer;
  devices: EveDeviceLookup;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  clock: Clock;
  /** How often the file is checked at its end, or while missing (ms). */
  pollMs?: number;
  /** The largest read, and so the largest chunk of lines in one group (bytes). */
  readBytes?: number;
  /** Lines longer than this (bytes, without the newline) are skipped and counted dropped. */
  maxLineBytes?: number;
  /** Wait before retrying a group that did not commit (ms). */
  retryMs?: number;
}

export interface EveIntakeCounters {
  /** Complete lines read and settled. */
  received: number;
  /** Alert rows committed. */
  stored: number;
  /** Lines not stored: malformed, over-long, or unterminated in a rotated file. */
  dropped: number;
  /** Events of other types (flow, stats, dns ...). */
  ignored: number;
  /** `dropped` by reason. */
  droppedBy: Record<EveLineErrorCode | 'unterminated', number>;
  /** Rotations followed and truncations seen. */
  rotations: number;
  truncations: number;
  /** Groups that did not commit and were retried. */
  retries: number;
}

const PARSE_SLICE = 256;
const NEWLINE = 0x0a;
const WAITING_LOG_MS = 600_000;
const DROP_LOG_MS = 60_000;
const ERROR_LOG_MS = 60_000;

/** A file being read, with the device and inode that identify it. */
interface Open {
  handle: fs.FileHandle;
  dev: bigint;
  inode: bigint;
}

const int64 = (value: bigint) => BigInt.asIntN(64, value);

function zeroCounters(): EveIntakeCounters {
  return {
    received: 0,
    stored: 0,
    dropped: 0,
    ignored: 0,
    droppedBy: {
      'too-long': 0,
      'not-json': 0,
      'not-object': 0,
      'missing-field': 0,
      'bad-field': 0,
      unterminated: 0,
    },
    rotations: 0,
    truncations: 0,
    retries: 0,
  };
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class EveIntakeEngine {
  readonly name = 'ids-intake';
  private readonly pollMs: number;
  private readonly readBytes: number;
  private readonly maxLineBytes: number;
  private readonly retryMs: number;
  private readonly counts = zeroCounters();
  private buffer: Buffer | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private current: Open | null = null;
  /** Where the current file is read from (its committed position, or 0 for a new file). */
  private offset = 0;
  /** What eve_intake_state holds for the path (null: nothing yet). */
  private committed: EvePosition | null = null;
  /** While skipping an over-long line: where the search for its newline goes on. */
  private skipScan: number | null = null;
  private lastWaitLog = 0;
  private lastDropLog = 0;
  private lastErrorLog = 0;
  private unloggedDrops = 0;
  /** The file this run follows (chosen at start), or null while idle or never started. */
  private followed: string | null = null;

  constructor(private readonly options: EveIntakeOptions) {
    this.pollMs = options.pollMs ?? 250;
    this.maxLineBytes = options.maxLineBytes ?? MAX_EVE_LINE;
    this.readBytes = Math.max(options.readBytes ?? 512 * 1024, this.maxLineBytes + 1);
    this.retryMs = options.retryMs ?? 1000;
  }

  /** A snapshot of the counters (see the header). */
  counters(): EveIntakeCounters {
    return { ...this.counts, droppedBy: { ...this.counts.droppedBy } };
  }

  /** The eve file the running engine follows, or null (idle: no file configured). */
  following(): string | null {
    return this.running ? this.followed : null;
  }

  /** The file followed by this run (set by start before the loop runs). */
  private get file(): string {
    if (this.followed === null) throw new Error('IDS intake: no eve file');
    return this.followed;
  }

  start(): Promise<void> {
    if (this.running) return Promise.resolve();
    const file = this.options.fileOf?.() || this.options.file;
    if (!file) {
      this.followed = null;
      this.options.log.info('IDS intake: no eve file configured; idle');
      return Promise.resolve();
    }
    // The loop reads the stored position of this path (each path keeps its own).
    this.followed = file;
    this.stopping = false;
    this.running = this.loop().catch((err: unknown) => {
      this.options.log.error({ err }, 'IDS intake stopped on an unexpected error');
    });
    return Promise.resolve();
  }

  /** Ends the loop after the group in flight is settled, and closes the file. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = null;
    await this.closeCurrent();
  }

  // --- the loop -----------------------------------------------------------------------------

  private async loop(): Promise<void> {
    this.committed = storedEvePosition(this.options.db, this.file);
    while (!this.stopping) {
      let progressed: boolean;
      try {
        progressed = this.current ? await this.step(this.current) : await this.openFile();
      } catch (err) {
        // An unreadable file (permissions, a directory ...) is retried at the poll interval and
        // logged at most once a minute.
        const now = Date.now();
        if (now - this.lastErrorLog >= ERROR_LOG_MS) {
          this.lastErrorLog = now;
          this.options.log.error({ err }, 'IDS intake: reading the eve file failed; retrying');
        }
        await this.closeCurrent();
        progressed = false;
      }
      if (!progressed && !this.stopping) await this.sleep(this.pollMs);
    }
  }

  /** Opens the file to follow (or the rotated one to finish first). False while it is missing. */
  private async openFile(): Promise<boolean> {
    const file = this.file;
    const stored = this.committed;
    if (stored && stored.offset > 0) {
      const atPath = await this.statId(file);
      const sameAsPath = atPath !== null && atPath.inode === stored.inode;
      const previous = sameAsPath ? file : await this.findRotated(stored);
      if (previous !== null) {
        const opened = await this.openAt(previous, stored);
        if (opened) return true;
      }
    }
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (err) {
      if (!isMissing(err)) throw err;
      this.logWaiting();
      return false;
    }
    const st = await handle.stat({ bigint: true });
    this.current = { handle, dev: int64(st.dev), inode: int64(st.ino) };
    this.offset = 0;
    this.skipScan = null;
    this.options.log.info({ file }, 'IDS intake: following the eve file from its start');
    return true;
  }

  /**
   * Opens `file` at the stored position when it is still the stored file and the position is
   * the start of a line in it; otherwise (truncated, replaced) false, and the caller starts over.
   */
  private async openAt(file: string, stored: EvePosition): Promise<boolean> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
    const st = await handle.stat({ bigint: true });
    // By inode alone: st_dev may change across reboots (device-mapper, btrfs); the newline
    // check below guards the rare inode reused by another file.
    const same = int64(st.ino) === stored.inode;
    let lineStart = false;
    if (same && st.size >= BigInt(stored.offset)) {
      const one = Buffer.alloc(1);
      const { bytesRead } = await handle.read(one, 0, 1, stored.offset - 1);
      lineStart = bytesRead === 1 && one[0] === NEWLINE;
    }
    if (!same || !lineStart) {
      await handle.close();
      if (same) this.counts.truncations++;
      return false;
    }
    this.current = { handle, dev: int64(st.dev), inode: stored.inode };
    this.offset = stored.offset;
    this.skipScan = null;
    this.options.log.info(
      { file, offset: stored.offset },
      'IDS intake: resuming the eve file at its stored position',
    );
    return true;
  }

  /** The rotated file that holds the stored position: a sibling named after the path, by inode. */
  private async findRotated(stored: EvePosition): Promise<string | null> {
    const dir = path.dirname(this.file);
    const base = path.basename(this.file);
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return null;
    }
    for (const name of names) {
      if (name === base || !name.startsWith(base) || /\.(gz|xz|bz2|zst|lz4)$/.test(name)) continue;
      const candidate = path.join(dir, name);
      const id = await this.statId(candidate);
      if (id && id.inode === stored.inode) return candidate;
    }
    return null;
  }

  private async statId(file: string): Promise<{ dev: bigint; inode: bigint; size: bigint } | null> {
    try {
      const st = await fs.stat(file, { bigint: true });
      return { dev: int64(st.dev), inode: int64(st.ino), size: st.size };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** One read of the open file and what follows from it. True when something moved. */
  private async step(open: Open): Promise<boolean> {
    if (this.skipScan !== null) return this.skipLongLine(open);
    const buffer = this.readBuffer();
    const { bytesRead } = await open.handle.read(buffer, 0, this.readBytes, this.offset);
    if (bytesRead === 0) return this.atEnd(open, this.offset);
    const last = buffer.lastIndexOf(NEWLINE, bytesRead - 1);
    if (last === -1) {
      // A line without its newline yet: over-long when it cannot fit, else wait for the rest.
      if (bytesRead > this.maxLineBytes) {
        this.skipScan = this.offset + bytesRead;
        return true;
      }
      return this.atEnd(open, this.offset + bytesRead);
    }
    await this.commitLines(open, buffer.subarray(0, last + 1));
    return true;
  }

  /** Looks for the newline that ends an over-long line; its bytes are never kept. */
  private async skipLongLine(open: Open): Promise<boolean> {
    const buffer = this.readBuffer();
    const scanFrom = this.skipScan as number;
    const { bytesRead } = await open.handle.read(buffer, 0, this.readBytes, scanFrom);
    if (bytesRead === 0) return this.atEnd(open, scanFrom);
    const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
    if (newline === -1) {
      this.skipScan = scanFrom + bytesRead;
      return true;
    }
    const end = scanFrom + newline + 1;
    if (await this.commit(open, end, [], { dropped: 1, reason: 'too-long' })) this.skipScan = null;
    return true;
  }

  /**
   * At the end of what the file holds, having looked up to `seen` (beyond the position when a
   * line is unterminated): follows a rotation, restarts after a truncation, or waits (false).
   */
  private async atEnd(open: Open, seen: number): Promise<boolean> {
    const atPath = await this.statId(this.file);
    const size = (await open.handle.stat({ bigint: true })).size;
    const rotated = atPath !== null && (atPath.dev !== open.dev || atPath.inode !== open.inode);
    if (rotated && atPath.size > 0n) {
      // Suricata writes to the new file, so nothing more comes to this one: read what arrived
      // since the last look, count an unterminated last line dropped, then switch.
      if (size > BigInt(seen)) return true;
      if (seen > this.offset) {
        const reason = this.skipScan === null ? 'unterminated' : 'too-long';
        if (!(await this.commit(open, seen, [], { dropped: 1, reason }))) return true;
      }
      await this.closeCurrent();
      this.counts.rotations++;
      this.options.log.info({ file: this.file }, 'IDS intake: the eve file was rotated');
      const handle = await fs.open(this.file, 'r');
      const st = await handle.stat({ bigint: true });
      this.current = { handle, dev: int64(st.dev), inode: int64(st.ino) };
      this.offset = 0;
      this.skipScan = null;
      return true;
    }
    if (size < BigInt(this.offset)) {
      this.options.log.info(
        { file: this.file },
        'IDS intake: the eve file was truncated; reading it from its start',
      );
      this.skipScan = null;
      // The position moves to 0 on its own, so that a restart does not find the truncation again.
      if (await this.commit(open, 0, [], {})) this.counts.truncations++;
      return true;
    }
    return false;
  }

  private readBuffer(): Buffer {
    this.buffer ??= Buffer.allocUnsafe(this.readBytes);
    return this.buffer;
  }

  // --- chunks -------------------------------------------------------------------------------

  /** Parses complete lines (the chunk ends with a newline) and commits them as one group. */
  private async commitLines(open: Open, chunk: Buffer): Promise<void> {
    const alerts: EnrichedAlert[] = [];
    let ignored = 0;
    const errors: EveLineErrorCode[] = [];
    let start = 0;
    let lines = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      let stop = end;
      if (stop > start && chunk[stop - 1] === 0x0d) stop--;
      if (stop > start) {
        if (stop - start > this.maxLineBytes) errors.push('too-long');
        else {
          const result = parseEveLine(chunk.toString('utf8', start, stop));
          if (result.kind === 'alert')
            alerts.push({
              alert: result.alert,
              src: this.device(result.alert.srcIp),
              dst: this.device(result.alert.dstIp),
            });
          else if (result.kind === 'ignored') ignored++;
          else errors.push(result.error.code);
        }
        if (++lines % PARSE_SLICE === 0) await yieldToLoop();
      }
      start = end + 1;
    }
    await this.commit(open, this.offset + chunk.length, alerts, { ignored, errors });
  }

  private device(ip: string): EveEndpointDevice | null {
    const entry = this.options.devices.byIp(ip);
    return entry ? { id: entry.id, host: entry.label, profile: entry.profile } : null;
  }

  /**
   * Commits the alerts with the move of the position to `end` of the open file, then counts.
   * True when committed; otherwise the stored position is read back and followed.
   */
  private async commit(
    open: Open,
    end: number,
    alerts: EnrichedAlert[],
    outcome: {
      ignored?: number;
      errors?: EveLineErrorCode[];
      dropped?: number;
      reason?: EveLineErrorCode | 'unterminated';
    },
  ): Promise<boolean> {
    const to: EvePosition = { dev: open.dev, inode: open.inode, offset: end };
    const from = this.committed ?? { dev: 0n, inode: 0n, offset: 0 };
    const ops = chunkOps(this.file, from, to, alerts, this.options.clock.now());
    const result = await this.options.writer.group(ops);
    let committed = result.committed;
    if (!result.committed) {
      // A group lost with the writer's worker may have committed just before (between COMMIT
      // and its notice): then the stored position is `to`. Any other failure stored nothing;
      // the stored position says where to go on (another follower may have moved it).
      const stored = storedEvePosition(this.options.db, this.file);
      committed =
        result.error.startsWith('lost') &&
        stored !== null &&
        stored.dev === to.dev &&
        stored.inode === to.inode &&
        stored.offset === to.offset;
      if (!committed) {
        this.counts.retries++;
        this.options.log.warn(
          { error: result.error },
          'IDS intake: a chunk was not stored; reading the stored position and retrying',
        );
        this.committed = stored;
        if (
          stored === null ||
          stored.dev !== open.dev ||
          stored.inode !== open.inode ||
          stored.offset !== this.offset
        ) {
          // The stored position is elsewhere: start from it as after a restart.
          await this.closeCurrent();
        }
        await this.sleep(this.retryMs);
        return false;
      }
    }
    this.committed = to;
    this.offset = end;
    const errors = outcome.errors ?? [];
    const dropped = errors.length + (outcome.dropped ?? 0);
    for (const code of errors) this.counts.droppedBy[code]++;
    if (outcome.reason) this.counts.droppedBy[outcome.reason] += outcome.dropped ?? 0;
    this.counts.stored += alerts.length;
    this.counts.ignored += outcome.ignored ?? 0;
    this.counts.dropped += dropped;
    this.counts.received += alerts.length + (outcome.ignored ?? 0) + dropped;
    if (dropped > 0) this.logDrops(dropped);
    return true;
  }

  // --- helpers ------------------------------------------------------------------------------

  private async closeCurrent(): Promise<void> {
    const open = this.current;
    this.current = null;
    this.skipScan = null;
    await open?.handle.close().catch(() => {});
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  private logWaiting(): void {
    const now = Date.now();
    if (now - this.lastWaitLog < WAITING_LOG_MS) return;
    this.lastWaitLog = now;
    this.options.log.warn(
      { file: this.file },
      'IDS intake: the eve file does not exist yet; waiting for it',
    );
  }

  /** Dropped lines are logged by count at most once a minute (never their text). */
  private logDrops(count: number): void {
    this.unloggedDrops += count;
    const now = Date.now();
    if (now - this.lastDropLog < DROP_LOG_MS) return;
    this.lastDropLog = now;
    this.options.log.warn(
      { dropped: this.unloggedDrops, droppedBy: this.counts.droppedBy },
      'IDS intake: eve lines dropped (malformed or over-long)',
    );
    this.unloggedDrops = 0;
  }
}

/** The counters for the intake routes and /metrics; zeros (and `enabled: false`) when IDS intake is off. */
export function eveIntakeCounters(
  engine: EveIntakeEngine | null,
): EveIntakeCounters & { enabled: boolean } {
  return { enabled: engine !== null, ...(engine ? engine.counters() : zeroCounters()) };
}
