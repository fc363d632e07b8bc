/**
 * Signed-in state per connection, kept by the main process only: sign-in with a password (and
 * TOTP) or the OAuth device flow, the bearer for each proxied request, refresh, sign-out.
 *
 * Invariants:
 * - One refresh at a time per connection. The OAuth server rotates refresh tokens and treats a
 *   second use of a spent one as theft (it revokes the whole grant), so concurrent expiries share
 *   one refresh grant (a single in-flight promise per connection), and the new refresh token is
 *   stored before any caller uses the new access token.
 * - OAuth access tokens (3600 s) are refreshed shortly before they expire, by this process's clock.
 * - A 401 from the appliance is also what a missing permission looks like in this API, so a 401
 *   leads to a refresh (or, for the embedded appliance, a new password sign-in) only when
 *   `GET /api/me` with the same token is 401 too; otherwise the 401 is the answer.
 * - Tokens never leave this module except as the Authorization header the proxy sends upstream.
 */
import crypto from 'node:crypto';

import {
  DEVICE_FLOW_FAILURE_CAUSES,
  type AuthStatus,
  type DeviceFlowResult,
  type DeviceFlowStart,
  type SignInResult,
} from '../../electron/contract/bridge.js';
import { exchangeJson, type JsonExchange } from '../connections/appliance-http.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import type { SavedConnection } from '../connections/connection-store.js';
import { UserFacingError } from '../errors.js';
import type { ConnectionTokens, TokenStore } from '../secrets/token-store.js';

export interface SessionClock {
  now(): number;
  /** Resolves after ms, or rejects when the signal aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemSessionClock: SessionClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }),
};

export interface SessionManagerOptions {
  connections: ConnectionRegistry;
  tokens: TokenStore;
  clock?: SessionClock;
  log(message: string, error?: unknown): void;
  /** Refresh an OAuth access token this long before it expires. */
  refreshSkewMs?: number;
  /** The name the appliance gives the device-flow token (`MCP Client: <name>`). */
  deviceClientName?: string;
  onAuthChanged?(status: AuthStatus): void;
}

/** Raised for a caller that should show the message (bad input, appliance refusal ...). */
export class SessionError extends UserFacingError {
  override name = 'SessionError';
}

interface DeviceFlow {
  id: string;
  connectionId: string;
  deviceCode: string;
  intervalMs: number;
  expiresAt: number;
  abort: AbortController;
  waiting: boolean;
}

/** Signs in to one connection again without the user (the embedded appliance's own password). */
export type Reauthenticator = () => Promise<boolean>;

const DEFAULT_REFRESH_SKEW_MS = 60_000;

export class SessionManager {
  private readonly clock: SessionClock;
  private readonly inFlight = new Map<string, Promise<string | undefined>>();
  private readonly flows = new Map<string, DeviceFlow>();
  private readonly reauthenticators = new Map<string, Reauthenticator>();
  /** How each connection signed in (for the window); tokens themselves are in the token store. */
  private readonly methods = new Map<string, 'password' | 'device'>();

  constructor(private readonly options: SessionManagerOptions) {
    this.clock = options.clock ?? systemSessionClock;
  }

  status(connectionId: string): AuthStatus {
    const tokens = this.options.tokens.get(connectionId);
    return {
      connectionId,
      signedIn: tokens !== undefined,
      method: tokens ? (this.methods.get(connectionId) ?? methodOf(tokens)) : null,
    };
  }

  setReauthenticator(connectionId: string, reauthenticate: Reauthenticator): void {
    this.reauthenticators.set(connectionId, reauthenticate);
  }

  /**
   * The bearer for the next request: refreshed first when an OAuth token expires within the
   * skew; for a connection with a reauthenticator and no token, signs in again. Undefined when
   * the connection is not signed in.
   */
  async accessToken(connectionId: string): Promise<string | undefined> {
    const tokens = this.options.tokens.get(connectionId);
    if (!tokens) {
      if (!this.reauthenticators.has(connectionId)) return undefined;
      return this.singleFlight(connectionId, () => this.reauthenticate(connectionId));
    }
    if (
      tokens.kind === 'oauth' &&
      tokens.expiresAt - this.clock.now() <= (this.options.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS)
    ) {
      return this.singleFlight(connectionId, () => this.refresh(connectionId, tokens.accessToken));
    }
    return tokens.accessToken;
  }

  /**
   * The appliance answered 401 to `usedToken`. Answers the token to retry with, or undefined when
   * the 401 stands (a missing permission, or the session is over and the user must sign in).
   */
  async recoverFromUnauthorized(
    connectionId: string,
    usedToken: string,
  ): Promise<string | undefined> {
    const pending = this.inFlight.get(connectionId);
    if (pending) return pending;
    const current = this.options.tokens.get(connectionId);
    // Someone refreshed (or signed in) since this request left: retry with the new token.
    if (current && current.accessToken !== usedToken) return current.accessToken;
    if (!current) return undefined;
    return this.singleFlight(connectionId, async () => {
      const latest = this.options.tokens.get(connectionId);
      if (!latest || latest.accessToken !== usedToken) return latest?.accessToken;
      const me = await this.call(connectionId, 'GET', '/api/me', { token: usedToken });
      if (me.status !== 401) return undefined;
      if (latest.kind === 'oauth') return this.refresh(connectionId, usedToken);
      this.forget(connectionId, 'the appliance no longer accepts this sign-in');
      if (this.reauthenticators.has(connectionId)) return this.reauthenticate(connectionId);
      return undefined;
    });
  }

  async signInWithPassword(input: {
    connectionId: string;
    username: string;
    password: string;
    totp?: string;
  }): Promise<SignInResult> {
    const connection = this.requireConnection(input.connectionId);
    const answer = await this.call(input.connectionId, 'POST', '/api/login', {
      json: {
        email: input.username,
        password: input.password,
        ...(input.totp !== undefined ? { totp: input.totp } : {}),
        browser_id: this.options.connections.store.browserIdOf(connection),
      },
    });
    const body = (answer.body ?? {}) as Record<string, unknown>;
    if (answer.status === 429) {
      return { status: 'rate-limited', retryAfterSeconds: retryAfterOf(answer) };
    }
    if (answer.status === 200 && typeof body.access_token === 'string') {
      this.store(input.connectionId, { kind: 'login', accessToken: body.access_token }, 'password');
      const user = (body.user ?? {}) as Record<string, unknown>;
      return {
        status: 'signed-in',
        user: {
          id: typeof user.id === 'number' ? user.id : 0,
          email: typeof user.email === 'string' ? user.email : '',
          name: typeof user.name === 'string' ? user.name : '',
        },
      };
    }
    const message = typeof body.message === 'string' ? body.message : undefined;
    if (answer.status === 200 && message === 'TOTP Required') return { status: 'totp-required' };
    if ((answer.status === 200 || answer.status === 422) && message) {
      return { status: 'invalid-credentials', message };
    }
    throw new SessionError(`the appliance answered the sign-in with HTTP ${answer.status}`);
  }

  async startDeviceFlow(connectionId: string): Promise<DeviceFlowStart> {
    const connection = this.requireConnection(connectionId);
    const answer = await this.call(connectionId, 'POST', '/api/oauth/device/authorize', {
      json: { client_name: this.options.deviceClientName ?? 'Appliance Console (desktop)' },
    });
    if (answer.status === 429) {
      throw new SessionError(
        `the appliance is limiting sign-in requests; try again in ${retryAfterOf(answer) ?? 60} s`,
      );
    }
    const body = (answer.body ?? {}) as Record<string, unknown>;
    if (
      answer.status !== 200 ||
      typeof body.device_code !== 'string' ||
      typeof body.user_code !== 'string' ||
      typeof body.expires_in !== 'number'
    ) {
      throw new SessionError(`the appliance answered HTTP ${answer.status} to the device flow`);
    }
    const intervalSeconds = typeof body.interval === 'number' ? Math.max(1, body.interval) : 5;
    const flow: DeviceFlow = {
      id: crypto.randomUUID(),
      connectionId,
      deviceCode: body.device_code,
      intervalMs: intervalSeconds * 1000,
      expiresAt: this.clock.now() + body.expires_in * 1000,
      abort: new AbortController(),
      waiting: false,
    };
    this.flows.set(flow.id, flow);
    // Built on the saved origin, never on what the appliance says its address is.
    const verificationUri = `${connection.origin}/auth/device`;
    return {
      flowId: flow.id,
      userCode: body.user_code,
      verificationUri,
      verificationUriComplete: `${verificationUri}?user_code=${encodeURIComponent(body.user_code)}`,
      expiresInSeconds: body.expires_in,
      intervalSeconds,
    };
  }

  /** Polls until the user approved in the browser, denied, the code expired, or cancel. */
  async waitDeviceFlow(flowId: string): Promise<DeviceFlowResult> {
    const flow = this.flows.get(flowId);
    if (!flow) throw new SessionError('no such sign-in in progress');
    if (flow.waiting) throw new SessionError('this sign-in is already being waited for');
    flow.waiting = true;
    try {
      // Bounded: one poll per interval until the code expires (slow_down only lengthens it).
      const maxPolls = Math.ceil((flow.expiresAt - this.clock.now()) / flow.intervalMs) + 2;
      for (let poll = 0; poll < maxPolls; poll++) {
        try {
          await this.clock.sleep(flow.intervalMs, flow.abort.signal);
        } catch {
          return { status: 'cancelled' };
        }
        if (this.clock.now() >= flow.expiresAt) break;
        const answer = await this.call(flow.connectionId, 'POST', '/api/oauth/device/token', {
          form: { device_code: flow.deviceCode },
          signal: flow.abort.signal,
        }).catch((error: unknown) => {
          if (flow.abort.signal.aborted) return undefined;
          throw error;
        });
        if (!answer) return { status: 'cancelled' };
        const body = (answer.body ?? {}) as Record<string, unknown>;
        if (answer.status === 200) {
          this.store(flow.connectionId, oauthTokensOf(body, this.clock.now()), 'device');
          return { status: 'signed-in' };
        }
        if (answer.status === 429) continue;
        const error = typeof body.error === 'string' ? body.error : '';
        if (error === 'authorization_pending') continue;
        if (error === 'slow_down') {
          flow.intervalMs += 5_000;
          continue;
        }
        if (error === 'access_denied') return { status: 'denied' };
        if (error === 'expired_token') break;
        throw new SessionError(`the appliance answered HTTP ${answer.status} to the device flow`);
      }
      return { status: 'expired', causes: DEVICE_FLOW_FAILURE_CAUSES };
    } finally {
      this.flows.delete(flowId);
    }
  }

  cancelDeviceFlow(flowId: string): void {
    const flow = this.flows.get(flowId);
    if (!flow) return;
    flow.abort.abort(new Error('cancelled'));
    if (!flow.waiting) this.flows.delete(flowId);
  }

  /** Ends the session on the appliance (logout or revocation), then forgets the tokens. */
  async signOut(connectionId: string): Promise<void> {
    const tokens = this.options.tokens.get(connectionId);
    if (!tokens) return;
    try {
      if (tokens.kind === 'login') {
        await this.call(connectionId, 'POST', '/api/logout', { token: tokens.accessToken });
      } else {
        await this.call(connectionId, 'POST', '/api/oauth/token/revoke', {
          form: { token: tokens.refreshToken, token_type_hint: 'refresh_token' },
        });
      }
    } catch (error) {
      this.options.log(
        `connection ${connectionId}: ending the session on the appliance failed`,
        error,
      );
    }
    this.forget(connectionId, 'signed out');
  }

  /** Drops the tokens (connection removed, moved to another URL, or the session is over). */
  forget(connectionId: string, reason: string): void {
    const had = this.options.tokens.get(connectionId) !== undefined;
    this.options.tokens.delete(connectionId);
    this.methods.delete(connectionId);
    if (had) {
      this.options.log(`connection ${connectionId}: signed out (${reason})`);
      this.options.onAuthChanged?.(this.status(connectionId));
    }
  }

  private async refresh(connectionId: string, usedToken: string): Promise<string | undefined> {
    const tokens = this.options.tokens.get(connectionId);
    if (!tokens || tokens.kind !== 'oauth') return tokens?.accessToken;
    if (tokens.accessToken !== usedToken) return tokens.accessToken;
    const answer = await this.call(connectionId, 'POST', '/api/oauth/token/refresh', {
      form: { grant_type: 'refresh_token', refresh_token: tokens.refreshToken },
    });
    if (answer.status === 200) {
      const renewed = oauthTokensOf(
        (answer.body ?? {}) as Record<string, unknown>,
        this.clock.now(),
      );
      this.store(connectionId, renewed, 'device', false);
      return renewed.accessToken;
    }
    const error = (answer.body as { error?: unknown } | null)?.error;
    if (error === 'invalid_grant' || error === 'access_denied') {
      this.forget(connectionId, `the refresh was refused (${String(error)})`);
      return undefined;
    }
    // Rate limit or a server error: keep the grant, this request fails, the next one retries.
    throw new SessionError(`the appliance answered HTTP ${answer.status} to the token refresh`);
  }

  private async reauthenticate(connectionId: string): Promise<string | undefined> {
    const reauthenticate = this.reauthenticators.get(connectionId);
    if (!reauthenticate) return undefined;
    const ok = await reauthenticate();
    return ok ? this.options.tokens.get(connectionId)?.accessToken : undefined;
  }

  private singleFlight(
    connectionId: string,
    run: () => Promise<string | undefined>,
  ): Promise<string | undefined> {
    const pending = this.inFlight.get(connectionId);
    if (pending) return pending;
    const promise = run().finally(() => this.inFlight.delete(connectionId));
    this.inFlight.set(connectionId, promise);
    return promise;
  }

  private store(
    connectionId: string,
    tokens: ConnectionTokens,
    method: 'password' | 'device',
    announce = true,
  ): void {
    this.options.tokens.set(connectionId, tokens);
    this.methods.set(connectionId, method);
    if (announce) this.options.onAuthChanged?.(this.status(connectionId));
  }

  private requireConnection(connectionId: string): SavedConnection {
    const connection = this.options.connections.get(connectionId);
    if (!connection) throw new SessionError('no such connection');
    return connection;
  }

  private call(
    connectionId: string,
    method: string,
    path: string,
    extra: {
      token?: string;
      json?: unknown;
      form?: Record<string, string>;
      signal?: AbortSignal;
    } = {},
  ): Promise<JsonExchange> {
    const connection = this.requireConnection(connectionId);
    return exchangeJson({
      origin: connection.origin,
      agent: this.options.connections.agentFor(connection),
      method,
      path,
      ...(extra.token ? { headers: { authorization: `Bearer ${extra.token}` } } : {}),
      ...(extra.json !== undefined ? { json: extra.json } : {}),
      ...(extra.form !== undefined ? { form: extra.form } : {}),
      ...(extra.signal ? { signal: extra.signal } : {}),
    });
  }
}

function methodOf(tokens: ConnectionTokens): 'password' | 'device' {
  return tokens.kind === 'oauth' ? 'device' : 'password';
}

function oauthTokensOf(body: Record<string, unknown>, now: number): ConnectionTokens {
  if (typeof body.access_token !== 'string' || typeof body.refresh_token !== 'string') {
    throw new SessionError('the appliance answered the token request without tokens');
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  return {
    kind: 'oauth',
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: now + expiresIn * 1000,
    scope: typeof body.scope === 'string' ? body.scope : '',
  };
}

function retryAfterOf(answer: JsonExchange): number | null {
  const header = answer.headers['retry-after'];
  const value = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(value) && value >= 0 ? value : null;
}
