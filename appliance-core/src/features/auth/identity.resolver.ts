/**
 * Resolves bearer tokens and browser sessions to identities. Each request reads the token row
 * and its owner's `active` flag and `access_version` with one indexed lookup, so a revoked
 * token, a logout or a deactivated user is refused on the very next request. What a user may
 * do (permissions, tags) is cached per access_version, which every change to it bumps.
 */
import type { DB } from '../../platform/db/database.js';
import type { Identity, IdentityResolver, IdentityUser } from '../../platform/http/identity.js';
import { SUPER_ADMIN } from '../../platform/http/identity.js';
import { hashToken } from '../../platform/security/tokens.js';
import type { Clock } from '../../platform/time/time.js';
import { prepareBearerLookup, prepareSessionLookup, SCOPES, type TokenService } from '../tokens/index.js';
import { findUserById, permissionSlugsOf, tagsOf } from '../users/index.js';

interface Profile {
  version: number;
  user: IdentityUser;
  permissions: ReadonlySet<string>;
  tagIds: readonly number[] | null;
  tagSlugs: readonly string[];
}

const MAX_PROFILES = 10_000;

export class CachedIdentityResolver implements IdentityResolver {
  private readonly profiles = new Map<number, Profile>();
  private readonly bearerLookup;
  private readonly sessionLookup;

  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    private readonly tokens: TokenService,
  ) {
    this.bearerLookup = prepareBearerLookup(db);
    this.sessionLookup = prepareSessionLookup(db);
  }

  fromBearer(token: string): Identity | null {
    if (token.length > 512) return null;
    const row = this.bearerLookup(hashToken(token));
    if (!row || row.revoked_at !== null || row.expires_at <= this.clock.now() || row.active !== 1) return null;
    const profile = this.profile(row.user_id, row.access_version);
    if (!profile) return null;
    this.tokens.noteUse(row.id);
    return { ...profile, tokenId: row.id, sessionId: null, scopes: JSON.parse(row.scopes) as string[] };
  }

  fromSession(cookie: string): Identity | null {
    if (cookie.length > 512) return null;
    const row = this.sessionLookup(hashToken(cookie));
    if (!row || row.ended_at !== null || row.expires_at <= this.clock.now() || row.active !== 1) return null;
    const profile = this.profile(row.user_id, row.access_version);
    if (!profile) return null;
    return { ...profile, tokenId: null, sessionId: row.id, scopes: SCOPES };
  }

  private profile(userId: number, version: number): Profile | null {
    const cached = this.profiles.get(userId);
    if (cached && cached.version === version) return cached;
    const user = findUserById(this.db, userId);
    if (!user) return null;
    const permissions = new Set(permissionSlugsOf(this.db, userId));
    const tags = tagsOf(this.db, userId);
    const unrestricted = permissions.has(SUPER_ADMIN) || tags.length === 0;
    const profile: Profile = {
      version,
      user: {
        id: user.id,
        username: user.username,
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        auth_source: user.auth_source,
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
