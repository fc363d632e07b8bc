/**
 * Service and event-log trackers fed through the agent channel (issue 20): every few seconds the
 * engine asks the agents of devices with due trackers, one `services` request per device for its
 * service trackers (interval per tracker, default 180 s) and one `eventlog.read` per event-log
 * tracker (every EVENTLOG_INTERVAL_MS; the logs feature's plan gives one day of backfill at the
 * first poll and the cursor afterwards). Readings go through the trackers' statements on the
 * storage writer; events through the logs feature's EventLogIntake.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../platform/time/time.js';
import type { DB } from '../../platform/db/database.js';
import type { EventLogIntake, WindowsEvent } from '../logs/index.js';
import { allEventLogTrackers } from '../logs/index.js';
import { allOidTrackers, type OidTrackerRow, type TrackerWrites } from '../trackers/index.js';
import { REQUEST_TTL_MS, type AgentResult, type AgentTarget } from './agent-channel.engine.js';

const TICK_MS = 5_000;
const EVENTLOG_INTERVAL_MS = 60_000;
const EVENTLOG_MAX = 5_000;

/** Windows Level values of a stored severity (0 is "information": Level 0 or 4). */
const LEVELS_OF_SEVERITY: Record<number, number[]> = { 0: [0, 4], 1: [1], 2: [2], 3: [3], 5: [5] };

export class AgentTrackersEngine {
  readonly name = 'agent-trackers';
  private timer: NodeJS.Timeout | null = null;
  private readonly lastPolled = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  readonly counters = { serviceReadings: 0, eventPolls: 0, failures: 0 };

  constructor(
    private readonly deps: {
      db: DB;
      clock: Clock;
      log: Logger;
      writes: TrackerWrites;
      intake: EventLogIntake;
      /** The agent of a device (null: none enrolled). */
      agentOf: (deviceId: number) => AgentTarget | null;
      request: (
        target: AgentTarget,
        op: string,
        args: Record<string, unknown>,
        waitMs: number,
      ) => Promise<AgentResult>;
    },
  ) {}

  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => void this.pollDue(), TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Polls every due tracker once (the timer calls it; tests call it directly). */
  async pollDue(): Promise<void> {
    const now = this.deps.clock.now();
    const byDevice = new Map<number, OidTrackerRow[]>();
    for (const t of allOidTrackers(this.deps.db, 'service')) {
      const key = `s${t.id}`;
      const last = this.lastPolled.get(key) ?? t.last_polled_at ?? 0;
      if (now - last < t.interval * 1000 || this.inFlight.has(`d${t.device_id}`)) continue;
      byDevice.set(t.device_id, [...(byDevice.get(t.device_id) ?? []), t]);
    }
    const work: Promise<void>[] = [];
    for (const [deviceId, trackers] of byDevice)
      work.push(this.pollServices(deviceId, trackers, now));
    for (const t of allEventLogTrackers(this.deps.db)) {
      const key = `e${t.id}`;
      const last = this.lastPolled.get(key) ?? t.last_polled_at ?? 0;
      if (now - last < EVENTLOG_INTERVAL_MS || this.inFlight.has(key)) continue;
      work.push(this.pollEventLog(t.id, t.device_id, now));
    }
    await Promise.all(work);
  }

  private async pollServices(
    deviceId: number,
    trackers: OidTrackerRow[],
    now: number,
  ): Promise<void> {
    const target = this.deps.agentOf(deviceId);
    if (!target) return;
    const key = `d${deviceId}`;
    this.inFlight.add(key);
    try {
      for (const t of trackers) this.lastPolled.set(`s${t.id}`, now);
      const result = await this.deps.request(target, 'services', {}, REQUEST_TTL_MS);
      if (!result.ok || !Array.isArray(result.data)) {
        this.counters.failures++;
        return;
      }
      const states = new Map<string, string>();
      for (const s of result.data as { Name?: unknown; State?: unknown }[])
        if (typeof s?.Name === 'string' && typeof s.State === 'string') states.set(s.Name, s.State);
      const at = this.deps.clock.now();
      for (const t of trackers) {
        const value = states.get(t.name ?? '') ?? 'NotFound';
        this.deps.writes.oidReading(t.id, value, at);
        this.counters.serviceReadings++;
        if (t.enable_logging === 1)
          this.deps.writes.sample({
            kind: 'oid',
            trackerId: t.id,
            ts: at,
            a: 0,
            b: 0,
            extra: value,
            answered: false,
          });
      }
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async pollEventLog(trackerId: number, deviceId: number, now: number): Promise<void> {
    const target = this.deps.agentOf(deviceId);
    const plan = this.deps.intake.plan(trackerId, now);
    if (!target || !plan) return;
    const key = `e${trackerId}`;
    this.inFlight.add(key);
    this.lastPolled.set(key, now);
    try {
      const result = await this.deps.request(
        target,
        'eventlog.read',
        {
          since: plan.since,
          until: now,
          max: EVENTLOG_MAX,
          query: plan.channel,
          channel: plan.channel,
          levels: plan.levels,
          event_ids: plan.event_ids,
        },
        REQUEST_TTL_MS,
      );
      if (!result.ok || !Array.isArray(result.data)) {
        this.counters.failures++;
        return;
      }
      const events: WindowsEvent[] = [];
      for (const row of result.data as Record<string, unknown>[]) {
        const severity = Number(row?.severity);
        const eventId = Number(row?.event_id);
        if (
          plan.levels.length > 0 &&
          !(LEVELS_OF_SEVERITY[severity] ?? []).some((l) => plan.levels.includes(l))
        )
          continue;
        if (plan.event_ids.length > 0 && !plan.event_ids.includes(eventId)) continue;
        events.push({
          record_id: Number(row.record_id),
          time_created: Number(row.timestamp),
          event_id: eventId,
          log: typeof row.log === 'string' ? row.log : plan.channel,
          source: typeof row.source === 'string' ? row.source : '',
          level: severity,
          message: typeof row.data === 'string' ? row.data : JSON.stringify(row.data ?? ''),
        });
      }
      await this.deps.intake.ingest(trackerId, events, now);
      this.counters.eventPolls++;
    } catch (err) {
      this.counters.failures++;
      this.deps.log.warn({ err, trackerId }, 'event-log poll through the agent failed');
    } finally {
      this.inFlight.delete(key);
    }
  }
}
