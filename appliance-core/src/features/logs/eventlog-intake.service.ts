/**
 * Windows events intake (spec part 3 "Windows events"; the state table: "one day of backfill at
 * first poll"). Events reach the appliance through the agent, which the agents feature polls; it
 * calls this service in process (index.ts exports it), never through an inbound route:
 *
 *   const plan = eventLogIntake.plan(trackerId, now);    // what to ask the agent for
 *   // ... the agent runs plan.channel / plan.levels / plan.event_ids since plan.since ...
 *   await eventLogIntake.ingest(trackerId, events, now); // store what it returned
 *
 * Invariants:
 * - A tracker never polled asks for one day of backfill (since = now - 1 day); afterwards from
 *   its cursor (the newest event time stored, and the highest EventRecordID), so a poll that
 *   overlaps the previous one stores nothing twice: events at or below the cursor's record id are
 *   skipped (`duplicates`).
 * - The rows, their rollup counts and the tracker's cursor commit together (an atomic group of
 *   the storage writer, producer `windows`, under its own limit): a crash or a dropped group
 *   leaves the cursor where it was, so the next poll asks again and nothing is lost.
 * - An event that cannot be read (no time, no event id) is counted `invalid` and skipped; text is
 *   stored as sent (data, never markup), cut to MAX_DATA characters.
 * - A tracker deleted (or its device deleted) while a poll is in flight: ingest answers
 *   `{tracker: 'missing'}` and stores nothing.
 */
import type { DB } from '../../platform/db/database.js';
import type { StorageWriterProducer } from '../../platform/db/storage-writer.js';
import { DAY_MS } from '../../platform/time/time.js';
import { parseDateTime } from '../../platform/time/datetime.js';
import { findEventLogQuery, findEventLogTracker } from './logs.repository.js';

export const BACKFILL_MS = DAY_MS;
export const MAX_DATA = 32_768;
const MAX_TEXT = 255;

/** One event as the agent reports it. */
export interface WindowsEvent {
  /** EventRecordID (increasing per channel). */
  record_id: number;
  /** TimeCreated: UTC ms, or a date-time text (ISO 8601). */
  time_created: number | string;
  event_id: number;
  /** Channel; defaults to the tracker's query channel. */
  log?: string;
  /** Provider name. */
  source: string;
  /** Windows Level (0 or 4 information, 1 critical, 2 error, 3 warning, 5 verbose) or its name. */
  level: number | string;
  /** The rendered message. */
  message: string;
}

export interface EventLogPlan {
  tracker_id: number;
  device_id: number;
  query_id: number;
  channel: string;
  /** Windows Level values to fetch (empty: all). */
  levels: number[];
  /** Event ids to fetch (empty: all). */
  event_ids: number[];
  /** Fetch events created at or after this time (UTC ms). */
  since: number;
  /** Events with an EventRecordID at or below this are already stored. */
  after_record_id: number | null;
  backfill: boolean;
}

export interface IngestResult {
  tracker: 'ok' | 'missing';
  stored: number;
  duplicates: number;
  invalid: number;
  dropped: number;
}

export interface EventLogCounters {
  received: number;
  stored: number;
  dropped: number;
  duplicates: number;
  invalid: number;
}

const LEVEL_NAMES: Record<string, number> = {
  information: 0,
  info: 0,
  critical: 1,
  error: 2,
  warning: 3,
  verbose: 5,
};

/** The stored severity (spec scale) of a Windows Level or level name, or null. */
export function severityOfLevel(level: number | string): number | null {
  if (typeof level === 'string') {
    const named = LEVEL_NAMES[level.trim().toLowerCase()];
    if (named !== undefined) return named;
    if (!/^\d+$/.test(level.trim())) return null;
    level = Number(level);
  }
  if (!Number.isInteger(level)) return null;
  return ({ 0: 0, 1: 1, 2: 2, 3: 3, 4: 0, 5: 5 } as Record<number, number>)[level] ?? null;
}

const cut = (text: unknown, max: number) => {
  const s =
    typeof text === 'string'
      ? text
      : typeof text === 'number' || typeof text === 'boolean'
        ? String(text)
        : text === undefined || text === null
          ? ''
          : JSON.stringify(text);
  return s.length > max ? s.slice(0, max) : s;
};

export class EventLogIntake {
  readonly counters: EventLogCounters = {
    received: 0,
    stored: 0,
    dropped: 0,
    duplicates: 0,
    invalid: 0,
  };

  constructor(
    private readonly db: DB,
    private readonly writer: StorageWriterProducer,
  ) {}

  /** What the agent should be asked for, or null when the tracker (or its query) is gone. */
  plan(trackerId: number, now: number): EventLogPlan | null {
    const tracker = findEventLogTracker(this.db, trackerId);
    if (!tracker) return null;
    const query = findEventLogQuery(this.db, tracker.query_id);
    if (!query) return null;
    const backfill = tracker.last_polled_at === null;
    return {
      tracker_id: tracker.id,
      device_id: tracker.device_id,
      query_id: query.id,
      channel: query.channel,
      levels: JSON.parse(query.levels) as number[],
      event_ids: JSON.parse(query.event_ids) as number[],
      since: backfill
        ? now - BACKFILL_MS
        : (tracker.last_event_at ?? tracker.last_polled_at ?? now),
      after_record_id: tracker.last_record_id,
      backfill,
    };
  }

  /** Stores what a poll of the tracker returned (see the header). */
  async ingest(
    trackerId: number,
    events: readonly WindowsEvent[],
    polledAt: number,
  ): Promise<IngestResult> {
    const result: IngestResult = {
      tracker: 'ok',
      stored: 0,
      duplicates: 0,
      invalid: 0,
      dropped: 0,
    };
    this.counters.received += events.length;
    const tracker = findEventLogTracker(this.db, trackerId);
    const query = tracker ? findEventLogQuery(this.db, tracker.query_id) : undefined;
    if (!tracker || !query) {
      this.counters.dropped += events.length;
      return { ...result, tracker: 'missing', dropped: events.length };
    }
    const floor = tracker.last_polled_at === null ? polledAt - BACKFILL_MS : -Infinity;
    const after = tracker.last_record_id ?? -1;
    const ops: { statement: string; params: (number | string | null)[] }[] = [];
    const rollup = new Map<string, number>();
    let newestAt = tracker.last_event_at ?? 0;
    let highestRecord = tracker.last_record_id ?? 0;
    for (const event of events) {
      const at =
        typeof event.time_created === 'number'
          ? event.time_created
          : typeof event.time_created === 'string'
            ? parseDateTime(event.time_created)
            : null;
      const severity = severityOfLevel(event.level);
      if (
        at === null ||
        !Number.isFinite(at) ||
        severity === null ||
        !Number.isSafeInteger(event.event_id) ||
        !Number.isSafeInteger(event.record_id)
      ) {
        result.invalid++;
        continue;
      }
      if (event.record_id <= after || at < floor) {
        result.duplicates++;
        continue;
      }
      ops.push({
        statement: 'logs.eventlog.insert',
        params: [
          tracker.device_id,
          at,
          event.event_id,
          cut(event.log ?? query.channel, MAX_TEXT),
          cut(event.source, MAX_TEXT),
          severity,
          cut(event.message, MAX_DATA),
          event.record_id,
          tracker.id,
        ],
      });
      const key = `${at - (at % 60_000)}|${severity}`;
      rollup.set(key, (rollup.get(key) ?? 0) + 1);
      newestAt = Math.max(newestAt, at);
      highestRecord = Math.max(highestRecord, event.record_id);
    }
    for (const [key, count] of rollup) {
      const [minute, severity] = key.split('|').map(Number);
      ops.push({
        statement: 'logs.eventlog.rollup',
        params: [minute as number, tracker.device_id, severity as number, count],
      });
    }
    ops.push({
      statement: 'logs.eventlog.cursor',
      params: [polledAt, newestAt, highestRecord, tracker.id],
    });
    const rows = ops.length - rollup.size - 1;
    const outcome = await this.writer.group(ops);
    if (outcome.committed) result.stored = rows;
    else result.dropped = rows;
    this.counters.stored += result.stored;
    this.counters.dropped += result.dropped;
    this.counters.duplicates += result.duplicates;
    this.counters.invalid += result.invalid;
    return result;
  }
}
