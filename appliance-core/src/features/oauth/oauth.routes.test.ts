/**
 * HTTP-level tests of the authorization server (spec part 1 > OAuth device-code flow, OAuth
 * authorization-code flow with PKCE, Token management, OAuth client approval, States and
 * transitions, Errors, Limits): every endpoint's statuses and bodies, every error code of the
 * spec's OAuth list with the condition that triggers it, and the browser pages (sign-in with
 * TOTP, device approval, consent) driven through their real forms with a cookie jar.
 *
 * One appliance for the file, trusting X-Forwarded-For from loopback: every request below carries
 * its own client address, so the shared 30-per-minute OAuth bucket and the per-address user-code
 * limit never couple unrelated tests. The limits themselves are tested on a second appliance
 * with the default configuration (no trusted proxy).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { PER_MINUTE } from '../../platform/http/rate-limit.js';
import { HTML_CSP } from '../../platform/http/security-headers.js';
import { hashToken } from '../../platform/security/tokens.js';
import { totpCodeAt } from '../../platform/security/totp.js';

const FORM = 'application/x-www-form-urlencoded';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const DEVICE_CODE_ERROR =
  'That code is not valid. Check the code shown on your device and try again.';
const ALL_SCOPES = [
  'mcp:devices',
  'mcp:alerts',
  'mcp:logs',
  'mcp:reports',
  'mcp:system',
  'mcp:tools',
  'mcp:vne',
  'mcp:capture',
];
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const NO_PERMISSION = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const oauthError = (error: string, description: string) => ({
  error,
  error_description: description,
});

let h: Harness;
let adminToken: string;
let addressCounter = 0;

/** A fresh client address (TEST-NET-2 and benchmarking ranges: labels only, nothing is sent there). */
function nextAddress(): string {
  addressCounter++;
  return `198.18.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
}

/** Every response: security headers, never a stack trace or an internal path. */
async function call<T = any>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Response<T>> {
  const res = await h.request<T>(method, path, {
    ...options,
    headers: { 'x-forwarded-for': nextAddress(), ...options.headers },
  });
  expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
  return res;
}

/** A form post (application/x-www-form-urlencoded), as OAuth client libraries send it. */
function formPost<T = any>(
  path: string,
  fields: Record<string, string>,
  options: RequestOptions = {},
): Promise<Response<T>> {
  return call<T>('POST', path, {
    ...options,
    raw: { contentType: FORM, data: new URLSearchParams(fields).toString() },
  });
}

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39|#96);/g,
    (_m, e: string) =>
      ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] as string,
  );
}

/** The hidden fields of the page's form, as a browser would submit them. */
function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1] as string] = decodeEntities(m[2] as string);
  return fields;
}

/** A browser: one client address and a cookie jar; follows nothing by itself. */
class Browser {
  private readonly jar = new Map<string, string>();
  constructor(readonly address = nextAddress()) {}

  get cookie(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  cookieValue(name: string): string | undefined {
    return this.jar.get(name);
  }

  private keep(res: Response): void {
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a),
      );
      if (value === '' || expired) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async get(path: string, address = this.address): Promise<Response<string>> {
    const res = await call<string>('GET', path, {
      cookie: this.cookie,
      headers: { accept: 'text/html', 'x-forwarded-for': address },
    });
    this.keep(res);
    return res;
  }

  async post(
    path: string,
    fields: Record<string, string | undefined>,
    address = this.address,
  ): Promise<Response<any>> {
    const data = new URLSearchParams(
      Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined),
    ).toString();
    const res = await call('POST', path, {
      cookie: this.cookie,
      raw: { contentType: FORM, data },
      headers: { accept: 'text/html', 'x-forwarded-for': address },
    });
    this.keep(res);
    return res;
  }

  /** Signs in through the real sign-in form; returns the answer to the form post. */
  async signIn(
    username: string,
    password: string,
    redirect = '/auth/device',
  ): Promise<Response<any>> {
    const page = await this.get(`/auth/signin?redirect=${encodeURIComponent(redirect)}`);
    expect(page.status).toBe(200);
    return this.post('/auth/signin', { ...hiddenFields(page.body), username, password });
  }

  /** Enters a user code on the device page (approve, or deny). */
  async enterCode(
    userCode: string,
    options: { deny?: boolean; address?: string } = {},
  ): Promise<Response<string>> {
    const page = await this.get('/auth/device');
    expect(page.status).toBe(200);
    const { csrf } = hiddenFields(page.body);
    return this.post(
      '/auth/device',
      { csrf, user_code: userCode, ...(options.deny ? { deny: '1' } : { approve: '1' }) },
      options.address,
    );
  }
}

interface Account {
  id: number;
  username: string;
  password: string;
}

let userCounter = 0;
/** Creates a user through the API (no sign-in, so no login rate limit is spent). */
async function createUser(permissions: string[], prefix = 'user'): Promise<Account> {
  userCounter++;
  const username = `${prefix}${userCounter}`;
  const password = `Passw0rd-${userCounter}`;
  const created = await call('POST', '/api/createUser', {
    token: adminToken,
    body: {
      first_name: 'OAuth',
      last_name: `User ${userCounter}`,
      email: `${username}@example.test`,
      username,
      password,
    },
  });
  expect(created.body).toEqual({ status: 201 });
  const id = (
    h.appliance.db.prepare('SELECT id FROM users WHERE username = ?').get(username) as {
      id: number;
    }
  ).id;
  expect(
    (await call('POST', '/api/saveUser', { token: adminToken, body: { user: id, permissions } }))
      .body,
  ).toEqual({ status: 201 });
  return { id, username, password };
}

async function setPermissions(userId: number, permissions: string[]): Promise<void> {
  expect(
    (
      await call('POST', '/api/saveUser', {
        token: adminToken,
        body: { user: userId, permissions },
      })
    ).body,
  ).toEqual({ status: 201 });
}

async function signedIn(account: Account): Promise<Browser> {
  const browser = new Browser();
  const res = await browser.signIn(account.username, account.password);
  expect(res.status).toBe(303);
  return browser;
}

async function startDevice(body: Record<string, unknown> = { client_name: 'Backup script' }) {
  const res = await call('POST', '/api/oauth/device/authorize', { body });
  expect(res.status).toBe(200);
  return res.body as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  };
}

function pollDevice(deviceCode: string, extra: Record<string, string> = {}) {
  return formPost('/api/oauth/device/token', { device_code: deviceCode, ...extra });
}

function tokenRow(plaintext: string) {
  return h.appliance.db
    .prepare('SELECT * FROM access_tokens WHERE token_hash = ?')
    .get(hashToken(plaintext)) as
    | {
        id: number;
        user_id: number;
        name: string;
        kind: string;
        client_id: string | null;
        scopes: string;
        created_at: number;
        expires_at: number;
        revoked_at: number | null;
        last_used_at: number | null;
      }
    | undefined;
}

const count = (table: string) =>
  (h.appliance.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

async function introspect(token: string) {
  const res = await formPost('/api/oauth/token/introspect', { token });
  expect(res.status).toBe(200);
  return res.body;
}

const verifier = () => crypto.randomBytes(32).toString('base64url');
const challengeOf = (v: string) => crypto.createHash('sha256').update(v).digest('base64url');

interface Client {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  client_secret?: string;
}

async function registerClient(body: Record<string, unknown>): Promise<Client> {
  const res = await call('POST', '/auth/register', { body });
  expect(res.status).toBe(201);
  return res.body;
}

async function approvedClient(body: Record<string, unknown> = {}): Promise<Client> {
  const client = await registerClient({
    client_name: 'MCP test client',
    redirect_uris: ['http://127.0.0.1:45678/callback'],
    ...body,
  });
  expect(
    (await call('POST', `/api/oauth/clients/${client.client_id}/approve`, { token: adminToken }))
      .status,
  ).toBe(200);
  return client;
}

function authorizePath(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return `/auth/authorize?${query.toString()}`;
}

/** The consent page for a standard request, and the form it carries. */
async function consent(
  browser: Browser,
  client: Client,
  options: { codeVerifier?: string; scope?: string; state?: string; redirectUri?: string } = {},
) {
  const codeVerifier = options.codeVerifier ?? verifier();
  const path = authorizePath({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: options.redirectUri ?? client.redirect_uris[0],
    code_challenge: challengeOf(codeVerifier),
    code_challenge_method: 'S256',
    scope: options.scope,
    state: 'state' in options ? options.state : 'st-123',
  });
  const page = await browser.get(path);
  return { page, fields: hiddenFields(page.body), codeVerifier, path };
}

/** Runs the browser side of the code flow to the redirect; returns the code and the verifier. */
async function authorizationCode(
  browser: Browser,
  client: Client,
  options: { scope?: string } = {},
) {
  const { page, fields, codeVerifier } = await consent(browser, client, options);
  expect(page.status).toBe(200);
  const res = await browser.post('/auth/authorize', { ...fields, approve: '1' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location as string);
  const code = location.searchParams.get('code');
  expect(code).toEqual(expect.any(String));
  return { code: code as string, codeVerifier, location };
}

function exchange(
  client: Client,
  code: string,
  codeVerifier: string,
  extra: Record<string, string> = {},
) {
  return formPost('/auth/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0] as string,
    client_id: client.client_id,
    code_verifier: codeVerifier,
    ...(client.client_secret ? { client_secret: client.client_secret } : {}),
    ...extra,
  });
}

let alice: Account; // api
let bob: Account; // no permissions
let operator: Account; // system
let aliceBrowser: Browser;
let bobBrowser: Browser;
let operatorToken: string;

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
  adminToken = await h.login();
  alice = await createUser(['api'], 'alice');
  bob = await createUser([], 'bob');
  operator = await createUser(['system'], 'operator');
  operatorToken = await h.login(operator.username, operator.password);
  aliceBrowser = await signedIn(alice);
  bobBrowser = await signedIn(bob);
});

afterAll(async () => {
  await h?.close();
});

// spec: part1 > Token management > discovery documents
describe('discovery documents', () => {
  it('GET /.well-known/oauth-authorization-server describes every endpoint and the eight scopes (RFC 8414)', async () => {
    const res = await call('GET', '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      issuer: h.url,
      authorization_endpoint: `${h.url}/auth/authorize`,
      token_endpoint: `${h.url}/auth/token`,
      registration_endpoint: `${h.url}/auth/register`,
      device_authorization_endpoint: `${h.url}/api/oauth/device/authorize`,
      introspection_endpoint: `${h.url}/api/oauth/token/introspect`,
      revocation_endpoint: `${h.url}/api/oauth/token/revoke`,
      scopes_supported: ALL_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${h.url}/openapi.json`,
    });
  });

  it('GET /.well-known/oauth-protected-resource names the appliance as resource and authorization server (RFC 9728)', async () => {
    const res = await call('GET', '/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      resource: h.url,
      authorization_servers: [h.url],
      scopes_supported: ALL_SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'Network monitoring appliance API',
      resource_documentation: `${h.url}/openapi.json`,
    });
  });

  it('builds URLs from the Host the client used', async () => {
    const res = await call('GET', '/.well-known/oauth-authorization-server', {
      headers: { host: 'appliance.example.test:8443' },
    });
    expect(res.body.issuer).toBe('https://appliance.example.test:8443');
    expect(res.body.token_endpoint).toBe('https://appliance.example.test:8443/auth/token');
  });

  it('answers 400 invalid_request for a Host header that is not a host name', async () => {
    const res = await call('GET', '/.well-known/oauth-protected-resource', {
      headers: { host: 'evil"host' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(oauthError('invalid_request', 'The Host header is not valid.'));
  });
});

// spec: part1 > OAuth device-code flow (RFC 8628)
describe('POST /api/oauth/device/authorize', () => {
  it('answers {device_code, user_code (8 characters), verification_uri, verification_uri_complete, expires_in: 600, interval: 5}', async () => {
    const res = await call('POST', '/api/oauth/device/authorize', {
      body: { client_name: 'Backup script' },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    expect(res.body).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/),
      verification_uri: `${h.url}/auth/device`,
      verification_uri_complete: `${h.url}/auth/device?user_code=${res.body.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const row = h.appliance.db
      .prepare('SELECT * FROM oauth_device_codes ORDER BY id DESC LIMIT 1')
      .get() as any;
    expect(row).toMatchObject({
      client_name: 'Backup script',
      client_id: null,
      scopes: '["mcp:devices"]',
      status: 'pending',
    });
    expect(row.expires_at - row.created_at).toBe(600_000);
    // Only digests are stored.
    expect(JSON.stringify(row)).not.toContain(res.body.user_code);
    expect(JSON.stringify(row)).not.toContain(res.body.device_code);
  });

  it('takes scopes as a JSON array, as a form field (repeated or space-delimited) or as the RFC 8628 scope', async () => {
    const scopesOf = async (res: Response) => {
      expect(res.status).toBe(200);
      return (
        h.appliance.db
          .prepare('SELECT scopes FROM oauth_device_codes ORDER BY id DESC LIMIT 1')
          .get() as { scopes: string }
      ).scopes;
    };
    expect(
      await scopesOf(
        await call('POST', '/api/oauth/device/authorize', {
          body: { client_name: 'a', scopes: ['mcp:logs', 'mcp:alerts'] },
        }),
      ),
    ).toBe('["mcp:alerts","mcp:logs"]');
    expect(
      await scopesOf(
        await formPost('/api/oauth/device/authorize', {
          client_name: 'a',
          scope: 'mcp:vne mcp:capture',
        }),
      ),
    ).toBe('["mcp:vne","mcp:capture"]');
    const repeated = await call('POST', '/api/oauth/device/authorize', {
      raw: { contentType: FORM, data: 'client_name=a&scopes=mcp%3Atools&scopes=mcp%3Asystem' },
    });
    expect(await scopesOf(repeated)).toBe('["mcp:system","mcp:tools"]');
    expect(
      await scopesOf(
        await formPost('/api/oauth/device/authorize', { client_name: 'a', scopes: 'mcp:reports' }),
      ),
    ).toBe('["mcp:reports"]');
  });

  it('names the client by client_id when an RFC 8628 client sends no client_name', async () => {
    const res = await formPost('/api/oauth/device/authorize', { client_id: 'cli-tool' });
    expect(res.status).toBe(200);
    expect(
      h.appliance.db
        .prepare('SELECT client_id, client_name FROM oauth_device_codes ORDER BY id DESC LIMIT 1')
        .get(),
    ).toEqual({ client_id: 'cli-tool', client_name: 'cli-tool' });
  });

  it('refuses a missing or malformed client_name and unknown scopes, storing nothing', async () => {
    const before = count('oauth_device_codes');
    const cases: [RequestOptions, number, object][] = [
      [{ body: {} }, 400, oauthError('invalid_request', 'client_name is required.')],
      [
        { body: { client_name: 'tab\there' } },
        400,
        oauthError('invalid_request', 'client_name must be printable ASCII.'),
      ],
      [
        { body: { client_name: 'x'.repeat(101) } },
        400,
        oauthError('invalid_request', 'client_name must not be longer than 100 characters.'),
      ],
      [
        { body: { client_name: '   ' } },
        400,
        oauthError('invalid_request', 'client_name must not be empty.'),
      ],
      [
        { body: { client_name: 'a', client_id: 'has space' } },
        400,
        oauthError(
          'invalid_request',
          'client_id must be 1 to 200 printable ASCII characters without spaces.',
        ),
      ],
      [
        { body: { client_name: 'a', scopes: ['mcp:devices', 'admin'] } },
        400,
        oauthError('invalid_scope', `Unknown scope "admin"; scopes are ${ALL_SCOPES.join(', ')}.`),
      ],
      [
        { body: { client_name: 'a', scope: 'openid' } },
        400,
        oauthError('invalid_scope', `Unknown scope "openid"; scopes are ${ALL_SCOPES.join(', ')}.`),
      ],
      [
        { body: { client_name: 5 } },
        400,
        oauthError('invalid_request', 'The client name field must be a string.'),
      ],
      [
        { raw: { contentType: 'text/plain', data: 'client_name=a' } },
        415,
        oauthError(
          'invalid_request',
          'Unsupported Media Type: this endpoint accepts application/x-www-form-urlencoded, application/json.',
        ),
      ],
    ];
    for (const [options, status, body] of cases) {
      const res = await call('POST', '/api/oauth/device/authorize', options);
      expect(res.status, JSON.stringify(options)).toBe(status);
      expect(res.body).toEqual(body);
    }
    expect(count('oauth_device_codes')).toBe(before);
  });
});

describe('the device-code flow through the device page', () => {
  it('GET /auth/device without a session redirects to the sign-in page with redirect back to it', async () => {
    const res = await new Browser().get('/auth/device?user_code=BCDFGHJK');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(
      `/auth/signin?redirect=${encodeURIComponent('/auth/device?user_code=BCDFGHJK')}`,
    );
  });

  it('GET /auth/device shows the form, pre-filled from user_code, under the strict CSP', async () => {
    const res = await aliceBrowser.get('/auth/device?user_code=bcdf-ghjk');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(HTML_CSP);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('value="BCDFGHJK"');
    expect(res.body).toContain('<script src="/auth/device-code.js" defer></script>');
    expect(res.body).toContain(`Signed in as <strong>${alice.username}</strong>`);
    expect(res.body).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);
    expect(hiddenFields(res.body).csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('polls authorization_pending, approves through the form, redeems once, then answers expired_token', async () => {
    const device = await startDevice({
      client_name: 'Backup script',
      scopes: ['mcp:devices', 'mcp:logs'],
    });
    const pending = await pollDevice(device.device_code);
    expect(pending.status).toBe(400);
    expect(pending.body).toEqual(
      oauthError('authorization_pending', 'The user has not yet approved this device code.'),
    );

    const approved = await aliceBrowser.enterCode(
      device.user_code.toLowerCase().replace(/^(.{4})/, '$1-'),
    );
    expect(approved.status).toBe(200);
    expect(approved.body).toContain('Device connected');
    expect(approved.body).toContain('You approved <strong>Backup script</strong>');
    expect(approved.body).toContain('<code>mcp:logs</code>');

    const redeemed = await pollDevice(device.device_code);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toEqual({
      access_token: expect.stringMatching(/^apo_/),
      refresh_token: expect.stringMatching(/^apr_/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'mcp:devices mcp:logs',
    });
    expect(redeemed.headers['cache-control']).toBe('no-store');
    const row = tokenRow(redeemed.body.access_token)!;
    expect(row).toMatchObject({
      user_id: alice.id,
      name: 'MCP Client: Backup script',
      kind: 'oauth',
      client_id: null,
      scopes: '["mcp:devices","mcp:logs"]',
      revoked_at: null,
    });
    expect(row.expires_at - row.created_at).toBe(3_600_000);

    // The token acts as alice: her own token list shows it with origin oauth.
    const listing = await call('GET', '/api/tokens', { token: redeemed.body.access_token });
    expect(listing.status).toBe(200);
    expect(listing.body.tokens.find((t: any) => t.id === row.id)).toMatchObject({
      name: 'MCP Client: Backup script',
      origin: 'oauth',
      scopes: ['mcp:devices', 'mcp:logs'],
      revoked: false,
    });

    const again = await pollDevice(device.device_code);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(
      oauthError('expired_token', 'The device code has expired or was already used.'),
    );
  });

  it('redeems at the token endpoint too (grant_type urn:ietf:params:oauth:grant-type:device_code)', async () => {
    const device = await startDevice();
    expect((await aliceBrowser.enterCode(device.user_code)).status).toBe(200);
    const res = await formPost('/auth/token', {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
    });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('mcp:devices');
  });

  it('answers expired_token after 600 seconds', async () => {
    const device = await startDevice();
    h.clock.advance(600_000);
    const res = await pollDevice(device.device_code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      oauthError('expired_token', 'The device code has expired or was already used.'),
    );
    // And the code can no longer be entered either.
    expect((await aliceBrowser.enterCode(device.user_code)).body).toContain(DEVICE_CODE_ERROR);
  });

  it('a denied code answers access_denied', async () => {
    const device = await startDevice();
    const denied = await aliceBrowser.enterCode(device.user_code, { deny: true });
    expect(denied.status).toBe(200);
    expect(denied.body).toContain('Request denied');
    const res = await pollDevice(device.device_code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(oauthError('access_denied', 'The user denied this device code.'));
  });

  it('a user who lost api between approval and redemption gets 403 access_denied', async () => {
    const dave = await createUser(['api'], 'dave');
    const browser = await signedIn(dave);
    const device = await startDevice();
    expect((await browser.enterCode(device.user_code)).status).toBe(200);
    await setPermissions(dave.id, []);
    const res = await pollDevice(device.device_code);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      oauthError('access_denied', 'The user no longer holds the api permission.'),
    );
    expect(count('access_tokens WHERE user_id = ' + dave.id + " AND kind = 'oauth'")).toBe(0);
  });

  it('refuses a missing, unknown or foreign device_code and a wrong grant_type', async () => {
    const device = await startDevice({ client_id: 'tool-a' });
    const cases: [Response, number, object][] = [
      [
        await formPost('/api/oauth/device/token', {}),
        400,
        oauthError('invalid_request', 'device_code is required.'),
      ],
      [
        await call('POST', '/api/oauth/device/token'),
        400,
        oauthError('invalid_request', 'device_code is required.'),
      ],
      [
        await pollDevice('not-a-device-code'),
        400,
        oauthError('invalid_grant', 'Unknown device_code.'),
      ],
      [
        await pollDevice(device.device_code, { client_id: 'tool-b' }),
        400,
        oauthError('invalid_grant', 'The device code was issued to another client.'),
      ],
      [
        await pollDevice(device.device_code, { grant_type: 'authorization_code' }),
        400,
        oauthError('unsupported_grant_type', `grant_type must be ${DEVICE_GRANT} (or omitted).`),
      ],
    ];
    for (const [res, status, body] of cases) {
      expect(res.status).toBe(status);
      expect(res.body).toEqual(body);
    }
    expect(
      (await pollDevice(device.device_code, { client_id: 'tool-a', grant_type: DEVICE_GRANT })).body
        .error,
    ).toBe('authorization_pending');
  });

  it('gives one identical page for a wrong, an expired and a used code and for a user without api', async () => {
    const normalize = (page: string) =>
      page
        .replace(/name="csrf" value="[^"]+"/, 'name="csrf" value=""')
        .replace(/Signed in as <strong>[^<]+<\/strong>/, 'Signed in as <strong></strong>')
        .replace(/redirect=[^"]+"/, 'redirect="');
    const used = await startDevice();
    expect((await aliceBrowser.enterCode(used.user_code)).status).toBe(200);
    const expired = await startDevice();
    h.clock.advance(601_000);
    const pending = await startDevice();

    const answers = [
      await aliceBrowser.enterCode('BCDFGHJK'), // wrong (never issued)
      await aliceBrowser.enterCode('hello'), // malformed
      await aliceBrowser.enterCode(expired.user_code),
      await aliceBrowser.enterCode(used.user_code),
      await bobBrowser.enterCode(pending.user_code), // bob lacks api
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain(`<p class="error" role="alert">${DEVICE_CODE_ERROR}</p>`);
      expect(normalize(res.body)).toBe(normalize(answers[0]!.body));
    }
    // Bob's attempt changed nothing: alice can still approve the code.
    expect((await aliceBrowser.enterCode(pending.user_code)).status).toBe(200);
  });

  it('refuses a form post without the CSRF field of the session (403, nothing approved)', async () => {
    const device = await startDevice();
    const forged = await aliceBrowser.post('/auth/device', { user_code: device.user_code });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('This form expired. Enter the code again.');
    const otherSession = await bobBrowser.get('/auth/device');
    const wrongSession = await aliceBrowser.post('/auth/device', {
      user_code: device.user_code,
      csrf: hiddenFields(otherSession.body).csrf,
    });
    expect(wrongSession.status).toBe(403);
    expect((await pollDevice(device.device_code)).body.error).toBe('authorization_pending');
  });

  it('POST /auth/device without a session redirects to sign-in (nothing approved); a JSON body is 415', async () => {
    const device = await startDevice();
    const res = await new Browser().post('/auth/device', { user_code: device.user_code });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(
      `/auth/signin?redirect=${encodeURIComponent(`/auth/device?user_code=${device.user_code}`)}`,
    );
    const json = await call('POST', '/auth/device', {
      cookie: aliceBrowser.cookie,
      body: { user_code: device.user_code },
    });
    expect(json.status).toBe(415);
    expect(json.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(json.body).toContain(
      'This page accepts form posts (application/x-www-form-urlencoded) only.',
    );
    expect((await pollDevice(device.device_code)).body.error).toBe('authorization_pending');
  });

  it('limits wrong codes per client address: the 11th attempt within 15 minutes is refused with 429 and Retry-After', async () => {
    const address = nextAddress();
    const device = await startDevice();
    for (let i = 0; i < 10; i++)
      expect((await aliceBrowser.enterCode('BCDFGHJK', { address })).status).toBe(400);
    const locked = await aliceBrowser.enterCode(device.user_code, { address });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(900);
    expect(locked.body).toMatch(
      /Too many wrong codes were entered from your address\. Try again in 1?\d minutes?\./,
    );
    // Even the right code is not looked at from that address.
    expect((await pollDevice(device.device_code)).body.error).toBe('authorization_pending');
    // Another address is served, and the window passes.
    expect((await aliceBrowser.enterCode(device.user_code)).status).toBe(200);
    h.clock.advance(15 * 60_000);
    expect((await aliceBrowser.enterCode('BCDFGHJK', { address })).status).toBe(400);
  });

  it('limits wrong codes per pending code: after 100 wrong entries appliance-wide the code is withdrawn', async () => {
    const device = await startDevice();
    const row = () =>
      h.appliance.db
        .prepare(
          'SELECT failed_attempts, expires_at FROM oauth_device_codes WHERE user_code_hash = ?',
        )
        .get(crypto.createHash('sha256').update(device.user_code).digest()) as {
        failed_attempts: number;
        expires_at: number;
      };
    let address = nextAddress();
    for (let i = 0; i < 100; i++) {
      if (i % 10 === 0) address = nextAddress();
      expect((await aliceBrowser.enterCode('ZZZZZZZZ', { address })).status).toBe(400);
    }
    expect(row().failed_attempts).toBe(100);
    expect((await pollDevice(device.device_code)).body).toEqual(
      oauthError('expired_token', 'The device code has expired or was already used.'),
    );
    expect((await aliceBrowser.enterCode(device.user_code)).body).toContain(DEVICE_CODE_ERROR);
  });

  it('shows client names as text, never markup', async () => {
    const device = await startDevice({ client_name: '<img src=x onerror=alert(1)>"&' });
    const res = await aliceBrowser.enterCode(device.user_code);
    expect(res.status).toBe(200);
    expect(res.body).toContain(
      'You approved <strong>&lt;img src=x onerror=alert(1)&gt;&quot;&amp;</strong>',
    );
    expect(res.body).not.toContain('<img');
  });

  it('GET /auth/device-code.js is public JavaScript cached for a day that uppercases and strips the code', async () => {
    const res = await call('GET', '/auth/device-code.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.text).toContain("toUpperCase().replace(/[^A-Z0-9]/g, '')");
    const css = await call('GET', '/auth/assets/auth.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=86400');
  });
});

// designed: the sign-in page of /auth/*
describe('the sign-in page', () => {
  it('sets a SameSite=Strict CSRF cookie and signs in with a 303 back to the page, setting the session cookie', async () => {
    const browser = new Browser();
    const page = await browser.get('/auth/signin?redirect=%2Fauth%2Fdevice%3Fuser_code%3DBCDFGHJK');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(HTML_CSP);
    const csrfCookie = [page.headers['set-cookie']]
      .flat()
      .find((c) => c?.startsWith('appliance_auth_csrf='))!;
    expect(csrfCookie.split(';').map((a) => a.trim().toLowerCase())).toEqual(
      expect.arrayContaining(['httponly', 'secure', 'samesite=strict', 'path=/auth/']),
    );
    expect(hiddenFields(page.body)).toEqual({
      csrf: expect.any(String),
      redirect: '/auth/device?user_code=BCDFGHJK',
    });
    const res = await browser.post('/auth/signin', {
      ...hiddenFields(page.body),
      username: alice.username,
      password: alice.password,
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/auth/device?user_code=BCDFGHJK');
    const session = [res.headers['set-cookie']]
      .flat()
      .find((c) => c?.startsWith('appliance_session='))!;
    expect(session.split(';').map((a) => a.trim().toLowerCase())).toEqual(
      expect.arrayContaining(['httponly', 'secure', 'samesite=lax']),
    );
    expect((await browser.get('/auth/device')).status).toBe(200);
  });

  it('refuses wrong credentials with the form again (401) and a post without its CSRF pair (403)', async () => {
    const browser = new Browser();
    const page = await browser.get('/auth/signin');
    const wrong = await browser.post('/auth/signin', {
      ...hiddenFields(page.body),
      username: alice.username,
      password: 'Wrong-Passw0rd',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('Invalid username or password.');
    expect(wrong.body).toContain(`value="${alice.username}"`);
    expect(wrong.headers['set-cookie'] ?? '').not.toContain('appliance_session=');
    const empty = await browser.post('/auth/signin', {
      ...hiddenFields(page.body),
      username: '',
      password: '',
    });
    expect(empty.status).toBe(400);
    expect(empty.body).toContain('Enter your username and password.');

    // No cookie: a cross-site post carries none (SameSite=Strict), whatever the field says.
    const forged = await new Browser().post('/auth/signin', {
      csrf: hiddenFields(page.body).csrf,
      username: alice.username,
      password: alice.password,
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('Your sign-in form expired. Please try again.');
    // A cookie without the matching field, or a field for another cookie.
    const other = new Browser();
    await other.get('/auth/signin');
    for (const csrf of [undefined, 'x', hiddenFields(page.body).csrf]) {
      const res = await other.post('/auth/signin', {
        csrf,
        username: alice.username,
        password: alice.password,
      });
      expect(res.status).toBe(403);
    }
  });

  it('never redirects off the /auth pages', async () => {
    for (const target of [
      'https://evil.example/auth/device',
      '//evil.example/auth/device',
      '/\\evil.example',
      '/auth/../api/me',
      '/api/me',
    ]) {
      const browser = new Browser();
      const page = await browser.get(`/auth/signin?redirect=${encodeURIComponent(target)}`);
      expect(hiddenFields(page.body).redirect).toBe('/auth/device');
      const res = await browser.post('/auth/signin', {
        ...hiddenFields(page.body),
        redirect: target,
        username: alice.username,
        password: alice.password,
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/auth/device');
    }
  });

  it('asks for the TOTP code of an MFA account in a second step, bound to the browser', async () => {
    const carol = await createUser(['api'], 'carol');
    const generated = await call('POST', '/api/generateMfa', {
      token: adminToken,
      body: { userId: carol.id },
    });
    const secret = generated.body.mfaKey as string;
    expect(
      (
        await call('POST', '/api/confirmMfa', {
          token: adminToken,
          body: { userId: carol.id, code: totpCodeAt(secret, h.clock.now()) },
        })
      ).status,
    ).toBe(200);
    h.clock.advance(30_000);

    const browser = new Browser();
    const page = await browser.get('/auth/signin');
    const step = await browser.post('/auth/signin', {
      ...hiddenFields(page.body),
      username: carol.username,
      password: carol.password,
    });
    expect(step.status).toBe(200);
    expect(step.body).toContain('Two-factor code');
    expect(step.headers['set-cookie'] ?? '').not.toContain('appliance_session=');
    const fields = hiddenFields(step.body);
    expect(fields).toEqual({
      csrf: expect.any(String),
      redirect: '/auth/device',
      ticket: expect.stringMatching(/^v1:/),
    });
    // The ticket is sealed: the password is not in the page.
    expect(step.body).not.toContain(carol.password);

    const wrong = await browser.post('/auth/signin', {
      ...fields,
      totp: '000000' === totpCodeAt(secret, h.clock.now()) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('That code is not valid. Try again.');

    // Another browser cannot use the ticket (bound to the CSRF cookie).
    const thief = new Browser();
    const thiefPage = await thief.get('/auth/signin');
    const stolen = await thief.post('/auth/signin', {
      ...fields,
      csrf: hiddenFields(thiefPage.body).csrf,
      totp: totpCodeAt(secret, h.clock.now()),
    });
    expect(stolen.status).toBe(401);
    expect(stolen.body).toContain('Your sign-in expired. Please sign in again.');

    const ok = await browser.post('/auth/signin', {
      ...fields,
      totp: totpCodeAt(secret, h.clock.now()),
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/auth/device');
    expect((await browser.get('/auth/device')).status).toBe(200);

    // A ticket older than five minutes is refused.
    h.clock.advance(30_000);
    const later = new Browser();
    const laterPage = await later.get('/auth/signin');
    const laterStep = await later.post('/auth/signin', {
      ...hiddenFields(laterPage.body),
      username: carol.username,
      password: carol.password,
    });
    h.clock.advance(5 * 60_000 + 1000);
    const stale = await later.post('/auth/signin', {
      ...hiddenFields(laterStep.body),
      totp: totpCodeAt(secret, h.clock.now()),
    });
    expect(stale.status).toBe(401);
    expect(stale.body).toContain('Your sign-in expired. Please sign in again.');
  });
});

// spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/register
describe('POST /auth/register (RFC 7591)', () => {
  it('registers a public client: 201 with the defaults', async () => {
    const res = await call('POST', '/auth/register', {
      body: { client_name: 'Claude Desktop', redirect_uris: ['http://127.0.0.1:33418/callback'] },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_name: 'Claude Desktop',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it('registers a confidential client: the secret is shown once, never stored in clear', async () => {
    const res = await call('POST', '/auth/register', {
      body: {
        client_name: 'Report server',
        redirect_uris: ['https://reports.example.test/cb'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'ignored',
        logo_uri: 'https://x',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      client_id: expect.any(String),
      client_name: 'Report server',
      redirect_uris: ['https://reports.example.test/cb'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_secret_expires_at: 0,
    });
    const row = h.appliance.db
      .prepare('SELECT * FROM oauth_clients WHERE client_id = ?')
      .get(res.body.client_id) as any;
    expect(JSON.stringify(row)).not.toContain(res.body.client_secret);
    expect(row.approved_at).toBeNull();
  });

  it('answers 400 invalid_redirect_uri for URIs that are not loopback http or https, and for none at all', async () => {
    const before = count('oauth_clients');
    const cases: [unknown, string][] = [
      [
        ['http://client.example/cb'],
        'redirect_uris[0]: plain http is allowed only for localhost and loopback addresses.',
      ],
      [
        ['https://ok.example/cb', 'ftp://x.example/cb'],
        'redirect_uris[1]: a redirect URI must use http or https.',
      ],
      [
        ['https://ok.example/cb#x'],
        'redirect_uris[0]: a redirect URI must not contain a fragment.',
      ],
      [['/callback'], 'redirect_uris[0]: a redirect URI must be an absolute URL.'],
      [[], 'At least one redirect URI is required for the authorization_code grant.'],
      [undefined, 'At least one redirect URI is required for the authorization_code grant.'],
    ];
    for (const [uris, description] of cases) {
      const res = await call('POST', '/auth/register', {
        body: { client_name: 'x', ...(uris ? { redirect_uris: uris } : {}) },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(oauthError('invalid_redirect_uri', description));
    }
    expect(count('oauth_clients')).toBe(before);
  });

  it('answers 422 {message, errors} for invalid metadata, and refuses form bodies', async () => {
    const cases: [unknown, object][] = [
      [
        {},
        {
          message: 'The client name field is required.',
          errors: { client_name: ['The client name field is required.'] },
        },
      ],
      [
        { client_name: 'x'.repeat(101), redirect_uris: ['https://a.example/cb'] },
        {
          message: 'The client name field must not be greater than 100 characters.',
          errors: {
            client_name: ['The client name field must not be greater than 100 characters.'],
          },
        },
      ],
      [
        { client_name: 'naïve', redirect_uris: ['https://a.example/cb'] },
        {
          message: 'The client name field format is invalid.',
          errors: { client_name: ['The client name field format is invalid.'] },
        },
      ],
      [
        { client_name: '  ', redirect_uris: ['https://a.example/cb'] },
        {
          message: 'client_name must not be empty.',
          errors: { client_name: ['client_name must not be empty.'] },
        },
      ],
      [
        {
          client_name: 'x',
          redirect_uris: ['https://a.example/cb'],
          grant_types: ['client_credentials'],
        },
        {
          message: 'The selected grant types.0 is invalid.',
          errors: { 'grant_types.0': ['The selected grant types.0 is invalid.'] },
        },
      ],
      [
        { client_name: 'x', redirect_uris: ['https://a.example/cb'], response_types: ['token'] },
        {
          message: 'The selected response types.0 is invalid.',
          errors: { 'response_types.0': ['The selected response types.0 is invalid.'] },
        },
      ],
      [
        {
          client_name: 'x',
          redirect_uris: ['https://a.example/cb'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          message: 'The selected token endpoint auth method is invalid.',
          errors: {
            token_endpoint_auth_method: ['The selected token endpoint auth method is invalid.'],
          },
        },
      ],
    ];
    for (const [body, expected] of cases) {
      const res = await call('POST', '/auth/register', { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toEqual(expected);
    }
    const form = await formPost('/auth/register', { client_name: 'x' });
    expect(form.status).toBe(415);
    expect(form.body).toEqual(
      oauthError(
        'invalid_request',
        'Unsupported Media Type: this endpoint accepts application/json.',
      ),
    );
  });

  it('answers 503 server_error once 500 clients are registered', async () => {
    const approvedCount = () =>
      (
        h.appliance.db
          .prepare('SELECT COUNT(*) AS n FROM oauth_clients WHERE approved_at IS NOT NULL')
          .get() as { n: number }
      ).n;
    const existing = approvedCount();
    const insert = h.appliance.db.prepare(
      `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, created_at, approved_at)
       VALUES (?, 'filler', '["https://f.example/cb"]', '["authorization_code"]', '["code"]', 'none', ?, ?)`,
    );
    // The cap counts approved clients (issue 11): the fillers are approved.
    h.appliance.db.transaction(() => {
      for (let i = existing; i < 499; i++) insert.run(`filler-${i}`, h.clock.now(), h.clock.now());
    })();
    const number500 = await call('POST', '/auth/register', {
      body: { client_name: 'number 500', redirect_uris: ['https://a.example/cb'] },
    });
    expect(number500.status).toBe(201);
    expect(
      (
        await call('POST', `/api/oauth/clients/${number500.body.client_id}/approve`, {
          token: adminToken,
        })
      ).status,
    ).toBe(200);
    try {
      const full = await call('POST', '/auth/register', {
        body: { client_name: 'number 501', redirect_uris: ['https://a.example/cb'] },
      });
      expect(full.status).toBe(503);
      expect(full.body).toEqual(
        oauthError(
          'server_error',
          'The appliance holds the maximum of 500 OAuth clients; an operator must delete one first.',
        ),
      );
      expect(approvedCount()).toBe(500);
    } finally {
      h.appliance.db
        .prepare(
          "DELETE FROM oauth_clients WHERE client_id LIKE 'filler-%' OR client_name = 'number 500'",
        )
        .run();
    }
  });
});

// spec: part1 > OAuth client approval
describe('client approval (permission system)', () => {
  it('lists pending clients oldest first, approves idempotently, and deletes', async () => {
    const first = await registerClient({
      client_name: 'Pending one',
      redirect_uris: ['https://one.example/cb'],
    });
    h.clock.advance(1000);
    const second = await registerClient({
      client_name: 'Pending two',
      redirect_uris: ['http://localhost:9/cb'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    const listed = await call('GET', '/api/oauth/clients/pending', { token: operatorToken });
    expect(listed.status).toBe(200);
    const mine = listed.body.clients.filter((c: any) =>
      [first.client_id, second.client_id].includes(c.client_id),
    );
    expect(mine).toEqual([
      {
        client_id: first.client_id,
        client_name: 'Pending one',
        redirect_uris: ['https://one.example/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        created_at: expect.stringMatching(ISO_WITH_OFFSET),
        expires_at: expect.stringMatching(ISO_WITH_OFFSET),
      },
      {
        client_id: second.client_id,
        client_name: 'Pending two',
        redirect_uris: ['http://localhost:9/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'client_secret_post',
        created_at: expect.stringMatching(ISO_WITH_OFFSET),
        expires_at: expect.stringMatching(ISO_WITH_OFFSET),
      },
    ]);
    const createdAt = listed.body.clients.map((c: any) => c.created_at);
    expect([...createdAt].sort()).toEqual(createdAt);

    const approved = await call('POST', `/api/oauth/clients/${first.client_id}/approve`, {
      token: operatorToken,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({
      client_id: first.client_id,
      approved_at: expect.stringMatching(ISO_WITH_OFFSET),
      approved_by_user_id: operator.id,
    });
    h.clock.advance(1000);
    const again = await call('POST', `/api/oauth/clients/${first.client_id}/approve`, {
      token: adminToken,
    });
    expect(again.body).toEqual(approved.body);
    expect(
      (await call('GET', '/api/oauth/clients/pending', { token: operatorToken })).body.clients.map(
        (c: any) => c.client_id,
      ),
    ).not.toContain(first.client_id);

    for (const id of [first.client_id, second.client_id]) {
      const deleted = await call('DELETE', `/api/oauth/clients/${id}`, { token: operatorToken });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ deleted: true });
    }
    expect(
      h.appliance.db
        .prepare('SELECT COUNT(*) AS n FROM oauth_clients WHERE client_id IN (?, ?)')
        .get(first.client_id, second.client_id),
    ).toEqual({ n: 0 });
  });

  it("answers 404 {error: 'not_found'} for unknown clients", async () => {
    for (const [method, path] of [
      ['POST', '/api/oauth/clients/nope/approve'],
      ['DELETE', '/api/oauth/clients/nope'],
    ] as const) {
      const res = await call(method, path, { token: operatorToken });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found' });
    }
  });

  it('needs system: 401 without it, 401 without a token', async () => {
    const client = await registerClient({
      client_name: 'x',
      redirect_uris: ['https://x.example/cb'],
    });
    const aliceToken = await h.login(alice.username, alice.password);
    for (const [method, path] of [
      ['GET', '/api/oauth/clients/pending'],
      ['POST', `/api/oauth/clients/${client.client_id}/approve`],
      ['DELETE', `/api/oauth/clients/${client.client_id}`],
    ] as const) {
      const denied = await call(method, path, { token: aliceToken });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual(NO_PERMISSION);
      const anonymous = await call(method, path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHENTICATED);
    }
    expect(
      h.appliance.db
        .prepare('SELECT approved_at FROM oauth_clients WHERE client_id = ?')
        .get(client.client_id),
    ).toEqual({ approved_at: null });
  });
});

// spec: part1 > OAuth authorization-code flow with PKCE > GET /auth/authorize
describe('GET /auth/authorize (consent page)', () => {
  let client: Client;
  beforeAll(async () => {
    client = await approvedClient({ client_name: 'Consent <b>client</b>' });
  });

  it('shows the consent page: the client as unverified, its scopes, and a form that carries the request', async () => {
    const { page, fields, codeVerifier } = await consent(aliceBrowser, client, {
      scope: 'mcp:devices mcp:alerts',
    });
    expect(page.status).toBe(200);
    // The form may lead to the client's redirect URI (browsers apply form-action to the 302 that follows).
    expect(page.headers['content-security-policy']).toBe(
      HTML_CSP.replace("form-action 'self'", "form-action 'self' http://127.0.0.1:45678"),
    );
    expect(page.body).toContain(
      '<strong>Consent &lt;b&gt;client&lt;/b&gt;</strong> <span class="badge">Unverified</span>',
    );
    expect(page.body).toContain('<code>mcp:alerts</code>');
    expect(page.body).toContain('<code>127.0.0.1:45678</code>');
    expect(fields).toEqual({
      csrf: expect.any(String),
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      code_challenge: challengeOf(codeVerifier),
      code_challenge_method: 'S256',
      scope: 'mcp:devices mcp:alerts',
      state: 'st-123',
    });
  });

  it('redirects to the sign-in page without a session, and back here afterwards', async () => {
    const browser = new Browser();
    const { page, path } = await consent(browser, client);
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe(`/auth/signin?redirect=${encodeURIComponent(path)}`);
    const signin = await browser.signIn(alice.username, alice.password, path);
    expect(signin.status).toBe(303);
    expect(signin.headers.location).toBe(path);
    expect((await browser.get(path)).status).toBe(200);
  });

  it('answers 403 with a page for a user without api, and for a client not yet approved', async () => {
    const { page } = await consent(bobBrowser, client);
    expect(page.status).toBe(403);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Your account does not hold the api permission');
    const pending = await registerClient({
      client_name: 'Not yet <approved>',
      redirect_uris: ['http://127.0.0.1:45679/cb'],
    });
    const waiting = await consent(aliceBrowser, pending);
    expect(waiting.page.status).toBe(403);
    expect(waiting.page.body).toContain(
      'Not yet &lt;approved&gt; is registered but an operator has not approved it yet.',
    );
  });

  it('answers 400 with the OAuth error for each malformed request', async () => {
    const challenge = challengeOf(verifier());
    const good = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mcp:devices',
      state: 's',
    };
    const unregistered = await registerClient({
      client_name: 'r',
      redirect_uris: ['https://r.example/cb'],
      grant_types: ['refresh_token'],
    });
    const cases: [Record<string, string | undefined>, object][] = [
      [
        { ...good, response_type: 'token' },
        oauthError('unsupported_response_type', 'response_type must be code.'),
      ],
      [
        { ...good, response_type: undefined },
        oauthError('invalid_request', 'response_type is required.'),
      ],
      [{ ...good, client_id: undefined }, oauthError('invalid_request', 'client_id is required.')],
      [
        { ...good, redirect_uri: undefined },
        oauthError('invalid_request', 'redirect_uri is required.'),
      ],
      [
        { ...good, code_challenge: undefined },
        oauthError('invalid_request', 'code_challenge is required.'),
      ],
      [
        { ...good, code_challenge_method: 'plain' },
        oauthError(
          'invalid_request',
          'code_challenge_method must be S256; plain is not supported.',
        ),
      ],
      [
        { ...good, code_challenge: 'short' },
        oauthError(
          'invalid_request',
          'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).',
        ),
      ],
      [
        { ...good, redirect_uri: 'http://evil.example/cb' },
        oauthError(
          'invalid_request',
          'redirect_uri: plain http is allowed only for localhost and loopback addresses.',
        ),
      ],
      [
        { ...good, redirect_uri: 'javascript:alert(1)' },
        oauthError('invalid_request', 'redirect_uri: a redirect URI must use http or https.'),
      ],
      [
        { ...good, redirect_uri: 'http://127.0.0.1:45678/callback/' },
        oauthError(
          'invalid_request',
          'redirect_uri is not registered for this client (exact match required).',
        ),
      ],
      [
        { ...good, redirect_uri: 'http://127.0.0.1:45679/callback' },
        oauthError(
          'invalid_request',
          'redirect_uri is not registered for this client (exact match required).',
        ),
      ],
      [
        { ...good, client_id: 'unknown-client' },
        oauthError('invalid_request', 'Unknown client_id.'),
      ],
      [
        { ...good, client_id: unregistered.client_id, redirect_uri: 'https://r.example/cb' },
        oauthError(
          'invalid_request',
          'This client is not registered for the authorization_code grant.',
        ),
      ],
      [
        { ...good, scope: 'mcp:devices openid' },
        oauthError('invalid_scope', `Unknown scope "openid"; scopes are ${ALL_SCOPES.join(', ')}.`),
      ],
      [
        { ...good, state: 'x'.repeat(1025) },
        oauthError('invalid_request', 'state must not be longer than 1024 characters.'),
      ],
    ];
    const repeated = await aliceBrowser.get(`${authorizePath(good)}&client_id=another`);
    expect(repeated.status).toBe(400);
    expect(repeated.body).toEqual(
      oauthError('invalid_request', 'The client id field must be a string.'),
    );
    for (const [query, body] of cases) {
      const res = await aliceBrowser.get(authorizePath(query));
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(body);
    }
  });
});

// spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/authorize
describe('POST /auth/authorize', () => {
  let client: Client;
  beforeAll(async () => {
    client = await approvedClient();
  });

  it('approves: 302 to redirect_uri with code, state and iss', async () => {
    const { fields } = await consent(aliceBrowser, client, { state: 'opaque state/&=' });
    const res = await aliceBrowser.post('/auth/authorize', { ...fields, approve: '1' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:45678/callback');
    expect([...location.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);
    expect(location.searchParams.get('state')).toBe('opaque state/&=');
    expect(location.searchParams.get('iss')).toBe(h.url);
    const row = h.appliance.db
      .prepare('SELECT * FROM oauth_authorization_codes ORDER BY id DESC LIMIT 1')
      .get() as any;
    expect(row.expires_at - row.created_at).toBe(600_000);
    expect(row).toMatchObject({
      client_id: client.client_id,
      user_id: alice.id,
      scopes: '["mcp:devices"]',
      consumed_at: null,
    });
    expect(JSON.stringify(row)).not.toContain(location.searchParams.get('code'));
  });

  it('denies: 302 with error=access_denied, and the form cannot be posted twice', async () => {
    const { fields } = await consent(aliceBrowser, client, { state: undefined });
    const res = await aliceBrowser.post('/auth/authorize', { ...fields, deny: '1' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      iss: h.url,
    });
    const replay = await aliceBrowser.post('/auth/authorize', { ...fields, approve: '1' });
    expect(Object.fromEntries(new URL(replay.headers.location as string).searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'No matching authorization request; start again from the application.',
      iss: h.url,
    });
  });

  it('redirects with an error when a field differs from the request shown on the consent page', async () => {
    for (const change of [
      { scope: 'mcp:devices mcp:system' },
      { code_challenge: challengeOf(verifier()) },
      { state: 'other' },
    ]) {
      const { fields } = await consent(aliceBrowser, client);
      const res = await aliceBrowser.post('/auth/authorize', {
        ...fields,
        ...change,
        approve: '1',
      });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location as string).searchParams.get('error')).toBe(
        'invalid_request',
      );
    }
    const { fields } = await consent(aliceBrowser, client);
    const plain = await aliceBrowser.post('/auth/authorize', {
      ...fields,
      code_challenge_method: 'plain',
      approve: '1',
    });
    expect(new URL(plain.headers.location as string).searchParams.get('error_description')).toBe(
      'code_challenge_method must be S256; plain is not supported.',
    );
    const badScope = await aliceBrowser.post('/auth/authorize', {
      ...fields,
      scope: 'root',
      approve: '1',
    });
    expect(new URL(badScope.headers.location as string).searchParams.get('error')).toBe(
      'invalid_scope',
    );
  });

  it('never redirects to an unregistered URI: 400 invalid_request as JSON', async () => {
    const { fields } = await consent(aliceBrowser, client);
    for (const change of [
      { redirect_uri: 'https://evil.example/cb' },
      { client_id: 'unknown' },
      { redirect_uri: undefined },
    ]) {
      const res = await aliceBrowser.post('/auth/authorize', {
        ...fields,
        ...change,
        approve: '1',
      });
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.body).toEqual(
        change.redirect_uri === undefined && 'redirect_uri' in change
          ? oauthError('invalid_request', 'client_id and redirect_uri are required.')
          : oauthError(
              'invalid_request',
              'Unknown client_id, or a redirect_uri not registered for it; not redirecting.',
            ),
      );
    }
  });

  it('refuses a post without the CSRF field (403 page, no redirect), a user without api (401 page) and no session (303)', async () => {
    const { fields } = await consent(aliceBrowser, client);
    const forged = await aliceBrowser.post('/auth/authorize', {
      ...fields,
      csrf: undefined,
      approve: '1',
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.location).toBeUndefined();
    expect(forged.body).toContain('This consent form expired or did not come from this appliance.');
    const bobs = await bobBrowser.post('/auth/authorize', { ...fields, approve: '1' });
    expect(bobs.status).toBe(401);
    expect(bobs.body).toContain('Your account does not hold the api permission');
    const anonymous = await new Browser().post('/auth/authorize', { ...fields, approve: '1' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toMatch(
      /^\/auth\/signin\?redirect=%2Fauth%2Fauthorize%3Fresponse_type%3Dcode%26client_id%3D/,
    );
    // The request is still there for alice.
    const ok = await aliceBrowser.post('/auth/authorize', { ...fields, approve: '1' });
    expect(new URL(ok.headers.location as string).searchParams.get('code')).toEqual(
      expect.any(String),
    );
  });
});

// spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/token
describe('POST /auth/token', () => {
  let client: Client;
  let confidential: Client;
  beforeAll(async () => {
    client = await approvedClient();
    confidential = await approvedClient({
      client_name: 'Confidential',
      token_endpoint_auth_method: 'client_secret_post',
    });
  });

  it('exchanges a code (form or JSON body) for {access_token, token_type, expires_in, refresh_token, scope}', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client, {
      scope: 'mcp:tools mcp:devices',
    });
    const res = await exchange(client, code, codeVerifier);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^apo_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^apr_/),
      scope: 'mcp:devices mcp:tools',
    });
    expect(tokenRow(res.body.access_token)).toMatchObject({
      name: 'MCP Client: MCP test client',
      kind: 'oauth',
      client_id: client.client_id,
      user_id: alice.id,
    });
    const second = await authorizationCode(aliceBrowser, client);
    const json = await call('POST', '/auth/token', {
      body: {
        grant_type: 'authorization_code',
        code: second.code,
        redirect_uri: client.redirect_uris[0],
        client_id: client.client_id,
        code_verifier: second.codeVerifier,
      },
    });
    expect(json.status).toBe(200);
  });

  it('authenticates confidential clients by client_secret_post: 401 invalid_client otherwise', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, confidential);
    const missing = await exchange(
      { ...confidential, client_secret: undefined },
      code,
      codeVerifier,
    );
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(
      oauthError(
        'invalid_client',
        'This client must authenticate with client_secret (client_secret_post).',
      ),
    );
    const wrong = await exchange(confidential, code, codeVerifier, { client_secret: 'wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(oauthError('invalid_client', 'Client authentication failed.'));
    // Neither attempt spent the code.
    const ok = await exchange(confidential, code, codeVerifier);
    expect(ok.status).toBe(200);
  });

  it('answers invalid_request, unsupported_grant_type and invalid_client for malformed requests', async () => {
    const cases: [Record<string, string>, number, object][] = [
      [{}, 400, oauthError('invalid_request', 'grant_type is required.')],
      [
        { grant_type: 'password', username: 'a', password: 'b' },
        400,
        oauthError(
          'unsupported_grant_type',
          `grant_type must be authorization_code, refresh_token or ${DEVICE_GRANT}.`,
        ),
      ],
      [
        { grant_type: 'client_credentials' },
        400,
        oauthError(
          'unsupported_grant_type',
          `grant_type must be authorization_code, refresh_token or ${DEVICE_GRANT}.`,
        ),
      ],
      [
        { grant_type: 'authorization_code', redirect_uri: 'x', client_id: 'x', code_verifier: 'x' },
        400,
        oauthError('invalid_request', 'code is required.'),
      ],
      [
        { grant_type: 'authorization_code', code: 'x', client_id: 'x', code_verifier: 'x' },
        400,
        oauthError('invalid_request', 'redirect_uri is required.'),
      ],
      [
        { grant_type: 'authorization_code', code: 'x', redirect_uri: 'x', code_verifier: 'x' },
        400,
        oauthError('invalid_request', 'client_id is required.'),
      ],
      [
        { grant_type: 'authorization_code', code: 'x', redirect_uri: 'x', client_id: 'x' },
        400,
        oauthError('invalid_request', 'code_verifier is required.'),
      ],
      [
        {
          grant_type: 'authorization_code',
          code: 'x',
          redirect_uri: 'x',
          client_id: 'nope',
          code_verifier: 'x',
        },
        401,
        oauthError('invalid_client', 'Unknown client.'),
      ],
      [
        { grant_type: 'refresh_token' },
        400,
        oauthError('invalid_request', 'refresh_token is required.'),
      ],
      [
        { grant_type: DEVICE_GRANT },
        400,
        oauthError('invalid_request', 'device_code is required.'),
      ],
    ];
    for (const [fields, status, body] of cases) {
      const res = await formPost('/auth/token', fields);
      expect(res.status, JSON.stringify(fields)).toBe(status);
      expect(res.body).toEqual(body);
    }
    const empty = await call('POST', '/auth/token');
    expect(empty.body).toEqual(oauthError('invalid_request', 'grant_type is required.'));
    const arrays = await call('POST', '/auth/token', {
      raw: { contentType: FORM, data: 'grant_type=authorization_code&grant_type=refresh_token' },
    });
    expect(arrays.status).toBe(400);
    expect(arrays.body).toEqual(
      oauthError('invalid_request', 'The grant type field must be a string.'),
    );
  });

  it('answers invalid_grant for a wrong code, client, redirect URI or verifier; each spends the code', async () => {
    const other = await approvedClient({ client_name: 'Other' });
    const attempts: [(code: string, v: string) => Promise<Response>, string][] = [
      [
        (_c, v) => exchange(client, 'not-a-code', v),
        'The authorization code is invalid or expired.',
      ],
      [(c, v) => exchange(other, c, v), 'The authorization code was issued to another client.'],
      [
        (c, v) => exchange(client, c, v, { redirect_uri: 'http://127.0.0.1:45678/other' }),
        'redirect_uri does not match the authorization request.',
      ],
      [
        (c) => exchange(client, c, verifier()),
        'PKCE verification failed: code_verifier does not match code_challenge.',
      ],
      [
        (c, v) => exchange(client, c, v.slice(0, 20)),
        'PKCE verification failed: code_verifier does not match code_challenge.',
      ],
    ];
    for (const [attempt, description] of attempts) {
      const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
      const res = await attempt(code, codeVerifier);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(oauthError('invalid_grant', description));
      if (description !== 'The authorization code is invalid or expired.') {
        const retry = await exchange(client, code, codeVerifier);
        expect(retry.body).toEqual(
          oauthError(
            'invalid_grant',
            'The authorization code was already used; the tokens issued from it are revoked.',
          ),
        );
      }
    }
  });

  it('a code expires after 10 minutes', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    h.clock.advance(600_000);
    const res = await exchange(client, code, codeVerifier);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      oauthError('invalid_grant', 'The authorization code is invalid or expired.'),
    );
  });

  it('a replayed code is refused and revokes the tokens issued from it (RFC 9700)', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const first = await exchange(client, code, codeVerifier);
    expect(first.status).toBe(200);
    expect((await call('GET', '/api/me', { token: first.body.access_token })).status).toBe(200);
    const replay = await exchange(client, code, codeVerifier);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual(
      oauthError(
        'invalid_grant',
        'The authorization code was already used; the tokens issued from it are revoked.',
      ),
    );
    expect((await call('GET', '/api/me', { token: first.body.access_token })).status).toBe(401);
    expect(
      (
        await formPost('/auth/token', {
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token,
        })
      ).body.error,
    ).toBe('invalid_grant');
  });

  it('two concurrent exchanges of one code: exactly one wins', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const results = await Promise.all([
      exchange(client, code, codeVerifier),
      exchange(client, code, codeVerifier),
      exchange(client, code, codeVerifier),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it('a user who lost api gets 403 access_denied; a deactivated user invalid_grant', async () => {
    const erin = await createUser(['api'], 'erin');
    const browser = await signedIn(erin);
    const lost = await authorizationCode(browser, client);
    const kept = await authorizationCode(browser, client);
    await setPermissions(erin.id, []);
    const res = await exchange(client, lost.code, lost.codeVerifier);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      oauthError('access_denied', 'The user no longer holds the api permission.'),
    );
    await setPermissions(erin.id, ['api']);
    expect(
      (
        await call('POST', '/api/saveUser', {
          token: adminToken,
          body: { user: erin.id, active: false },
        })
      ).body,
    ).toEqual({ status: 201 });
    const inactive = await exchange(client, kept.code, kept.codeVerifier);
    expect(inactive.status).toBe(400);
    expect(inactive.body).toEqual(
      oauthError('invalid_grant', 'The user of this grant no longer exists or is inactive.'),
    );
  });

  it('omits the refresh token for a client registered without the refresh_token grant', async () => {
    const codeOnly = await approvedClient({
      client_name: 'Code only',
      grant_types: ['authorization_code'],
    });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, codeOnly);
    const res = await exchange(codeOnly, code, codeVerifier);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'scope',
      'token_type',
    ]);
  });
});

// spec: part1 > Token management > POST /api/oauth/token/refresh (RFC 6749 section 6)
describe('refresh-token rotation and reuse detection', () => {
  let client: Client;
  beforeAll(async () => {
    client = await approvedClient({ client_name: 'Refresher' });
  });

  async function grant(scope?: string) {
    const { code, codeVerifier } = await authorizationCode(
      aliceBrowser,
      client,
      scope ? { scope } : {},
    );
    const res = await exchange(client, code, codeVerifier);
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  }

  it('rotates at both endpoints: a new access token and a new refresh token; the old access token stays valid until it expires', async () => {
    const first = await grant('mcp:devices mcp:logs');
    const second = await formPost('/api/oauth/token/refresh', {
      refresh_token: first.refresh_token,
      client_id: client.client_id,
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      access_token: expect.stringMatching(/^apo_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^apr_/),
      scope: 'mcp:devices mcp:logs',
    });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    const third = await call('POST', '/auth/token', {
      body: {
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token,
        scope: 'mcp:logs',
      },
    });
    expect(third.status).toBe(200);
    expect(third.body.scope).toBe('mcp:logs');
    expect(tokenRow(third.body.access_token)).toMatchObject({
      name: 'MCP Client: Refresher',
      scopes: '["mcp:logs"]',
      client_id: client.client_id,
    });
    expect((await call('GET', '/api/me', { token: first.access_token })).status).toBe(200);
  });

  it('a replayed refresh token revokes the whole chain', async () => {
    const first = await grant();
    const second = (
      await formPost('/api/oauth/token/refresh', { refresh_token: first.refresh_token })
    ).body;
    const replay = await formPost('/api/oauth/token/refresh', {
      refresh_token: first.refresh_token,
    });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual(
      oauthError(
        'invalid_grant',
        'The refresh token was already used; every token of this grant is now revoked.',
      ),
    );
    for (const token of [first.access_token, second.access_token])
      expect((await call('GET', '/api/me', { token })).status).toBe(401);
    const next = await formPost('/api/oauth/token/refresh', {
      refresh_token: second.refresh_token,
    });
    expect(next.body).toEqual(oauthError('invalid_grant', 'The refresh token was revoked.'));
    expect(
      h.appliance.db
        .prepare(
          'SELECT revoked_reason FROM oauth_token_families f JOIN oauth_refresh_tokens r ON r.family_id = f.id WHERE r.token_hash = ?',
        )
        .get(crypto.createHash('sha256').update(first.refresh_token).digest()),
    ).toEqual({ revoked_reason: 'refresh_token_reuse' });
  });

  it('refuses invalid requests without spending the refresh token', async () => {
    const tokens = await grant('mcp:devices');
    const cases: [Record<string, string>, number, object][] = [
      [{}, 400, oauthError('invalid_request', 'refresh_token is required.')],
      [
        { refresh_token: 'apr_unknown' },
        400,
        oauthError('invalid_grant', 'The refresh token is invalid.'),
      ],
      [
        { refresh_token: tokens.refresh_token, grant_type: 'authorization_code' },
        400,
        oauthError('unsupported_grant_type', 'grant_type must be refresh_token (or omitted).'),
      ],
      [
        { refresh_token: tokens.refresh_token, client_id: 'someone-else' },
        400,
        oauthError('invalid_grant', 'This token was issued to another client.'),
      ],
      [
        { refresh_token: tokens.refresh_token, scope: 'mcp:devices mcp:system' },
        400,
        oauthError('invalid_scope', 'The requested scope exceeds the scope of the grant.'),
      ],
      [
        { refresh_token: tokens.refresh_token, scope: 'everything' },
        400,
        oauthError('invalid_scope', 'Unknown scope "everything".'),
      ],
    ];
    for (const [fields, status, body] of cases) {
      const res = await formPost('/api/oauth/token/refresh', fields);
      expect(res.status, JSON.stringify(fields)).toBe(status);
      expect(res.body).toEqual(body);
    }
    expect(
      (await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token })).status,
    ).toBe(200);
  });

  it('confidential clients authenticate to refresh: 401 invalid_client', async () => {
    const confidential = await approvedClient({
      client_name: 'Secretive',
      token_endpoint_auth_method: 'client_secret_post',
    });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, confidential);
    const tokens = (await exchange(confidential, code, codeVerifier)).body;
    const missing = await formPost('/auth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: confidential.client_id,
    });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(
      oauthError(
        'invalid_client',
        'This client must authenticate with client_secret (client_secret_post).',
      ),
    );
    const ok = await formPost('/auth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: confidential.client_id,
      client_secret: confidential.client_secret!,
    });
    expect(ok.status).toBe(200);
  });

  it('an expired refresh token is refused', async () => {
    const tokens = await grant();
    h.appliance.db
      .prepare('UPDATE oauth_refresh_tokens SET expires_at = ? WHERE token_hash = ?')
      .run(h.clock.now() - 1, crypto.createHash('sha256').update(tokens.refresh_token).digest());
    const res = await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token });
    expect(res.body).toEqual(oauthError('invalid_grant', 'The refresh token has expired.'));
  });

  it('revoking the access token from the token list (DELETE /api/tokens/{id}) ends the grant', async () => {
    const tokens = await grant();
    const aliceToken = await h.login(alice.username, alice.password);
    expect(
      (
        await call('DELETE', `/api/tokens/${tokenRow(tokens.access_token)!.id}`, {
          token: aliceToken,
        })
      ).status,
    ).toBe(200);
    const res = await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token });
    expect(res.body).toEqual(oauthError('invalid_grant', 'The tokens of this grant were revoked.'));
  });

  it("revoking all of a user's tokens (revoke-all) ends their grants too", async () => {
    const hank = await createUser(['api'], 'hank');
    const browser = await signedIn(hank);
    const { code, codeVerifier } = await authorizationCode(browser, client);
    const tokens = (await exchange(client, code, codeVerifier)).body;
    const revoked = await call('POST', `/api/users/${hank.id}/tokens/revoke-all`, {
      token: adminToken,
    });
    expect(revoked.status).toBe(200);
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(401);
    const res = await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(oauthError('invalid_grant', 'The tokens of this grant were revoked.'));
  });

  it('a user who lost api cannot refresh (403 access_denied); regaining it lets the same refresh token work', async () => {
    const frank = await createUser(['api'], 'frank');
    const browser = await signedIn(frank);
    const { code, codeVerifier } = await authorizationCode(browser, client);
    const tokens = (await exchange(client, code, codeVerifier)).body;
    await setPermissions(frank.id, ['devices']);
    const res = await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      oauthError('access_denied', 'The user no longer holds the api permission.'),
    );
    await setPermissions(frank.id, ['api', 'devices']);
    expect(
      (await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token })).status,
    ).toBe(200);
  });
});

// spec: part1 > Token management > POST /api/oauth/token/revoke (RFC 7009)
describe('POST /api/oauth/token/revoke', () => {
  let client: Client;
  beforeAll(async () => {
    client = await approvedClient({ client_name: 'Revoker' });
  });

  it('revokes a refresh token and every token of its grant; answers 200 {} also for unknown tokens', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const tokens = (await exchange(client, code, codeVerifier)).body;
    const res = await formPost('/api/oauth/token/revoke', {
      token: tokens.refresh_token,
      token_type_hint: 'refresh_token',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(401);
    expect(
      (await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token })).body
        .error,
    ).toBe('invalid_grant');
    const unknown = await formPost('/api/oauth/token/revoke', { token: 'whatever' });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({});
  });

  it('revokes an OAuth access token (JSON body too) and leaves personal and sign-in tokens alone', async () => {
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const tokens = (await exchange(client, code, codeVerifier)).body;
    const res = await call('POST', '/api/oauth/token/revoke', {
      body: { token: tokens.access_token },
    });
    expect(res.status).toBe(200);
    expect(tokenRow(tokens.access_token)!.revoked_at).not.toBeNull();
    const aliceToken = await h.login(alice.username, alice.password);
    expect((await formPost('/api/oauth/token/revoke', { token: aliceToken })).status).toBe(200);
    expect((await call('GET', '/api/me', { token: aliceToken })).status).toBe(200);
  });

  it('refuses a missing token, and a confidential client that does not authenticate', async () => {
    const missing = await formPost('/api/oauth/token/revoke', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(oauthError('invalid_request', 'token is required.'));
    const confidential = await approvedClient({
      client_name: 'Secret revoker',
      token_endpoint_auth_method: 'client_secret_post',
    });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, confidential);
    const tokens = (await exchange(confidential, code, codeVerifier)).body;
    const unauthenticated = await formPost('/api/oauth/token/revoke', {
      token: tokens.refresh_token,
      client_id: confidential.client_id,
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toEqual(
      oauthError(
        'invalid_client',
        'This client must authenticate with client_secret (client_secret_post).',
      ),
    );
    const foreign = await formPost('/api/oauth/token/revoke', {
      token: tokens.access_token,
      client_id: client.client_id,
    });
    expect(foreign.status).toBe(401);
    expect(foreign.body).toEqual(
      oauthError('invalid_client', 'This token was issued to another client.'),
    );
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(200);
    expect(
      (
        await formPost('/api/oauth/token/revoke', {
          token: tokens.refresh_token,
          client_id: confidential.client_id,
          client_secret: confidential.client_secret!,
        })
      ).status,
    ).toBe(200);
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(401);
  });
});

// spec: part1 > Token management > POST /api/oauth/token/introspect (RFC 7662)
describe('POST /api/oauth/token/introspect', () => {
  it('describes an active token {active, client_id, username, sub, scope, exp} and records its use', async () => {
    const client = await approvedClient({ client_name: 'Introspected' });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client, {
      scope: 'mcp:vne mcp:devices',
    });
    const tokens = (await exchange(client, code, codeVerifier)).body;
    const row = tokenRow(tokens.access_token)!;
    expect(row.last_used_at).toBeNull();
    const res = await introspect(tokens.access_token);
    expect(res).toEqual({
      active: true,
      client_id: client.client_id,
      username: alice.username,
      sub: alice.id,
      scope: 'mcp:devices mcp:vne',
      exp: Math.floor(row.expires_at / 1000),
    });
    // The token-usage engine writes last_used_at every 5 s (and when it stops): make it write now.
    await h.appliance.engines.find((e) => e.name === 'token-usage')!.stop();
    await h.appliance.engines.find((e) => e.name === 'token-usage')!.start();
    expect(tokenRow(tokens.access_token)!.last_used_at).toEqual(expect.any(Number));
    const json = await call('POST', '/api/oauth/token/introspect', {
      body: { token: tokens.refresh_token },
    });
    expect(json.body).toEqual({
      active: true,
      client_id: client.client_id,
      username: alice.username,
      sub: alice.id,
      scope: 'mcp:devices mcp:vne',
      exp: expect.any(Number),
    });
  });

  it('answers {active: false} for unknown, revoked and expired tokens', async () => {
    const device = await startDevice();
    await aliceBrowser.enterCode(device.user_code);
    const tokens = (await pollDevice(device.device_code)).body;
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, client_id: null });
    expect(await introspect('nothing-like-a-token')).toEqual({ active: false });
    h.clock.advance(3_600_000);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await formPost('/api/oauth/token/revoke', { token: tokens.refresh_token });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
  });

  it('answers 400 invalid_request without a token', async () => {
    const res = await formPost('/api/oauth/token/introspect', {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual(oauthError('invalid_request', 'token is required.'));
  });
});

// spec: part1 > States and transitions > Token: client rejected
describe('deleting a client', () => {
  it('revokes its access tokens and drops its refresh chains', async () => {
    const client = await approvedClient({ client_name: 'Doomed' });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const tokens = (await exchange(client, code, codeVerifier)).body;
    const pendingCode = await authorizationCode(aliceBrowser, client);
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(200);
    expect(
      (await call('DELETE', `/api/oauth/clients/${client.client_id}`, { token: operatorToken }))
        .body,
    ).toEqual({ deleted: true });
    expect((await call('GET', '/api/me', { token: tokens.access_token })).status).toBe(401);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(
      (await formPost('/api/oauth/token/refresh', { refresh_token: tokens.refresh_token })).body,
    ).toEqual(oauthError('invalid_grant', 'The refresh token was revoked.'));
    expect((await exchange(client, pendingCode.code, pendingCode.codeVerifier)).body).toEqual(
      oauthError('invalid_client', 'Unknown client.'),
    );
  });
});

// spec: part1 > Authentication 1 and 3
describe('OAuth tokens act as their user', () => {
  it('never exceed the user: alice (api only) cannot create users with her OAuth token, whatever its scopes', async () => {
    const client = await approvedClient({ client_name: 'All scopes' });
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client, {
      scope: ALL_SCOPES.join(' '),
    });
    const tokens = (await exchange(client, code, codeVerifier)).body;
    expect(tokens.scope).toBe(ALL_SCOPES.join(' '));
    expect((await call('GET', '/api/me', { token: tokens.access_token })).body.username).toBe(
      alice.username,
    );
    const denied = await call('POST', '/api/createUser', {
      token: tokens.access_token,
      body: {
        first_name: 'a',
        last_name: 'b',
        email: 'x@example.test',
        username: 'x',
        password: 'Passw0rd-x',
      },
    });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(NO_PERMISSION);
  });
});

// spec: part1 > Errors > "OAuth error codes used"
describe("the spec's OAuth error list, each with its trigger", () => {
  it('authorization_pending: polling before the user approved', async () => {
    expect((await pollDevice((await startDevice()).device_code)).body.error).toBe(
      'authorization_pending',
    );
  });
  it('expired_token: polling a used device code', async () => {
    const device = await startDevice();
    await aliceBrowser.enterCode(device.user_code);
    expect((await pollDevice(device.device_code)).status).toBe(200);
    expect((await pollDevice(device.device_code)).body.error).toBe('expired_token');
  });
  it('unsupported_response_type: response_type other than code', async () => {
    const res = await aliceBrowser.get(
      authorizePath({
        response_type: 'token',
        client_id: 'x',
        redirect_uri: 'https://x.example/cb',
        code_challenge: challengeOf(verifier()),
      }),
    );
    expect(res.status).toBe(400);
    expect((res.body as unknown as { error: string }).error).toBe('unsupported_response_type');
  });
  it('invalid_request: a token request without grant_type', async () => {
    expect((await formPost('/auth/token', {})).body.error).toBe('invalid_request');
  });
  it('invalid_scope: a scope outside the eight', async () => {
    expect(
      (
        await call('POST', '/api/oauth/device/authorize', {
          body: { client_name: 'x', scopes: ['root'] },
        })
      ).body.error,
    ).toBe('invalid_scope');
  });
  it('unsupported_grant_type: the password grant', async () => {
    expect((await formPost('/auth/token', { grant_type: 'password' })).body.error).toBe(
      'unsupported_grant_type',
    );
  });
  it('invalid_grant: an unknown authorization code', async () => {
    const client = await approvedClient();
    expect((await exchange(client, 'bogus', verifier())).body.error).toBe('invalid_grant');
  });
  it('invalid_client: a wrong client secret (401)', async () => {
    const client = await approvedClient({ token_endpoint_auth_method: 'client_secret_post' });
    const res = await exchange(client, 'bogus', verifier(), { client_secret: 'nope' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
  it('access_denied: the user denies on the consent page (redirect), and a user without api redeems (403)', async () => {
    const client = await approvedClient();
    const { fields } = await consent(aliceBrowser, client);
    const denied = await aliceBrowser.post('/auth/authorize', { ...fields, deny: '1' });
    expect(new URL(denied.headers.location as string).searchParams.get('error')).toBe(
      'access_denied',
    );
    const gina = await createUser(['api'], 'gina');
    const browser = await signedIn(gina);
    const device = await startDevice();
    await browser.enterCode(device.user_code);
    await setPermissions(gina.id, []);
    const res = await pollDevice(device.device_code);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('access_denied');
  });
  it('invalid_redirect_uri: registering a plain-http redirect to a public host', async () => {
    expect(
      (
        await call('POST', '/auth/register', {
          body: { client_name: 'x', redirect_uris: ['http://public.example/cb'] },
        })
      ).body.error,
    ).toBe('invalid_redirect_uri');
  });
  it('server_error: registering the 501st client (503)', async () => {
    const insert = h.appliance.db.prepare(
      `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, created_at, approved_at)
       VALUES (?, 'filler', '[]', '[]', '["code"]', 'none', 0, 0)`,
    );
    // The cap counts approved clients (issue 11).
    const existing = (
      h.appliance.db
        .prepare('SELECT COUNT(*) AS n FROM oauth_clients WHERE approved_at IS NOT NULL')
        .get() as { n: number }
    ).n;
    h.appliance.db.transaction(() => {
      for (let i = existing; i < 500; i++) insert.run(`cap-${i}`);
    })();
    const res = await call('POST', '/auth/register', {
      body: { client_name: 'x', redirect_uris: ['https://x.example/cb'] },
    });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('server_error');
    h.appliance.db.prepare("DELETE FROM oauth_clients WHERE client_id LIKE 'cap-%'").run();
  });
});

// spec: part1 > Limits; General conventions 10
describe('rate limits (appliance with the default configuration)', () => {
  let plain: Harness;
  beforeAll(async () => {
    plain = await startAppliance();
  });
  afterAll(async () => {
    await plain?.close();
  });

  /**
   * The limit's window runs on the appliance's clock and ends when Retry-After says: `send` is
   * still refused 2 s before, served after (a refused request takes far less than the 1 s of
   * rounding left).
   */
  async function expectWindowReopens(send: () => Promise<Response>): Promise<void> {
    const refused = await send();
    expect(refused.status).toBe(429);
    const seconds = Number(refused.headers['retry-after']);
    expect(seconds).toBeGreaterThan(2);
    expect(seconds).toBeLessThanOrEqual(PER_MINUTE / 1000);
    plain.clock.advance((seconds - 2) * 1000);
    expect((await send()).status, 'just before the window ends').toBe(429);
    plain.clock.advance(2000);
    expect((await send()).status, 'once the window has ended').not.toBe(429);
  }

  it('the /api/oauth/* group and POST /auth/token share one bucket of 30 per minute per client address: 429 with Retry-After', async () => {
    const hit = (i: number) => {
      switch (i % 4) {
        case 0:
          return plain.request('POST', '/api/oauth/device/authorize', {
            body: { client_name: 'x' },
          });
        case 1:
          return plain.request('POST', '/api/oauth/token/introspect', { body: { token: 'x' } });
        case 2:
          return plain.request('POST', '/auth/token', {
            raw: { contentType: FORM, data: 'grant_type=password' },
          });
        default:
          return plain.request('POST', '/api/oauth/device/token', { body: { device_code: 'x' } });
      }
    };
    for (let i = 0; i < 30; i++) expect((await hit(i)).status).not.toBe(429);
    for (const res of [
      await plain.request('POST', '/auth/token', {
        raw: { contentType: FORM, data: 'grant_type=password' },
      }),
      await plain.request('POST', '/api/oauth/token/revoke', {
        body: { token: 'x' },
        headers: { 'x-forwarded-for': '203.0.113.9' },
      }),
    ]) {
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.body).toEqual({
        error: 'temporarily_unavailable',
        error_description: expect.stringMatching(/^Too Many Attempts\. Retry after \d+ seconds\.$/),
      });
    }
    // The discovery documents are not throttled, and registration has its own bucket.
    expect((await plain.request('GET', '/.well-known/oauth-authorization-server')).status).toBe(
      200,
    );
    expect(
      (
        await plain.request('POST', '/auth/register', {
          body: { client_name: 'x', redirect_uris: ['https://x.example/cb'] },
        })
      ).status,
    ).toBe(201);
    // The window is a minute on the appliance's clock: still closed just before, open after.
    await expectWindowReopens(() => hit(0));
  });

  it('POST /auth/register: 10 per minute per client address', async () => {
    // A fresh window (the previous test spent one registration in the current one).
    plain.clock.advance(PER_MINUTE);
    const register = () => plain.request('POST', '/auth/register', { body: {} });
    for (let i = 1; i <= 10; i++) {
      const res = await register();
      expect(res.status, `request ${i}`).toBe(422);
      expect(res.body.message, `request ${i}`).toBe('The client name field is required.');
    }
    const limited = await register();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/^Too Many Attempts\. Retry after \d+ seconds\.$/),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    await expectWindowReopens(register);
  });

  it('POST /auth/signin: 10 per minute per client address, answered with a page', async () => {
    const post = () =>
      plain.request('POST', '/auth/signin', {
        raw: { contentType: FORM, data: 'username=a&password=b' },
        headers: { accept: 'text/html' },
      });
    for (let i = 1; i <= 10; i++) expect((await post()).status, `request ${i}`).toBe(403);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(limited.headers['content-security-policy']).toBe(HTML_CSP);
    expect(limited.body).toContain(
      'Too many requests from your address. Wait a minute and try again.',
    );
    await expectWindowReopens(post);
  });

  it('ignores X-Forwarded-Host and X-Forwarded-Proto without a trusted proxy', async () => {
    const res = await plain.request('GET', '/.well-known/oauth-authorization-server', {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
    });
    expect(res.body.issuer).toBe(plain.url);
  });
});

// spec: part1 > OAuth device-code flow; Errors
describe('secrets never leak', () => {
  it('stores each secret as its SHA-256 digest (computed here, not by the code under test), never the plaintext', async () => {
    const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest();
    const db = h.appliance.db;
    const expectDigest = (stored: unknown, secret: string, what: string) => {
      expect(Buffer.isBuffer(stored), `${what} is a BLOB`).toBe(true);
      expect((stored as Buffer).toString('hex'), what).toBe(sha256(secret).toString('hex'));
    };

    // Client secret (a confidential client, looked up by its public id).
    const client = await approvedClient({
      client_name: 'Digest check',
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    const clientRow = db
      .prepare('SELECT client_secret_hash FROM oauth_clients WHERE client_id = ?')
      .get(client.client_id) as { client_secret_hash: unknown };
    expectDigest(clientRow.client_secret_hash, client.client_secret as string, 'client secret');

    // Authorization code, before it is exchanged (looked up by the client, which has only it).
    const { code, codeVerifier } = await authorizationCode(aliceBrowser, client);
    const codeRows = db
      .prepare('SELECT code_hash FROM oauth_authorization_codes WHERE client_id = ?')
      .all(client.client_id) as { code_hash: unknown }[];
    expect(codeRows).toHaveLength(1);
    expectDigest(codeRows[0]!.code_hash, code, 'authorization code');

    // Access and refresh tokens issued for it.
    const issued = await exchange(client, code, codeVerifier);
    expect(issued.status).toBe(200);
    const accessRows = db
      .prepare('SELECT id, token_hash FROM access_tokens WHERE client_id = ?')
      .all(client.client_id) as { id: number; token_hash: unknown }[];
    expect(accessRows).toHaveLength(1);
    expectDigest(accessRows[0]!.token_hash, issued.body.access_token, 'access token');
    const refreshRows = db
      .prepare('SELECT token_hash FROM oauth_refresh_tokens WHERE access_token_id = ?')
      .all(accessRows[0]!.id) as { token_hash: unknown }[];
    expect(refreshRows).toHaveLength(1);
    expectDigest(refreshRows[0]!.token_hash, issued.body.refresh_token, 'refresh token');

    // Device code and user code (a device flow with a name no other test uses).
    const device = await startDevice({ client_name: 'Digest check device' });
    const deviceRows = db
      .prepare(
        "SELECT device_code_hash, user_code_hash FROM oauth_device_codes WHERE client_name = 'Digest check device'",
      )
      .all() as { device_code_hash: unknown; user_code_hash: unknown }[];
    expect(deviceRows).toHaveLength(1);
    expectDigest(deviceRows[0]!.device_code_hash, device.device_code, 'device code');
    expectDigest(deviceRows[0]!.user_code_hash, device.user_code, 'user code');

    // No plaintext anywhere in the OAuth tables or the token table.
    const secrets = [
      client.client_secret as string,
      code,
      issued.body.access_token as string,
      issued.body.refresh_token as string,
      device.device_code,
      device.user_code,
    ];
    const tables = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'oauth_%' OR name = 'access_tokens')",
        )
        .all() as { name: string }[]
    ).map((t) => t.name);
    for (const table of tables) {
      const dump = JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all());
      for (const secret of secrets) expect(dump, table).not.toContain(secret);
    }
  });

  it('stores only digests of device codes, user codes, authorization codes, refresh tokens and client secrets', async () => {
    const rows = h.appliance.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'oauth_%'")
      .all() as { name: string }[];
    expect(rows.map((r) => r.name).sort()).toEqual([
      'oauth_authorization_codes',
      'oauth_clients',
      'oauth_consent_requests',
      'oauth_device_codes',
      'oauth_family_access_tokens',
      'oauth_refresh_tokens',
      'oauth_token_families',
      'oauth_user_code_failures',
    ]);
    const secretColumns = h.appliance.db
      .prepare(
        "SELECT m.name AS tbl, p.name AS col, p.type FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name LIKE 'oauth_%' AND (p.name LIKE '%hash%' OR p.name LIKE '%secret%' OR p.name LIKE '%code%')",
      )
      .all() as { tbl: string; col: string; type: string }[];
    for (const column of secretColumns.filter(
      (c) => !['code_challenge', 'redirect_uri'].includes(c.col),
    )) {
      expect(`${column.tbl}.${column.col} ${column.type}`).toMatch(/_hash BLOB$/);
    }
  });
});
