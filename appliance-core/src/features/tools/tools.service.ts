/**
 * The tools feature's service (what the routes call) and its engine (retention job, the iperf3
 * server's lifetime, ending every tool process at shutdown).
 *
 * Throughput tests (speed test, iperf3 client) run one at a time: two at once would measure each
 * other.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { CoreContext } from '../../platform/context.js';
import type { DB } from '../../platform/db/database.js';
import type { EventStream } from '../../platform/http/sse.js';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import { stopAllToolProcesses } from '../../platform/process/spawn.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { DAY_MS, HOUR_MS, toIso, type Clock } from '../../platform/time/time.js';
import { GeoIp } from './geoip.tool.js';
import { IperfServer } from './iperf.engine.js';
import { runIperfClient, type IperfRequest } from './iperf.tool.js';
import { streamMtr } from './mtr.tool.js';
import { pingOnce, streamPing } from './ping.tool.js';
import { portscan, type PortscanOutcome } from './portscan.tool.js';
import { runSpeedTest } from './speedtest.tool.js';
import {
  deleteHistory,
  deletePortServiceName,
  insertHistory,
  listHistory,
  listPortServiceNames,
  pruneGeoCache,
  pruneHistory,
  savePortServiceName,
} from './tools.repository.js';
import type {
  GeoLocation,
  HistoryRow,
  IperfResult,
  PingResult,
  SpeedTestResult,
  TraceHop,
} from './tools.schema.js';
import {
  DEFAULT_TOOL_RUNS_PER_USER,
  DEFAULT_TOOL_RUNS_TOTAL,
  ToolRunSlots,
} from './tool-runs.service.js';
import { traceroute } from './traceroute.tool.js';
import { whois } from './whois.tool.js';
import {
  DEFAULT_GEOIP_URL,
  DEFAULT_SPEEDTEST_URL,
  IPERF_PORT,
  systemReverseDns,
  ToolRunner,
  type SpeedTestOptions,
  type ToolsOptions,
} from './tools.runtime.js';

/** Throughput history is kept twelve weeks (spec part 2, Limits). */
export const HISTORY_RETENTION_MS = 84 * DAY_MS;
export const GEOIP_CACHE_TTL_MS = 30 * DAY_MS;
export const RETENTION_JOB_ID = 'tools:retention';
const RETENTION_INTERVAL_MS = HOUR_MS;

export type ToolsOverrides = Partial<Omit<ToolsOptions, 'speedtest'>> & {
  speedtest?: Partial<SpeedTestOptions>;
};

/** Another throughput test is running (HTTP 409). */
export class ThroughputBusyError extends ToolFailure {
  constructor() {
    super('Another throughput test is running; try again when it has finished', { status: 409 });
  }
}

/** `host`, `host:port` or `[v6]:port`; port 43 when not given. Null when unset or malformed. */
export function parseWhoisServer(text: string | undefined): { host: string; port: number } | null {
  if (!text) return null;
  const bracketed = /^\[([0-9A-Fa-f:]+)\](?::(\d{1,5}))?$/.exec(text);
  const plain = /^([^:\s]+)(?::(\d{1,5}))?$/.exec(text);
  const match = bracketed ?? plain;
  if (!match) return null;
  const host = parseTarget(match[1]);
  const port = match[2] ? Number(match[2]) : 43;
  if (!host || port < 1 || port > 65535) return null;
  return { host: host.value, port };
}

export function defaultToolsOptions(config: CoreContext['config']): ToolsOptions {
  const geoipUrl =
    config.geoipUrl === undefined
      ? DEFAULT_GEOIP_URL
      : config.geoipUrl === 'off' || config.geoipUrl === ''
        ? null
        : config.geoipUrl;
  return {
    searchPath: undefined,
    reverseDns: systemReverseDns(),
    pingIntervalSeconds: 1,
    mtrIntervalSeconds: 1,
    mtrGraceSeconds: 2,
    portscanBudgetMs: 120_000,
    iperfServerPort: IPERF_PORT,
    iperfServerBind: null,
    speedtest: {
      url: config.speedtestUrl ?? DEFAULT_SPEEDTEST_URL,
      durationMs: 8_000,
      streams: 4,
      downloadChunkBytes: 25_000_000,
      uploadChunkBytes: 8_000_000,
      latencySamples: 5,
      requestTimeoutMs: 10_000,
    },
    geoipUrl,
    geoipDir: path.join(config.dataDir, 'geoip'),
    geoipCacheTtlMs: GEOIP_CACHE_TTL_MS,
    geoipTimeoutMs: 5_000,
    whoisServer: parseWhoisServer(config.whoisServer),
  };
}

export class ToolsService {
  readonly runner: ToolRunner;
  readonly iperfServer: IperfServer;
  readonly geoip: GeoIp;
  /** Tool runs under way, per user and in all (every tool route takes a slot). */
  readonly runs: ToolRunSlots;
  private throughputBusy = false;
  private readonly db: DB;
  private readonly clock: Clock;

  constructor(
    ctx: Pick<CoreContext, 'db' | 'clock' | 'config' | 'log'>,
    overrides: ToolsOverrides = {},
  ) {
    this.db = ctx.db;
    this.clock = ctx.clock;
    this.runner = new ToolRunner(defaultToolsOptions(ctx.config));
    this.runs = new ToolRunSlots({
      perUser: ctx.config.toolRunsPerUser ?? DEFAULT_TOOL_RUNS_PER_USER,
      total: ctx.config.toolRunsTotal ?? DEFAULT_TOOL_RUNS_TOTAL,
    });
    this.configure(overrides);
    this.iperfServer = new IperfServer(this.runner);
    this.geoip = new GeoIp(
      ctx.db,
      () => this.runner.options,
      () => this.clock.now(),
      ctx.log,
    );
  }

  get options(): ToolsOptions {
    return this.runner.options;
  }

  /** Replaces some options (tests point the tools at local peers this way). */
  configure(overrides: ToolsOverrides): void {
    const { speedtest, ...rest } = overrides;
    this.runner.options = {
      ...this.runner.options,
      ...rest,
      speedtest: { ...this.runner.options.speedtest, ...speedtest },
    };
  }

  streamPing(target: Target, stream: EventStream): Promise<void> {
    return streamPing(this.runner, target, stream);
  }

  streamMtr(target: Target, stream: EventStream): Promise<void> {
    return streamMtr(this.runner, target, stream);
  }

  ping(target: Target, signal?: AbortSignal): Promise<PingResult> {
    return pingOnce(this.runner, target, signal);
  }

  traceroute(target: Target, signal?: AbortSignal): Promise<TraceHop[]> {
    return traceroute(this.runner, target, signal);
  }

  portscan(
    target: Target,
    ports: string,
    timing: 3 | 4 | 5,
    service: boolean,
    signal?: AbortSignal,
  ): Promise<PortscanOutcome> {
    return portscan(this.runner, target, ports, timing, service, signal);
  }

  whois(ip: Target, signal?: AbortSignal): Promise<Record<string, string>> {
    return whois(this.runner, ip, signal);
  }

  locate(ip: string, signal?: AbortSignal): Promise<GeoLocation> {
    return this.geoip.locate(ip, signal);
  }

  private async exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.throughputBusy) throw new ThroughputBusyError();
    this.throughputBusy = true;
    try {
      return await work();
    } finally {
      this.throughputBusy = false;
    }
  }

  /** Runs a speed test and records it (kind `speedtest`). */
  speedTest(signal: AbortSignal): Promise<SpeedTestResult> {
    return this.exclusive(async () => {
      const result = await runSpeedTest(
        this.runner.options.speedtest,
        () => this.clock.now(),
        signal,
      );
      insertHistory(this.db, {
        createdAt: this.clock.now(),
        kind: 'speedtest',
        target: null,
        result,
      });
      return result;
    });
  }

  /** Runs the iperf3 client and records it (kind `iperf_client`, target = host). */
  iperfClient(request: IperfRequest, signal?: AbortSignal): Promise<IperfResult> {
    return this.exclusive(async () => {
      const result = await runIperfClient(this.runner, request, () => this.clock.now(), signal);
      insertHistory(this.db, {
        createdAt: this.clock.now(),
        kind: 'iperf_client',
        target: request.target.value,
        result,
      });
      return result;
    });
  }

  history(limit: number): HistoryRow[] {
    return listHistory(this.db, limit).map((row) => ({
      id: row.id,
      timestamp: toIso(row.created_at),
      kind: row.kind,
      target: row.target,
      result: JSON.parse(row.result) as HistoryRow['result'],
    }));
  }

  deleteHistory(id: number): boolean {
    return deleteHistory(this.db, id);
  }

  portServiceNames(): Record<string, string> {
    return Object.fromEntries(
      listPortServiceNames(this.db).map((row) => [String(row.port), row.name]),
    );
  }

  savePortServiceName(port: number, name: string): void {
    savePortServiceName(this.db, port, name, this.clock.now());
  }

  deletePortServiceName(port: number): boolean {
    return deletePortServiceName(this.db, port);
  }

  /** Drops throughput history past twelve weeks and geolocation answers past their TTL. */
  pruneRetention(): { history: number; geoCache: number } {
    const now = this.clock.now();
    return {
      history: pruneHistory(this.db, now - HISTORY_RETENTION_MS),
      geoCache: pruneGeoCache(this.db, now - this.runner.options.geoipCacheTtlMs),
    };
  }
}

/**
 * Started by app.ts: the retention job, and the end of every tool process at shutdown. Given the
 * appliance's shared scheduler it only adds its job there (whoever owns the scheduler starts and
 * stops it); without one it runs a scheduler of its own.
 */
export class ToolsEngine {
  readonly name = 'tools';
  readonly scheduler: Scheduler;
  private readonly ownsScheduler: boolean;

  constructor(
    readonly service: ToolsService,
    clock: Clock,
    private readonly log: Logger,
    shared?: Scheduler,
  ) {
    this.ownsScheduler = !shared;
    this.scheduler =
      shared ??
      new Scheduler(clock, undefined, undefined, (err) =>
        log.error({ err }, 'tools retention job failed'),
      );
    this.scheduler.defineKind(RETENTION_JOB_ID, {
      concurrency: 1,
      run: async () => {
        const pruned = this.service.pruneRetention();
        if (pruned.history + pruned.geoCache > 0)
          this.log.info(pruned, 'tools retention: pruned rows');
      },
    });
  }

  async start(): Promise<void> {
    // The folder operators drop geolocation databases into (see geoip.tool.ts).
    try {
      fs.mkdirSync(this.service.options.geoipDir, { recursive: true, mode: 0o755 });
    } catch (err) {
      this.log.warn(
        { err, dir: this.service.options.geoipDir },
        'geolocation database folder cannot be created',
      );
    }
    // Once at start too: an appliance restarted often may never reach the hourly run.
    try {
      this.service.pruneRetention();
    } catch (err) {
      this.log.error({ err }, 'tools retention failed');
    }
    this.scheduler.upsert({
      id: RETENTION_JOB_ID,
      kind: RETENTION_JOB_ID,
      intervalMs: RETENTION_INTERVAL_MS,
      payload: null,
    });
    if (this.ownsScheduler) await this.scheduler.start();
  }

  async stop(): Promise<void> {
    if (this.ownsScheduler) await this.scheduler.stop();
    else this.scheduler.remove(RETENTION_JOB_ID);
    await this.service.iperfServer
      .stop()
      .catch((err: unknown) => this.log.error({ err }, 'iperf3 server did not stop'));
    await stopAllToolProcesses();
  }
}
