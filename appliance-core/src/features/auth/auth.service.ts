/**
 * Sign-in: password (scrypt, constant work for unknown users), then TOTP when MFA is on, then a
 * login token and its companion browser session. The login name is NFKC-normalised and matched
 * case-insensitively against usernames and emails alike; it must name exactly one account.
 *
 * With the directory on (features/directory, plugged in with `useDirectorySignIn`), a name that
 * no account answers to, or that names a directory account, is checked by the directory
 * (search-then-bind, auto-provision); a local account other than user 1 signs in only while
 * `fallback_to_local` is on; user 1 always signs in locally, whatever the directory does.
 */
import { recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import {
  dummyPasswordHash,
  hashPassword,
  needsRehash,
  verifyPassword,
} from '../../platform/security/password.js';
import { verifyTotp } from '../../platform/security/totp.js';
import { HOUR_MS } from '../../platform/time/time.js';
import { revokeLoginTokensNamed, type TokenService } from '../tokens/index.js';
import {
  consumeTotpStep,
  findUserById,
  findUsersByLogin,
  normalizeUsername,
  SUPER_ADMIN_USER_ID,
  updateUser,
  type UserRow,
} from '../users/index.js';
import type { AuditActor } from '../../platform/audit/audit-log.js';

/** What sign-in asks of the directory feature (which plugs itself in at composition). */
export interface DirectorySignIn {
  /** null while the directory is off. */
  enabled(): { fallbackToLocal: boolean } | null;
  /** Search-then-bind within the directory's timeout; never throws. */
  signIn(
    login: string,
    password: string,
    existing: UserRow | undefined,
    actor: AuditActor,
  ): Promise<{ kind: 'ok'; userId: number } | { kind: 'invalid'; reason: string }>;
}

const directories = new WeakMap<CoreContext['db'], DirectorySignIn>();

/** Plugs the directory into sign-in for the appliance of this context. */
export function useDirectorySignIn(ctx: CoreContext, directory: DirectorySignIn): void {
  directories.set(ctx.db, directory);
}

export type LoginOutcome =
  | {
      kind: 'ok';
      user: UserRow;
      token: string;
      tokenId: number;
      session: { cookie: string; expiresAt: number };
    }
  | { kind: 'totp-required' }
  | { kind: 'invalid' };

export const DEFAULT_TOKEN_NAME = 'authToken';

export async function login(
  ctx: CoreContext,
  tokens: TokenService,
  input: {
    login: string;
    password: string;
    totp?: string | undefined;
    browserId?: string | undefined;
    /** Where the attempt came from, for the audit log (`auth.login`, with `via`). */
    source: { ip: string | null; via: 'api' | 'signin-page' };
  },
): Promise<LoginOutcome> {
  // One account only: a name two accounts answer to (rows that collided before usernames and
  // emails became one namespace) signs in as neither, never as the older row.
  const matches = findUsersByLogin(ctx.db, normalizeUsername(input.login));
  const ambiguous = matches.length > 1;
  const matched = ambiguous ? undefined : matches[0];
  let user = matched;
  const directory = directories.get(ctx.db);
  const directoryOn = directory?.enabled() ?? null;
  const viaDirectory =
    directory !== undefined &&
    directoryOn !== null &&
    !ambiguous &&
    (matched === undefined || matched.auth_source === 'ldap');
  const usable = matched && matched.active === 1 && matched.password_hash !== null;
  // The local hash is always checked (a dummy one otherwise), so every path costs the same work.
  const passwordOk = await verifyPassword(
    input.password,
    usable && !viaDirectory ? matched.password_hash : await dummyPasswordHash(),
  );
  // Every refused attempt is audited; the account only when the name matched one, so that a
  // password typed into the name field is never stored.
  const refused = (reason: string): LoginOutcome => {
    recordAudit(
      ctx.db,
      ctx.clock.now(),
      { userId: null, name: 'anonymous', tokenId: null, sourceIp: input.source.ip },
      {
        action: 'auth.login',
        outcome: 'failure',
        ...(user ? { target: { type: 'user', id: user.id, label: user.username } } : {}),
        detail: {
          via: input.source.via,
          reason: user || viaDirectory ? reason : ambiguous ? 'ambiguous login' : 'unknown account',
          ...(ambiguous ? { accounts: matches.map((m) => m.id) } : {}),
        },
      },
    );
    return { kind: 'invalid' };
  };
  if (viaDirectory) {
    const outcome = await directory.signIn(input.login, input.password, matched, {
      userId: null,
      name: 'anonymous',
      tokenId: null,
      sourceIp: input.source.ip,
    });
    if (outcome.kind !== 'ok') return refused(outcome.reason);
    user = findUserById(ctx.db, outcome.userId);
    if (!user || user.active !== 1) return refused('account inactive');
  } else {
    if (!usable || !passwordOk)
      return refused(matched && matched.active !== 1 ? 'account inactive' : 'wrong password');
    // With the directory on, local accounts sign in only with fallback_to_local (user 1 always).
    if (directoryOn && !directoryOn.fallbackToLocal && matched.id !== SUPER_ADMIN_USER_ID)
      return refused('local sign-in off while the directory is on');
    user = matched;
  }
  const account: UserRow = user;

  if (account.totp_secret) {
    if (input.totp === undefined || input.totp.trim() === '') return { kind: 'totp-required' };
    const step = verifyTotp(
      ctx.secrets.open(account.totp_secret),
      input.totp,
      account.totp_last_step,
      ctx.clock.now(),
    );
    if (step === null || !consumeTotpStep(ctx.db, account.id, step)) return refused('wrong code');
  }

  if (account.password_hash !== null && needsRehash(account.password_hash)) {
    updateUser(
      ctx.db,
      account.id,
      { password_hash: await hashPassword(input.password) },
      ctx.clock.now(),
    );
  }

  const name = input.browserId ?? DEFAULT_TOKEN_NAME;
  const ttlMs = ctx.config.loginTokenTtlHours * HOUR_MS;
  return ctx.db.transaction(() => {
    // One live web token per browser: signing in again from the same browser replaces it.
    if (input.browserId) revokeLoginTokensNamed(ctx.db, account.id, name, ctx.clock.now());
    const minted = tokens.mint({ userId: account.id, name, kind: 'login', ttlMs });
    const session = tokens.openSession(account.id, minted.id, minted.expiresAt);
    recordAudit(
      ctx.db,
      ctx.clock.now(),
      { userId: account.id, name: account.username, tokenId: minted.id, sourceIp: input.source.ip },
      {
        action: 'auth.login',
        outcome: 'success',
        target: { type: 'user', id: account.id, label: account.username },
        detail: { via: input.source.via },
      },
    );
    return {
      kind: 'ok' as const,
      user: account,
      token: minted.plaintext,
      tokenId: minted.id,
      session: { cookie: session.cookie, expiresAt: minted.expiresAt },
    };
  })();
}
