/**
 * The alert evaluation engine (spec part 3 > Alerting; issue 17 "Engine").
 *
 * Invariants:
 * - Incremental: after each batch the storage writer commits (the syslog engine's commit hook)
 *   and on a one-second tick, each log feed is read from its high-water mark by primary key
 *   (`id > ?`): only rows just committed, never a window rescan. Each row is matched once
 *   against every enabled alert's `contains` texts by one automaton (pattern-matcher.rules.ts),
 *   then against the class filters (severity ceiling, facility, channel, event or signature ids).
 * - Scope and `tag_filters` (AND) are applied before counting: an out-of-scope device opens no
 *   incident, writes no history row and consults no route.
 * - Counting: per alert and device (the whole alert for rows without a device), the match times
 *   within the lookback; an occurrence opens when the count reaches `occurrences_min` and closes
 *   (on the tick) when it falls below. `invert` alerts fire on absence, on the tick only.
 * - One notification per occurrence, through the routing rules to DeliveryQueue.enqueue; a rule's
 *   maintenance window covering the instant queues it suppressed, with the window named in the
 *   history. `renotify_minutes` and the `throttle_*` fields never change delivery.
 * - Legacy firings (link state, device down) written by the trackers are taken from
 *   `legacy_alert_events` (delivered_at NULL: not yet handled) on the tick; a device whose
 *   parent (device_parents) is down opens no incident of its own (suppressed: dependency).
 * - After a restart the counts start empty; occurrences left open stay open for one lookback
 *   before they may close, so a restart alone never notifies twice. Reading resumes at the
 *   saved high-water marks (at most RESUME_LIMIT rows late), so rows committed while the engine
 *   was stopped are still evaluated.
 */
import type { CoreContext } from '../../platform/context.js';
import type { DB } from '../../platform/db/database.js';
import { toIsoWithOffset } from '../../platform/time/time.js';
import * as repo from './alerts.repository.js';
import {
  coveringWindow,
  isModernClass,
  ruleMatches,
  type ClassParameters,
  type ModernClass,
  type WindowFields,
} from './alerts.rules.js';
import type { AlertsService, Notification } from './alerts.service.js';
import { DEVICE_DOWN_ALERT, isDownState, legacyClassOf } from './legacy-alerts.repository.js';
import { FlapDetector, type FlapSettings } from './legacy-flap.rules.js';
import { PatternMatcher } from './pattern-matcher.rules.js';

/** The first words of a legacy occurrence's label, by class (then `: <device>` where there is one). */
const LEGACY_LABELS: Record<string, string> = {
  legacy_device_down: 'Device down',
  legacy_link_state: 'Link state',
  legacy_url_down: 'URL down',
};

/** The history's prefix of an occurrence held by flap control. */
const FLAPPING = 'flapping';

const TICK_MS = 1000;
const READ_BATCH = 5000;
/** At most this many rows of a feed are evaluated late after a restart. */
const RESUME_LIMIT = 100_000;
const MAX_TIMES_PER_KEY = 100_000;
const FEEDS: Record<ModernClass, { view: string; columns: string }> = {
  syslog_log: {
    view: 'syslog_log',
    columns: 'id, device_id, timestamp, facility, severity, source, message AS text',
  },
  event_log: {
    view: 'eventlog_log',
    columns: 'id, device_id, timestamp, severity, log, source, event_id, data AS text',
  },
  eve_log: {
    view: 'eve_log',
    columns:
      'id, coalesce(src_id, dst_id) AS device_id, timestamp, severity, proto, signature_id, signature AS text, src_ip, dst_ip',
  },
};

interface LogRow {
  id: number;
  device_id: number | null;
  timestamp: number;
  severity: number;
  text: string;
  facility?: number;
  source?: string;
  log?: string;
  event_id?: number;
  proto?: string | null;
  signature_id?: number;
  src_ip?: string;
  dst_ip?: string;
}

interface CompiledAlert {
  row: repo.AlertRow;
  cls: ModernClass;
  params: ClassParameters;
  patterns: number[];
  tagIds: number[] | null;
  scopeTagId: number | null;
  lookbackMs: number;
}

interface Feed {
  alerts: CompiledAlert[];
  unconditional: CompiledAlert[];
  byPattern: CompiledAlert[][];
  matcher: PatternMatcher;
}

interface KeyState {
  times: number[];
  /** The first match still inside the window (the `message` variable). */
  first: LogRow | null;
  occurrenceId: number | null;
  closeNotBefore: number;
}

export interface EngineCounters {
  rowsRead: number;
  matches: number;
  occurrencesOpened: number;
  notificationsQueued: number;
  /** Intake (row timestamp) to notification queued, last 1024 (ms). */
  lags: number[];
}

export class AlertsEngine {
  readonly name = 'alerts';
  private timer: NodeJS.Timeout | null = null;
  private readonly hwm = new Map<ModernClass, number>();
  private compiled: Record<ModernClass, Feed> | null = null;
  private alertsVersion = '';
  private readonly state = new Map<string, KeyState>();
  private readonly dirty = new Set<number>();
  private readonly flaps = new FlapDetector();
  /** The high-water marks as last saved (JSON), to write them only when they moved. */
  private savedMarks = '';
  private running = false;
  private reading = false;
  private pendingRead = false;
  readonly counters: EngineCounters = {
    rowsRead: 0,
    matches: 0,
    occurrencesOpened: 0,
    notificationsQueued: 0,
    lags: [],
  };

  constructor(
    private readonly ctx: CoreContext,
    readonly service: AlertsService,
    private readonly subscribe: ((listener: () => void) => () => void) | null = null,
  ) {}

  private unsubscribe: (() => void) | null = null;

  private get db(): DB {
    return this.ctx.db;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    // Resume where evaluation stopped (kept in memory across an engine restart, in the settings
    // table across a process restart), at most RESUME_LIMIT rows behind the newest of each feed.
    const saved = this.hwm.size > 0 ? Object.fromEntries(this.hwm) : repo.engineMarks(this.db);
    for (const cls of Object.keys(FEEDS) as ModernClass[]) {
      const newest = this.maxId(FEEDS[cls].view);
      const mark = saved[cls];
      this.hwm.set(
        cls,
        typeof mark === 'number' && mark <= newest ? Math.max(mark, newest - RESUME_LIMIT) : newest,
      );
    }
    this.savedMarks = JSON.stringify(Object.fromEntries(this.hwm));
    // Occurrences left open by the previous run: kept open for one lookback.
    const now = this.ctx.clock.now();
    for (const o of repo.openOccurrences(this.db)) {
      const alert = repo.findAlertById(this.db, o.alert_id);
      const lookback = Number(
        (alert &&
          (JSON.parse(alert.parameters) as { lookback_minutes?: number }).lookback_minutes) ??
          5,
      );
      if (this.state.has(this.key(o.alert_id, o.device_id))) continue;
      this.state.set(this.key(o.alert_id, o.device_id), {
        times: [],
        first: null,
        occurrenceId: o.id,
        closeNotBefore: now + lookback * 60_000,
      });
    }
    this.unsubscribe = this.subscribe?.(() => this.readSoon()) ?? null;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.running) this.saveMarks();
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private maxId(view: string): number {
    return (
      (this.db.prepare(`SELECT coalesce(max(id), 0) FROM ${view}`).pluck().get() as number) ?? 0
    );
  }

  private key(alertId: number, deviceId: number | null) {
    return `${alertId}:${deviceId ?? ''}`;
  }

  /** A commit notice: read what was committed, once the current read is done. */
  readSoon(): void {
    if (!this.running) return;
    if (this.reading) {
      this.pendingRead = true;
      return;
    }
    this.reading = true;
    setImmediate(() => {
      try {
        do {
          this.pendingRead = false;
          this.readNew();
        } while (this.pendingRead && this.running);
      } catch (err) {
        this.ctx.log.error({ err }, 'alert evaluation failed');
      } finally {
        this.reading = false;
      }
    });
  }

  /** One evaluation step: new rows, legacy firings, closings and invert alerts (tests call it). */
  tick(): void {
    if (!this.running) return;
    try {
      this.readNew();
      this.handleLegacyEvents();
      this.closeAndInvert();
      this.flushEvaluations();
      this.saveMarks();
    } catch (err) {
      this.ctx.log.error({ err }, 'alert evaluation failed');
    }
  }

  // --- compiling ------------------------------------------------------------------------------

  private compile() {
    const version = this.db
      .prepare(
        "SELECT count(*) || ':' || coalesce(max(updated_at), 0) || ':' || coalesce(sum(id * enabled), 0) FROM alerts",
      )
      .pluck()
      .get() as string;
    if (this.compiled && version === this.alertsVersion) return this.compiled;
    this.alertsVersion = version;
    const slugs = new Set<string>();
    const rows = repo.listEnabledAlerts(this.db).filter((r) => isModernClass(r.class));
    for (const r of rows) {
      for (const t of JSON.parse(r.tag_filters) as string[]) slugs.add(t);
      if (r.scope === 'tag' && r.scope_id) slugs.add(r.scope_id);
    }
    const tagIds = new Map(repo.tagIdsOfSlugs(this.db, [...slugs]).map((t) => [t.slug, t.id]));
    const out = {} as Record<ModernClass, Feed>;
    for (const cls of Object.keys(FEEDS) as ModernClass[]) {
      const patterns: string[] = [];
      // The same text in several alerts is one pattern of the automaton.
      const indexOf = new Map<string, number>();
      const patternIndex = (text: string) => {
        const key = text.toLowerCase();
        let index = indexOf.get(key);
        if (index === undefined) {
          index = patterns.push(text) - 1;
          indexOf.set(key, index);
        }
        return index;
      };
      const alerts: CompiledAlert[] = [];
      for (const row of rows.filter((r) => r.class === cls)) {
        const params = JSON.parse(row.parameters) as ClassParameters;
        const own = (params.contains ?? []).map(patternIndex);
        const filters = JSON.parse(row.tag_filters) as string[];
        alerts.push({
          row,
          cls,
          params,
          patterns: own,
          // A tag filter naming a tag that does not exist matches no device.
          tagIds: filters.length === 0 ? null : filters.map((s) => tagIds.get(s) ?? -1),
          scopeTagId: row.scope === 'tag' ? (tagIds.get(row.scope_id ?? '') ?? -1) : null,
          lookbackMs: (params.lookback_minutes ?? 5) * 60_000,
        });
      }
      // Candidates of a row: the alerts without texts, and those of the texts found in it.
      const byPattern: CompiledAlert[][] = patterns.map(() => []);
      for (const a of alerts) for (const p of new Set(a.patterns)) byPattern[p]!.push(a);
      out[cls] = {
        alerts,
        unconditional: alerts.filter((a) => a.patterns.length === 0),
        byPattern,
        matcher: new PatternMatcher(patterns),
      };
    }
    this.compiled = out;
    return out;
  }

  // --- reading and counting -------------------------------------------------------------------

  private devices() {
    return new Map(this.service.deps.devices.entries().map((d) => [d.id, d]));
  }

  private readNew(): void {
    const compiled = this.compile();
    let devices: ReturnType<AlertsEngine['devices']> | null = null;
    for (const cls of Object.keys(FEEDS) as ModernClass[]) {
      const feed = FEEDS[cls];
      const compiledFeed = compiled[cls];
      const { alerts } = compiledFeed;
      for (let guard = 0; guard < 100; guard++) {
        const from = this.hwm.get(cls) ?? 0;
        const rows = this.db
          .prepare(`SELECT ${feed.columns} FROM ${feed.view} WHERE id > ? ORDER BY id LIMIT ?`)
          .all(from, READ_BATCH) as LogRow[];
        if (rows.length === 0) break;
        this.hwm.set(cls, rows[rows.length - 1]!.id);
        this.counters.rowsRead += rows.length;
        if (alerts.length > 0) {
          devices ??= this.devices();
          const now = this.ctx.clock.now();
          for (const row of rows) this.evaluateRow(row, compiledFeed, devices, now);
        }
        if (rows.length < READ_BATCH) break;
      }
    }
  }

  private inScope(
    alert: CompiledAlert,
    deviceId: number | null,
    devices: Map<number, { tagIds: readonly number[] }>,
  ): boolean {
    const { row } = alert;
    if (row.scope === 'device' && String(deviceId) !== row.scope_id) return false;
    if (alert.scopeTagId === null && alert.tagIds === null) return true;
    const device = deviceId === null ? undefined : devices.get(deviceId);
    if (!device) return false;
    if (alert.scopeTagId !== null && !device.tagIds.includes(alert.scopeTagId)) return false;
    return alert.tagIds === null || alert.tagIds.every((t) => device.tagIds.includes(t));
  }

  private classFilter(alert: CompiledAlert, row: LogRow): boolean {
    const p = alert.params;
    if (p.severity_ceiling != null && row.severity > p.severity_ceiling) return false;
    if (alert.cls === 'syslog_log') return p.facility == null || row.facility === p.facility;
    if (alert.cls === 'event_log') {
      if (p.log && row.log?.toLowerCase() !== p.log.toLowerCase()) return false;
      if (p.source && row.source?.toLowerCase() !== p.source.toLowerCase()) return false;
      return !p.event_ids?.length || p.event_ids.includes(row.event_id ?? -1);
    }
    if (p.proto && row.proto?.toLowerCase() !== p.proto.toLowerCase()) return false;
    return !p.signature_ids?.length || p.signature_ids.includes(row.signature_id ?? -1);
  }

  private evaluateRow(
    row: LogRow,
    feed: Feed,
    devices: ReturnType<AlertsEngine['devices']>,
    now: number,
  ): void {
    const found = feed.matcher.size > 0 ? feed.matcher.matches(row.text) : null;
    // Only the alerts a found text (or no text) can satisfy are looked at, once each.
    let candidates: Iterable<CompiledAlert> = feed.unconditional;
    if (found && found.size > 0) {
      const set = new Set<CompiledAlert>(feed.unconditional);
      for (const index of found) for (const a of feed.byPattern[index]!) set.add(a);
      candidates = set;
    }
    for (const alert of candidates) {
      if (alert.params.invert) {
        // Absence alerts count presence here and decide on the tick.
        if (!this.matchesRow(alert, row, found) || !this.inScope(alert, row.device_id, devices))
          continue;
        this.count(alert, alert.row.scope === 'device' ? row.device_id : null, row.timestamp, now);
        continue;
      }
      if (!this.matchesRow(alert, row, found)) continue;
      if (!this.inScope(alert, row.device_id, devices)) continue;
      this.counters.matches++;
      const state = this.count(alert, row.device_id, row.timestamp, now);
      if (state.times.length === 1 || state.first === null) state.first = row;
      if (state.occurrenceId === null && state.times.length >= alert.params.occurrences_min)
        this.open(alert, row.device_id, state, state.first ?? row, devices);
    }
  }

  private matchesRow(alert: CompiledAlert, row: LogRow, found: Set<number> | null): boolean {
    if (alert.patterns.length > 0) {
      const hit = (i: number) => found?.has(i) ?? false;
      const ok =
        alert.params.combine_op === 'OR' ? alert.patterns.some(hit) : alert.patterns.every(hit);
      if (!ok) return false;
    }
    return this.classFilter(alert, row);
  }

  private count(
    alert: CompiledAlert,
    deviceId: number | null,
    at: number,
    now = this.ctx.clock.now(),
  ): KeyState {
    const key = this.key(alert.row.id, deviceId);
    let state = this.state.get(key);
    if (!state) {
      state = { times: [], first: null, occurrenceId: null, closeNotBefore: 0 };
      this.state.set(key, state);
    }
    if (at >= now - alert.lookbackMs) {
      state.times.push(at);
      if (state.times.length > MAX_TIMES_PER_KEY) state.times.shift();
    }
    this.evict(state, now - alert.lookbackMs);
    this.dirty.add(alert.row.id);
    return state;
  }

  private evict(state: KeyState, since: number): void {
    let drop = 0;
    while (drop < state.times.length && state.times[drop]! < since) drop++;
    if (drop > 0) state.times.splice(0, drop);
    if (state.times.length === 0) state.first = null;
  }

  // --- occurrences and notifications ----------------------------------------------------------

  private open(
    alert: CompiledAlert,
    deviceId: number | null,
    state: KeyState,
    row: LogRow | null,
    devices: ReturnType<AlertsEngine['devices']>,
  ): void {
    const now = this.ctx.clock.now();
    const device = deviceId === null ? undefined : devices.get(deviceId);
    const occurrenceId = repo.openOccurrence(this.db, {
      source: 'modern',
      alert_id: alert.row.id,
      alert_label: alert.row.label,
      alert_class: alert.row.class,
      severity: alert.row.severity,
      device_id: deviceId,
      device_label: device?.label ?? null,
      opened_at: now,
      match_count: state.times.length,
      message: row?.text ?? null,
      suppressed_by: null,
    });
    state.occurrenceId = occurrenceId;
    state.closeNotBefore = now;
    this.counters.occurrencesOpened++;
    const vars: Record<string, string> = {
      alert_label: alert.row.label,
      severity: String(alert.row.severity),
      device_label: device?.label ?? '',
      device_ip: device?.ip ?? row?.src_ip ?? '',
      count: String(state.times.length),
      lookback_minutes: String(alert.params.lookback_minutes),
      opened_at: toIsoWithOffset(now),
      message: row?.text ?? '',
    };
    if (row?.source !== undefined) vars.source = row.source;
    if (row?.facility !== undefined) vars.facility = String(row.facility);
    if (alert.cls === 'syslog_log' && row) vars.syslog_severity = String(row.severity);
    if (row?.event_id !== undefined) vars.event_id = String(row.event_id);
    if (row?.log !== undefined) vars.log = row.log;
    if (row?.signature_id !== undefined) vars.signature_id = String(row.signature_id);
    if (row?.src_ip !== undefined) vars.src_ip = row.src_ip;
    if (row?.dst_ip !== undefined) vars.dst_ip = row.dst_ip ?? '';
    this.route(
      occurrenceId,
      {
        source: 'modern',
        alertId: alert.row.id,
        severity: alert.row.severity,
        deviceId,
        deviceTagIds: device?.tagIds ?? [],
        cls: alert.row.class,
        label: alert.row.label,
        windows: [],
      },
      vars,
    );
    if (row) this.recordLag(now - row.timestamp);
  }

  private recordLag(ms: number): void {
    const lags = this.counters.lags;
    lags.push(ms);
    if (lags.length > 1024) lags.splice(0, lags.length - 1024);
  }

  /** Routing rules -> outlets, one notification per outlet; suppressed inside a window. */
  private route(
    occurrenceId: number,
    event: {
      source: 'modern' | 'legacy';
      alertId: number;
      severity: number;
      deviceId: number | null;
      deviceTagIds: readonly number[];
      cls: string;
      label: string;
      /** Windows attached to the alert itself (legacy). */
      windows: readonly WindowFields[];
    },
    vars: Record<string, string>,
  ): void {
    const now = this.ctx.clock.now();
    const zone = this.service.deps.timeZone();
    const seen = new Set<number>();
    let queued = 0;
    let unsuppressed = 0;
    let suppressedBy: string | null = null;
    const table = this.service.routingTable();
    for (const rule of table) {
      if (!ruleMatches(rule.criteria, event)) continue;
      const window = coveringWindow([...event.windows, ...rule.windows], now, zone);
      for (const outletId of rule.outletIds) {
        if (seen.has(outletId)) continue;
        seen.add(outletId);
        const outlet = repo.findOutlet(this.db, outletId);
        if (!outlet || outlet.enabled !== 1) continue;
        const delivery = this.service.deps.delivery;
        const deliveryId = delivery
          ? delivery.queue.enqueue(
              this.service.target(outlet),
              this.compose(outlet, event.cls, event.label, event.severity, occurrenceId, vars),
              window ? { suppressedBy: window.label } : undefined,
            )
          : null;
        repo.recordNotification(this.db, {
          occurrence_id: occurrenceId,
          rule_id: rule.id,
          outlet_id: outlet.id,
          outlet_name: outlet.name,
          delivery_id: deliveryId,
          suppressed_by: window?.label ?? (delivery ? null : 'delivery not installed'),
          queued_at: now,
        });
        queued++;
        if (window) suppressedBy ??= window.label;
        else unsuppressed++;
        this.counters.notificationsQueued++;
      }
    }
    // Every notification held by a window: the occurrence says which.
    if (queued > 0 && unsuppressed === 0 && suppressedBy !== null)
      repo.setOccurrenceSuppression(this.db, occurrenceId, `maintenance window: ${suppressedBy}`);
  }

  private compose(
    outlet: repo.OutletRow,
    cls: string,
    label: string,
    severity: number,
    occurrenceId: number,
    vars: Record<string, string>,
  ): Notification {
    const template =
      (outlet.email_template_id !== null
        ? repo.findTemplate(this.db, outlet.email_template_id)
        : undefined) ?? repo.defaultTemplateOfClass(this.db, cls);
    const render = this.service.deps.delivery!.renderTemplate;
    const text = template ? render(template.alt_template, vars, { html: false }) : label;
    const html = template ? render(template.email_template, vars, { html: true }) : null;
    const device = vars.device_label ? `: ${vars.device_label}` : '';
    return {
      occurrenceId,
      alertLabel: label,
      severity,
      subject: `[severity ${severity}] ${label}${device}`,
      text,
      html,
      variables: vars,
    };
  }

  // --- the tick: closing, absence, evaluation records -----------------------------------------

  private closeAndInvert(): void {
    const compiled = this.compile();
    const now = this.ctx.clock.now();
    const byId = new Map<number, CompiledAlert>();
    for (const cls of Object.keys(compiled) as ModernClass[])
      for (const a of compiled[cls].alerts) byId.set(a.row.id, a);
    for (const [key, state] of this.state) {
      const alertId = Number(key.slice(0, key.indexOf(':')));
      const alert = byId.get(alertId);
      if (!alert) {
        // Deleted or disabled: an open occurrence closes.
        if (state.occurrenceId !== null) repo.closeOccurrence(this.db, state.occurrenceId, now, 0);
        this.state.delete(key);
        continue;
      }
      this.evict(state, now - alert.lookbackMs);
      const below = state.times.length < alert.params.occurrences_min;
      if (alert.params.invert) continue;
      if (state.occurrenceId !== null && below && now >= state.closeNotBefore) {
        repo.closeOccurrence(this.db, state.occurrenceId, now, state.times.length);
        state.occurrenceId = null;
        this.dirty.add(alertId);
      }
      if (state.occurrenceId === null && state.times.length === 0) this.state.delete(key);
    }
    // Absence: an invert alert opens when fewer than occurrences_min matches fell within the
    // lookback (once it has been enabled for a whole lookback), and closes when they come back.
    let devices: ReturnType<AlertsEngine['devices']> | null = null;
    for (const alert of byId.values()) {
      if (!alert.params.invert) continue;
      const deviceId = alert.row.scope === 'device' ? Number(alert.row.scope_id) : null;
      const key = this.key(alert.row.id, deviceId);
      let state = this.state.get(key);
      if (!state) {
        state = { times: [], first: null, occurrenceId: null, closeNotBefore: 0 };
        this.state.set(key, state);
      }
      this.evict(state, now - alert.lookbackMs);
      const absent = state.times.length < alert.params.occurrences_min;
      const watchedLongEnough = now - alert.row.updated_at >= alert.lookbackMs;
      if (absent && state.occurrenceId === null && watchedLongEnough) {
        devices ??= this.devices();
        this.open(alert, deviceId, state, null, devices);
      } else if (!absent && state.occurrenceId !== null) {
        repo.closeOccurrence(this.db, state.occurrenceId, now, state.times.length);
        state.occurrenceId = null;
      }
      this.dirty.add(alert.row.id);
    }
  }

  private saveMarks(): void {
    const marks = JSON.stringify(Object.fromEntries(this.hwm));
    if (marks === this.savedMarks) return;
    repo.saveEngineMarks(this.db, marks);
    this.savedMarks = marks;
  }

  private flushEvaluations(): void {
    if (this.dirty.size === 0) return;
    const now = this.ctx.clock.now();
    const totals = new Map<number, number>();
    for (const [key, state] of this.state) {
      const alertId = Number(key.slice(0, key.indexOf(':')));
      if (this.dirty.has(alertId))
        totals.set(alertId, (totals.get(alertId) ?? 0) + state.times.length);
    }
    this.db.transaction(() => {
      for (const alertId of this.dirty)
        repo.recordEvaluation(this.db, alertId, now, totals.get(alertId) ?? 0);
    })();
    this.dirty.clear();
  }

  // --- legacy firings ---------------------------------------------------------------------------

  private handleLegacyEvents(): void {
    const settings = repo.flapSettings(this.db);
    const now = this.ctx.clock.now();
    const events = repo.pendingLegacyEvents(this.db, 500);
    if (events.length > 0) {
      const devices = this.devices();
      const parents = new Map(repo.allParents(this.db).map((p) => [p.device_id, p.parent_id]));
      for (const e of events)
        this.db.transaction(() => this.handleLegacyEvent(e, now, settings, devices, parents))();
    }
    for (const alertId of this.flaps.settle(now, settings)) this.flapEnded(alertId, now);
  }

  private handleLegacyEvent(
    e: repo.PendingLegacyEvent,
    now: number,
    settings: FlapSettings,
    devices: ReturnType<AlertsEngine['devices']>,
    parents: Map<number, number>,
  ): void {
    repo.markLegacyEventHandled(this.db, e.id, now);
    const down = isDownState(e.alert_type, e.state);
    const flap = this.flaps.change(e.alert_id, e.ts, settings);
    if (flap.started)
      this.ctx.log.info(
        { legacyAlert: e.alert_id, changes: flap.changes, windowMinutes: settings.window_minutes },
        'legacy alert flapping: notifications held until it is stable',
      );
    const open = repo.openLegacyOccurrence(this.db, e.alert_id);
    if (!down) {
      if (open !== undefined) repo.closeOccurrence(this.db, open.id, now, 1);
      return;
    }
    if (open !== undefined) return;
    const device = e.device_id === null ? undefined : devices.get(e.device_id);
    const cls = legacyClassOf(e.alert_type);
    const url = this.urlOf(e);
    const label = `${LEGACY_LABELS[cls] ?? 'Link state'}${device ? `: ${device.label}` : url ? `: ${url}` : ''}`;
    const blockedBy =
      e.alert_type === DEVICE_DOWN_ALERT && e.device_id !== null
        ? this.downAncestor(e.device_id, parents, devices)
        : null;
    const suppressedBy = blockedBy
      ? `dependency: ${blockedBy} is down`
      : flap.flapping
        ? `${FLAPPING}: ${flap.changes} state changes in ${settings.window_minutes} min`
        : null;
    const occurrenceId = repo.openOccurrence(this.db, {
      source: 'legacy',
      alert_id: e.alert_id,
      alert_label: label,
      alert_class: cls,
      severity: e.severity,
      device_id: e.device_id,
      device_label: device?.label ?? null,
      opened_at: now,
      match_count: 1,
      message: e.message,
      suppressed_by: suppressedBy,
    });
    if (suppressedBy) return;
    this.routeLegacy(occurrenceId, e, label, device, now, e.message);
  }

  /** The URL of a URL tracker's legacy alert ('' for other kinds or a tracker gone). */
  private urlOf(e: { tracker_kind: string; tracker_id: number }): string {
    if (e.tracker_kind !== 'url') return '';
    return this.service.deps.urlOfTracker?.(e.tracker_id) ?? '';
  }

  private routeLegacy(
    occurrenceId: number,
    e: {
      alert_id: number;
      severity: number;
      device_id: number | null;
      alert_type: string;
      tracker_kind: string;
      tracker_id: number;
    },
    label: string,
    device: { label: string; ip: string; tagIds: readonly number[] } | undefined,
    now: number,
    message: string,
  ): void {
    this.route(
      occurrenceId,
      {
        source: 'legacy',
        alertId: e.alert_id,
        severity: e.severity,
        deviceId: e.device_id,
        deviceTagIds: device?.tagIds ?? [],
        cls: legacyClassOf(e.alert_type),
        label,
        windows: repo.windowsOfLegacyAlert(this.db, e.alert_id),
      },
      {
        alert_label: label,
        severity: String(e.severity),
        device_label: device?.label ?? '',
        device_ip: device?.ip ?? '',
        url: this.urlOf(e),
        state: 'down',
        opened_at: toIsoWithOffset(now),
        message,
      },
    );
  }

  /**
   * Flapping ended: an alert that settled down has its open occurrence (held while flapping)
   * routed now, once; one that settled up has nothing open and sends nothing.
   */
  private flapEnded(alertId: number, now: number): void {
    const open = repo.openLegacyOccurrence(this.db, alertId);
    if (!open?.suppressed_by?.startsWith(FLAPPING)) return;
    const alert = repo.legacyAlertForRouting(this.db, alertId);
    if (!alert) return;
    const device =
      alert.device_id === null ? undefined : (this.devices().get(alert.device_id) ?? undefined);
    this.db.transaction(() => {
      repo.setOccurrenceSuppression(this.db, open.id, null);
      this.routeLegacy(
        open.id,
        { ...alert, alert_id: alertId },
        open.alert_label,
        device,
        now,
        `${open.message ?? ''} (stable after flapping)`.trim(),
      );
    })();
  }

  /** Legacy alerts flapping now (ids). */
  flappingLegacyAlerts(): number[] {
    return this.flaps.flappingIds();
  }

  /** The label of the nearest ancestor with an open device-down occurrence, or null. */
  private downAncestor(
    deviceId: number,
    parents: Map<number, number>,
    devices: Map<number, { label: string }>,
  ): string | null {
    const openDown = this.db.prepare(
      "SELECT 1 FROM alert_occurrences WHERE source = 'legacy' AND alert_class = 'legacy_device_down' AND device_id = ? AND closed_at IS NULL",
    );
    let at = parents.get(deviceId);
    for (let i = 0; at !== undefined && i < 64; i++) {
      if (openDown.get(at)) return devices.get(at)?.label ?? `device ${at}`;
      at = parents.get(at);
    }
    return null;
  }

  /** Evaluation lag p99 (ms): row timestamp to notification queued. */
  lagP99(): number | null {
    const lags = [...this.counters.lags].sort((a, b) => a - b);
    return lags.length === 0
      ? null
      : lags[Math.min(lags.length - 1, Math.floor(lags.length * 0.99))]!;
  }
}
