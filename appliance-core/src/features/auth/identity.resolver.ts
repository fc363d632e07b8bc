/**
 * Resolves bearer tokens and browser sessions to identities.
 *
 * Invariant: a revoked token, a logout, a deactivated user or any change to a user's access is
 * refused or applied on the very next request. Resolved bearer tokens are cached, and the cache
 * is invalidated synchronously by TEMP triggers on this connection: every write to the identity
 * tables (users, their permissions and tags, tokens' revocation and expiry, sessions' end, tags
 * and permissions themselves) calls `identity_changed()` inside the writing statement, which bumps
 * an epoch that every cache entry is checked against. The identity tables must therefore only be
 * written through this connection (ctx.db), which is how every feature reaches them.
 * TEMP triggers live only in this connection: the database file holds no trigger that needs the
 * function, so other tools (sqlite3) can still write to it.
 */
import { watchTables, type WatchedTable } from '../../platform/db/change-triggers.js';
import type { DB } from '../../platform/db/database.js';
import type { Identity, IdentityResolver, IdentityUser } from '../../platform/http/identity.js';
import { SUPER_ADMIN } from '../../platform/http/identity.js';
import { hashToken } from '../../platform/security/tokens.js';
import type { Clock } from '../../platform/time/time.js';
import {
  prepareBearerLookup,
  prepareSessionLookup,
  SCOPES,
  type TokenService,
} from '../tokens/index.js';
import { findUserById, permissionSlugsOf, tagsOf } from '../users/index.js';

interface Profile {
  version: number;
  epoch: number;
  user: IdentityUser;
  permissions: ReadonlySet<string>;
  tagIds: readonly number[] | null;
  tagSlugs: readonly string[];
}

interface CachedBearer {
  epoch: number;
  tokenId: number;
  expiresAt: number;
  identity: Identity;
}

const MAX_PROFILES = 10_000;
const MAX_BEARERS = 20_000;

/** Tables and, for updates, the columns whose change can alter who a credential is or may do. */
const WATCHED: readonly WatchedTable[] = [
  { table: 'users' },
  { table: 'user_permissions' },
  { table: 'user_tags' },
  { table: 'permissions' },
  { table: 'tags' },
  // A new token or session cannot be in the cache yet; everything else can change access.
  {
    table: 'access_tokens',
    updateOf: 'user_id, revoked_at, expires_at, token_hash, scopes',
    ignoreInsert: true,
  },
  {
    table: 'web_sessions',
    updateOf: 'user_id, ended_at, expires_at, session_hash',
    ignoreInsert: true,
  },
];

export class CachedIdentityResolver implements IdentityResolver {
  private readonly profiles = new Map<number, Profile>();
  private readonly bearers = new Map<string, CachedBearer>();
  private readonly bearerLookup;
  private readonly sessionLookup;
  private epoch = 0;

  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    private readonly tokens: TokenService,
  ) {
    this.bearerLookup = prepareBearerLookup(db);
    this.sessionLookup = prepareSessionLookup(db);
    watchTables(db, 'identity', WATCHED, () => {
      this.epoch++;
      // Also drops the tokens as presented: a revoked token is not kept in memory.
      this.bearers.clear();
    });
  }

  fromBearer(token: string): Identity | null {
    if (token.length > 512) return null;
    const now = this.clock.now();
    // Keyed by the token as presented, so a cached token costs no SHA-256: the cache lives only
    // in this process's memory (which also holds the secret key); the database holds digests only.
    const cached = this.bearers.get(token);
    if (cached && cached.epoch === this.epoch) {
      if (cached.expiresAt <= now) return null;
      this.tokens.noteUse(cached.tokenId);
      return cached.identity;
    }
    const epoch = this.epoch;
    const row = this.bearerLookup(hashToken(token));
    if (!row || row.revoked_at !== null || row.expires_at <= now || row.active !== 1) return null;
    const profile = this.profile(row.user_id, row.access_version);
    if (!profile) return null;
    const identity: Identity = {
      ...profile,
      tokenId: row.id,
      sessionId: null,
      scopes: JSON.parse(row.scopes) as string[],
    };
    if (this.bearers.size >= MAX_BEARERS) this.bearers.clear();
    this.bearers.set(token, { epoch, tokenId: row.id, expiresAt: row.expires_at, identity });
    this.tokens.noteUse(row.id);
    return identity;
  }

  fromSession(cookie: string): Identity | null {
    if (cookie.length > 512) return null;
    const row = this.sessionLookup(hashToken(cookie));
    if (!row || row.ended_at !== null || row.expires_at <= this.clock.now() || row.active !== 1)
      return null;
    const profile = this.profile(row.user_id, row.access_version);
    if (!profile) return null;
    return { ...profile, tokenId: null, sessionId: row.id, scopes: SCOPES };
  }

  private profile(userId: number, version: number): Profile | null {
    const cached = this.profiles.get(userId);
    if (cached && cached.version === version && cached.epoch === this.epoch) return cached;
    const epoch = this.epoch;
    const user = findUserById(this.db, userId);
    if (!user) return null;
    const permissions = new Set(permissionSlugsOf(this.db, userId));
    const tags = tagsOf(this.db, userId);
    const unrestricted = permissions.has(SUPER_ADMIN) || tags.length === 0;
    const profile: Profile = {
      version,
      epoch,
      user: {
        id: user.id,
        username: user.username,
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        auth_source: user.auth_source,
        created_at: user.created_at,
        updated_at: user.updated_at,
      },
      permissions,
      tagIds: unrestricted ? null : tags.map((t) => t.id),
      tagSlugs: tags.map((t) => t.slug),
    };
    if (this.profiles.size >= MAX_PROFILES) this.profiles.clear();
    this.profiles.set(userId, profile);
    return profile;
  }
}
