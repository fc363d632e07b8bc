/**
 * The authorization server's JSON endpoints: device authorization and polling, the token
 * endpoint, registration, introspection, refresh, revocation, client approval and discovery.
 *
 * Rate limits (spec part 1 > Limits): every /api/oauth/* route and POST /auth/token count
 * against ONE shared bucket of 30 requests per minute per client address (groupId 'oauth');
 * POST /auth/register has its own bucket of 10 per minute.
 */
import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../../platform/context.js';
import { oauthFailure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, publicAccess } from '../../platform/http/identity.js';
import { PER_MINUTE } from '../../platform/http/rate-limit.js';
import { identityOf } from '../../platform/http/route-config.js';
import {
  ErrorBody,
  MessageErrorsBody,
  OAuthErrorBody,
  responses,
} from '../../platform/http/schemas.js';
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
const OAUTH: RouteErrors = { validation: 'oauth', failure: 'oauth' };
const REGISTER: RouteErrors = { validation: 'messageErrors', failure: 'oauth' };
const APPROVAL: RouteErrors = { validation: 'error', failure: 'error' };
/** One bucket per client address for the whole group (spec: "30 requests per minute across the /api/oauth/* group"). */
const OAUTH_GROUP_LIMIT = { max: 30, timeWindow: PER_MINUTE, groupId: 'oauth' };
const REGISTER_LIMIT = { max: 10, timeWindow: PER_MINUTE };

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin the client used (Host as received; X-Forwarded-* only from a trusted proxy, as
 * Fastify's trustProxy decides). Discovery documents and verification URIs are built from it.
 */
export function originOf(request: FastifyRequest): string {
  const host = request.host;
  if (!HOST.test(host)) throw oauthFailure(400, 'invalid_request', 'The Host header is not valid.');
  return `${request.protocol}://${host}`;
}

/** Token-style endpoints treat a missing body like an empty form: each field gets its OAuth error. */
async function emptyBodyIsEmptyForm(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

const oauthResponses = (own: Parameters<typeof responses>[1]) =>
  responses(OAUTH, own, { authenticated: false, rateLimited: true });

export async function oauthRoutes(
  app: App,
  _ctx: CoreContext,
  deps: { service: OAuthService },
): Promise<void> {
  const { service } = deps;

  // spec: part1 > OAuth device-code flow (RFC 8628) > POST /api/oauth/device/authorize
  app.post(
    '/api/oauth/device/authorize',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary:
          'Start a device authorization (RFC 8628): a device code to poll with and a user code to enter at /auth/device',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: DeviceAuthorizeBody,
        response: oauthResponses({
          200: DeviceAuthorization,
          400: OAuthErrorBody,
          503: OAuthErrorBody,
        }),
      },
    },
    async (request) => service.startDeviceAuthorization(request.body, originOf(request)),
  );

  // spec: part1 > OAuth device-code flow (RFC 8628) > POST /api/oauth/device/token
  app.post(
    '/api/oauth/device/token',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary:
          'Poll for the token of a device code (authorization_pending until approved; single use)',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: DeviceTokenBody,
        response: oauthResponses({ 200: TokenResponse, 400: OAuthErrorBody, 403: OAuthErrorBody }),
      },
    },
    async (request) => {
      const body = request.body;
      if (body.grant_type !== undefined && body.grant_type !== GRANT_TYPE_DEVICE_CODE) {
        throw oauthFailure(
          400,
          'unsupported_grant_type',
          `grant_type must be ${GRANT_TYPE_DEVICE_CODE} (or omitted).`,
        );
      }
      return service.redeemDeviceCode(body.device_code, body.client_id);
    },
  );

  // spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/token
  app.post(
    '/auth/token',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary:
          'Token endpoint: authorization_code (PKCE S256), refresh_token and device_code grants',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: TokenBody,
        response: oauthResponses({
          200: TokenResponse,
          400: OAuthErrorBody,
          401: OAuthErrorBody,
          403: OAuthErrorBody,
        }),
      },
    },
    async (request) => service.token(request.body),
  );

  // spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/register
  app.post(
    '/auth/register',
    {
      config: { access: publicAccess, errors: REGISTER, rateLimit: REGISTER_LIMIT },
      schema: {
        tags: TAGS,
        summary:
          'Dynamic client registration (RFC 7591); an operator approves the client before it can be used',
        security: [],
        body: RegisterBody,
        response: responses(
          REGISTER,
          {
            201: RegisteredClient,
            400: OAuthErrorBody,
            422: MessageErrorsBody,
            503: OAuthErrorBody,
          },
          { authenticated: false, rateLimited: true },
        ),
      },
    },
    async (request, reply) => {
      const client = service.register(request.body);
      reply.code(201);
      return client;
    },
  );

  // spec: part1 > Token management > POST /api/oauth/token/introspect
  app.post(
    '/api/oauth/token/introspect',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary: 'Token introspection (RFC 7662); updates last_used_at of an active access token',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: IntrospectBody,
        response: oauthResponses({ 200: Introspection, 400: OAuthErrorBody }),
      },
    },
    async (request) => service.introspect(request.body.token),
  );

  // spec: part1 > Token management > POST /api/oauth/token/refresh (fields: RFC 6749 section 6)
  app.post(
    '/api/oauth/token/refresh',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary:
          'Rotate a refresh token: a new access token and a new refresh token; a replayed refresh token revokes the grant',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: RefreshBody,
        response: oauthResponses({
          200: TokenResponse,
          400: OAuthErrorBody,
          401: OAuthErrorBody,
          403: OAuthErrorBody,
        }),
      },
    },
    async (request) => {
      const body = request.body;
      if (body.grant_type !== undefined && body.grant_type !== 'refresh_token') {
        throw oauthFailure(
          400,
          'unsupported_grant_type',
          'grant_type must be refresh_token (or omitted).',
        );
      }
      return service.refresh(body);
    },
  );

  // spec: part1 > Token management > POST /api/oauth/token/revoke (fields: RFC 7009)
  app.post(
    '/api/oauth/token/revoke',
    {
      config: {
        access: publicAccess,
        errors: OAUTH,
        rateLimit: OAUTH_GROUP_LIMIT,
        accepts: FORM_OR_JSON,
      },
      preValidation: emptyBodyIsEmptyForm,
      schema: {
        tags: TAGS,
        summary:
          'Token revocation (RFC 7009): revokes the grant of a refresh or OAuth access token; unknown tokens answer 200 too',
        security: [],
        consumes: [...FORM_OR_JSON],
        body: RevokeBody,
        response: oauthResponses({ 200: Revoked, 400: OAuthErrorBody, 401: OAuthErrorBody }),
      },
    },
    async (request) => {
      service.revoke(request.body);
      return {};
    },
  );

  // spec: part1 > OAuth client approval
  app.get(
    '/api/oauth/clients/pending',
    {
      config: { access: allOf('system'), errors: APPROVAL, rateLimit: OAUTH_GROUP_LIMIT },
      schema: {
        tags: TAGS,
        summary: 'Clients awaiting approval, oldest first',
        response: responses(APPROVAL, { 200: PendingClients }, { rateLimited: true }),
      },
    },
    async () => ({ clients: service.pendingClients() }),
  );

  app.post(
    '/api/oauth/clients/:clientId/approve',
    {
      config: { access: allOf('system'), errors: APPROVAL, rateLimit: OAUTH_GROUP_LIMIT },
      schema: {
        tags: TAGS,
        summary: 'Approve a registered client (idempotent; the first approver is kept)',
        params: ClientIdParams,
        response: responses(
          APPROVAL,
          { 200: ApprovedClient, 404: ErrorBody },
          { rateLimited: true },
        ),
      },
    },
    async (request) => service.approve(request.params.clientId, identityOf(request).user.id),
  );

  app.delete(
    '/api/oauth/clients/:clientId',
    {
      config: { access: allOf('system'), errors: APPROVAL, rateLimit: OAUTH_GROUP_LIMIT },
      schema: {
        tags: TAGS,
        summary: 'Delete a pending or approved client; its tokens and refresh chains are revoked',
        params: ClientIdParams,
        response: responses(
          APPROVAL,
          { 200: DeletedClient, 404: ErrorBody },
          { rateLimited: true },
        ),
      },
    },
    async (request) => {
      service.deleteClient(request.params.clientId);
      return { deleted: true as const };
    },
  );

  // spec: part1 > Token management > discovery documents (paths and bodies: RFC 8414, RFC 9728)
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { access: publicAccess, errors: OAUTH },
      schema: {
        tags: TAGS,
        summary: 'Authorization server metadata (RFC 8414)',
        security: [],
        response: responses(
          OAUTH,
          { 200: AuthorizationServerMetadata, 400: OAuthErrorBody },
          { authenticated: false },
        ),
      },
    },
    async (request) => service.authorizationServerMetadata(originOf(request)),
  );

  app.get(
    '/.well-known/oauth-protected-resource',
    {
      config: { access: publicAccess, errors: OAUTH },
      schema: {
        tags: TAGS,
        summary: 'Protected resource metadata (RFC 9728)',
        security: [],
        response: responses(
          OAUTH,
          { 200: ProtectedResourceMetadata, 400: OAuthErrorBody },
          { authenticated: false },
        ),
      },
    },
    async (request) => service.protectedResourceMetadata(originOf(request)),
  );
}
