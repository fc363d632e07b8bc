/**
 * The delivery contract the alerting feature codes against (features/alerts/delivery/index.ts
 * re-exports it), and the shapes of the delivery ledger.
 */

export type OutletType = 'email' | 'webhook' | 'slack' | 'teams' | 'discord' | 'o365';

export interface OutletTarget {
  id: number;
  type: OutletType;
  name: string;
  /** Secrets in clear, server side only. */
  config: Record<string, unknown>;
  rate_limit_per_min: number | null;
}

export interface Notification {
  occurrenceId: number | null;
  alertLabel: string;
  severity: number;
  subject: string;
  text: string;
  html: string | null;
  variables: Record<string, string>;
}

export interface DeliveryQueue {
  /** Persists one delivery of `n` to `outlet` and returns its row id (sent later, in order). */
  enqueue(outlet: OutletTarget, n: Notification, opts?: { suppressedBy?: string }): number;
  /** Sends a test notification now (not queued, no rate limit). */
  sendTest(outlet: OutletTarget): Promise<{ ok: boolean; error?: string }>;
}

export type DeliveryStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'suppressed' | 'coalesced';

/** A delivery row as the history shows it (never the outlet's config). */
export interface DeliveryRecord {
  id: number;
  outlet_id: number;
  outlet_name: string;
  outlet_type: OutletType;
  occurrence_id: number | null;
  alert_label: string;
  severity: number;
  kind: 'notification' | 'summary';
  subject: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  sent_at: number | null;
  error: string | null;
  /** Milliseconds the outlet's rate limit held this delivery back, in all. */
  rate_delay_ms: number;
  suppressed_by: string | null;
  /** The summary delivery this one was folded into (backlog over the cap). */
  coalesced_into: number | null;
  /** For a summary: how many deliveries it stands for. */
  coalesced_count: number;
}

export interface DeliveryAttempt {
  delivery_id: number;
  attempt: number;
  started_at: number;
  finished_at: number | null;
  outcome: 'sending' | 'sent' | 'retry' | 'failed' | 'interrupted';
  http_status: number | null;
  error: string | null;
}
