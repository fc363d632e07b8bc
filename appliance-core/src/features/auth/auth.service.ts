/**
 * Sign-in: password (scrypt, constant work for unknown users), then TOTP when MFA is on, then a
 * login token and its companion browser session. The login name is NFKC-normalised and matched
 * case-insensitively against usernames and emails alike; it must name exactly one account.
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
  findUsersByLogin,
  normalizeUsername,
  updateUser,
  type UserRow,
} from '../users/index.js';

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
  const user = ambiguous ? undefined : matches[0];
  const usable = user && user.active === 1 && user.password_hash !== null;
  const passwordOk = await verifyPassword(
    input.password,
    usable ? user.password_hash : await dummyPasswordHash(),
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
          reason: user ? reason : ambiguous ? 'ambiguous login' : 'unknown account',
          ...(ambiguous ? { accounts: matches.map((m) => m.id) } : {}),
        },
      },
    );
    return { kind: 'invalid' };
  };
  if (!usable || !passwordOk)
    return refused(user && user.active !== 1 ? 'account inactive' : 'wrong password');

  if (user.totp_secret) {
    if (input.totp === undefined || input.totp.trim() === '') return { kind: 'totp-required' };
    const step = verifyTotp(
      ctx.secrets.open(user.totp_secret),
      input.totp,
      user.totp_last_step,
      ctx.clock.now(),
    );
    if (step === null || !consumeTotpStep(ctx.db, user.id, step)) return refused('wrong code');
  }

  if (needsRehash(user.password_hash as string)) {
    updateUser(
      ctx.db,
      user.id,
      { password_hash: await hashPassword(input.password) },
      ctx.clock.now(),
    );
  }

  const name = input.browserId ?? DEFAULT_TOKEN_NAME;
  const ttlMs = ctx.config.loginTokenTtlHours * HOUR_MS;
  return ctx.db.transaction(() => {
    // One live web token per browser: signing in again from the same browser replaces it.
    if (input.browserId) revokeLoginTokensNamed(ctx.db, user.id, name, ctx.clock.now());
    const minted = tokens.mint({ userId: user.id, name, kind: 'login', ttlMs });
    const session = tokens.openSession(user.id, minted.id, minted.expiresAt);
    recordAudit(
      ctx.db,
      ctx.clock.now(),
      { userId: user.id, name: user.username, tokenId: minted.id, sourceIp: input.source.ip },
      {
        action: 'auth.login',
        outcome: 'success',
        target: { type: 'user', id: user.id, label: user.username },
        detail: { via: input.source.via },
      },
    );
    return {
      kind: 'ok' as const,
      user,
      token: minted.plaintext,
      tokenId: minted.id,
      session: { cookie: session.cookie, expiresAt: minted.expiresAt },
    };
  })();
}
