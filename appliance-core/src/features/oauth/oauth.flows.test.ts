/**
 * End to end with a maintained OAuth client library, unmodified: oauth4webapi (panva) drives
 * discovery, dynamic registration, the device-code flow, the authorization-code flow with PKCE,
 * refresh-token rotation, revocation and introspection against a real appliance over HTTPS. The
 * user's side (sign-in, device approval, consent) goes through the real HTML forms with a cookie
 * jar. The library only gets a custom fetch that accepts the appliance's self-signed certificate
 * and labels each request with its own client address (the appliance trusts X-Forwarded-For
 * from loopback here, so the 30-per-minute OAuth bucket does not couple the steps).
 */
import * as oauth from 'oauth4webapi';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response as HarnessResponse,
} from '../../../../test/harness/appliance.js';

const FORM = 'application/x-www-form-urlencoded';
const REDIRECT_URI = 'http://127.0.0.1:47123/callback';

let h: Harness;
let addressCounter = 0;
const nextAddress = () => {
  addressCounter++;
  return `198.18.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
};

const agent = new Agent({ connect: { rejectUnauthorized: false } });

/** The transport handed to oauth4webapi: the appliance's certificate is self-signed. */
const tlsFetch = (
  url: string,
  options: oauth.CustomFetchOptions<string, unknown>,
): Promise<Response> => {
  return undiciFetch(url, {
    method: options.method,
    headers: { ...options.headers, 'x-forwarded-for': nextAddress() },
    body: options.body as string | URLSearchParams | undefined,
    redirect: options.redirect,
    ...(options.signal ? { signal: options.signal } : {}),
    dispatcher: agent,
  });
};
const http = { [oauth.customFetch]: tlsFetch };

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39|#96);/g,
    (_m, e: string) =>
      ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] as string,
  );
}

function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1] as string] = decodeEntities(m[2] as string);
  return fields;
}

/** A browser: its own client address and cookie jar. */
class Browser {
  private readonly jar = new Map<string, string>();
  readonly address = nextAddress();

  private keep(res: HarnessResponse): void {
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '') this.jar.delete(pair.slice(0, eq));
      else this.jar.set(pair.slice(0, eq), value);
    }
  }

  private options(extra: RequestOptions = {}): RequestOptions {
    return {
      ...extra,
      cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
      headers: { accept: 'text/html', 'x-forwarded-for': this.address },
    };
  }

  async get(path: string): Promise<HarnessResponse<string>> {
    const res = await h.request<string>('GET', path, this.options());
    this.keep(res);
    return res;
  }

  async post(path: string, fields: Record<string, string>): Promise<HarnessResponse<string>> {
    const res = await h.request<string>(
      'POST',
      path,
      this.options({ raw: { contentType: FORM, data: new URLSearchParams(fields).toString() } }),
    );
    this.keep(res);
    return res;
  }

  /** Opens a page; signs in on the way when the appliance asks for it; returns the page. */
  async open(
    path: string,
    account: { username: string; password: string },
  ): Promise<HarnessResponse<string>> {
    let res = await this.get(path);
    if (res.status === 303 && String(res.headers.location).startsWith('/auth/signin')) {
      const signin = await this.get(String(res.headers.location));
      const posted = await this.post('/auth/signin', {
        ...hiddenFields(signin.body),
        username: account.username,
        password: account.password,
      });
      expect(posted.status).toBe(303);
      res = await this.get(String(posted.headers.location));
    }
    return res;
  }
}

let as: oauth.AuthorizationServer;
let adminToken: string;
const alice = { username: 'alice', password: 'Alice-Passw0rd' };
let aliceId: number;

async function introspect(token: string): Promise<oauth.IntrospectionResponse> {
  const client: oauth.Client = { client_id: 'resource-server' };
  const res = await oauth.introspectionRequest(as, client, oauth.None(), token, http);
  return oauth.processIntrospectionResponse(as, client, res);
}

/** Expects an oauth4webapi call to fail with the given OAuth error (and HTTP status). */
async function expectOAuthError(
  promise: Promise<unknown>,
  error: string,
  status = 400,
): Promise<oauth.ResponseBodyError> {
  const failure = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(oauth.ResponseBodyError);
  expect((failure as oauth.ResponseBodyError).error).toBe(error);
  expect((failure as oauth.ResponseBodyError).status).toBe(status);
  return failure as oauth.ResponseBodyError;
}

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
  adminToken = await h.login();
  const created = await h.request('POST', '/api/createUser', {
    token: adminToken,
    body: {
      first_name: 'Alice',
      last_name: 'Example',
      email: 'alice@example.test',
      username: alice.username,
      password: alice.password,
    },
  });
  expect(created.body).toEqual({ status: 201 });
  aliceId = (
    h.appliance.db.prepare("SELECT id FROM users WHERE username = 'alice'").get() as { id: number }
  ).id;
  expect(
    (
      await h.request('POST', '/api/saveUser', {
        token: adminToken,
        body: { user: aliceId, permissions: ['api', 'devices'] },
      })
    ).body,
  ).toEqual({ status: 201 });

  const issuer = new URL(h.url);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...http, algorithm: 'oauth2' }),
  );
});

afterAll(async () => {
  await h?.close();
  await agent.close();
});

describe('discovery (RFC 8414, RFC 9728) through oauth4webapi', () => {
  it('reads the authorization server metadata and the protected resource metadata', async () => {
    expect(as.issuer).toBe(h.url);
    expect(as.token_endpoint).toBe(`${h.url}/auth/token`);
    expect(as.device_authorization_endpoint).toBe(`${h.url}/api/oauth/device/authorize`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    const resource = await oauth.processResourceDiscoveryResponse(
      new URL(h.url),
      await oauth.resourceDiscoveryRequest(new URL(h.url), http),
    );
    expect(resource.authorization_servers).toEqual([h.url]);
    expect(resource.scopes_supported).toHaveLength(8);
  });
});

describe('device-code flow (RFC 8628) with oauth4webapi', () => {
  it('polls, is approved through the HTML form, redeems once; the second redemption fails', async () => {
    const client: oauth.Client = { client_id: 'backup-script' };
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(
        as,
        client,
        oauth.None(),
        { client_name: 'Nightly backup', scope: 'mcp:devices mcp:logs' },
        http,
      ),
    );
    expect(started.expires_in).toBe(600);
    expect(started.interval).toBe(5);
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);

    const poll = () =>
      oauth
        .deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, http)
        .then((res) => oauth.processDeviceCodeResponse(as, client, res));
    await expectOAuthError(poll(), 'authorization_pending');

    // The user opens verification_uri_complete, signs in, and approves the pre-filled code.
    const browser = new Browser();
    const page = await browser.open(
      new URL(started.verification_uri_complete!).pathname +
        new URL(started.verification_uri_complete!).search,
      alice,
    );
    expect(page.status).toBe(200);
    const form = hiddenFields(page.body);
    expect(page.body).toContain(`value="${started.user_code}"`);
    const approved = await browser.post('/auth/device', {
      csrf: form.csrf as string,
      user_code: started.user_code,
      approve: '1',
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toContain('You approved <strong>Nightly backup</strong>');

    const tokens = await poll();
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      expires_in: 3600,
      scope: 'mcp:devices mcp:logs',
      access_token: expect.any(String),
      refresh_token: expect.any(String),
    });

    // The token acts as alice at the API.
    const me = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${h.url}/api/me`),
      undefined,
      undefined,
      http,
    );
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe('alice');
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      client_id: 'backup-script',
      username: 'alice',
      sub: aliceId,
      scope: 'mcp:devices mcp:logs',
    });

    await expectOAuthError(poll(), 'expired_token');
  });

  it('works against the spec endpoint POST /api/oauth/device/token as the token endpoint too', async () => {
    const deviceAs: oauth.AuthorizationServer = {
      ...as,
      token_endpoint: `${h.url}/api/oauth/device/token`,
    };
    const client: oauth.Client = { client_id: 'mcp-cli' };
    const started = await oauth.processDeviceAuthorizationResponse(
      deviceAs,
      client,
      await oauth.deviceAuthorizationRequest(
        deviceAs,
        client,
        oauth.None(),
        { client_name: 'MCP CLI' },
        http,
      ),
    );
    const poll = () =>
      oauth
        .deviceCodeGrantRequest(deviceAs, client, oauth.None(), started.device_code, http)
        .then((res) => oauth.processDeviceCodeResponse(deviceAs, client, res));
    await expectOAuthError(poll(), 'authorization_pending');
    const browser = new Browser();
    const page = await browser.open('/auth/device', alice);
    expect(
      (
        await browser.post('/auth/device', {
          csrf: hiddenFields(page.body).csrf as string,
          user_code: started.user_code.toLowerCase(),
        })
      ).status,
    ).toBe(200);
    const tokens = await poll();
    expect(tokens.scope).toBe('mcp:devices');
    const row = h.appliance.db
      .prepare("SELECT name, kind FROM access_tokens WHERE name = 'MCP Client: MCP CLI'")
      .get();
    expect(row).toEqual({ name: 'MCP Client: MCP CLI', kind: 'oauth' });
    await expectOAuthError(poll(), 'expired_token');
  });
});

describe('authorization-code flow with PKCE through oauth4webapi', () => {
  let client: oauth.Client;

  /** The browser side: consent page, approve, and the redirect back to the client. */
  async function authorize(
    browser: Browser,
    codeChallenge: string,
    state: string,
    scope = 'mcp:devices mcp:alerts',
  ): Promise<URL> {
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', REDIRECT_URI);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', scope);
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    const page = await browser.open(`${url.pathname}${url.search}`, alice);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<span class="badge">Unverified</span>');
    const res = await browser.post('/auth/authorize', { ...hiddenFields(page.body), approve: '1' });
    expect(res.status).toBe(302);
    return new URL(String(res.headers.location));
  }

  beforeAll(async () => {
    const registered = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: 'Claude Desktop',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      },
      http,
    );
    client = await oauth.processDynamicClientRegistrationResponse(registered);
    expect(client).toMatchObject({
      client_name: 'Claude Desktop',
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
    });
    // An operator approves the client.
    const pending = await h.request('GET', '/api/oauth/clients/pending', { token: adminToken });
    expect(pending.body.clients.map((c: { client_id: string }) => c.client_id)).toContain(
      client.client_id,
    );
    expect(
      (
        await h.request('POST', `/api/oauth/clients/${client.client_id}/approve`, {
          token: adminToken,
        })
      ).status,
    ).toBe(200);
  });

  it('registers, consents, parses the redirect, exchanges the code; a replay is rejected and revokes the tokens', async () => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const browser = new Browser();
    const callback = await authorize(
      browser,
      await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
    );
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const exchange = () =>
      oauth
        .authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          params,
          REDIRECT_URI,
          codeVerifier,
          http,
        )
        .then((res) => oauth.processAuthorizationCodeResponse(as, client, res));
    const tokens = await exchange();
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      expires_in: 3600,
      scope: 'mcp:devices mcp:alerts',
      refresh_token: expect.any(String),
    });
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      client_id: client.client_id,
      username: 'alice',
    });

    const replay = await expectOAuthError(exchange(), 'invalid_grant');
    expect(replay.error_description).toBe(
      'The authorization code was already used; the tokens issued from it are revoked.',
    );
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token!)).toEqual({ active: false });
  });

  it('rejects a wrong code verifier', async () => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(
      new Browser(),
      await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
    );
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const wrong = oauth.generateRandomCodeVerifier();
    const failure = await expectOAuthError(
      oauth
        .authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, wrong, http)
        .then((res) => oauth.processAuthorizationCodeResponse(as, client, res)),
      'invalid_grant',
    );
    expect(failure.error_description).toBe(
      'PKCE verification failed: code_verifier does not match code_challenge.',
    );
  });

  it('reports a denial as an authorization response error', async () => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const browser = new Browser();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    })) {
      url.searchParams.set(k, v);
    }
    const page = await browser.open(`${url.pathname}${url.search}`, alice);
    const res = await browser.post('/auth/authorize', { ...hiddenFields(page.body), deny: '1' });
    const failure = (() => {
      try {
        oauth.validateAuthResponse(as, client, new URL(String(res.headers.location)), state);
        return null;
      } catch (err) {
        return err;
      }
    })();
    expect(failure).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect((failure as oauth.AuthorizationResponseError).error).toBe('access_denied');
  });

  it('rotates refresh tokens; reusing a spent refresh token revokes the chain', async () => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(
      new Browser(),
      await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
      'mcp:devices',
    );
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        REDIRECT_URI,
        codeVerifier,
        http,
      ),
    );

    const refresh = (token: string) =>
      oauth
        .refreshTokenGrantRequest(as, client, oauth.None(), token, http)
        .then((res) => oauth.processRefreshTokenResponse(as, client, res));
    const second = await refresh(first.refresh_token!);
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    const third = await refresh(second.refresh_token!);
    expect(await introspect(third.access_token)).toMatchObject({
      active: true,
      scope: 'mcp:devices',
    });

    // An attacker replays the first refresh token: refused, and the whole chain is revoked.
    await expectOAuthError(refresh(first.refresh_token!), 'invalid_grant');
    for (const token of [
      first.access_token,
      second.access_token,
      third.access_token,
      third.refresh_token!,
    ])
      expect(await introspect(token)).toEqual({ active: false });
    await expectOAuthError(refresh(third.refresh_token!), 'invalid_grant');
  });

  it('revokes (RFC 7009): introspection says active before and inactive after', async () => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(
      new Browser(),
      await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
    );
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        REDIRECT_URI,
        codeVerifier,
        http,
      ),
    );
    const before = await introspect(tokens.access_token);
    expect(before).toEqual({
      active: true,
      client_id: client.client_id,
      username: 'alice',
      sub: aliceId,
      scope: 'mcp:devices mcp:alerts',
      exp: expect.any(Number),
    });
    expect(before.exp! - Math.floor(h.clock.now() / 1000)).toBeGreaterThan(3500);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, {
        ...http,
        additionalParameters: { token_type_hint: 'access_token' },
      }),
    );
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token!)).toEqual({ active: false });
    // A compliant client surfaces the resource's RFC 6750 challenge, which points back at the
    // protected-resource metadata (RFC 9728 §5.1).
    const refused = await oauth
      .protectedResourceRequest(
        tokens.access_token,
        'GET',
        new URL(`${h.url}/api/me`),
        undefined,
        undefined,
        http,
      )
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = (refused as oauth.WWWAuthenticateChallengeError).cause[0];
    expect((refused as oauth.WWWAuthenticateChallengeError).status).toBe(401);
    expect(challenge?.scheme).toBe('bearer');
    expect(challenge?.parameters.error).toBe('invalid_token');
    expect(challenge?.parameters.resource_metadata).toBe(
      `${h.url}/.well-known/oauth-protected-resource`,
    );
  });

  it('a confidential client authenticates with client_secret_post', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Report server',
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: 'client_secret_post',
        },
        http,
      ),
    );
    expect(registered.client_secret).toEqual(expect.any(String));
    expect(registered.client_secret_expires_at).toBe(0);
    await h.request('POST', `/api/oauth/clients/${registered.client_id}/approve`, {
      token: adminToken,
    });
    const saved = client;
    client = registered;
    try {
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const callback = await authorize(
        new Browser(),
        await oauth.calculatePKCECodeChallenge(codeVerifier),
        state,
      );
      const params = oauth.validateAuthResponse(as, registered, callback, state);
      const wrongSecret = await expectOAuthError(
        oauth
          .authorizationCodeGrantRequest(
            as,
            registered,
            oauth.ClientSecretPost('not-the-secret'),
            params,
            REDIRECT_URI,
            codeVerifier,
            http,
          )
          .then((res) => oauth.processAuthorizationCodeResponse(as, registered, res)),
        'invalid_client',
        401,
      );
      expect(wrongSecret.error_description).toBe('Client authentication failed.');
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        registered,
        await oauth.authorizationCodeGrantRequest(
          as,
          registered,
          oauth.ClientSecretPost(registered.client_secret as string),
          params,
          REDIRECT_URI,
          codeVerifier,
          http,
        ),
      );
      expect(tokens.access_token).toEqual(expect.any(String));
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        registered,
        await oauth.refreshTokenGrantRequest(
          as,
          registered,
          oauth.ClientSecretPost(registered.client_secret as string),
          tokens.refresh_token!,
          http,
        ),
      );
      expect(refreshed.access_token).not.toBe(tokens.access_token);
    } finally {
      client = saved;
    }
  });
});
