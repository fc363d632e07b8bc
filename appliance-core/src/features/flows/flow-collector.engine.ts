/**
 * The flow collector (issue 15; ARCHITECTURE.md, Storage): a receiver worker thread
 * (flow-receiver.engine.mjs) that binds UDP on the daemon variable `port` (read at each start;
 * `config.netflowPort` when it is left out), decodes NetFlow v5, v9 and
 * IPFIX and writes through the one storage writer as producer `flows` under its own queue
 * limit. This class, on the main thread, starts and stops it, keeps it told of the device IP
 * map, and reads its counters.
 *
 * Invariants:
 * - start() resolves once the socket listens (the port is recorded in the collector ports
 *   report as `netflow`) or rejects with one line naming the address and port (the boot
 *   contract: a busy fixed port ends the process, as for syslog).
 * - Nothing here touches a datagram: a flood never stalls the API thread.
 * - Counters are exact in the worker and read here without a message round trip.
 * - A receiver that dies after its start (never expected: input cannot throw) is logged and
 *   started again on the same port a second later, as the syslog engine does; its counters
 *   carry on (the new worker continues from the shared array; `templates` is the cache it holds
 *   now, which starts empty: exporters resend templates, held data waits for them).
 *
 * Limits (docs/features/flows.md): a batch is committed every FLUSH_MS or BATCH_ROWS records;
 * the producer holds at most MAX_QUEUED_WRITES writes before it drops batches and counts them;
 * the UDP receive buffer asks for 8 MB.
 */
import { Worker } from 'node:worker_threads';
import type { CoreContext } from '../../platform/context.js';
import type { CollectorPortSetting } from '../../platform/config/config.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';
import { portSettingOf, portToBind } from '../../platform/net/collector-ports.js';
import { stopWorker } from '../../platform/process/stop-worker.js';
import type { DeviceIpMap } from '../devices/index.js';

const WORKER_URL = new URL('./flow-receiver.engine.mjs', import.meta.url);
const FLUSH_MS = 50;
const BATCH_ROWS = 4096;
// A batch is one atomic group of up to BATCH_ROWS / 32 inserts and BATCH_ROWS / 16 upserts.
const MAX_QUEUED_WRITES = 32_768;
const RECEIVE_BUFFER = 8 * 1024 * 1024;
const STOP_TIMEOUT_MS = 4000;
const RESTART_DELAY_MS = 1000;

/** The worker's counters, in its order (flow-receiver.engine.mjs COUNTERS). */
const COUNTERS = [
  'datagrams',
  'received',
  'stored',
  'dropped',
  'malformed',
  'held',
  'released',
  'expired',
  'evictions',
  'templates',
] as const;

export type FlowCounters = Record<(typeof COUNTERS)[number], number>;

export class FlowCollectorEngine {
  readonly name = 'flows';
  private worker: Worker | null = null;
  private readonly counterBuffer = new SharedArrayBuffer(8 * COUNTERS.length);
  private readonly counters = new Float64Array(this.counterBuffer);
  private unsubscribe: (() => void) | null = null;
  /** The bound port, or null when disabled or stopped. */
  port: number | null = null;
  private stopping = false;
  /** Counts stop() calls: a start that binds after a stop began does not publish its port. */
  private stops = 0;
  private restartPort: number | null = null;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: CoreContext,
    private readonly storage: StorageWriter,
    private readonly ipMap: DeviceIpMap,
    /** The daemon's stored variables (features/maintenance daemon catalogue), read at each start. */
    private readonly daemonVars: () => Record<string, string> = () => ({}),
  ) {}

  /** The port setting the next start binds: the daemon variable `port`, else the configuration's. */
  portSetting(): CollectorPortSetting {
    return portSettingOf(this.daemonVars().port, this.ctx.config.netflowPort);
  }

  async start(): Promise<void> {
    if (this.worker) return;
    const setting = portToBind(this.portSetting());
    if (setting === null) return;
    const host = this.ctx.config.collectorBind ?? this.ctx.config.bind;
    const writerPort = this.storage.connect('flows', {
      maxQueued: MAX_QUEUED_WRITES,
      flushMs: 10,
      postEvery: 64,
    });
    const worker = new Worker(WORKER_URL, {
      workerData: {
        host,
        // After a crash the receiver takes back the port it had (an `auto` port included).
        port: this.restartPort ?? setting,
        writerPort,
        counters: this.counterBuffer,
        flushMs: FLUSH_MS,
        batchRows: BATCH_ROWS,
        receiveBufferSize: RECEIVE_BUFFER,
        snapshot: this.ipMap.snapshot(),
      },
      transferList: [writerPort],
    });
    this.worker = worker;
    const stops = this.stops;
    const port = await new Promise<number>((resolve, reject) => {
      worker.on('message', (msg: { type: string; port?: number; message?: string }) => {
        if (msg.type === 'bound') resolve(msg.port as number);
        else if (msg.type === 'bind-error') reject(new Error(`netflow: ${msg.message as string}`));
      });
      worker.on('error', (err) => {
        this.ctx.log.error({ err }, 'flow receiver failed');
        reject(new Error(`netflow: receiver failed: ${err.message}`));
      });
      worker.once('exit', () => {
        if (this.worker === worker) this.worker = null;
        reject(new Error('netflow: receiver exited'));
        if (this.port !== null && !this.stopping) this.restartLater();
      });
    }).catch(async (err: unknown) => {
      await worker.terminate();
      this.worker = null;
      throw err;
    });
    if (stops !== this.stops) return; // stopped meanwhile (stop() ends this worker)
    this.port = port;
    this.ctx.collectorPorts.set('netflow', { udp: port });
    this.unsubscribe = this.ipMap.subscribe((snapshot) =>
      this.worker?.postMessage({ type: 'devices', snapshot }),
    );
  }

  async stop(): Promise<void> {
    this.stops++;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.restartPort = null;
    const worker = this.worker;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (!worker) {
      this.port = null;
      this.ctx.collectorPorts.delete('netflow');
      return;
    }
    this.stopping = true;
    await stopWorker(worker, STOP_TIMEOUT_MS);
    this.worker = null;
    this.port = null;
    this.stopping = false;
    this.ctx.collectorPorts.delete('netflow');
  }

  /** The receiver died after it started (a bug, not input): start it again on its port, at most once a second. */
  private restartLater(): void {
    this.ctx.log.error({ port: this.port }, 'flow receiver exited; restarting it');
    this.restartPort = this.port;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start().catch((err: unknown) =>
        this.ctx.log.error({ err }, 'flow receiver could not restart'),
      );
    }, RESTART_DELAY_MS);
    this.restartTimer.unref();
  }

  counts(): FlowCounters {
    return Object.fromEntries(
      COUNTERS.map((name, i) => [name, this.counters[i] ?? 0]),
    ) as FlowCounters;
  }
}
