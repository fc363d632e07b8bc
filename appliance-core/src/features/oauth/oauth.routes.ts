import { actorOf, audited } from '../../platform/audit/audit-log.js';
/**
 * The authorization server's JSON endpoints: device authorization and polling, the token
 * endpoint, registration, introspection, refresh, revocation, client approval and discovery.
 *
 * Rate limits (spec part 1 > Limits): every /api/oauth/* route and POST /auth/token count
 * against ONE shared bucket of 30 requests per minute per client address (groupId 'oauth');
 * POST /auth/register has its own bucket of 10 per minute. The authenticated client
 * administration routes count per user instead (OAUTH_ADMIN_LIMIT).
 */
import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { oauthFailure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, publicAccess } from '../../platform/http/identity.js';
import { PER_MINUTE, perUser } from '../../platform/http/rate-limit.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, MessageErrorsBody, OAuthErrorBody } from '../../platform/http/schemas.js';
import {
  ApprovedClient,
  AuthorizationServerMetadata,
  ClientIdParams,
  DeletedClient,
  DeviceAuthorization,
  DeviceAuthorizeBody,
  DeviceTokenBody,
  GRANT_TYPE_DEVICE_CODE,
  IntrospectBody,
  Introspection,
  PendingClients,
  ProtectedResourceMetadata,
  RefreshBody,
  RegisterBody,
  RegisteredClient,
  RevokeBody,
  Revoked,
  TokenBody,
  TokenResponse,
} from './oauth.schema.js';
import type { OAuthService } from './oauth.service.js';

const TAGS = ['oauth'];
export const FORM_OR_JSON = ['application/x-www-form-urlencoded', 'application/json'] as const;
/** One bucket per client address for the whole group (spec: "30 requests per minute across the /api/oauth/* group"). */
const OAUTH_GROUP_LIMIT = { max: 30, timeWindow: PER_MINUTE, groupId: 'oauth' };
const REGISTER_LIMIT = { max: 10, timeWindow: PER_MINUTE };
/**
 * Client administration is authenticated: one bucket per user (30 a minute across the three
 * routes), so anonymous traffic from the operator's address cannot lock the operator out.
 */
const OAUTH_ADMIN_LIMIT = {
  max: 30,
  timeWindow: PER_MINUTE,
  groupId: 'oauth-admin',
  keyGenerator: perUser,
};

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The appliance's origin for absolute URLs (discovery documents, verification URIs): the
 * configured APPLIANCE_PUBLIC_ORIGIN when set; otherwise the origin the client used (Host as
 * received; X-Forwarded-* only from a trusted proxy, as Fastify's trustProxy decides), which is
 * the trust model docs/features/identity.md describes.
 */
export function originOf(request: FastifyRequest, publicOrigin?: string): string {
  if (publicOrigin !== undefined) return publicOrigin;
  const host = request.host;
  if (!HOST.test(host)) throw oauthFailure(400, 'invalid_request', 'The Host header is not valid.');
  return `${request.protocol}://${host}`;
}

/** Token-style endpoints treat a missing body like an empty form: each field gets its OAuth error. */
async function emptyBodyIsEmptyForm(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

/** An endpoint of one grant type takes that one or none. */
function grantTypeMustBe(expected: string, given: string | undefined): void {
  if (given !== undefined && given !== expected)
    throw oauthFailure(
      400,
      'unsupported_grant_type',
      `grant_type must be ${expected} (or omitted).`,
    );
}

/**
 * What the token-style endpoints (RFC 6749, 7009, 7662, 8628) share: public, OAuth errors, the
 * group's rate limit, a form or JSON body, a missing body read as an empty form.
 */
const TOKEN_ENDPOINT = {
  access: publicAccess,
  errors: 'oauth',
  rateLimit: OAUTH_GROUP_LIMIT,
  accepts: FORM_OR_JSON,
  consumes: FORM_OR_JSON,
  preValidation: emptyBodyIsEmptyForm,
  tags: TAGS,
} as const;

export async function oauthRoutes(
  app: App,
  ctx: CoreContext,
  deps: { service: OAuthService },
): Promise<void> {
  const { service } = deps;

  // spec: part1 > OAuth device-code flow (RFC 8628) > POST /api/oauth/device/authorize
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/api/oauth/device/authorize',
    summary:
      'Start a device authorization (RFC 8628): a device code to poll with and a user code to enter at /auth/device',
    body: DeviceAuthorizeBody,
    response: { 200: DeviceAuthorization, 400: OAuthErrorBody, 503: OAuthErrorBody },
    handler: async (request) =>
      service.startDeviceAuthorization(request.body, originOf(request, ctx.config.publicOrigin)),
  });

  // spec: part1 > OAuth device-code flow (RFC 8628) > POST /api/oauth/device/token
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/api/oauth/device/token',
    summary:
      'Poll for the token of a device code (authorization_pending until approved; single use)',
    body: DeviceTokenBody,
    response: { 200: TokenResponse, 400: OAuthErrorBody, 403: OAuthErrorBody },
    handler: async (request) => {
      const body = request.body;
      grantTypeMustBe(GRANT_TYPE_DEVICE_CODE, body.grant_type);
      return service.redeemDeviceCode(body.device_code, body.client_id);
    },
  });

  // spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/token
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/auth/token',
    summary: 'Token endpoint: authorization_code (PKCE S256), refresh_token and device_code grants',
    body: TokenBody,
    response: {
      200: TokenResponse,
      400: OAuthErrorBody,
      401: OAuthErrorBody,
      403: OAuthErrorBody,
    },
    handler: async (request) => service.token(request.body),
  });

  // spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/register
  defineRoute(app, {
    method: 'POST',
    url: '/auth/register',
    access: publicAccess,
    errors: { validation: 'messageErrors', failure: 'oauth' },
    rateLimit: REGISTER_LIMIT,
    tags: TAGS,
    summary:
      'Dynamic client registration (RFC 7591); an operator approves the client before it can be used',
    body: RegisterBody,
    response: {
      201: RegisteredClient,
      400: OAuthErrorBody,
      422: MessageErrorsBody,
      503: OAuthErrorBody,
    },
    handler: async (request, reply) => {
      const client = service.register(request.body, request.ip, (seconds) => {
        reply.header('retry-after', String(seconds));
      });
      reply.code(201);
      return client;
    },
  });

  // spec: part1 > Token management > POST /api/oauth/token/introspect
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/api/oauth/token/introspect',
    summary: 'Token introspection (RFC 7662); updates last_used_at of an active access token',
    body: IntrospectBody,
    response: { 200: Introspection, 400: OAuthErrorBody },
    handler: async (request) => service.introspect(request.body.token),
  });

  // spec: part1 > Token management > POST /api/oauth/token/refresh (fields: RFC 6749 section 6)
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/api/oauth/token/refresh',
    summary:
      'Rotate a refresh token: a new access token and a new refresh token; a replayed refresh token revokes the grant',
    body: RefreshBody,
    response: {
      200: TokenResponse,
      400: OAuthErrorBody,
      401: OAuthErrorBody,
      403: OAuthErrorBody,
    },
    handler: async (request) => {
      const body = request.body;
      grantTypeMustBe('refresh_token', body.grant_type);
      return service.refresh(body);
    },
  });

  // spec: part1 > Token management > POST /api/oauth/token/revoke (fields: RFC 7009)
  defineRoute(app, {
    ...TOKEN_ENDPOINT,
    method: 'POST',
    url: '/api/oauth/token/revoke',
    summary:
      'Token revocation (RFC 7009): revokes the grant of a refresh or OAuth access token; unknown tokens answer 200 too',
    body: RevokeBody,
    response: { 200: Revoked, 400: OAuthErrorBody, 401: OAuthErrorBody },
    handler: async (request) => {
      service.revoke(request.body);
      return {};
    },
  });

  // spec: part1 > OAuth client approval
  const APPROVAL = {
    access: allOf('system'),
    errors: 'error',
    rateLimit: OAUTH_ADMIN_LIMIT,
    tags: TAGS,
  } as const;

  defineRoute(app, {
    ...APPROVAL,
    method: 'GET',
    url: '/api/oauth/clients/pending',
    summary: 'Clients awaiting approval, oldest first',
    response: { 200: PendingClients },
    handler: async () => ({ clients: service.pendingClients() }),
  });

  defineRoute(app, {
    ...APPROVAL,
    method: 'POST',
    url: '/api/oauth/clients/:clientId/approve',
    summary: 'Approve a registered client (idempotent; the first approver is kept)',
    params: ClientIdParams,
    response: { 200: ApprovedClient, 404: ErrorBody, 503: ErrorBody },
    handler: async (request) => {
      const clientId = request.params.clientId;
      return audited(
        ctx.db,
        ctx.clock.now(),
        actorOf(request),
        () => service.approve(clientId, identityOf(request).user.id),
        {
          action: 'oauth_client.approve',
          outcome: 'success',
          target: { type: 'oauth_client', id: clientId },
        },
      );
    },
  });

  defineRoute(app, {
    ...APPROVAL,
    method: 'DELETE',
    url: '/api/oauth/clients/:clientId',
    summary: 'Delete a pending or approved client; its tokens and refresh chains are revoked',
    params: ClientIdParams,
    response: { 200: DeletedClient, 404: ErrorBody },
    handler: async (request) => {
      const clientId = request.params.clientId;
      audited(ctx.db, ctx.clock.now(), actorOf(request), () => service.deleteClient(clientId), {
        action: 'oauth_client.delete',
        outcome: 'success',
        target: { type: 'oauth_client', id: clientId },
      });
      return { deleted: true as const };
    },
  });

  // spec: part1 > Token management > discovery documents (paths and bodies: RFC 8414, RFC 9728)
  defineRoute(app, {
    method: 'GET',
    url: '/.well-known/oauth-authorization-server',
    access: publicAccess,
    errors: 'oauth',
    tags: TAGS,
    summary: 'Authorization server metadata (RFC 8414)',
    response: { 200: AuthorizationServerMetadata, 400: OAuthErrorBody },
    handler: async (request) =>
      service.authorizationServerMetadata(originOf(request, ctx.config.publicOrigin)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/.well-known/oauth-protected-resource',
    access: publicAccess,
    errors: 'oauth',
    tags: TAGS,
    summary: 'Protected resource metadata (RFC 9728)',
    response: { 200: ProtectedResourceMetadata, 400: OAuthErrorBody },
    handler: async (request) =>
      service.protectedResourceMetadata(originOf(request, ctx.config.publicOrigin)),
  });
}
