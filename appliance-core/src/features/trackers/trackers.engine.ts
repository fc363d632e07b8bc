/**
 * The polling engine: every tracker is a scheduler job on its own interval (with the scheduler's
 * jitter). Kinds: `tracker-icmp` (batches of latency trackers, one fping per batch),
 * `tracker-tcp` (one connect per port, bounded concurrency) and `tracker-snmp` (batches of disk,
 * interface and OID trackers, grouped per device: one session and multi-OID GETs per device).
 * Readings are computed here and written as data through the storage writer (trackers.writes.ts:
 * a worker thread, batched transactions), so the writes never stall the API. API changes call
 * `changed`/`removed`; a periodic resync picks up trackers the device crawl created or deleted.
 * Service trackers are not polled (they need the agent).
 */
import { availableParallelism } from 'node:os';
import type { CoreContext } from '../../platform/context.js';
import type { JobSpec, Scheduler } from '../../platform/scheduler/scheduler.js';
import { fpingLatency } from '../../platform/net/fping.js';
import type { SnmpTiming } from '../../platform/snmp/snmp.client.js';
import { deviceAddresses, snmpDeviceIds, snmpTargetOfDevice } from '../devices/index.js';
import { pollDevice, rateOf, type SnmpRequest } from './snmp.poller.js';
import { checkPort } from './tcp.poller.js';
import { alertsOf, DEVICE_DOWN_ALERT, observeAlertState } from '../alerts/index.js';
import { LINK_STATE_ALERT } from './interfaces.service.js';
import type { LatencyTrackerRow } from './latency.repository.js';
import type { OidTrackerRow } from './oids.repository.js';
import type { PortTrackerRow } from './ports.repository.js';
import type { TrackerChanges, TrackersService } from './trackers.service.js';

type PolledKind = 'latency' | 'port' | 'disk' | 'interface' | 'oid';
interface Payload {
  kind: PolledKind;
  id: number;
}

export interface TrackersEngineOptions {
  /** ICMP probes per reading (fping -C). */
  probes?: number;
  /**
   * How long a ping batch waits for more due trackers before fping starts (ms). One fping for
   * 2,000 loopback targets used 0.1 s of CPU; 200 fpings of 10 targets each, 0.73 s.
   */
  pingGatherMs?: number;
  /** Largest fping batch. */
  maxPingBatch?: number;
  /**
   * fping processes at once (default: two per core, at least 4, at most 16). One fping paces its
   * targets 1 ms apart (-i 1, the smallest interval fping allows a non-root user), so it probes about
   * 1,000 targets a second whatever the batch size. Measured on 2 cores with 50,000 trackers at 10 s:
   * 4 at once gave ~3,800 readings a second (36 % missed) with the API still answering (list p99
   * 0.6 s); with 8 at once the bench's set-up through the API (10,000 OID trackers) did not finish
   * within its 10-minute watchdog. The reading rate a box sustains follows its cores; so does this.
   */
  pingConcurrency?: number;
  tcpConcurrency?: number;
  tcpTimeoutMs?: number;
  snmpConcurrency?: number;
  maxSnmpBatch?: number;
  snmpTiming?: SnmpTiming;
  /** How often the job list is reconciled with the database (crawl-created trackers). */
  resyncMs?: number;
}

export interface EngineCounters {
  pingBatches: number;
  pingReadings: number;
  portReadings: number;
  snmpDevices: number;
  snmpFailures: number;
  snmpReadings: number;
  alertsFired: number;
}

const OPER_STATUS: Record<number, string> = {
  1: 'up',
  2: 'down',
  3: 'testing',
  4: 'unknown',
  5: 'dormant',
  6: 'notPresent',
  7: 'lowerLayerDown',
};

export class TrackersEngine implements TrackerChanges {
  readonly name = 'trackers';
  readonly counters: EngineCounters = {
    pingBatches: 0,
    pingReadings: 0,
    portReadings: 0,
    snmpDevices: 0,
    snmpFailures: 0,
    snmpReadings: 0,
    alertsFired: 0,
  };
  private readonly options: Required<TrackersEngineOptions>;

  constructor(
    private readonly ctx: Pick<CoreContext, 'db' | 'clock' | 'secrets' | 'log'>,
    private readonly service: TrackersService,
    private readonly scheduler: Scheduler,
    options: TrackersEngineOptions = {},
  ) {
    this.options = {
      probes: options.probes ?? 1,
      maxPingBatch: options.maxPingBatch ?? 1000,
      pingConcurrency:
        options.pingConcurrency ?? Math.min(16, Math.max(4, 2 * availableParallelism())),
      pingGatherMs: options.pingGatherMs ?? 250,
      tcpConcurrency: options.tcpConcurrency ?? 256,
      tcpTimeoutMs: options.tcpTimeoutMs ?? 3000,
      snmpConcurrency: options.snmpConcurrency ?? 8,
      maxSnmpBatch: options.maxSnmpBatch ?? 200,
      snmpTiming: options.snmpTiming ?? { timeoutMs: 2000, retries: 1 },
      resyncMs: options.resyncMs ?? 60_000,
    };
    scheduler.defineKind<Payload>('tracker-icmp', {
      concurrency: this.options.pingConcurrency,
      maxBatch: this.options.maxPingBatch,
      gatherMs: this.options.pingGatherMs,
      runBatch: (jobs, signal) => this.runPings(jobs, signal),
    });
    scheduler.defineKind<Payload>('tracker-tcp', {
      concurrency: this.options.tcpConcurrency,
      run: (job, signal) => this.runPort(job.payload.id, signal),
    });
    scheduler.defineKind<Payload>('tracker-snmp', {
      concurrency: this.options.snmpConcurrency,
      maxBatch: this.options.maxSnmpBatch,
      runBatch: (jobs, signal) => this.runSnmp(jobs, signal),
    });
    scheduler.defineKind('tracker-resync', { concurrency: 1, run: async () => this.resync() });
    service.changes = this;
  }

  async start(): Promise<void> {
    this.resync();
    this.scheduler.upsert({
      id: 'trackers:resync',
      kind: 'tracker-resync',
      intervalMs: this.options.resyncMs,
      payload: null,
    });
    // Scheduler lateness is kept over its last runs only: fold it every 5 s, report every minute.
    let ticks = 0;
    this.statsTimer = setInterval(() => {
      const { p99, max, samples } = this.scheduler.stats().lateness;
      if (samples > 0) {
        this.lateness.worstP99 = Math.max(this.lateness.worstP99, p99);
        this.lateness.worstMax = Math.max(this.lateness.worstMax, max);
        this.lateness.readings++;
      }
      if (++ticks % 12 === 0) this.ctx.log.info(this.report(), 'poller stats');
    }, 5000);
    this.statsTimer.unref();
  }

  /**
   * Waits for the readings already queued to be committed (the shared storage writer stays open:
   * the composition root closes it last), then logs the stats.
   */
  async stop(): Promise<void> {
    if (this.statsTimer) clearInterval(this.statsTimer);
    await this.service.writer.flush();
    this.ctx.log.info(this.report(), 'poller stats at stop');
  }

  private statsTimer: NodeJS.Timeout | null = null;
  /** Worst scheduler lateness (ms) seen by the 5-second readings since start. */
  readonly lateness = { worstP99: 0, worstMax: 0, readings: 0 };

  report() {
    const stats = this.scheduler.stats();
    return {
      counters: { ...this.counters },
      lateness: { ...this.lateness, current: stats.lateness },
      scheduler: {
        jobs: stats.jobs,
        runs: stats.runs,
        overruns: stats.overruns,
        failures: stats.failures,
      },
      writer: this.service.writer.stats(),
    };
  }

  // --- job list -------------------------------------------------------------------------------------

  changed(kind: PolledKind | 'service', id: number): void {
    if (kind === 'service') return;
    const intervalSql: Record<PolledKind, string> = {
      latency: 'SELECT interval FROM latency_trackers WHERE id = ?',
      port: 'SELECT interval FROM port_trackers WHERE id = ?',
      disk: 'SELECT interval FROM disk_trackers WHERE id = ?',
      interface: 'SELECT interval FROM interface_trackers WHERE id = ?',
      oid: "SELECT interval FROM oid_trackers WHERE id = ? AND kind = 'oid'",
    };
    const row = this.ctx.db.prepare(intervalSql[kind]).get(id) as { interval: number } | undefined;
    if (!row) return this.removed(kind, id);
    this.upsertJob(kind, id, row.interval);
  }

  removed(kind: PolledKind | 'service', id: number): void {
    this.scheduler.remove(`${kind}:${id}`);
  }

  /** The polling interval (s) the scheduler holds for a tracker; undefined when it is not scheduled. */
  scheduledInterval(kind: PolledKind, id: number): number | undefined {
    const ms = this.scheduler.intervalOf(`${kind}:${id}`);
    return ms === undefined ? undefined : ms / 1000;
  }

  private upsertJob(kind: PolledKind, id: number, intervalSeconds: number): void {
    const schedulerKind =
      kind === 'latency' ? 'tracker-icmp' : kind === 'port' ? 'tracker-tcp' : 'tracker-snmp';
    this.scheduler.upsert<Payload>({
      id: `${kind}:${id}`,
      kind: schedulerKind,
      intervalMs: intervalSeconds * 1000,
      payload: { kind, id },
    });
  }

  /** Reconciles scheduler jobs with the tracker tables (adds, re-times and removes). */
  resync(): void {
    const { db } = this.ctx;
    // Disks and interfaces are polled only on devices with SNMP on (the devices feature says which).
    const snmp = JSON.stringify(snmpDeviceIds(db));
    const rows = db
      .prepare(
        `SELECT 'latency' AS kind, id, interval FROM latency_trackers
         UNION ALL SELECT 'port', id, interval FROM port_trackers
         UNION ALL SELECT 'oid', id, interval FROM oid_trackers WHERE kind = 'oid'
         UNION ALL SELECT 'disk', id, interval FROM disk_trackers WHERE device_id IN (SELECT value FROM json_each(?))
         UNION ALL SELECT 'interface', id, interval FROM interface_trackers WHERE device_id IN (SELECT value FROM json_each(?))`,
      )
      .all(snmp, snmp) as {
      kind: PolledKind;
      id: number;
      interval: number;
    }[];
    const wanted = new Set<string>();
    for (const row of rows) {
      wanted.add(`${row.kind}:${row.id}`);
      this.upsertJob(row.kind, row.id, row.interval);
    }
    for (const id of this.known) if (!wanted.has(id)) this.scheduler.remove(id);
    this.known = wanted;
  }

  private known = new Set<string>();
  private readonly reachability = new Map<number, { state: 'up' | 'down'; at: number }>();
  private cachedStatements: ReturnType<TrackersEngine['prepare']> | null = null;

  private prepare() {
    const { db } = this.ctx;
    return {
      portRow: db.prepare('SELECT * FROM port_trackers WHERE id = ?'),
      latencyRows: db.prepare(
        'SELECT * FROM latency_trackers WHERE id IN (SELECT value FROM json_each(?))',
      ),
    };
  }

  private get writes() {
    return this.service.writes;
  }

  private get statements() {
    return (this.cachedStatements ??= this.prepare());
  }

  // --- latency --------------------------------------------------------------------------------------

  private async runPings(jobs: JobSpec<Payload>[], signal: AbortSignal): Promise<void> {
    const { db, clock } = this.ctx;
    const trackers = this.statements.latencyRows.all(
      JSON.stringify(jobs.map((j) => j.payload.id)),
    ) as LatencyTrackerRow[];
    const addresses = deviceAddresses(
      db,
      trackers.map((t) => t.device_id),
    );
    const rows = trackers.flatMap((t) => {
      const ip_address = addresses.get(t.device_id);
      return ip_address === undefined ? [] : [{ ...t, ip_address }];
    });
    if (rows.length < jobs.length) {
      const present = new Set(rows.map((r) => r.id));
      for (const job of jobs) if (!present.has(job.payload.id)) this.scheduler.remove(job.id);
    }
    if (rows.length === 0) return;
    const timeoutMs = Math.max(...rows.map((r) => r.timeout));
    // A sample is stamped with the time its probe was sent (the run's start), not when the batch ended.
    const now = clock.now();
    let readings;
    try {
      readings = await fpingLatency(
        rows.map((r) => r.ip_address),
        signal,
        { probes: this.options.probes, timeoutMs },
      );
    } catch (err) {
      if (signal.aborted) return; // shutting down: not a failure
      throw err;
    }
    this.counters.pingBatches++;
    for (const row of rows) {
      const reading = readings.get(row.ip_address) ?? { latency: -1, loss: 100 };
      const down = reading.latency < 0 || reading.loss >= row.lossout;
      const latency = down ? -1 : reading.latency;
      const loss = reading.loss;
      this.counters.pingReadings++;
      const state = latency >= 0 ? 'up' : 'down';
      const known = this.reachability.get(row.device_id);
      // The device row is written when its state changes (and at least every 10 minutes), not on every reading.
      const touchDevice = !known || known.state !== state || now - known.at >= 600_000;
      if (touchDevice) this.reachability.set(row.device_id, { state, at: now });
      this.writes.sample({
        kind: 'latency',
        trackerId: row.id,
        ts: now,
        a: latency,
        b: loss,
        answered: latency >= 0,
      });
      this.writes.latencyReading(row.id, latency, loss, now);
      if (touchDevice) this.writes.deviceReachability(row.device_id, latency, now);
      // Device down (legacy alert `device_down` of the latency tracker, class
      // legacy_device_down): decided like link state, on the main connection, when the device's
      // state is written; observeAlertState fires only on a change of the stored state.
      if (touchDevice) this.observeDeviceDown(row, state, now);
    }
  }

  private observeDeviceDown(row: LatencyTrackerRow, state: 'up' | 'down', now: number): void {
    const { db } = this.ctx;
    for (const alert of alertsOf(db, 'latency', [row.id]).get(row.id) ?? []) {
      if (alert.alert_type !== DEVICE_DOWN_ALERT) continue;
      const message = `Device ${state === 'down' ? 'stopped answering' : 'answers again'} (${row.label})`;
      if (observeAlertState(db, alert, state === 'up' ? 1 : 0, message, now))
        this.counters.alertsFired++;
    }
  }

  // --- TCP ports ------------------------------------------------------------------------------------

  private async runPort(id: number, signal: AbortSignal): Promise<void> {
    const { clock } = this.ctx;
    const tracker = this.statements.portRow.get(id) as PortTrackerRow | undefined;
    const ip = tracker && deviceAddresses(this.ctx.db, [tracker.device_id]).get(tracker.device_id);
    if (!tracker || ip === undefined) return this.scheduler.remove(`port:${id}`);
    const row = { ...tracker, ip_address: ip };
    const timeoutMs = Math.min(this.options.tcpTimeoutMs, Math.max(500, row.interval * 500));
    const now = clock.now();
    const reading = await checkPort(row.ip_address, row.port, timeoutMs, signal);
    this.counters.portReadings++;
    if (row.enable_logging === 1)
      this.writes.sample({
        kind: 'port',
        trackerId: row.id,
        ts: now,
        a: reading.latency,
        b: reading.latency < 0 ? 1 : 0,
        answered: reading.latency >= 0,
      });
    this.writes.portReading(row.id, reading.state, reading.latency, now);
  }

  // --- SNMP -----------------------------------------------------------------------------------------

  private async runSnmp(jobs: JobSpec<Payload>[], signal: AbortSignal): Promise<void> {
    const { db } = this.ctx;
    const ids = (kind: PolledKind) =>
      JSON.stringify(jobs.filter((j) => j.payload.kind === kind).map((j) => j.payload.id));
    const disks = db
      .prepare(
        'SELECT id, device_id, storage_index, enable_logging FROM disk_trackers WHERE id IN (SELECT value FROM json_each(?))',
      )
      .all(ids('disk')) as {
      id: number;
      device_id: number;
      storage_index: number;
      enable_logging: number;
    }[];
    const interfaces = db
      .prepare(
        'SELECT id, device_id, interface, name, enable_logging, in_octets, out_octets, counter_bits, counters_at, oper_status FROM interface_trackers WHERE id IN (SELECT value FROM json_each(?))',
      )
      .all(ids('interface')) as {
      id: number;
      device_id: number;
      interface: number;
      name: string;
      enable_logging: number;
      in_octets: string | null;
      out_octets: string | null;
      counter_bits: number | null;
      counters_at: number | null;
      oper_status: number | null;
    }[];
    const oids = db
      .prepare(
        "SELECT * FROM oid_trackers WHERE kind = 'oid' AND id IN (SELECT value FROM json_each(?))",
      )
      .all(ids('oid')) as OidTrackerRow[];
    const found = new Set([
      ...disks.map((r) => `disk:${r.id}`),
      ...interfaces.map((r) => `interface:${r.id}`),
      ...oids.map((r) => `oid:${r.id}`),
    ]);
    for (const job of jobs) if (!found.has(job.id)) this.scheduler.remove(job.id);

    const perDevice = new Map<number, SnmpRequest>();
    const of = (deviceId: number) => {
      let request = perDevice.get(deviceId);
      if (!request) perDevice.set(deviceId, (request = { disks: [], interfaces: [], oids: [] }));
      return request;
    };
    for (const d of disks) of(d.device_id).disks.push({ id: d.id, index: d.storage_index });
    for (const i of interfaces) of(i.device_id).interfaces.push({ id: i.id, index: i.interface });
    for (const o of oids) of(o.device_id).oids.push({ id: o.id, oid: o.oid });

    await Promise.all(
      [...perDevice].map(async ([deviceId, request]) => {
        const target = snmpTargetOfDevice(db, this.ctx.secrets, deviceId);
        if (!target) return;
        const now = this.ctx.clock.now();
        let readings;
        try {
          readings = await pollDevice(target, this.options.snmpTiming, request, signal);
        } catch (err) {
          this.counters.snmpFailures++;
          this.ctx.log.debug({ err, deviceId }, 'SNMP poll failed');
          return;
        }
        this.counters.snmpDevices++;
        for (const d of disks) {
          const reading = readings.disks.get(d.id);
          if (d.device_id !== deviceId || !reading) continue;
          this.counters.snmpReadings++;
          this.writes.diskReading(d.id, reading, now);
          if (d.enable_logging === 1)
            this.writes.sample({
              kind: 'disk',
              trackerId: d.id,
              ts: now,
              a: reading.available,
              b: reading.total,
            });
        }
        const mine = interfaces.filter(
          (i) => i.device_id === deviceId && readings.interfaces.has(i.id),
        );
        const linkAlerts =
          mine.length > 0
            ? alertsOf(
                db,
                'interface',
                mine.map((i) => i.id),
              )
            : null;
        for (const i of mine) {
          const reading = readings.interfaces.get(i.id);
          if (!reading) continue;
          this.counters.snmpReadings++;
          // Rates from the counters of the row read at the start of this run: if the previous
          // reading's write is still queued, this one spans two intervals, still right.
          let inBps: number | null = null;
          let outBps: number | null = null;
          if (
            i.in_octets !== null &&
            i.out_octets !== null &&
            i.counters_at !== null &&
            i.counter_bits === reading.bits
          ) {
            const seconds = (now - i.counters_at) / 1000;
            inBps = rateOf(BigInt(i.in_octets), reading.inOctets, reading.bits, seconds);
            outBps = rateOf(BigInt(i.out_octets), reading.outOctets, reading.bits, seconds);
          }
          this.writes.interfaceCounters(i.id, reading, { inBps, outBps }, now);
          if (inBps !== null && outBps !== null && i.enable_logging === 1) {
            this.writes.sample({
              kind: 'interface',
              trackerId: i.id,
              ts: now,
              a: inBps,
              b: outBps,
              extra: reading.operStatus,
            });
          }
          // Link-state alerts are decided and recorded here, on the main connection, and only
          // when the state changed: a firing is never delayed by (or lost with) a queued write.
          if (reading.operStatus === null) continue;
          for (const alert of linkAlerts?.get(i.id) ?? []) {
            if (alert.alert_type !== LINK_STATE_ALERT || alert.last_state === reading.operStatus)
              continue;
            const message = `Interface ${i.name} (ifIndex ${i.interface}) is ${OPER_STATUS[reading.operStatus] ?? reading.operStatus}`;
            if (observeAlertState(db, alert, reading.operStatus, message, now))
              this.counters.alertsFired++;
          }
        }
        for (const o of oids) {
          const value = readings.oids.get(o.id);
          if (o.device_id !== deviceId || value === undefined) continue;
          this.counters.snmpReadings++;
          this.writes.oidReading(o.id, value, now);
          if (o.enable_logging !== 1) continue;
          const numeric = Number(value);
          const isNumber = o.datatype === 'I' && value.trim() !== '' && Number.isFinite(numeric);
          this.writes.sample({
            kind: 'oid',
            trackerId: o.id,
            ts: now,
            a: isNumber ? numeric : 0,
            b: 0,
            extra: value,
            answered: isNumber,
          });
        }
      }),
    );
  }
}
