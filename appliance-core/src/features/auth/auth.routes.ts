import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { SESSION_COOKIE } from '../../platform/http/auth-hook.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import {
  authenticated,
  publicAccess,
  type IdentityResolver,
  type IdentityUser,
} from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { PER_MINUTE } from '../../platform/http/rate-limit.js';
import { legacy200, StatusMessageBody } from '../../platform/http/schemas.js';
import { HOUR_MS, toIso } from '../../platform/time/time.js';
import { endSession, endSessionsOfToken, revokeToken, type TokenService } from '../tokens/index.js';
import {
  Information,
  LoginBody,
  LoginSuccess,
  LogoutResult,
  Me,
  WebSessionResult,
} from './auth.schema.js';
import { login } from './auth.service.js';

const TAGS = ['auth'];

export interface AuthDeps {
  tokens: TokenService;
  resolver: IdentityResolver;
}

export function setSessionCookie(reply: FastifyReply, cookie: string, expiresAt: number): void {
  reply.setCookie(SESSION_COOKIE, cookie, {
    path: '/',
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
    expires: new Date(expiresAt),
  });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, secure: true, sameSite: 'lax' });
}

export async function authRoutes(app: App, ctx: CoreContext, deps: AuthDeps): Promise<void> {
  const { db, clock } = ctx;
  const sessionOf = (request: FastifyRequest) => {
    const cookie = request.cookies[SESSION_COOKIE];
    return cookie ? deps.resolver.fromSession(cookie) : null;
  };

  // spec: part1 > Sign-in and session > POST /api/login
  defineRoute(app, {
    method: 'POST',
    url: '/api/login',
    access: publicAccess,
    errors: { validation: 'messageErrors', failure: 'legacy' },
    rateLimit: { max: 10, timeWindow: PER_MINUTE },
    tags: TAGS,
    summary: 'Sign in; with MFA a second call carries totp',
    body: LoginBody,
    response: { 200: legacy200(LoginSuccess) },
    handler: async (request, reply) => {
      const body = request.body;
      const outcome = await login(ctx, deps.tokens, {
        login: body.email,
        password: body.password,
        totp: body.totp,
        browserId: body.browser_id,
        source: { ip: request.ip, via: 'api' },
      });
      if (outcome.kind === 'totp-required') throw failure(200, 'TOTP Required');
      if (outcome.kind === 'invalid') throw failure(200, 'Invalid Username/Password');
      setSessionCookie(reply, outcome.session.cookie, outcome.session.expiresAt);
      const { user } = outcome;
      const name = `${user.first_name} ${user.last_name}`.trim() || user.username;
      return {
        status: 201 as const,
        hasError: false as const,
        user: { id: user.id, email: user.email, name },
        access_token: outcome.token,
      };
    },
  });

  // spec: part1 > Sign-in and session > POST /api/logout
  defineRoute(app, {
    method: 'POST',
    url: '/api/logout',
    access: authenticated,
    errors: 'message',
    tags: TAGS,
    summary: 'Revoke the calling token and end its browser session',
    response: { 200: LogoutResult },
    handler: async (request, reply) => {
      const identity = identityOf(request);
      const now = clock.now();
      db.transaction(() => {
        recordAudit(db, now, actorOf(request), {
          action: 'auth.logout',
          outcome: 'success',
          target: { type: 'user', id: identity.user.id, label: identity.user.username },
        });
        if (identity.tokenId !== null) {
          revokeToken(db, { id: identity.tokenId, userId: identity.user.id, now });
          endSessionsOfToken(db, identity.tokenId, now);
        }
        const session = sessionOf(request);
        if (session?.sessionId && session.user.id === identity.user.id)
          endSession(db, session.sessionId, now);
      })();
      clearSessionCookie(reply);
      return { message: 'Logged out successfully.' };
    },
  });

  // spec: part1 > Sign-in and session > POST /api/ensureWebSession
  defineRoute(app, {
    method: 'POST',
    url: '/api/ensureWebSession',
    access: authenticated,
    errors: {
      validation: 'statusMessage',
      failure: 'statusMessage',
      unauthenticated: { status: 401, family: 'statusMessage', message: 'unauthenticated' },
      internal: 'no session context',
    },
    tags: TAGS,
    summary: 'Re-establish the browser session cookie for the calling token',
    response: { 200: WebSessionResult, 401: StatusMessageBody, 500: StatusMessageBody },
    handler: async (request, reply) => {
      const identity = identityOf(request);
      const current = sessionOf(request);
      if (current && current.user.id === identity.user.id) return { status: true as const };
      const token =
        identity.tokenId === null
          ? null
          : (db
              .prepare('SELECT expires_at FROM access_tokens WHERE id = ?')
              .get(identity.tokenId) as { expires_at: number } | undefined);
      if (!token) throw failure(500, 'no session context');
      // A browser session never outlives a login session, even when a long-lived token asks for it.
      const expiresAt = Math.min(
        token.expires_at,
        clock.now() + ctx.config.loginTokenTtlHours * HOUR_MS,
      );
      const session = deps.tokens.openSession(identity.user.id, identity.tokenId, expiresAt);
      setSessionCookie(reply, session.cookie, expiresAt);
      return { status: true as const };
    },
  });

  // spec: part1 > Sign-in and session > POST /api/information
  defineRoute(app, {
    method: 'POST',
    url: '/api/information',
    access: publicAccess,
    errors: 'legacy',
    tags: TAGS,
    summary: 'Appliance host name and whether a browser session is live (readiness probe)',
    description: 'Takes no body: whatever is sent is ignored, never parsed.',
    ignoresBody: true,
    response: { 200: Information },
    handler: async (request) => ({
      status: 201 as const,
      hasError: false as const,
      data: { hostname: ctx.hostname(), sessionId: sessionOf(request) !== null },
    }),
  });

  // spec: part1 > Sign-in and session > GET /api/me
  defineRoute(app, {
    method: 'GET',
    url: '/api/me',
    access: authenticated,
    errors: 'legacy',
    tags: TAGS,
    summary: 'The calling user',
    response: { 200: Me },
    // The identity is current: it is re-read whenever the user row changes (access version).
    handler: async (request) => meOf(identityOf(request).user),
  });
}

/** The /api/me record; formatted once per identity profile (identities are cached and immutable). */
const meRecords = new WeakMap<IdentityUser, Static<typeof Me>>();
function meOf(user: IdentityUser): Static<typeof Me> {
  let record = meRecords.get(user);
  if (!record) {
    record = {
      id: user.id,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      username: user.username,
      active: true,
      auth_source: user.auth_source,
      created_at: toIso(user.created_at),
      updated_at: toIso(user.updated_at),
    };
    meRecords.set(user, record);
  }
  return record;
}
