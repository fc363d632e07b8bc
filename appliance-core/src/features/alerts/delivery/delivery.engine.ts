/**
 * The persisted delivery queue: every notification for every outlet is a row of
 * alert_deliveries before anything is sent, and every attempt a row of alert_delivery_attempts.
 *
 * Invariants:
 * - Nothing is lost across a restart: `enqueue` commits the row before it returns; a delivery
 *   left `sending` by a stopped process is sent again at start (its attempt is recorded as
 *   interrupted). Delivery is therefore at least once: a receiver may see a notification twice
 *   when the appliance stopped between the receiver's answer and the commit of the outcome.
 * - Past an outlet's `rate_limit_per_min`, counted as attempts started in the current calendar
 *   minute, a delivery waits for the next minute, never dropped, and its row adds the wait to
 *   `rate_delay_ms`.
 * - A backlog beyond the per-outlet cap (pending deliveries of one outlet) is folded into one
 *   summary delivery: each folded row is kept (`coalesced`, pointing at the summary) and counted
 *   in the summary's `coalesced_count`, which the summary's text states.
 * - A 5xx, a 429, a timeout or a network failure is retried with exponential backoff (a 429's
 *   or 503's Retry-After is honoured when longer); any other failure (4xx, a refused address, a
 *   redirect, a bad config) fails the delivery at once. After `maxAttempts` it fails.
 * - One delivery at a time per outlet, in order (next attempt, then id): a worker per outlet
 *   with something due sends them one after the other; at most `concurrency` outlets at once. A
 *   delivery waiting for its retry does not hold back the outlet's later ones.
 * - The outlet's config (its secrets in clear) is stored only sealed by the secret box; the
 *   ledger's readable columns and error texts never carry it.
 *
 * Writes go straight through the database handle (not the storage writer): deliveries are few
 * (a notification rate, not an intake rate) and `enqueue` must return the committed row's id.
 */
import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import type { DB } from '../../../platform/db/database.js';
import type { SecretBox } from '../../../platform/security/secret-box.js';
import type { Clock } from '../../../platform/time/time.js';
import {
  attemptsSince,
  beginAttempt,
  coalescedInto,
  countBacklog,
  countIntoSummary,
  deferForRate,
  dueOutlets,
  failWithoutAttempt,
  finishAttempt,
  insertDelivery,
  nextDueAt,
  nextDueOfOutlet,
  openSummary,
  requeueInterrupted,
  type DeliveryRow,
} from './delivery.repository.js';
import type { DeliveryQueue, Notification, OutletTarget } from './delivery.schema.js';
import { sendMail, type SmtpRelay } from './mail.service.js';
import { sendOutletRequest, type OutletProxy, type OutletResponse } from './outlet-http.service.js';
import type { OutletPolicy } from './outlet-url.rules.js';
import { buildOutletRequest, recipientsOf } from './outlet-request.rules.js';
import { relayPolicyOf } from './mail.service.js';

export interface DeliveryEngineOptions {
  db: DB;
  clock: Clock;
  secrets: SecretBox;
  log: Logger;
  policy: OutletPolicy;
  /** The mail relay with its password in clear (null when none is configured). */
  relay: () => SmtpRelay | null;
  /**
   * The outlet as it is now (null: deleted; undefined: not known, the enqueued copy is used).
   * Without it the enqueued copy is used.
   */
  currentOutlet?: (id: number) => OutletTarget | null | undefined;
  lookup?: LookupFunction;
  /**
   * The HTTP proxy webhook outlets go through (the daemon variables `proxy_url` and
   * `proxy_password`), read at each start so that a daemon restart applies it; null: direct.
   */
  proxyOf?: () => OutletProxy | null;
  clientName?: string;
  /** Pending deliveries of one outlet before more are folded into a summary (default 100). */
  backlogCap?: number;
  maxAttempts?: number;
  /** First retry delay; doubles each attempt up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  timeoutMs?: number;
  concurrency?: number;
  /** Longest sleep between looks at the queue. */
  pollMs?: number;
  /** How long `stop` waits for deliveries in flight (default 2000 ms). */
  stopGraceMs?: number;
}

const MINUTE_MS = 60_000;
/** How many folded deliveries a summary lists by name. */
const SUMMARY_LISTED = 20;

interface Payload {
  subject: string;
  text: string;
  html: string | null;
  variables: Record<string, string>;
}

export interface SendOutcome {
  ok: boolean;
  retryable: boolean;
  httpStatus: number | null;
  error: string | null;
  retryAfterMs?: number;
}

export class DeliveryEngine implements DeliveryQueue {
  readonly name = 'alert-delivery';
  private readonly o: Required<
    Pick<
      DeliveryEngineOptions,
      | 'backlogCap'
      | 'maxAttempts'
      | 'baseBackoffMs'
      | 'maxBackoffMs'
      | 'timeoutMs'
      | 'concurrency'
      | 'pollMs'
      | 'stopGraceMs'
    >
  >;
  /** Started and not stopped: timers look at the queue. */
  private running = false;
  /** Stopping or abandoned: workers take no more deliveries. */
  private stopping = false;
  private abandoned = false;
  private timer: NodeJS.Timeout | null = null;
  /** The proxy this run sends webhooks through (read at start). */
  private proxy: OutletProxy | null = null;
  /** One worker per outlet with something due, sending its deliveries one after the other. */
  private readonly workers = new Map<number, Promise<void>>();
  readonly counters = {
    enqueued: 0,
    sent: 0,
    failed: 0,
    retried: 0,
    rateDeferred: 0,
    coalesced: 0,
    suppressed: 0,
  };

  constructor(private readonly opts: DeliveryEngineOptions) {
    this.o = {
      backlogCap: opts.backlogCap ?? 100,
      maxAttempts: opts.maxAttempts ?? 8,
      baseBackoffMs: opts.baseBackoffMs ?? 30_000,
      maxBackoffMs: opts.maxBackoffMs ?? 3_600_000,
      timeoutMs: opts.timeoutMs ?? 10_000,
      concurrency: opts.concurrency ?? 4,
      pollMs: opts.pollMs ?? 1000,
      stopGraceMs: opts.stopGraceMs ?? 2000,
    };
  }

  async start(): Promise<void> {
    this.proxy = this.opts.proxyOf?.() ?? null;
    const requeued = requeueInterrupted(this.opts.db, this.opts.clock.now());
    if (requeued > 0)
      this.opts.log.info({ requeued }, 'alert deliveries interrupted by a stop are sent again');
    this.running = true;
    this.stopping = false;
    this.look();
  }

  /**
   * Stops taking deliveries and waits up to `stopGraceMs` for the ones in flight (their outcome
   * is recorded); one still running then stays `sending` and is sent again at the next start
   * (the appliance exits within 5 s of SIGTERM, an outlet may take longer to answer).
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let grace: NodeJS.Timeout | undefined;
    const settled = Promise.allSettled([...this.workers.values()]).then(() => true);
    const timedOut = new Promise<boolean>((resolve) => {
      grace = setTimeout(() => resolve(false), this.o.stopGraceMs);
    });
    const done = await Promise.race([settled, timedOut]);
    clearTimeout(grace);
    if (!done) this.abandoned = true;
  }

  /**
   * Stops at once, as a killed process would: deliveries in flight keep `sending` in the
   * database (tests of the restart path use it).
   */
  abandon(): void {
    this.running = false;
    this.stopping = true;
    this.abandoned = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  enqueue(outlet: OutletTarget, n: Notification, opts: { suppressedBy?: string } = {}): number {
    const { db, clock, secrets } = this.opts;
    const now = clock.now();
    const base = {
      outletId: outlet.id,
      outletName: outlet.name,
      outletType: outlet.type,
      occurrenceId: n.occurrenceId,
      alertLabel: n.alertLabel,
      severity: n.severity,
      notification: JSON.stringify({
        subject: n.subject,
        text: n.text,
        html: n.html,
        variables: n.variables,
      }),
      targetSealed: secrets.seal(JSON.stringify(outlet)),
      createdAt: now,
    };
    this.counters.enqueued++;
    if (opts.suppressedBy) {
      this.counters.suppressed++;
      return insertDelivery(db, {
        ...base,
        kind: 'notification',
        status: 'suppressed',
        nextAttemptAt: null,
        suppressedBy: opts.suppressedBy,
        coalescedInto: null,
      });
    }
    const id = db.transaction(() => {
      if (countBacklog(db, outlet.id, this.o.backlogCap) < this.o.backlogCap)
        return insertDelivery(db, {
          ...base,
          kind: 'notification',
          status: 'pending',
          nextAttemptAt: now,
          suppressedBy: null,
          coalescedInto: null,
        });
      let summary = openSummary(db, outlet.id);
      if (summary === null)
        summary = insertDelivery(db, {
          ...base,
          occurrenceId: null,
          alertLabel: 'Summary',
          kind: 'summary',
          notification: JSON.stringify({ subject: '', text: '', html: null, variables: {} }),
          status: 'pending',
          nextAttemptAt: now,
          suppressedBy: null,
          coalescedInto: null,
        });
      countIntoSummary(db, summary);
      this.counters.coalesced++;
      return insertDelivery(db, {
        ...base,
        kind: 'notification',
        status: 'coalesced',
        nextAttemptAt: null,
        suppressedBy: null,
        coalescedInto: summary,
      });
    })();
    // The worker catches its own failures (startWorker).
    if (this.running) void this.startWorker(outlet.id);
    return id;
  }

  async sendTest(outlet: OutletTarget): Promise<{ ok: boolean; error?: string }> {
    const now = this.opts.clock.now();
    const result = await this.send(
      outlet,
      {
        subject: `Test notification from ${outlet.name}`,
        text: `This is a test of the outlet "${outlet.name}" (${outlet.type}), sent ${new Date(now).toISOString()}.`,
        html: null,
        variables: {},
      },
      { alertLabel: 'Test', severity: 5, occurrenceId: null },
    );
    return result.ok ? { ok: true } : { ok: false, error: result.error ?? 'Delivery failed' };
  }

  /** Starts a worker for every outlet with a delivery due, then sleeps until the next is due. */
  private look(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      for (const outletId of dueOutlets(this.opts.db, this.opts.clock.now()))
        void this.startWorker(outletId);
    } catch (err) {
      this.opts.log.error({ err }, 'alert delivery: reading the queue failed');
    }
    const due = nextDueAt(this.opts.db);
    // Something due is being sent by a worker (or waits for a free slot): look again soon.
    const wait =
      due === null
        ? this.o.pollMs
        : Math.max(
            Math.min(250, this.o.pollMs),
            Math.min(this.o.pollMs, due - this.opts.clock.now()),
          );
    this.timer = setTimeout(() => this.look(), wait);
    this.timer.unref?.();
  }

  /** The outlet's worker (a new one when it has none and a slot is free), or null. */
  private startWorker(outletId: number): Promise<void> | null {
    const existing = this.workers.get(outletId);
    if (existing) return existing;
    if (this.stopping || this.workers.size >= this.o.concurrency) return null;
    const worker = this.work(outletId)
      .catch((err: unknown) =>
        this.opts.log.error({ err, outletId }, 'alert delivery worker failed'),
      )
      .finally(() => {
        this.workers.delete(outletId);
        // A slot is free: an outlet that waited for one may start.
        if (this.running) setImmediate(() => this.look());
      });
    this.workers.set(outletId, worker);
    return worker;
  }

  /** Sends the outlet's due deliveries one after the other until none is due. */
  private async work(outletId: number): Promise<void> {
    const { db, clock } = this.opts;
    for (;;) {
      if (this.stopping) return;
      const now = clock.now();
      const row = nextDueOfOutlet(db, outletId, now);
      if (row === null) return;
      const target = this.targetOf(row);
      if (target === null) continue;
      const limit = target.rate_limit_per_min;
      if (limit !== null && limit >= 1) {
        const minuteStart = Math.floor(now / MINUTE_MS) * MINUTE_MS;
        if (attemptsSince(db, outletId, minuteStart) >= limit) {
          this.counters.rateDeferred++;
          deferForRate(db, row.id, now, minuteStart + MINUTE_MS);
          continue;
        }
      }
      const attempt = beginAttempt(db, row, now);
      await this.deliver(row, target, attempt);
    }
  }

  /**
   * Delivers everything due now (a worker per outlet, within the concurrency) and resolves when
   * those workers are done: what a tick of the timer does, awaited (tests drive it with their
   * own clock).
   */
  async runOnce(): Promise<void> {
    const workers = dueOutlets(this.opts.db, this.opts.clock.now())
      .map((outletId) => this.startWorker(outletId))
      .filter((w): w is Promise<void> => w !== null);
    await Promise.allSettled(workers);
  }

  /** The outlet to send a row to (the current one when the alerts feature tells), or null. */
  private targetOf(row: DeliveryRow): OutletTarget | null {
    let target: OutletTarget;
    try {
      target = JSON.parse(this.opts.secrets.open(row.target_sealed)) as OutletTarget;
    } catch {
      failWithoutAttempt(this.opts.db, row.id, 'The queued outlet could not be read');
      return null;
    }
    if (this.opts.currentOutlet) {
      const current = this.opts.currentOutlet(row.outlet_id);
      if (current === null) {
        failWithoutAttempt(this.opts.db, row.id, 'The outlet was deleted');
        return null;
      }
      if (current !== undefined) target = current;
    }
    return target;
  }

  private payloadOf(row: DeliveryRow, target: OutletTarget): Payload {
    const stored = JSON.parse(row.notification) as Payload;
    if (row.kind !== 'summary') return stored;
    const folded = coalescedInto(this.opts.db, row.id, SUMMARY_LISTED);
    const count = row.coalesced_count;
    const lines = folded.map((f) => {
      const p = JSON.parse(f.notification) as Payload;
      return `- [severity ${f.severity}] ${f.alert_label}: ${p.subject}`;
    });
    if (count > folded.length) lines.push(`- ... and ${count - folded.length} more`);
    return {
      subject: `${count} notification${count === 1 ? '' : 's'} held back for ${target.name}`,
      text: `The outlet "${target.name}" had more pending notifications than it can take; ${count} were folded into this summary (the alert history lists each one).\n${lines.join('\n')}`,
      html: null,
      variables: { count: String(count) },
    };
  }

  private async deliver(row: DeliveryRow, target: OutletTarget, attempt: number): Promise<void> {
    const { db, clock } = this.opts;
    let outcome: SendOutcome;
    try {
      outcome = await this.send(target, this.payloadOf(row, target), {
        alertLabel: row.alert_label,
        severity: row.severity,
        occurrenceId: row.occurrence_id,
      });
    } catch (err) {
      outcome = {
        ok: false,
        retryable: true,
        httpStatus: null,
        error: `Delivery failed: ${(err as Error).message}`,
      };
    }
    if (this.abandoned) return; // a "killed" engine records nothing more
    const now = clock.now();
    if (outcome.ok) {
      this.counters.sent++;
      finishAttempt(db, row.id, attempt, now, {
        outcome: 'sent',
        httpStatus: outcome.httpStatus,
        error: null,
        nextAttemptAt: null,
      });
      return;
    }
    if (outcome.retryable && attempt < this.o.maxAttempts) {
      this.counters.retried++;
      const backoff = Math.min(this.o.maxBackoffMs, this.o.baseBackoffMs * 2 ** (attempt - 1));
      const wait = Math.min(this.o.maxBackoffMs, Math.max(backoff, outcome.retryAfterMs ?? 0));
      finishAttempt(db, row.id, attempt, now, {
        outcome: 'retry',
        httpStatus: outcome.httpStatus,
        error: outcome.error,
        nextAttemptAt: now + wait,
      });
      return;
    }
    this.counters.failed++;
    finishAttempt(db, row.id, attempt, now, {
      outcome: 'failed',
      httpStatus: outcome.httpStatus,
      error: outcome.retryable
        ? `${outcome.error} (gave up after ${attempt} attempts)`
        : outcome.error,
      nextAttemptAt: null,
    });
  }

  /** Sends one payload to one outlet, by its type. */
  private async send(
    target: OutletTarget,
    payload: Payload,
    meta: { alertLabel: string; severity: number; occurrenceId: number | null },
  ): Promise<SendOutcome> {
    const n: Notification = { ...meta, ...payload };
    if (target.type === 'email') {
      const relay = this.opts.relay();
      if (!relay)
        return {
          ok: false,
          retryable: true,
          httpStatus: null,
          error: 'The mail relay is not configured',
        };
      const to = recipientsOf(target.config);
      if (to.length === 0)
        return {
          ok: false,
          retryable: false,
          httpStatus: null,
          error: 'The outlet has no valid recipient',
        };
      const result = await sendMail(
        relay,
        { to, subject: n.subject, text: n.text, html: n.html },
        {
          policy: relayPolicyOf(this.opts.policy),
          timeoutMs: this.o.timeoutMs,
          ...(this.opts.lookup ? { lookup: this.opts.lookup } : {}),
          ...(this.opts.clientName ? { clientName: this.opts.clientName } : {}),
        },
      );
      return result.ok
        ? { ok: true, retryable: false, httpStatus: null, error: null }
        : { ok: false, retryable: result.retryable, httpStatus: null, error: result.error };
    }
    const built = buildOutletRequest(target, n, this.opts.clock.now());
    if (!built.ok) return { ok: false, retryable: false, httpStatus: null, error: built.error };
    const response: OutletResponse = await sendOutletRequest(built.request, {
      policy: this.opts.policy,
      timeoutMs: this.o.timeoutMs,
      ...(this.opts.lookup ? { lookup: this.opts.lookup } : {}),
      ...(this.proxy ? { proxy: this.proxy } : {}),
    });
    return {
      ok: response.ok,
      retryable: response.retryable,
      httpStatus: response.status,
      error: response.error ?? null,
      ...(response.retryAfterMs !== undefined ? { retryAfterMs: response.retryAfterMs } : {}),
    };
  }
}
