/**
 * Who is calling: resolved once per request by the auth hook from a bearer token (or the
 * browser session on /auth/*). Features provide the resolver; the platform only consumes it.
 */

export interface IdentityUser {
  id: number;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  auth_source: 'local' | 'ldap';
  /** UTC ms; every change to the user row bumps its access version, so these are current. */
  created_at: number;
  updated_at: number;
}

export interface Identity {
  user: IdentityUser;
  /** The bearer token used, or null for a browser session. */
  tokenId: number | null;
  /** The browser session used, or null for a bearer token. */
  sessionId: number | null;
  scopes: readonly string[];
  permissions: ReadonlySet<string>;
  /** Tag ids the user is restricted to; null means unrestricted (no tags, or `sa`). */
  tagIds: readonly number[] | null;
  tagSlugs: readonly string[];
}

export interface IdentityResolver {
  fromBearer(token: string): Identity | null;
  fromSession(sessionCookie: string): Identity | null;
}

export type Access =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'permission'; allOf?: readonly string[]; anyOf?: readonly string[] }
  | { kind: 'browser-session'; anyOf?: readonly string[] }
  | {
      kind: 'token-or-signature';
      /**
       * Accepts a request without a valid bearer (a signed download URL): given the request's
       * parsed query, true when its signature is valid and unexpired.
       */
      signature?: (request: { query: unknown }) => boolean;
    };

export const publicAccess: Access = { kind: 'public' };
export const authenticated: Access = { kind: 'authenticated' };
export const allOf = (...slugs: string[]): Access => ({ kind: 'permission', allOf: slugs });
export const anyOf = (...slugs: string[]): Access => ({ kind: 'permission', anyOf: slugs });
/** A bearer token of any user, or a request `signature` accepts (identity null then). */
export const tokenOrSignature = (signature: (request: { query: unknown }) => boolean): Access => ({
  kind: 'token-or-signature',
  signature,
});

export const SUPER_ADMIN = 'sa';

export function isSuperAdmin(identity: Identity): boolean {
  return identity.permissions.has(SUPER_ADMIN);
}

/** The permission gate: `sa` bypasses; all-of needs every slug, any-of at least one. */
export function permits(identity: Identity, access: Access): boolean {
  const has = (slug: string) => identity.permissions.has(slug);
  switch (access.kind) {
    case 'public':
    case 'authenticated':
    case 'token-or-signature':
      return true;
    case 'permission':
      if (isSuperAdmin(identity)) return true;
      if (access.allOf && !access.allOf.every(has)) return false;
      return !access.anyOf || access.anyOf.length === 0 || access.anyOf.some(has);
    case 'browser-session':
      if (isSuperAdmin(identity)) return true;
      return !access.anyOf || access.anyOf.length === 0 || access.anyOf.some(has);
    default: {
      // A kind added to Access without its rule here is refused (also for sa), never let through.
      const unknown: never = access;
      void unknown;
      return false;
    }
  }
}
