/**
 * SQL of the agents feature: enrollment tokens (hash only), the agents' registered keys, and the
 * appliance's sealed agent secrets (migration 0021_agents.sql).
 */
import type { DB } from '../../platform/db/database.js';

export interface TokenRow {
  id: number;
  label: string;
  tags: string;
  token_hash: Buffer;
  ttl_seconds: number;
  single_use: number;
  expires_at: number;
  consumed_at: number | null;
  revoked_at: number | null;
  created_by_user_id: number | null;
  created_at: number;
}

export function insertToken(
  db: DB,
  t: {
    label: string;
    tags: readonly string[];
    hash: Buffer;
    ttlSeconds: number;
    singleUse: boolean;
    userId: number | null;
    now: number;
  },
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO agent_enrollment_tokens (label, tags, token_hash, ttl_seconds, single_use, expires_at, created_by_user_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        t.label,
        JSON.stringify(t.tags),
        t.hash,
        t.ttlSeconds,
        t.singleUse ? 1 : 0,
        t.now + t.ttlSeconds * 1000,
        t.userId,
        t.now,
      ).lastInsertRowid,
  );
}

export const findToken = (db: DB, id: number) =>
  db.prepare('SELECT * FROM agent_enrollment_tokens WHERE id = ?').get(id) as TokenRow | undefined;

export const findTokenByHash = (db: DB, hash: Buffer) =>
  db.prepare('SELECT * FROM agent_enrollment_tokens WHERE token_hash = ?').get(hash) as
    TokenRow | undefined;

/** Active rows (not consumed, revoked or expired), newest first. */
export const activeTokens = (db: DB, now: number) =>
  db
    .prepare(
      `SELECT * FROM agent_enrollment_tokens WHERE consumed_at IS NULL AND revoked_at IS NULL AND expires_at > ?
       ORDER BY created_at DESC, id DESC`,
    )
    .all(now) as TokenRow[];

/** Marks a token revoked; false when it already was. */
export const revokeToken = (db: DB, id: number, now: number) =>
  db
    .prepare(
      'UPDATE agent_enrollment_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    )
    .run(now, id).changes > 0;

/** Consumes a single-use token; false when another request consumed it first. */
export const consumeToken = (db: DB, id: number, now: number) =>
  db
    .prepare(
      'UPDATE agent_enrollment_tokens SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL',
    )
    .run(now, id).changes > 0;

export interface AgentRow {
  agent_uuid: string;
  public_key: string;
  hostname: string | null;
  agent_version: string | null;
  os_version: string | null;
  arch: 'amd64' | 'arm64';
  enrolled_at: number | null;
  last_checkin_at: number | null;
  last_ip: string | null;
  created_at: number;
  updated_at: number;
}

export const findAgent = (db: DB, agentUuid: string) =>
  db.prepare('SELECT * FROM agents WHERE agent_uuid = ?').get(agentUuid) as AgentRow | undefined;

export interface AgentFacts {
  agentUuid: string;
  publicKey: string;
  hostname: string | null;
  agentVersion: string | null;
  osVersion: string | null;
  arch: 'amd64' | 'arm64';
  ip: string | null;
  enrolled: boolean;
  now: number;
}

/**
 * Registers or refreshes an agent. The key is written only when the agent is new or `rekey` is
 * set (enrollment with a token, adoption): a check-in never changes a registered key.
 */
export function upsertAgent(db: DB, a: AgentFacts, rekey: boolean): void {
  db.prepare(
    `INSERT INTO agents (agent_uuid, public_key, hostname, agent_version, os_version, arch, enrolled_at, last_checkin_at, last_ip, created_at, updated_at)
     VALUES (@agentUuid, @publicKey, @hostname, @agentVersion, @osVersion, @arch, @enrolledAt, @now, @ip, @now, @now)
     ON CONFLICT (agent_uuid) DO UPDATE SET
       public_key = CASE WHEN @rekey = 1 THEN excluded.public_key ELSE public_key END,
       hostname = coalesce(excluded.hostname, hostname),
       agent_version = coalesce(excluded.agent_version, agent_version),
       os_version = coalesce(excluded.os_version, os_version),
       arch = excluded.arch,
       enrolled_at = coalesce(enrolled_at, excluded.enrolled_at),
       last_checkin_at = excluded.last_checkin_at,
       last_ip = coalesce(excluded.last_ip, last_ip),
       updated_at = excluded.updated_at`,
  ).run({ ...a, enrolledAt: a.enrolled ? a.now : null, rekey: rekey ? 1 : 0 });
}

export interface SecretRow {
  name: string;
  sealed: string;
  public_part: string | null;
  created_at: number;
}

export const findSecret = (db: DB, name: string) =>
  db.prepare('SELECT * FROM agent_secrets WHERE name = ?').get(name) as SecretRow | undefined;

/** Stores a secret unless one exists (two starts racing keep the first). */
export const insertSecret = (db: DB, row: SecretRow) =>
  db
    .prepare(
      'INSERT INTO agent_secrets (name, sealed, public_part, created_at) VALUES (@name, @sealed, @public_part, @created_at) ON CONFLICT (name) DO NOTHING',
    )
    .run(row);
