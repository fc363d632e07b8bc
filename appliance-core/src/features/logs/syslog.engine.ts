/**
 * The syslog collector (spec part 3 "Syslog"; ARCHITECTURE.md, Storage): a receiver worker
 * thread (syslog-receiver.engine.mjs) that binds UDP and TCP on the daemon variable `port` (read
 * at each start; `config.syslogPort` when it is left out) and batches
 * raw frames to a parse thread it starts (syslog-parser.engine.mjs), which parses and writes
 * through the one storage writer as producer `syslog` under its own queue limit. This
 * class, on the main thread, starts and stops it, keeps it told of the device IP map and of the
 * per-device access config, and reads its counters.
 *
 * Invariants:
 * - start() resolves once both sockets listen (the bound port is recorded in the collector
 *   ports report) or rejects with one line naming the busy protocol, address and port (server.ts
 *   prints it and exits: the boot contract, as for the HTTPS port).
 * - Nothing here touches a datagram: receive and framing happen in the receiver thread, parsing
 *   in the parse thread it starts, so a flood never stalls the API thread, and the API never
 *   stalls intake.
 * - Counters are exact in the workers and read here without a message round trip (a shared array).
 * - A receiver that dies after its start (never expected: input cannot throw) is logged and
 *   started again on the same port a second later; its counters carry on.
 *
 * Limits (docs/features/logs.md): a group is committed every FLUSH_MS or BATCH_ROWS rows, the
 * producer holds at most MAX_QUEUED_WRITES writes (mostly 128-row INSERTs: several seconds at
 * 100,000 msg/s) before it drops and counts; the receiver hands the parse thread at most 65,536
 * frames not yet parsed (32 shared slots); the UDP receive buffer asks for 8 MB (the kernel caps it at
 * net.core.rmem_max; what it granted is logged and kept in `receiveBuffer`).
 */
import { Worker } from 'node:worker_threads';
import type { CoreContext } from '../../platform/context.js';
import type { CollectorPortSetting } from '../../platform/config/config.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';
import { portSettingOf, portToBind } from '../../platform/net/collector-ports.js';
import { stopWorker } from '../../platform/process/stop-worker.js';
import type { DeviceIpMap } from '../devices/index.js';

const WORKER_URL = new URL('./syslog-receiver.engine.mjs', import.meta.url);
const FLUSH_MS = 50;
const BATCH_ROWS = 8192;
const MAX_QUEUED_WRITES = 4096;
const RECEIVE_BUFFER = 8 * 1024 * 1024;
const STOP_TIMEOUT_MS = 4000;
const RESTART_DELAY_MS = 1000;

export interface IntakeCounters {
  received: number;
  stored: number;
  dropped: number;
  /** Not stored by the device's access config (disabled, or below its min_severity). */
  filtered: number;
  /** Stored raw: not readable as RFC 5424 or RFC 3164. */
  malformed: number;
}

export class SyslogEngine {
  readonly name = 'syslog';
  private worker: Worker | null = null;
  private readonly counterBuffer = new SharedArrayBuffer(8 * 5);
  private readonly counters = new Float64Array(this.counterBuffer);
  private unsubscribe: (() => void) | null = null;
  private delays: number[] = [];
  /** The UDP receive buffer the kernel granted (bytes, as SO_RCVBUF reads: twice the usable size). */
  receiveBuffer: number | null = null;
  private readonly committedListeners = new Set<() => void>();
  /** The port both sockets bound, or null when the collector is disabled or stopped. */
  port: number | null = null;
  private stopping = false;
  private restartPort: number | null = null;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: CoreContext,
    private readonly storage: StorageWriter,
    private readonly ipMap: DeviceIpMap,
    private readonly configs: () => [number, number][],
    /** The daemon's stored variables (features/maintenance daemon catalogue), read at each start. */
    private readonly daemonVars: () => Record<string, string> = () => ({}),
  ) {}

  /** The port setting the next start binds: the daemon variable `port`, else the configuration's. */
  portSetting(): CollectorPortSetting {
    return portSettingOf(this.daemonVars().port, this.ctx.config.syslogPort);
  }

  async start(): Promise<void> {
    if (this.worker) return;
    const configured = this.portSetting();
    const setting = portToBind(configured);
    if (setting === null) return;
    const host = this.ctx.config.collectorBind ?? this.ctx.config.bind;
    const writerPort = this.storage.connect('syslog', {
      maxQueued: MAX_QUEUED_WRITES,
      flushMs: 10,
      postEvery: 64,
    });
    const worker = new Worker(WORKER_URL, {
      workerData: {
        host,
        // After a crash the receiver takes back the port it had (an `auto` port included).
        port: this.restartPort ?? (configured === 'auto' ? 'auto' : setting),
        writerPort,
        counters: this.counterBuffer,
        flushMs: FLUSH_MS,
        batchRows: BATCH_ROWS,
        receiveBufferSize: RECEIVE_BUFFER,
        snapshot: this.ipMap.snapshot(),
        configs: this.configs(),
      },
      transferList: [writerPort],
    });
    this.worker = worker;
    const port = await new Promise<number>((resolve, reject) => {
      worker.on(
        'message',
        (msg: {
          type: string;
          port?: number;
          message?: string;
          ms?: number;
          receiveBuffer?: number | null;
        }) => {
          if (msg.type === 'bound') {
            this.receiveBuffer = msg.receiveBuffer ?? null;
            this.ctx.log.info(
              { port: msg.port, asked: RECEIVE_BUFFER, granted: this.receiveBuffer },
              'syslog UDP receive buffer',
            );
            resolve(msg.port as number);
          } else if (msg.type === 'bind-error')
            reject(new Error(`syslog: ${msg.message as string}`));
          else if (msg.type === 'delay') {
            this.recordDelay(msg.ms as number);
            for (const listener of this.committedListeners) listener();
          }
        },
      );
      worker.on('error', (err) => {
        this.ctx.log.error({ err }, 'syslog receiver failed');
        reject(new Error(`syslog: receiver failed: ${err.message}`));
      });
      worker.once('exit', () => {
        if (this.worker === worker) this.worker = null;
        reject(new Error('syslog: receiver exited'));
        if (this.port !== null && !this.stopping) this.restartLater();
      });
    }).catch(async (err: unknown) => {
      await worker.terminate();
      this.worker = null;
      throw err;
    });
    this.port = port;
    this.ctx.collectorPorts.set('syslog', { udp: port, tcp: port });
    this.unsubscribe = this.ipMap.subscribe((snapshot) =>
      this.worker?.postMessage({ type: 'devices', snapshot }),
    );
  }

  async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.restartPort = null;
    const worker = this.worker;
    if (!worker) {
      this.port = null;
      this.ctx.collectorPorts.delete('syslog');
      return;
    }
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await stopWorker(worker, STOP_TIMEOUT_MS);
    this.worker = null;
    this.port = null;
    this.stopping = false;
    this.ctx.collectorPorts.delete('syslog');
  }

  /** The receiver died after it started (a bug, not input): start it again on its port, at most once a second. */
  private restartLater(): void {
    this.ctx.log.error({ port: this.port }, 'syslog receiver exited; restarting it');
    this.restartPort = this.port;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start().catch((err: unknown) =>
        this.ctx.log.error({ err }, 'syslog receiver could not restart'),
      );
    }, RESTART_DELAY_MS);
    this.restartTimer.unref();
  }

  /** A device's access config changed (null: removed; -1: disabled). */
  setDeviceConfig(deviceId: number, minSeverity: number | null): void {
    this.worker?.postMessage({ type: 'config', deviceId, minSeverity });
  }

  counts(): IntakeCounters {
    const c = this.counters;
    return { received: c[0]!, stored: c[1]!, dropped: c[2]!, filtered: c[3]!, malformed: c[4]! };
  }

  /**
   * Told after each batch of syslog rows the writer committed (alerting evaluates the rows
   * committed since it last read, never rescanning windows). Returns the unsubscribe function.
   */
  onCommitted(listener: () => void): () => void {
    this.committedListeners.add(listener);
    return () => this.committedListeners.delete(listener);
  }

  /** Intake-to-committed delay of recent batches (ms): the last 1024, for the p99. */
  delayP99(): number | null {
    if (this.delays.length === 0) return null;
    const sorted = [...this.delays].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
  }

  private recordDelay(ms: number): void {
    this.delays.push(ms);
    if (this.delays.length > 1024) this.delays = this.delays.slice(-1024);
  }
}
