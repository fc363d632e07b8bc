/**
 * The audit log: who did what, when, from where, to what, and whether it worked.
 *
 * Invariants:
 * - A row is written on the caller's connection (the API connection) inside the transaction of
 *   the change it records, so a change and its audit row commit or roll back together. It never
 *   goes through the storage writer, which may drop writes under load.
 * - Never a secret: `detail` holds facts about the change (which permissions, which scopes, a
 *   token's name), and a key that names a secret (password, secret, otp, hash, cookie, code,
 *   `*_token` ...) is refused with an exception, so a careless call fails its tests instead of
 *   storing a credential. A failed sign-in records the account only when the name matches one
 *   (a mistyped password in the name field is never stored).
 * - Newest first is `ORDER BY id DESC` (ids are AUTOINCREMENT, so monotonic); every filter of
 *   the list has an index that serves it.
 */
import type { DB } from '../db/database.js';
import { pruneByTime, tableBytes, type RetentionRegistry } from '../db/retention.js';
import type { StorageWriter } from '../db/storage-writer.js';
import type { Identity } from '../http/identity.js';

export type AuditOutcome = 'success' | 'failure';
type DetailValue = string | number | boolean | null | readonly (string | number)[];

export interface AuditActor {
  userId: number | null;
  /** Username at the time, or 'anonymous' / 'system'. */
  name: string;
  tokenId: number | null;
  sourceIp: string | null;
}

export interface AuditEntry {
  /** `<area>.<verb>`: `auth.login`, `user.update`, `token.revoke`, `oauth_client.approve` ... */
  action: string;
  outcome: AuditOutcome;
  target?: { type: string; id?: string | number | null; label?: string | null };
  detail?: Record<string, DetailValue>;
}

export interface AuditRow {
  id: number;
  at: number;
  actor_user_id: number | null;
  actor: string;
  token_id: number | null;
  source_ip: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  outcome: AuditOutcome;
  detail: string | null;
}

const ACTION = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const SECRET_KEY =
  /(^|_)(password|passwd|secret|otp|totp|hash|plaintext|cookie|authorization|code|key)($|_)|(^|_)token$/i;
const MAX_TEXT = 200;

export class AuditMisuseError extends Error {}

export function assertNoSecrets(detail: Record<string, unknown>): void {
  for (const key of Object.keys(detail))
    if (SECRET_KEY.test(key))
      throw new AuditMisuseError(
        `audit detail key "${key}" names a secret: audit rows never hold one`,
      );
}

const clip = (text: string | null | undefined): string | null =>
  text === null || text === undefined
    ? null
    : text.length > MAX_TEXT
      ? `${text.slice(0, MAX_TEXT)}…`
      : text;

/** The actor of a request: its identity (or anonymous) and its source address. */
export function actorOf(request: { identity: Identity | null; ip: string }): AuditActor {
  const identity = request.identity;
  return {
    userId: identity?.user.id ?? null,
    name: identity?.user.username ?? 'anonymous',
    tokenId: identity?.tokenId ?? null,
    sourceIp: request.ip || null,
  };
}

export const SYSTEM_ACTOR: AuditActor = {
  userId: null,
  name: 'system',
  tokenId: null,
  sourceIp: null,
};

/** Writes one row on `db` (call it inside the transaction of the change it records). */
export function recordAudit(db: DB, at: number, actor: AuditActor, entry: AuditEntry): void {
  if (!ACTION.test(entry.action)) throw new AuditMisuseError(`bad audit action "${entry.action}"`);
  if (entry.detail) assertNoSecrets(entry.detail);
  db.prepare(
    `INSERT INTO audit_log (at, actor_user_id, actor, token_id, source_ip, action, target_type, target_id, target_label, outcome, detail)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    at,
    actor.userId,
    clip(actor.name) ?? 'anonymous',
    actor.tokenId,
    actor.sourceIp,
    entry.action,
    entry.target?.type ?? null,
    entry.target?.id === undefined || entry.target.id === null ? null : String(entry.target.id),
    clip(entry.target?.label),
    entry.outcome,
    entry.detail ? JSON.stringify(entry.detail) : null,
  );
}

export interface AuditQuery {
  page: number;
  limit: number;
  action?: string;
  userId?: number;
  outcome?: AuditOutcome;
  /** UTC ms, inclusive. */
  start?: number;
  /** UTC ms, inclusive. */
  end?: number;
}

/** One page, newest first, and the total of rows matching the filters. */
export function listAudit(db: DB, query: AuditQuery): { rows: AuditRow[]; total: number } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (query.action !== undefined) {
    // `user` matches user.create, user.update ...; `user.update` matches itself.
    where.push('(action = ? OR action GLOB ?)');
    params.push(query.action, `${query.action.replace(/[*?[\]]/g, '')}.*`);
  }
  if (query.userId !== undefined) {
    where.push('actor_user_id = ?');
    params.push(query.userId);
  }
  if (query.outcome !== undefined) {
    where.push('outcome = ?');
    params.push(query.outcome);
  }
  if (query.start !== undefined) {
    where.push('at >= ?');
    params.push(query.start);
  }
  if (query.end !== undefined) {
    where.push('at <= ?');
    params.push(query.end);
  }
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const total = (
    db.prepare(`SELECT count(*) AS n FROM audit_log ${clause}`).get(...params) as { n: number }
  ).n;
  const rows = db
    .prepare(`SELECT * FROM audit_log ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`)
    .all(...params, query.limit, (query.page - 1) * query.limit) as AuditRow[];
  return { rows, total };
}

/**
 * Runs `change` and records its audit row in one transaction (better-sqlite3 nests a service's
 * own transaction inside as a savepoint): both commit, or neither.
 */
export function audited<T>(
  db: DB,
  at: number,
  actor: AuditActor,
  change: () => T,
  entry: AuditEntry | ((result: T) => AuditEntry | null),
): T {
  return db.transaction(() => {
    const result = change();
    const row = typeof entry === 'function' ? entry(result) : entry;
    if (row) recordAudit(db, at, actor, row);
    return result;
  })();
}

/**
 * Records a refused change (outcome `failure`, the refusal's text as `reason`) and rethrows: for
 * handlers whose refusals are security-relevant (a users holder reaching for an sa account). Only
 * expected refusals are recorded (`isRefusal`), never an unexpected error's message.
 */
export async function refusalsAudited<T>(
  db: DB,
  now: () => number,
  actor: AuditActor,
  entry: Omit<AuditEntry, 'outcome'>,
  isRefusal: (err: unknown) => err is Error,
  handler: () => Promise<T>,
): Promise<T> {
  try {
    return await handler();
  } catch (err) {
    if (isRefusal(err))
      recordAudit(db, now(), actor, {
        ...entry,
        outcome: 'failure',
        detail: { ...entry.detail, reason: err.message },
      });
    throw err;
  }
}

/** Default retention of the audit log (days). */
export const AUDIT_RETENTION_DAYS = 365;

/**
 * The audit log's retention row: entries older than the cutoff, by `at` (indexed), deleted in
 * batches through the storage writer. Entries are written on the API connection (never the
 * writer), but deleting old ones may go through it: a lost prune batch loses nothing.
 */
export function registerAuditRetention(
  retention: RetentionRegistry,
  db: DB,
  writer: StorageWriter,
): void {
  retention.register({
    table: 'audit_log',
    defaultDays: AUDIT_RETENTION_DAYS,
    size: () => tableBytes(db, ['audit_log']),
    prune: pruneByTime(db, writer, { namespace: 'audit', table: 'audit_log', time: 'at' }),
  });
}
