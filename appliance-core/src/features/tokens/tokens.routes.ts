import { actorOf, audited } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, isSuperAdmin } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import { DAY_MS, toIsoWithOffset } from '../../platform/time/time.js';
import { findToken, listTokensForUser, revokeToken } from './tokens.repository.js';
import {
  CreatedToken,
  CreateTokenBody,
  RESERVED_PREFIXES,
  Revoked,
  RevokedCount,
  TokenIdParams,
  TokenList,
  UserIdParams,
  UserTokenParams,
} from './tokens.schema.js';
import type { TokenService } from './tokens.service.js';

const REVOKED_VISIBLE_MS = 30 * DAY_MS;
const TAGS = ['tokens'];

export interface TokensDeps {
  tokens: TokenService;
  userExists: (id: number) => boolean;
  /** Does the account hold `sa`? Only an `sa` caller administers an `sa` account's tokens. */
  holdsSuperAdmin: (id: number) => boolean;
}

export async function tokensRoutes(app: App, ctx: CoreContext, deps: TokensDeps): Promise<void> {
  const { db, clock } = ctx;
  const list = (userId: number) =>
    listTokensForUser(db, userId, clock.now() - REVOKED_VISIBLE_MS).map((row) =>
      deps.tokens.toRecord(row),
    );

  // spec: part1 > Personal access tokens
  const own = (internal: string): RouteErrors => ({
    validation: 'errors',
    failure: 'error',
    internal,
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api/tokens',
    access: allOf('api'),
    errors: own('Failed to load tokens'),
    tags: TAGS,
    summary: "List the caller's tokens",
    response: { 200: TokenList },
    handler: async (request) => ({ tokens: list(identityOf(request).user.id) }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/tokens',
    access: allOf('api'),
    errors: own('Failed to create token'),
    tags: TAGS,
    summary: 'Create a personal access token (plaintext shown once)',
    body: CreateTokenBody,
    response: { 201: CreatedToken },
    handler: async (request, reply) => {
      const body = request.body;
      const name = body.name.trim();
      const reserved = RESERVED_PREFIXES.find((prefix) => name.startsWith(prefix));
      if (reserved) {
        const message = `The name must not begin with the reserved prefix "${reserved}".`;
        throw failure(400, message, { fields: { name: [message] }, family: 'errors' });
      }
      if (name.length === 0)
        throw failure(400, 'The name field is required.', {
          fields: { name: ['The name field is required.'] },
          family: 'errors',
        });
      const scopes = [...new Set(body.scopes ?? [])];
      const minted = audited(
        db,
        clock.now(),
        actorOf(request),
        () =>
          deps.tokens.mint({
            userId: identityOf(request).user.id,
            name,
            kind: 'pat',
            scopes,
            ttlMs: (body.expires_in_days ?? 365) * DAY_MS,
          }),
        (token) => ({
          action: 'token.create',
          outcome: 'success',
          target: { type: 'token', id: token.id, label: name },
          detail: { scopes, expires_in_days: body.expires_in_days ?? 365 },
        }),
      );
      reply.code(201);
      return {
        id: minted.id,
        name,
        access_token: minted.plaintext,
        expires_at: toIsoWithOffset(minted.expiresAt),
        created_at: toIsoWithOffset(minted.createdAt),
      };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/api/tokens/:id',
    access: allOf('api'),
    errors: own('Failed to revoke token'),
    tags: TAGS,
    summary: 'Revoke one of your tokens',
    params: TokenIdParams,
    response: { 200: Revoked, 404: ErrorBody },
    handler: async (request) => {
      const identity = identityOf(request);
      const id = request.params.id;
      const revoked = audited(
        db,
        clock.now(),
        actorOf(request),
        () => revokeToken(db, { id, userId: identity.user.id, now: clock.now() }),
        (ok) =>
          ok ? { action: 'token.revoke', outcome: 'success', target: { type: 'token', id } } : null,
      );
      if (!revoked) throw failure(404, 'Token not found');
      return { revoked: true as const };
    },
  });

  // spec: part1 > Administering other users' tokens
  const admin = (internal?: string): RouteErrors => ({
    validation: 'errors',
    failure: 'error',
    denial: { status: 403, family: 'error', message: 'Forbidden' },
    ...(internal ? { internal } : {}),
  });
  const mustExist = (userId: number) => {
    if (!deps.userExists(userId)) throw failure(404, 'User not found');
  };
  /** The protection saveUser gives `sa` accounts (least privilege; issue 11). */
  const mayAdminister = (request: Parameters<typeof identityOf>[0], userId: number) => {
    if (!isSuperAdmin(identityOf(request)) && deps.holdsSuperAdmin(userId))
      throw failure(403, 'Forbidden');
  };

  defineRoute(app, {
    method: 'GET',
    url: '/api/users/:userId/tokens',
    access: allOf('users'),
    errors: admin('Failed to load tokens'),
    tags: TAGS,
    summary: "List another user's tokens",
    params: UserIdParams,
    response: { 200: TokenList, 404: ErrorBody },
    handler: async (request) => {
      mustExist(request.params.userId);
      mayAdminister(request, request.params.userId);
      return { tokens: list(request.params.userId) };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/api/users/:userId/tokens/:id',
    access: allOf('users'),
    errors: admin(),
    tags: TAGS,
    summary: "Revoke another user's token",
    params: UserTokenParams,
    response: { 200: Revoked, 404: ErrorBody },
    handler: async (request) => {
      const { userId, id } = request.params;
      mayAdminister(request, userId);
      const revoked = audited(
        db,
        clock.now(),
        actorOf(request),
        () =>
          revokeToken(db, { id, userId, now: clock.now(), byUserId: identityOf(request).user.id }),
        (ok) =>
          ok
            ? {
                action: 'token.revoke',
                outcome: 'success',
                target: { type: 'token', id },
                detail: { owner_user_id: userId },
              }
            : null,
      );
      if (!revoked || !findToken(db, id)) throw failure(404, 'Token not found');
      return { revoked: true as const };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/users/:userId/tokens/revoke-all',
    access: allOf('users'),
    errors: admin(),
    tags: TAGS,
    summary: "Revoke all of a user's tokens and end their web session",
    params: UserIdParams,
    response: { 200: RevokedCount, 404: ErrorBody },
    handler: async (request) => {
      const { userId } = request.params;
      mustExist(userId);
      mayAdminister(request, userId);
      const revoked = audited(
        db,
        clock.now(),
        actorOf(request),
        () => deps.tokens.revokeEverything(userId, identityOf(request).user.id),
        (count) => ({
          action: 'token.revoke_all',
          outcome: 'success',
          target: { type: 'user', id: userId },
          detail: { tokens_revoked: count },
        }),
      );
      return { revoked, user_id: userId };
    },
  });
}
