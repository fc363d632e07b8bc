/**
 * Minting, revoking and tracking the use of access tokens and browser sessions.
 * `last_used_at` is recorded in memory and written in one batched transaction every few
 * seconds (and at shutdown), so an authenticated request never waits on a write.
 */
import crypto from 'node:crypto';
import type { DB } from '../../platform/db/database.js';
import { hashToken, mintToken } from '../../platform/security/tokens.js';
import type { Clock } from '../../platform/time/time.js';
import {
  endSessionsOfUser,
  insertSession,
  insertToken,
  recordTokenUse,
  revokeAllTokensOfUser,
  type TokenKind,
  type TokenRow,
} from './tokens.repository.js';
import { OAUTH_NAME_PREFIX, SCOPES, type TokenRecord } from './tokens.schema.js';
import { toSqlDateTime } from '../../platform/time/time.js';

const PREFIX: Record<TokenKind, string> = { login: 'aps', pat: 'app', oauth: 'apo' };
const FLUSH_EVERY_MS = 5_000;

export interface MintedToken {
  id: number;
  plaintext: string;
  createdAt: number;
  expiresAt: number;
}

export class TokenService {
  private readonly pendingUse = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
  ) {}

  mint(args: {
    userId: number;
    name: string;
    kind: TokenKind;
    scopes?: readonly string[];
    ttlMs: number;
    clientId?: string | null;
  }): MintedToken {
    const plaintext = mintToken(PREFIX[args.kind]);
    const createdAt = this.clock.now();
    const expiresAt = createdAt + args.ttlMs;
    const id = insertToken(this.db, {
      userId: args.userId,
      name: args.name,
      kind: args.kind,
      hash: hashToken(plaintext),
      clientId: args.clientId ?? null,
      scopes: args.scopes && args.scopes.length > 0 ? args.scopes : SCOPES,
      createdAt,
      expiresAt,
    });
    return { id, plaintext, createdAt, expiresAt };
  }

  /** A new browser session cookie value for the user, companion of `tokenId`. */
  openSession(
    userId: number,
    tokenId: number | null,
    expiresAt: number,
  ): { id: number; cookie: string; csrfSecret: string } {
    const cookie = crypto.randomBytes(32).toString('base64url');
    const csrfSecret = crypto.randomBytes(32).toString('base64url');
    const id = insertSession(this.db, {
      hash: hashToken(cookie),
      userId,
      tokenId,
      csrfSecret,
      createdAt: this.clock.now(),
      expiresAt,
    });
    return { id, cookie, csrfSecret };
  }

  /** Revokes every live token of a user and ends every browser session of theirs. */
  revokeEverything(userId: number, byUserId?: number): number {
    const now = this.clock.now();
    return this.db.transaction(() => {
      const count = revokeAllTokensOfUser(this.db, userId, now, byUserId);
      endSessionsOfUser(this.db, userId, now);
      return count;
    })();
  }

  noteUse(tokenId: number): void {
    this.pendingUse.set(tokenId, this.clock.now());
  }

  /**
   * Writes the pending last-use times. A database busy past busy_timeout (the storage writer
   * holding the write lock under a flood of intake) keeps them pending for the next flush: a
   * timer's throw would end the process, and a last-use time is worth a retry, not a crash.
   * @returns whether the pending uses were written (true when there were none)
   */
  flushUse(): boolean {
    if (this.pendingUse.size === 0) return true;
    const batch = new Map(this.pendingUse);
    try {
      recordTokenUse(this.db, batch);
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      this.busyFlushes += 1;
      return false;
    }
    // Uses made since the batch was taken stay pending.
    for (const [id, at] of batch) if (this.pendingUse.get(id) === at) this.pendingUse.delete(id);
    return true;
  }

  /** Flushes that found the database busy and left the uses pending (for logs and tests). */
  busyFlushes = 0;

  /** The last use of a token, including uses not yet flushed. */
  lastUsed(row: TokenRow): number | null {
    return this.pendingUse.get(row.id) ?? row.last_used_at;
  }

  async start(): Promise<void> {
    this.timer = setInterval(() => this.flushUse(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.flushUse();
  }

  toRecord(row: TokenRow): TokenRecord {
    const lastUsed = this.lastUsed(row);
    return {
      id: row.id,
      name: row.name,
      origin: row.name.startsWith(OAUTH_NAME_PREFIX) ? 'oauth' : 'pat',
      client_id: row.client_id,
      scopes: JSON.parse(row.scopes) as string[],
      revoked: row.revoked_at !== null,
      expires_at: toSqlDateTime(row.expires_at),
      created_at: toSqlDateTime(row.created_at),
      last_used_at: lastUsed === null ? null : toSqlDateTime(lastUsed),
    };
  }
}
