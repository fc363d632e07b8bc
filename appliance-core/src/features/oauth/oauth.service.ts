/**
 * The authorization server: client registration and approval, the device-code flow (RFC 8628),
 * the authorization-code flow with PKCE (RFC 6749, RFC 7636), refresh-token rotation with reuse
 * detection, revocation (RFC 7009) and introspection (RFC 7662).
 *
 * Invariants:
 * - Every secret handed out (device code, user code, authorization code, refresh token, client
 *   secret) is stored only as its SHA-256; access tokens are minted by the tokens feature.
 * - Codes and refresh tokens are single use: a conditional UPDATE spends them, so of two
 *   concurrent redemptions exactly one wins. A replayed authorization code or refresh token
 *   revokes every token of its grant (the "family"), as RFC 9700 §2.2.2 and §4.14 advise.
 * - A failure that must leave a trace (a spent code, a revoked family) is returned from the
 *   transaction, not thrown inside it, so that the trace is committed before the error is sent.
 * - Tokens act as their user: issuing one needs a live user who still holds `api` (or `sa`).
 */
import crypto from 'node:crypto';
import type { CoreContext } from '../../platform/context.js';
import type { DB } from '../../platform/db/database.js';
import { ApiFailure, failure, oauthFailure } from '../../platform/http/envelopes.js';
import { hashToken } from '../../platform/security/tokens.js';
import { DAY_MS, toIsoWithOffset } from '../../platform/time/time.js';
import {
  findToken,
  OAUTH_NAME_PREFIX,
  prepareBearerLookup,
  revokeTokensByIds,
  SCOPES,
  type TokenService,
} from '../tokens/index.js';
import { findUserById, permissionSlugsOf } from '../users/index.js';
import {
  accessTokensOfFamily,
  approveClient,
  consumeAuthorizationCode,
  consumeDeviceCode,
  countApprovedClients,
  countWrongUserCode,
  decideDeviceCode,
  deleteClient,
  failuresOf,
  familiesOfClient,
  familyHasRevokedAccessToken,
  familyOfAccessToken,
  findAuthorizationCode,
  findClient,
  findDeviceCode,
  findFamily,
  findPendingUserCode,
  findRefreshToken,
  insertAuthorizationCode,
  insertClient,
  insertConsentRequest,
  insertDeviceCode,
  insertFamily,
  insertRefreshToken,
  linkAccessToken,
  listPendingClients,
  markFamilyRevoked,
  pendingClientTimesFrom,
  pruneExpired,
  purgeExpiredPendingClients,
  recordFailure,
  setAuthorizationCodeFamily,
  setDeviceCodeFamily,
  takeConsentRequest,
  useRefreshToken,
  type ClientRow,
  type FamilyRow,
} from './oauth.repository.js';
import {
  clientNameProblem,
  equalSecrets,
  generateUserCode,
  isCodeChallenge,
  normalizeUserCode,
  parseScopes,
  pkceMatches,
  randomSecret,
  redirectUriProblem,
  sha256,
  withParameters,
} from './oauth.rules.js';
import {
  AUTH_METHODS,
  CLIENT_GRANT_TYPES,
  GRANT_TYPE_DEVICE_CODE,
  type AuthorizeForm,
  type AuthorizeQuery,
  type DeviceAuthorizeBody,
  type Introspection,
  type RefreshBody,
  type RegisterBody,
  type RegisteredClient,
  type RevokeBody,
  type TokenBody,
  type TokenResponse,
} from './oauth.schema.js';

export const ACCESS_TOKEN_TTL_MS = 3_600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * DAY_MS;
export const DEVICE_CODE_TTL_MS = 600_000;
export const POLL_INTERVAL_SECONDS = 5;
export const AUTHORIZATION_CODE_TTL_MS = 600_000;
export const CONSENT_REQUEST_TTL_MS = 600_000;
/** The spec's cap on registered clients, counted over approved clients only (issue 11). */
export const MAX_CLIENTS = 500;
/** A registration no operator approved is purged this long after it was made. */
export const PENDING_CLIENT_TTL_MS = 7 * DAY_MS;
/** Pending registrations one client address (an IPv6 /64) may hold at once. */
export const MAX_PENDING_CLIENTS_PER_ADDRESS = 20;
/** Wrong user codes one client address may enter per window before the device page refuses it. */
export const MAX_WRONG_CODES_PER_ADDRESS = 10;
export const WRONG_CODE_WINDOW_MS = 15 * 60_000;
/** Wrong user codes entered appliance-wide while a code is pending, before that code is withdrawn. */
export const MAX_WRONG_CODES_PER_CODE = 100;
const KEEP_EXPIRED_MS = DAY_MS;
const PRUNE_EVERY_MS = 60_000;

export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  state: string | null;
}

export type UserCodeOutcome =
  | { kind: 'approved' | 'denied'; clientName: string; scopes: string[] }
  | { kind: 'invalid' }
  | { kind: 'locked'; retryAfterSeconds: number };

const invalidRequest = (description: string) => oauthFailure(400, 'invalid_request', description);
const invalidGrant = (description: string) => oauthFailure(400, 'invalid_grant', description);
const json = <T>(text: string) => JSON.parse(text) as T;
const present = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * What the pending-registration quota counts by: an IPv4 address, or the /64 of an IPv6 address
 * (one host usually holds a whole /64); an IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function pendingQuotaKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export class OAuthService {
  private readonly db: DB;
  private readonly bearerLookup;
  private lastPrune = 0;

  constructor(
    private readonly ctx: CoreContext,
    private readonly tokens: TokenService,
  ) {
    this.db = ctx.db;
    this.bearerLookup = prepareBearerLookup(ctx.db);
  }

  private now(): number {
    return this.ctx.clock.now();
  }

  /** Drops expired rows, at most once a minute, on the write paths. */
  private housekeeping(now: number): void {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    pruneExpired(this.db, now, KEEP_EXPIRED_MS, WRONG_CODE_WINDOW_MS);
  }

  // --- clients ---------------------------------------------------------------------------

  /**
   * `address` is the registering client's address; `retryAfter` receives the seconds after which
   * a refused registration (too many pending from that address) may succeed.
   */
  register(
    body: RegisterBody,
    address: string | null,
    retryAfter: (seconds: number) => void = () => {},
  ): RegisteredClient {
    const nameProblem = clientNameProblem(body.client_name);
    if (nameProblem)
      throw failure(422, nameProblem, {
        fields: { client_name: [nameProblem] },
        family: 'messageErrors',
      });
    const grantTypes = CLIENT_GRANT_TYPES.filter((g) =>
      (body.grant_types ?? CLIENT_GRANT_TYPES).includes(g),
    );
    const authMethod = body.token_endpoint_auth_method ?? AUTH_METHODS[0];
    const redirectUris = [...new Set(body.redirect_uris ?? [])];
    redirectUris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri);
      if (problem)
        throw oauthFailure(400, 'invalid_redirect_uri', `redirect_uris[${i}]: ${problem}.`);
    });
    if (grantTypes.includes('authorization_code') && redirectUris.length === 0) {
      throw oauthFailure(
        400,
        'invalid_redirect_uri',
        'At least one redirect URI is required for the authorization_code grant.',
      );
    }
    const now = this.now();
    this.housekeeping(now);
    const clientId = crypto.randomUUID();
    const secret = authMethod === 'client_secret_post' ? randomSecret() : null;
    const from = address === null ? null : pendingQuotaKey(address);
    const outcome = this.db.transaction(() => {
      this.purgeExpiredPending(now);
      if (countApprovedClients(this.db) >= MAX_CLIENTS) {
        return oauthFailure(
          503,
          'server_error',
          `The appliance holds the maximum of ${MAX_CLIENTS} OAuth clients; an operator must delete one first.`,
        );
      }
      const pending = from === null ? [] : pendingClientTimesFrom(this.db, from);
      if (pending.length >= MAX_PENDING_CLIENTS_PER_ADDRESS) {
        const oldest = pending[0] as number;
        retryAfter(Math.max(1, Math.ceil((oldest + PENDING_CLIENT_TTL_MS - now) / 1000)));
        return oauthFailure(
          429,
          'temporarily_unavailable',
          `This address has ${MAX_PENDING_CLIENTS_PER_ADDRESS} client registrations awaiting approval; register again when an operator has approved or deleted one, or when one expires.`,
        );
      }
      insertClient(this.db, {
        clientId,
        clientName: body.client_name,
        redirectUris,
        grantTypes,
        responseTypes: ['code'],
        authMethod,
        secretHash: secret === null ? null : sha256(secret),
        createdAt: now,
        registeredFrom: from,
      });
      return null;
    })();
    if (outcome) throw outcome;
    return {
      client_id: clientId,
      client_name: body.client_name,
      redirect_uris: redirectUris,
      grant_types: grantTypes,
      response_types: ['code'],
      token_endpoint_auth_method: authMethod,
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    };
  }

  /** Pending clients expire: purged lazily, before anything counts, lists or approves them. */
  private purgeExpiredPending(now: number): void {
    purgeExpiredPendingClients(this.db, now - PENDING_CLIENT_TTL_MS);
  }

  pendingClients() {
    this.purgeExpiredPending(this.now());
    return listPendingClients(this.db).map((row) => ({
      client_id: row.client_id,
      client_name: row.client_name,
      redirect_uris: json<string[]>(row.redirect_uris),
      grant_types: json<string[]>(row.grant_types),
      token_endpoint_auth_method: row.token_endpoint_auth_method,
      created_at: toIsoWithOffset(row.created_at),
      expires_at: toIsoWithOffset(row.created_at + PENDING_CLIENT_TTL_MS),
    }));
  }

  approve(clientId: string, userId: number) {
    const now = this.now();
    const outcome = this.db.transaction(() => {
      this.purgeExpiredPending(now);
      const client = findClient(this.db, clientId);
      if (!client) return failure(404, 'not_found');
      // The cap counts approved clients, so approval is where it is reached.
      if (client.approved_at === null && countApprovedClients(this.db) >= MAX_CLIENTS)
        return failure(503, 'server_error');
      return approveClient(this.db, clientId, userId, now);
    })();
    if (outcome instanceof ApiFailure) throw outcome;
    const row = outcome;
    if (!row || row.approved_at === null) throw failure(404, 'not_found');
    return {
      client_id: row.client_id,
      approved_at: toIsoWithOffset(row.approved_at),
      approved_by_user_id: row.approved_by_user_id,
    };
  }

  /** Deletes a client; every grant it holds is revoked first (access tokens and refresh chains). */
  deleteClient(clientId: string): void {
    const now = this.now();
    const deleted = this.db.transaction(() => {
      if (!findClient(this.db, clientId)) return false;
      for (const familyId of familiesOfClient(this.db, clientId))
        this.revokeFamily(familyId, 'client_deleted', now);
      return deleteClient(this.db, clientId);
    })();
    if (!deleted) throw failure(404, 'not_found');
  }

  private authenticateClient(client: ClientRow, secret: string | undefined): ApiFailure | null {
    if (client.token_endpoint_auth_method !== 'client_secret_post') return null;
    if (!present(secret))
      return oauthFailure(
        401,
        'invalid_client',
        'This client must authenticate with client_secret (client_secret_post).',
      );
    if (!client.client_secret_hash || !equalSecrets(secret, client.client_secret_hash))
      return oauthFailure(401, 'invalid_client', 'Client authentication failed.');
    return null;
  }

  /**
   * The client presenting a token of a grant: a confidential client authenticates; a client_id,
   * when sent, must be the grant's own.
   */
  private checkGrantClient(
    family: FamilyRow,
    clientId: string | undefined,
    secret: string | undefined,
    mismatch: 'invalid_grant' | 'invalid_client',
  ): ApiFailure | null {
    if (present(clientId) && family.client_id !== null && clientId !== family.client_id) {
      return mismatch === 'invalid_grant'
        ? invalidGrant('This token was issued to another client.')
        : oauthFailure(401, 'invalid_client', 'This token was issued to another client.');
    }
    if (family.origin === 'authorization_code' && family.client_id !== null) {
      const client = findClient(this.db, family.client_id);
      if (client) return this.authenticateClient(client, secret);
    }
    return null;
  }

  // --- issuing -----------------------------------------------------------------------------

  /** A live user who still holds `api` (or `sa`) may receive tokens. */
  private userGate(userId: number): ApiFailure | null {
    const user = findUserById(this.db, userId);
    if (!user || user.active !== 1)
      return invalidGrant('The user of this grant no longer exists or is inactive.');
    const permissions = permissionSlugsOf(this.db, userId);
    if (!permissions.includes('api') && !permissions.includes('sa'))
      return oauthFailure(403, 'access_denied', 'The user no longer holds the api permission.');
    return null;
  }

  private issue(args: {
    userId: number;
    clientId: string | null;
    clientName: string;
    scopes: readonly string[];
    familyId?: number;
    origin: FamilyRow['origin'];
    withRefresh: boolean;
    now: number;
  }): { response: TokenResponse; familyId: number } {
    const familyId =
      args.familyId ??
      insertFamily(this.db, {
        userId: args.userId,
        clientId: args.clientId,
        clientName: args.clientName,
        scopes: args.scopes,
        origin: args.origin,
        createdAt: args.now,
      });
    const minted = this.tokens.mint({
      userId: args.userId,
      name: `${OAUTH_NAME_PREFIX}${args.clientName}`,
      kind: 'oauth',
      scopes: args.scopes,
      ttlMs: ACCESS_TOKEN_TTL_MS,
      clientId: args.clientId,
    });
    linkAccessToken(this.db, familyId, minted.id);
    const response: TokenResponse = {
      access_token: minted.plaintext,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      scope: args.scopes.join(' '),
    };
    if (args.withRefresh) {
      const refresh = `apr_${randomSecret()}`;
      insertRefreshToken(this.db, {
        hash: sha256(refresh),
        familyId,
        accessTokenId: minted.id,
        createdAt: args.now,
        expiresAt: args.now + REFRESH_TOKEN_TTL_MS,
      });
      response.refresh_token = refresh;
    }
    return { response, familyId };
  }

  /** Revokes a grant: the family, its refresh tokens and every access token issued in it. */
  private revokeFamily(familyId: number, reason: string, now: number): void {
    markFamilyRevoked(this.db, familyId, reason, now);
    revokeTokensByIds(this.db, accessTokensOfFamily(this.db, familyId), now);
  }

  // --- device-code flow (RFC 8628) -----------------------------------------------------------

  startDeviceAuthorization(body: DeviceAuthorizeBody, origin: string) {
    const clientId = present(body.client_id) ? body.client_id : null;
    if (clientId !== null && (clientId.length > 200 || !/^[\x21-\x7E]+$/.test(clientId))) {
      throw invalidRequest('client_id must be 1 to 200 printable ASCII characters without spaces.');
    }
    const clientName =
      body.client_name ??
      (clientId !== null ? (findClient(this.db, clientId)?.client_name ?? clientId) : undefined);
    if (clientName === undefined) throw invalidRequest('client_name is required.');
    const nameProblem = clientNameProblem(clientName);
    if (nameProblem) throw invalidRequest(nameProblem);
    const parsed = parseScopes(body.scopes ?? body.scope);
    if ('invalid' in parsed)
      throw oauthFailure(
        400,
        'invalid_scope',
        `Unknown scope "${parsed.invalid}"; scopes are ${SCOPES.join(', ')}.`,
      );

    const now = this.now();
    this.housekeeping(now);
    const deviceCode = randomSecret();
    for (let attempt = 0; attempt < 5; attempt++) {
      const userCode = generateUserCode();
      const stored = insertDeviceCode(this.db, {
        deviceCodeHash: sha256(deviceCode),
        userCodeHash: sha256(userCode),
        clientId,
        clientName,
        scopes: parsed.scopes,
        createdAt: now,
        expiresAt: now + DEVICE_CODE_TTL_MS,
      });
      if (stored) {
        return {
          device_code: deviceCode,
          user_code: userCode,
          verification_uri: `${origin}/auth/device`,
          verification_uri_complete: `${origin}/auth/device?user_code=${userCode}`,
          expires_in: DEVICE_CODE_TTL_MS / 1000,
          interval: POLL_INTERVAL_SECONDS,
        };
      }
    }
    throw oauthFailure(503, 'server_error', 'No free user code could be drawn; try again.');
  }

  redeemDeviceCode(deviceCode: string | undefined, clientId: string | undefined): TokenResponse {
    if (!present(deviceCode)) throw invalidRequest('device_code is required.');
    const now = this.now();
    const outcome = this.db.transaction((): TokenResponse | ApiFailure => {
      const row = findDeviceCode(this.db, sha256(deviceCode));
      if (!row) return invalidGrant('Unknown device_code.');
      if (row.status === 'consumed' || row.expires_at <= now)
        return oauthFailure(
          400,
          'expired_token',
          'The device code has expired or was already used.',
        );
      if (present(clientId) && row.client_id !== null && clientId !== row.client_id)
        return invalidGrant('The device code was issued to another client.');
      if (row.status === 'pending')
        return oauthFailure(
          400,
          'authorization_pending',
          'The user has not yet approved this device code.',
        );
      if (row.status === 'denied')
        return oauthFailure(400, 'access_denied', 'The user denied this device code.');
      const gate = this.userGate(row.user_id as number);
      if (gate) return gate;
      if (!consumeDeviceCode(this.db, row.id, now))
        return oauthFailure(
          400,
          'expired_token',
          'The device code has expired or was already used.',
        );
      const issued = this.issue({
        userId: row.user_id as number,
        clientId: row.client_id,
        clientName: row.client_name,
        scopes: json<string[]>(row.scopes),
        origin: 'device_code',
        withRefresh: true,
        now,
      });
      setDeviceCodeFamily(this.db, row.id, issued.familyId);
      return issued.response;
    })();
    if (outcome instanceof ApiFailure) throw outcome;
    return outcome;
  }

  /** The device page: a signed-in user enters (approves or denies) a user code. */
  enterUserCode(args: {
    userId: number;
    address: string;
    input: string;
    deny: boolean;
  }): UserCodeOutcome {
    const now = this.now();
    const windowStart = now - WRONG_CODE_WINDOW_MS;
    return this.db.transaction((): UserCodeOutcome => {
      const failures = failuresOf(this.db, args.address, windowStart);
      if (failures && failures.failures >= MAX_WRONG_CODES_PER_ADDRESS) {
        return {
          kind: 'locked',
          retryAfterSeconds: Math.max(
            1,
            Math.ceil((failures.window_start + WRONG_CODE_WINDOW_MS - now) / 1000),
          ),
        };
      }
      const userCode = normalizeUserCode(args.input);
      const row =
        userCode === null ? undefined : findPendingUserCode(this.db, sha256(userCode), now);
      if (
        !row ||
        !decideDeviceCode(this.db, row.id, args.deny ? 'denied' : 'approved', args.userId, now)
      ) {
        recordFailure(this.db, args.address, now, windowStart);
        countWrongUserCode(this.db, now, MAX_WRONG_CODES_PER_CODE);
        return { kind: 'invalid' };
      }
      return {
        kind: args.deny ? 'denied' : 'approved',
        clientName: row.client_name,
        scopes: json<string[]>(row.scopes),
      };
    })();
  }

  // --- authorization-code flow with PKCE ----------------------------------------------------

  /** GET /auth/authorize: every check that answers 400 before a consent page is shown. */
  checkAuthorizationRequest(query: AuthorizeQuery): AuthorizationRequest {
    if (!present(query.response_type)) throw invalidRequest('response_type is required.');
    if (query.response_type !== 'code')
      throw oauthFailure(400, 'unsupported_response_type', 'response_type must be code.');
    for (const field of ['client_id', 'redirect_uri', 'code_challenge'] as const) {
      if (!present(query[field])) throw invalidRequest(`${field} is required.`);
    }
    const clientId = query.client_id as string;
    const redirectUri = query.redirect_uri as string;
    const codeChallenge = query.code_challenge as string;
    if ((query.code_challenge_method ?? 'S256') !== 'S256')
      throw invalidRequest('code_challenge_method must be S256; plain is not supported.');
    if (!isCodeChallenge(codeChallenge))
      throw invalidRequest(
        'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).',
      );
    const problem = redirectUriProblem(redirectUri);
    if (problem) throw invalidRequest(`redirect_uri: ${problem}.`);
    const client = findClient(this.db, clientId);
    if (!client) throw invalidRequest('Unknown client_id.');
    if (!json<string[]>(client.redirect_uris).includes(redirectUri))
      throw invalidRequest(
        'redirect_uri is not registered for this client (exact match required).',
      );
    if (!json<string[]>(client.grant_types).includes('authorization_code'))
      throw invalidRequest('This client is not registered for the authorization_code grant.');
    const parsed = parseScopes(query.scope);
    if ('invalid' in parsed)
      throw oauthFailure(
        400,
        'invalid_scope',
        `Unknown scope "${parsed.invalid}"; scopes are ${SCOPES.join(', ')}.`,
      );
    if (query.state !== undefined && query.state.length > 1024)
      throw invalidRequest('state must not be longer than 1024 characters.');
    return {
      client,
      redirectUri,
      codeChallenge,
      scopes: parsed.scopes,
      state: present(query.state) ? query.state : null,
    };
  }

  /** Remembers the request shown on the consent page, which the consent form must match. */
  rememberConsentRequest(sessionId: number, request: AuthorizationRequest): void {
    const now = this.now();
    this.housekeeping(now);
    insertConsentRequest(
      this.db,
      sessionId,
      {
        clientId: request.client.client_id,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        scopes: request.scopes.join(' '),
        state: request.state,
      },
      now,
      now + CONSENT_REQUEST_TTL_MS,
    );
  }

  /**
   * POST /auth/authorize. Without a registered client and redirect URI there is nowhere safe to
   * send the browser: 400 JSON. Otherwise every outcome is a redirect to the client, with `code`
   * or with `error` (RFC 6749 §4.1.2), plus `state` and `iss` (RFC 9207).
   */
  decideConsent(args: {
    sessionId: number;
    userId: number;
    form: AuthorizeForm;
    issuer: string;
  }): string {
    const { form } = args;
    if (!present(form.client_id) || !present(form.redirect_uri))
      throw invalidRequest('client_id and redirect_uri are required.');
    const client = findClient(this.db, form.client_id);
    const redirectUri = form.redirect_uri;
    if (!client || !json<string[]>(client.redirect_uris).includes(redirectUri)) {
      throw invalidRequest(
        'Unknown client_id, or a redirect_uri not registered for it; not redirecting.',
      );
    }
    const state = present(form.state) ? form.state : null;
    const back = (parameters: Record<string, string>) =>
      withParameters(redirectUri, { ...parameters, state: state ?? undefined, iss: args.issuer });
    const refuse = (error: string, description: string) =>
      back({ error, error_description: description });
    const now = this.now();
    return this.db.transaction((): string => {
      if (!present(form.scope)) return refuse('invalid_request', 'scope is required.');
      const parsed = parseScopes(form.scope);
      if ('invalid' in parsed) return refuse('invalid_scope', `Unknown scope "${parsed.invalid}".`);
      if (!present(form.code_challenge))
        return refuse('invalid_request', 'code_challenge is required.');
      if (form.code_challenge_method !== 'S256')
        return refuse(
          'invalid_request',
          'code_challenge_method must be S256; plain is not supported.',
        );
      const matched = takeConsentRequest(
        this.db,
        args.sessionId,
        {
          clientId: client.client_id,
          redirectUri,
          codeChallenge: form.code_challenge,
          scopes: parsed.scopes.join(' '),
          state,
        },
        now,
      );
      if (!matched)
        return refuse(
          'invalid_request',
          'No matching authorization request; start again from the application.',
        );
      if (form.deny !== undefined) return refuse('access_denied', 'The user denied the request.');
      if (client.approved_at === null)
        return refuse('access_denied', 'The client is not approved by an operator.');
      const code = randomSecret();
      insertAuthorizationCode(this.db, {
        hash: sha256(code),
        clientId: client.client_id,
        userId: args.userId,
        redirectUri,
        codeChallenge: form.code_challenge,
        scopes: parsed.scopes,
        createdAt: now,
        expiresAt: now + AUTHORIZATION_CODE_TTL_MS,
      });
      return back({ code });
    })();
  }

  /** POST /auth/token with grant_type=authorization_code. */
  exchangeCode(body: TokenBody): TokenResponse {
    for (const field of ['code', 'redirect_uri', 'client_id', 'code_verifier'] as const) {
      if (!present(body[field])) throw invalidRequest(`${field} is required.`);
    }
    const client = findClient(this.db, body.client_id as string);
    if (!client) throw oauthFailure(401, 'invalid_client', 'Unknown client.');
    const authFailure = this.authenticateClient(client, body.client_secret);
    if (authFailure) throw authFailure;
    const now = this.now();
    const outcome = this.db.transaction((): TokenResponse | ApiFailure => {
      const row = findAuthorizationCode(this.db, sha256(body.code as string));
      if (!row) return invalidGrant('The authorization code is invalid or expired.');
      if (!consumeAuthorizationCode(this.db, row.id, now)) {
        if (row.family_id !== null) this.revokeFamily(row.family_id, 'code_replay', now);
        return invalidGrant(
          'The authorization code was already used; the tokens issued from it are revoked.',
        );
      }
      if (row.expires_at <= now)
        return invalidGrant('The authorization code is invalid or expired.');
      if (row.client_id !== client.client_id)
        return invalidGrant('The authorization code was issued to another client.');
      if (row.redirect_uri !== body.redirect_uri)
        return invalidGrant('redirect_uri does not match the authorization request.');
      if (!pkceMatches(body.code_verifier as string, row.code_challenge))
        return invalidGrant(
          'PKCE verification failed: code_verifier does not match code_challenge.',
        );
      const gate = this.userGate(row.user_id);
      if (gate) return gate;
      const issued = this.issue({
        userId: row.user_id,
        clientId: client.client_id,
        clientName: client.client_name,
        scopes: json<string[]>(row.scopes),
        origin: 'authorization_code',
        withRefresh: json<string[]>(client.grant_types).includes('refresh_token'),
        now,
      });
      setAuthorizationCodeFamily(this.db, row.id, issued.familyId);
      return issued.response;
    })();
    if (outcome instanceof ApiFailure) throw outcome;
    return outcome;
  }

  /** The token endpoint: one body, three grants. */
  token(body: TokenBody): TokenResponse {
    if (!present(body.grant_type)) throw invalidRequest('grant_type is required.');
    switch (body.grant_type) {
      case 'authorization_code':
        return this.exchangeCode(body);
      case 'refresh_token':
        return this.refresh(body);
      case GRANT_TYPE_DEVICE_CODE:
        return this.redeemDeviceCode(body.device_code, body.client_id);
      default:
        throw oauthFailure(
          400,
          'unsupported_grant_type',
          `grant_type must be authorization_code, refresh_token or ${GRANT_TYPE_DEVICE_CODE}.`,
        );
    }
  }

  /**
   * Refresh-token rotation (RFC 6749 §6, RFC 9700 §4.14.2): each refresh token works once and
   * yields a new access token and a new refresh token of the same grant. A second use of a spent
   * refresh token revokes the whole grant. Checks that fail without a replay spend nothing.
   */
  refresh(body: RefreshBody): TokenResponse {
    if (!present(body.refresh_token)) throw invalidRequest('refresh_token is required.');
    const refreshToken = body.refresh_token;
    const now = this.now();
    const outcome = this.db.transaction((): TokenResponse | ApiFailure => {
      const row = findRefreshToken(this.db, sha256(refreshToken));
      const family = row ? findFamily(this.db, row.family_id) : undefined;
      if (!row || !family) return invalidGrant('The refresh token is invalid.');
      const clientFailure = this.checkGrantClient(
        family,
        body.client_id,
        body.client_secret,
        'invalid_grant',
      );
      if (clientFailure) return clientFailure;
      if (family.revoked_at !== null || row.revoked_at !== null)
        return invalidGrant('The refresh token was revoked.');
      if (row.used_at !== null) {
        this.revokeFamily(family.id, 'refresh_token_reuse', now);
        return invalidGrant(
          'The refresh token was already used; every token of this grant is now revoked.',
        );
      }
      if (row.expires_at <= now) return invalidGrant('The refresh token has expired.');
      if (familyHasRevokedAccessToken(this.db, family.id)) {
        this.revokeFamily(family.id, 'access_token_revoked', now);
        return invalidGrant('The tokens of this grant were revoked.');
      }
      const granted = json<string[]>(family.scopes);
      let scopes = granted;
      if (present(body.scope)) {
        const parsed = parseScopes(body.scope);
        if ('invalid' in parsed)
          return oauthFailure(400, 'invalid_scope', `Unknown scope "${parsed.invalid}".`);
        if (parsed.scopes.some((s) => !granted.includes(s)))
          return oauthFailure(
            400,
            'invalid_scope',
            'The requested scope exceeds the scope of the grant.',
          );
        scopes = parsed.scopes;
      }
      const gate = this.userGate(family.user_id);
      if (gate) return gate;
      if (!useRefreshToken(this.db, row.id, now))
        return invalidGrant('The refresh token was already used.');
      return this.issue({
        userId: family.user_id,
        clientId: family.client_id,
        clientName: family.client_name,
        scopes,
        familyId: family.id,
        origin: family.origin,
        withRefresh: true,
        now,
      }).response;
    })();
    if (outcome instanceof ApiFailure) throw outcome;
    return outcome;
  }

  /**
   * RFC 7009. Holding a token is the right to revoke it; a confidential client authenticates.
   * Revoking a refresh token or an OAuth access token revokes its whole grant. Unknown tokens,
   * and tokens that OAuth did not issue (sign-in, personal), are answered 200 and left alone.
   */
  revoke(body: RevokeBody): void {
    if (!present(body.token)) throw invalidRequest('token is required.');
    const token = body.token;
    const now = this.now();
    const outcome = this.db.transaction((): ApiFailure | null => {
      let family: FamilyRow | undefined;
      let accessTokenId: number | null = null;
      const refresh = findRefreshToken(this.db, sha256(token));
      if (refresh) family = findFamily(this.db, refresh.family_id);
      else {
        const bearer = this.bearerLookup(hashToken(token));
        const row = bearer ? findToken(this.db, bearer.id) : undefined;
        if (!row || row.kind !== 'oauth') return null;
        accessTokenId = row.id;
        const familyId = familyOfAccessToken(this.db, row.id);
        family = familyId === undefined ? undefined : findFamily(this.db, familyId);
      }
      if (family) {
        const clientFailure = this.checkGrantClient(
          family,
          body.client_id,
          body.client_secret,
          'invalid_client',
        );
        if (clientFailure) return clientFailure;
        this.revokeFamily(family.id, 'revoked', now);
      }
      if (accessTokenId !== null) revokeTokensByIds(this.db, [accessTokenId], now);
      return null;
    })();
    if (outcome) throw outcome;
  }

  /** RFC 7662 in the spec's shape; an active access token's `last_used_at` is updated. */
  introspect(token: string | undefined): Introspection {
    if (!present(token)) throw invalidRequest('token is required.');
    const now = this.now();
    const bearer = this.bearerLookup(hashToken(token));
    if (bearer) {
      if (bearer.revoked_at !== null || bearer.expires_at <= now || bearer.active !== 1)
        return { active: false };
      const row = findToken(this.db, bearer.id);
      const user = findUserById(this.db, bearer.user_id);
      if (!row || !user) return { active: false };
      this.tokens.noteUse(row.id);
      return {
        active: true,
        client_id: row.client_id,
        username: user.username,
        sub: user.id,
        scope: json<string[]>(row.scopes).join(' '),
        exp: Math.floor(row.expires_at / 1000),
      };
    }
    const refresh = findRefreshToken(this.db, sha256(token));
    const family = refresh ? findFamily(this.db, refresh.family_id) : undefined;
    const user = family ? findUserById(this.db, family.user_id) : undefined;
    if (!refresh || !family || !user) return { active: false };
    if (
      refresh.used_at !== null ||
      refresh.revoked_at !== null ||
      family.revoked_at !== null ||
      refresh.expires_at <= now ||
      user.active !== 1
    ) {
      return { active: false };
    }
    return {
      active: true,
      client_id: family.client_id,
      username: user.username,
      sub: user.id,
      scope: json<string[]>(family.scopes).join(' '),
      exp: Math.floor(refresh.expires_at / 1000),
    };
  }

  // --- discovery -----------------------------------------------------------------------------

  /** RFC 8414 metadata, for the origin the client used. */
  authorizationServerMetadata(origin: string) {
    return {
      issuer: origin,
      authorization_endpoint: `${origin}/auth/authorize`,
      token_endpoint: `${origin}/auth/token`,
      registration_endpoint: `${origin}/auth/register`,
      device_authorization_endpoint: `${origin}/api/oauth/device/authorize`,
      introspection_endpoint: `${origin}/api/oauth/token/introspect`,
      revocation_endpoint: `${origin}/api/oauth/token/revoke`,
      scopes_supported: [...SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...CLIENT_GRANT_TYPES, GRANT_TYPE_DEVICE_CODE],
      token_endpoint_auth_methods_supported: [...AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
      introspection_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${origin}/openapi.json`,
    };
  }

  /** RFC 9728 metadata: the appliance's API is the protected resource. */
  protectedResourceMetadata(origin: string) {
    return {
      resource: origin,
      authorization_servers: [origin],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: 'Network monitoring appliance API',
      resource_documentation: `${origin}/openapi.json`,
    };
  }
}
