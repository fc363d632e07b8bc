/**
 * `GET /api/audit` (designed; permission `system`): the audit log, newest first, paged like the
 * spec's paginated feeds (`{current_page, data, per_page, total}`).
 */
import { Type } from '@sinclair/typebox';
import type { DB } from '../db/database.js';
import { defineRoute } from '../http/define-route.js';
import type { App } from '../http/http-server.js';
import { allOf } from '../http/identity.js';
import { failure } from '../http/envelopes.js';
import { parseDateTime } from '../time/datetime.js';
import { toIso } from '../time/time.js';
import { listAudit, type AuditRow } from './audit-log.js';

const AuditQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  action: Type.Optional(
    Type.String({
      pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$',
      maxLength: 100,
      description: 'An action (`user.update`) or an area (`user` matches every `user.*`)',
    }),
  ),
  user_id: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Rows whose actor is this user' }),
  ),
  outcome: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
  startTime: Type.Optional(
    Type.String({
      maxLength: 40,
      description: 'Rows at or after this date-time (UTC unless it has an offset)',
    }),
  ),
  endTime: Type.Optional(
    Type.String({ maxLength: 40, description: 'Rows at or before this date-time' }),
  ),
});

/** A date-time of the query, or the field's 400. */
function timeOf(field: 'startTime' | 'endTime', text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDateTime(text);
  if (ms === null) {
    const message = `The ${field} field must be a date-time such as 2026-11-21 10:20:30 or 2026-11-21T10:20:30Z.`;
    throw failure(400, message, { fields: { [field]: [message] }, family: 'errors' });
  }
  return ms;
}

const AuditRecord = Type.Object({
  id: Type.Integer(),
  at: Type.String({ description: 'ISO 8601, UTC' }),
  user_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null: anonymous or system' }),
  actor: Type.String({ description: "Username at the time, 'anonymous' or 'system'" }),
  token_id: Type.Union([Type.Integer(), Type.Null()]),
  source_ip: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  target: Type.Union([
    Type.Object({
      type: Type.String(),
      id: Type.Union([Type.String(), Type.Null()]),
      label: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  detail: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});

const AuditPage = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(AuditRecord),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

const record = (row: AuditRow) => ({
  id: row.id,
  at: toIso(row.at),
  user_id: row.actor_user_id,
  actor: row.actor,
  token_id: row.token_id,
  source_ip: row.source_ip,
  action: row.action,
  target:
    row.target_type === null
      ? null
      : { type: row.target_type, id: row.target_id, label: row.target_label },
  outcome: row.outcome,
  detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
});

export async function auditRoutes(app: App, deps: { db: DB }): Promise<void> {
  defineRoute(app, {
    method: 'GET',
    url: '/api/audit',
    access: allOf('system'),
    errors: 'errors',
    tags: ['system'],
    summary: 'The audit log, newest first',
    description:
      'Who did what, when, from which address, to what, and the outcome. Written by sign-in, sign-out and every identity change (users, permissions, tokens, OAuth clients), in the same transaction as the change. Never holds a secret.',
    querystring: AuditQuery,
    response: { 200: AuditPage },
    handler: async (request) => {
      const q = request.query;
      const start = timeOf('startTime', q.startTime);
      const end = timeOf('endTime', q.endTime);
      const page = q.page ?? 1;
      const limit = q.limit ?? 100;
      const { rows, total } = listAudit(deps.db, {
        page,
        limit,
        ...(q.action !== undefined ? { action: q.action } : {}),
        ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
        ...(q.outcome !== undefined ? { outcome: q.outcome } : {}),
        ...(start !== undefined ? { start } : {}),
        ...(end !== undefined ? { end } : {}),
      });
      return { current_page: page, data: rows.map(record), per_page: limit, total };
    },
  });
}
