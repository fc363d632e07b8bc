/**
 * HTTP-level tests of sign-in and the browser session (spec part 1 > Sign-in and session,
 * Authentication, Errors, Limits).
 *
 * Sign-in is limited to 10 requests per minute per client address. The shared appliance trusts
 * X-Forwarded-For from loopback (APPLIANCE_TRUSTED_PROXIES), so each sign-in below comes from its
 * own client address and the tests do not throttle each other; the limit itself is tested on a
 * separate appliance with the default configuration (no trusted proxy).
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { hashToken } from '../../platform/security/tokens.js';
import { totpCodeAt } from '../../platform/security/totp.js';

const INVALID = { status: false, hasError: true, message: 'Invalid Username/Password' };
const TOTP_REQUIRED = { status: false, hasError: true, message: 'TOTP Required' };
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const ME_KEYS = [
  'active',
  'auth_source',
  'created_at',
  'email',
  'first_name',
  'id',
  'last_name',
  'updated_at',
  'username',
];
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/;
const HOUR_MS = 3_600_000;

interface Account {
  id: number;
  token: string;
  username: string;
  password: string;
}

/** Every response: security headers present, never a stack trace or an internal path. */
async function call<T = any>(
  h: Harness,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Response<T>> {
  const res = await h.request<T>(method, path, options);
  expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
  return res;
}

function sessionCookieHeader(res: Response): string | undefined {
  return [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('appliance_session='));
}

/** The `name=value` pair to send back, from a response that set the session cookie. */
function cookieOf(res: Response): string {
  const header = sessionCookieHeader(res);
  if (!header) throw new Error(`no session cookie in ${JSON.stringify(res.headers)}`);
  return header.split(';')[0] as string;
}

const browserId = (fingerprint = 'fp1') => `spa:${crypto.randomUUID()}:${fingerprint}`;

describe('sign-in and session (shared appliance)', () => {
  let h: Harness;
  let admin: Account;
  let alice: Account;
  let client = 0;

  const req = <T = any>(method: string, path: string, options: RequestOptions = {}) =>
    call<T>(h, method, path, options);

  /** POST /api/login from a fresh client address (see the header comment). */
  const signIn = (body: unknown, options: Omit<RequestOptions, 'body'> = {}) => {
    client++;
    const address = `198.51.${Math.floor(client / 250)}.${(client % 250) + 1}`;
    return req('POST', '/api/login', {
      ...options,
      body,
      headers: { 'x-forwarded-for': address, ...options.headers },
    });
  };

  const tokenRow = (plaintext: string) =>
    h.appliance.db
      .prepare('SELECT * FROM access_tokens WHERE token_hash = ?')
      .get(hashToken(plaintext)) as
      | {
          id: number;
          user_id: number;
          name: string;
          kind: string;
          created_at: number;
          expires_at: number;
          revoked_at: number | null;
        }
      | undefined;
  const counts = () =>
    h.appliance.db
      .prepare(
        'SELECT (SELECT COUNT(*) FROM access_tokens) AS tokens, (SELECT COUNT(*) FROM web_sessions) AS sessions',
      )
      .get() as {
      tokens: number;
      sessions: number;
    };
  const meStatus = async (token: string) => (await req('GET', '/api/me', { token })).status;
  const sessionLive = async (cookie: string) => {
    const res = await req('POST', '/api/information', { cookie });
    expect(res.status).toBe(200);
    return res.body.data.sessionId as boolean;
  };

  beforeAll(async () => {
    h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
    const res = await signIn({ email: 'admin', password: ADMIN_PASSWORD });
    admin = { id: 1, token: res.body.access_token, username: 'admin', password: ADMIN_PASSWORD };
    alice = await h.userWith(['api'], { username: 'alice' });
  });

  afterAll(async () => {
    await h?.close();
  });

  // spec: part1 > Sign-in and session > POST /api/login
  describe('POST /api/login', () => {
    it('signs in by username: HTTP 200 {status: 201, hasError: false, user: {id, email, name}, access_token}', async () => {
      const res = await signIn({ email: alice.username, password: alice.password });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'hasError', 'status', 'user']);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        user: {
          id: alice.id,
          email: 'alice@example.test',
          name: expect.stringMatching(/^Test User \d+$/),
        },
        access_token: expect.stringMatching(/^\S{32,}$/),
      });
      const me = await req('GET', '/api/me', { token: res.body.access_token });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(alice.id);
      expect(res.body.user.name).toBe(`${me.body.first_name} ${me.body.last_name}`);
      expect(tokenRow(res.body.access_token)).toMatchObject({
        user_id: alice.id,
        kind: 'login',
        revoked_at: null,
      });
    });

    it('signs in by email address', async () => {
      const res = await signIn({ email: 'alice@example.test', password: alice.password });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 201,
        hasError: false,
        user: { id: alice.id, email: 'alice@example.test' },
      });
      expect(await meStatus(res.body.access_token)).toBe(200);
    });

    it('sets the appliance_session cookie (HttpOnly, Secure, SameSite=Lax) that counts as a live browser session', async () => {
      const res = await signIn({ email: alice.username, password: alice.password });
      const header = sessionCookieHeader(res);
      expect(header).toBeDefined();
      const attributes = header!.split(';').map((part) => part.trim().toLowerCase());
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('secure');
      expect(attributes).toContain('samesite=lax');
      expect(attributes).toContain('path=/');
      expect(await sessionLive(cookieOf(res))).toBe(true);
    });

    it("refuses a wrong password and an unknown user alike with HTTP 200 {status: false, hasError: true, message: 'Invalid Username/Password'}", async () => {
      const before = counts();
      for (const body of [
        { email: alice.username, password: 'Wrong-Passw0rd' },
        { email: alice.username, password: alice.password.toUpperCase() },
        { email: 'nobody-here', password: alice.password },
        { email: 'nobody@example.test', password: 'whatever' },
      ]) {
        const res = await signIn(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(INVALID);
        expect(sessionCookieHeader(res)).toBeUndefined();
      }
      expect(counts()).toEqual(before);
    });

    it('refuses a deactivated user the same way, even with the right password', async () => {
      const bob = await h.userWith([], { username: 'bob' });
      const saved = await req('POST', '/api/saveUser', {
        token: admin.token,
        body: { user: bob.id, active: false },
      });
      expect(saved.body).toEqual({ status: 201 });
      const before = counts();
      for (const login of [bob.username, 'bob@example.test']) {
        const res = await signIn({ email: login, password: bob.password });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(INVALID);
      }
      expect(counts()).toEqual(before);
      expect(await meStatus(bob.token)).toBe(401);
    });

    it('answers 422 {message, errors} when email or password is missing or empty', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ password: 'x' }, 'email', 'The email field is required.'],
        [{ email: '', password: 'x' }, 'email', 'The email field is required.'],
        [{ email: 'admin' }, 'password', 'The password field is required.'],
        [{ email: 'admin', password: '' }, 'password', 'The password field is required.'],
        [{ email: 42, password: 'x' }, 'email', 'The email field must be a string.'],
      ];
      for (const [body, field, message] of cases) {
        const res = await signIn(body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body).toEqual({ message, errors: { [field]: [message] } });
      }
    });

    it('answers 422 when the email is longer than 255 characters (255 is accepted)', async () => {
      const long = await signIn({ email: 'a'.repeat(256), password: 'x' });
      expect(long.status).toBe(422);
      const message = 'The email field must not be greater than 255 characters.';
      expect(long.body).toEqual({ message, errors: { email: [message] } });
      const limit = await signIn({ email: 'a'.repeat(255), password: 'x' });
      expect(limit.status).toBe(200);
      expect(limit.body).toEqual(INVALID);
    });

    it("names the token after browser_id, or 'authToken' without one", async () => {
      const id = browserId();
      const named = await signIn({
        email: alice.username,
        password: alice.password,
        browser_id: id,
      });
      expect(named.body.status).toBe(201);
      expect(tokenRow(named.body.access_token)?.name).toBe(id);
      let listing = await req('GET', '/api/tokens', { token: named.body.access_token });
      expect(listing.body.tokens[0]).toMatchObject({
        id: tokenRow(named.body.access_token)!.id,
        name: id,
        revoked: false,
      });

      const plain = await signIn({ email: alice.username, password: alice.password });
      expect(tokenRow(plain.body.access_token)?.name).toBe('authToken');
      listing = await req('GET', '/api/tokens', { token: plain.body.access_token });
      expect(listing.body.tokens[0]).toMatchObject({
        id: tokenRow(plain.body.access_token)!.id,
        name: 'authToken',
        revoked: false,
      });
    });

    it('answers 422 for a browser_id not of the form spa:<uuid>:<fp>', async () => {
      const message = 'The browser id field format is invalid.';
      const before = counts();
      for (const bad of [
        'browser-1',
        'spa:1234:fp',
        `spa:${crypto.randomUUID()}:`,
        `spa:${crypto.randomUUID()}:has space`,
        `web:${crypto.randomUUID()}:fp`,
      ]) {
        const res = await signIn({
          email: alice.username,
          password: alice.password,
          browser_id: bad,
        });
        expect(res.status, bad).toBe(422);
        expect(res.body).toEqual({ message, errors: { browser_id: [message] } });
      }
      expect(counts()).toEqual(before);
    });

    it('revokes the earlier token of the same browser on a second sign-in (and ends its session); other browsers keep theirs', async () => {
      const id = browserId('laptop');
      const elsewhere = await signIn({
        email: alice.username,
        password: alice.password,
        browser_id: browserId('phone'),
      });
      const first = await signIn({
        email: alice.username,
        password: alice.password,
        browser_id: id,
      });
      const firstCookie = cookieOf(first);
      expect(await meStatus(first.body.access_token)).toBe(200);
      expect(await sessionLive(firstCookie)).toBe(true);

      const second = await signIn({
        email: alice.username,
        password: alice.password,
        browser_id: id,
      });
      expect(second.body.status).toBe(201);
      expect(await meStatus(first.body.access_token)).toBe(401);
      expect(await sessionLive(firstCookie)).toBe(false);
      expect(await meStatus(second.body.access_token)).toBe(200);
      expect(await sessionLive(cookieOf(second))).toBe(true);
      expect(await meStatus(elsewhere.body.access_token)).toBe(200);
      const listing = await req('GET', '/api/tokens', { token: second.body.access_token });
      expect(
        listing.body.tokens.find(
          (t: { id: number }) => t.id === tokenRow(first.body.access_token)!.id,
        ),
      ).toMatchObject({ name: id, revoked: true });
    });

    it('refuses text/plain and form bodies with 415, before reading them', async () => {
      const before = counts();
      for (const raw of [
        {
          contentType: 'text/plain',
          data: JSON.stringify({ email: 'admin', password: ADMIN_PASSWORD }),
        },
        {
          contentType: 'application/x-www-form-urlencoded',
          data: `email=admin&password=${ADMIN_PASSWORD}`,
        },
      ]) {
        const res = await req('POST', '/api/login', { raw });
        expect(res.status).toBe(415);
        expect(res.body).toEqual({
          status: false,
          hasError: true,
          message: 'Unsupported Media Type: this endpoint accepts application/json.',
        });
      }
      expect(counts()).toEqual(before);
    });

    it('refuses JSON carrying __proto__ or constructor.prototype with 422, signing nobody in and polluting nothing', async () => {
      const before = counts();
      const message = 'The request body contains a forbidden property name.';
      for (const data of [
        `{"email":"admin","password":"${ADMIN_PASSWORD}","__proto__":{"isAdmin":true}}`,
        `{"email":"admin","password":"${ADMIN_PASSWORD}","constructor":{"prototype":{"isAdmin":true}}}`,
      ]) {
        const res = await req('POST', '/api/login', {
          raw: { contentType: 'application/json', data },
          headers: { 'x-forwarded-for': '192.0.2.77' },
        });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ message, errors: { body: [message] } });
        expect(sessionCookieHeader(res)).toBeUndefined();
      }
      expect(counts()).toEqual(before);
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    });

    it('answers malformed JSON with 422 {message, errors}', async () => {
      const message = 'The request body is not valid JSON.';
      for (const data of ['{"email":"admin",', "{'email':'admin'}", '[1,2']) {
        const res = await req('POST', '/api/login', {
          raw: { contentType: 'application/json', data },
          headers: { 'x-forwarded-for': '192.0.2.78' },
        });
        expect(res.status, data).toBe(422);
        expect(res.body).toEqual({ message, errors: { body: [message] } });
      }
    });

    it('counts sign-ins per client address: the 11th from one address gets 429, another address is still served', async () => {
      const attempt = (address: string) =>
        req('POST', '/api/login', {
          body: { email: 'nobody', password: 'x' },
          headers: { 'x-forwarded-for': address },
        });
      for (let i = 0; i < 10; i++) expect((await attempt('203.0.113.10')).body).toEqual(INVALID);
      const limited = await attempt('203.0.113.10');
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({
        status: false,
        hasError: true,
        message: expect.stringMatching(/^Too Many Attempts\. Retry after \d+ seconds\.$/),
      });
      const fresh = await attempt('203.0.113.11');
      expect(fresh.status).toBe(200);
      expect(fresh.body).toEqual(INVALID);
    });
  });

  // spec: part1 > Authentication 7; States and transitions > MFA
  describe('two-step sign-in with MFA', () => {
    it('asks for a TOTP, refuses a wrong or replayed one, accepts a fresh one', async () => {
      const carol = await h.userWith([], { username: 'carol' });
      const generated = await req('POST', '/api/generateMfa', {
        token: admin.token,
        body: { userId: carol.id },
      });
      expect(generated.status).toBe(200);
      expect(generated.body).toMatchObject({
        status: true,
        pending: true,
        username: 'carol',
        mfaKey: expect.any(String),
      });
      const secret = generated.body.mfaKey as string;

      // Staged only: sign-in does not ask for a code yet.
      const staged = await signIn({ email: 'carol', password: carol.password });
      expect(staged.body.status).toBe(201);

      const confirmCode = totpCodeAt(secret, h.clock.now());
      const confirmed = await req('POST', '/api/confirmMfa', {
        token: admin.token,
        body: { userId: carol.id, code: confirmCode },
      });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toEqual({ status: true, message: expect.any(String) });

      const before = counts();
      // Password right, no code (or a blank one): TOTP Required, nothing issued.
      for (const body of [
        { email: 'carol', password: carol.password },
        { email: 'carol', password: carol.password, totp: '  ' },
      ]) {
        const res = await signIn(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(TOTP_REQUIRED);
        expect(sessionCookieHeader(res)).toBeUndefined();
      }
      // Password wrong, no code: the password failure, never a hint that MFA is on.
      expect((await signIn({ email: 'carol', password: 'Wrong-Passw0rd' })).body).toEqual(INVALID);
      // The code spent on confirmation cannot sign in.
      expect(
        (await signIn({ email: 'carol', password: carol.password, totp: confirmCode })).body,
      ).toEqual(INVALID);

      h.clock.advance(30_000);
      const code = totpCodeAt(secret, h.clock.now());
      const wrong = String((Number(code) + 500_000) % 1_000_000).padStart(6, '0');
      expect(
        (await signIn({ email: 'carol', password: carol.password, totp: wrong })).body,
      ).toEqual(INVALID);
      expect(
        (await signIn({ email: 'carol', password: carol.password, totp: 'abcdef' })).body,
      ).toEqual(INVALID);
      // A wrong password does not spend the code.
      expect(
        (await signIn({ email: 'carol', password: 'Wrong-Passw0rd', totp: code })).body,
      ).toEqual(INVALID);
      expect(counts()).toEqual(before);

      const ok = await signIn({ email: 'carol', password: carol.password, totp: code });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({
        status: 201,
        hasError: false,
        user: { id: carol.id, email: 'carol@example.test', name: expect.any(String) },
        access_token: expect.any(String),
      });
      expect(await meStatus(ok.body.access_token)).toBe(200);

      // Replay of the same code (same 30-second step): refused.
      const replay = await signIn({ email: 'carol', password: carol.password, totp: code });
      expect(replay.body).toEqual(INVALID);
      expect(sessionCookieHeader(replay)).toBeUndefined();

      h.clock.advance(30_000);
      const next = await signIn({
        email: 'carol',
        password: carol.password,
        totp: totpCodeAt(secret, h.clock.now()),
      });
      expect(next.body.status).toBe(201);
    });
  });

  // spec: part1 > Sign-in and session > POST /api/logout; States and transitions
  describe('POST /api/logout', () => {
    it('answers 200 {message}, refuses the token on the very next request, and ends the companion session', async () => {
      const signedIn = await signIn({ email: alice.username, password: alice.password });
      const token = signedIn.body.access_token as string;
      const cookie = cookieOf(signedIn);
      expect(await sessionLive(cookie)).toBe(true);

      const res = await req('POST', '/api/logout', { token, cookie });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      expect(res.body.message.length).toBeGreaterThan(0);
      // The cookie is cleared in the browser as well.
      expect(sessionCookieHeader(res)).toMatch(/^appliance_session=;/);

      expect(await meStatus(token)).toBe(401);
      expect((await req('GET', '/api/me', { token })).body).toEqual(UNAUTHENTICATED);
      expect(await sessionLive(cookie)).toBe(false);
      expect(tokenRow(token)?.revoked_at).not.toBeNull();
      // A second logout with the same token is unauthenticated.
      const again = await req('POST', '/api/logout', { token });
      expect(again.status).toBe(401);
      expect(again.body).toEqual(UNAUTHENTICATED);
    });

    it('ends the session tied to the token even when the cookie is not sent', async () => {
      const signedIn = await signIn({ email: alice.username, password: alice.password });
      const cookie = cookieOf(signedIn);
      const res = await req('POST', '/api/logout', { token: signedIn.body.access_token });
      expect(res.status).toBe(200);
      expect(await sessionLive(cookie)).toBe(false);
    });

    it('leaves the other tokens of the user alone', async () => {
      const a = await signIn({ email: alice.username, password: alice.password });
      const b = await signIn({ email: alice.username, password: alice.password });
      expect((await req('POST', '/api/logout', { token: a.body.access_token })).status).toBe(200);
      expect(await meStatus(b.body.access_token)).toBe(200);
      expect(await sessionLive(cookieOf(b))).toBe(true);
    });

    it('answers 401 without a token', async () => {
      const res = await req('POST', '/api/logout');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
    });
  });

  // spec: part1 > Sign-in and session > POST /api/ensureWebSession
  describe('POST /api/ensureWebSession', () => {
    it('answers 200 {status: true} with a session cookie that /api/information reports as live', async () => {
      expect(await sessionLive('appliance_session=none')).toBe(false);
      const res = await req('POST', '/api/ensureWebSession', { token: alice.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: true });
      const header = sessionCookieHeader(res)!;
      expect(header).toBeDefined();
      expect(header.toLowerCase()).toContain('httponly');
      expect(header.toLowerCase()).toContain('secure');
      expect(header.toLowerCase()).toContain('samesite=lax');
      const cookie = cookieOf(res);
      expect(await sessionLive(cookie)).toBe(true);

      // With its live session cookie already sent: still {status: true}, no new cookie.
      const again = await req('POST', '/api/ensureWebSession', { token: alice.token, cookie });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ status: true });
      expect(sessionCookieHeader(again)).toBeUndefined();
    });

    it("answers 401 {status: false, message: 'unauthenticated'} without a valid token", async () => {
      for (const token of [undefined, 'not-a-token']) {
        const res = await req('POST', '/api/ensureWebSession', { token: token ?? null });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ status: false, message: 'unauthenticated' });
        expect(sessionCookieHeader(res)).toBeUndefined();
      }
    });
  });

  // spec: part1 > Sign-in and session > POST /api/information
  describe('POST /api/information', () => {
    it('is public: 200 {status: 201, hasError: false, data: {hostname, sessionId: false}} without credentials', async () => {
      const res = await req('POST', '/api/information');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        data: { hostname: os.hostname(), sessionId: false },
      });
      expect(typeof res.body.data.hostname).toBe('string');
    });

    it('does not count a bearer token or a forged cookie as a browser session', async () => {
      expect(
        (await req('POST', '/api/information', { token: alice.token })).body.data.sessionId,
      ).toBe(false);
      expect(
        await sessionLive(`appliance_session=${crypto.randomBytes(32).toString('base64url')}`),
      ).toBe(false);
      expect(await sessionLive(`appliance_session=${'x'.repeat(600)}`)).toBe(false);
    });
  });

  // spec: part1 > Sign-in and session > GET /api/me; Resources > User record
  describe('GET /api/me', () => {
    it('returns exactly id, first_name, last_name, email, username, active, auth_source, created_at, updated_at', async () => {
      const res = await req('GET', '/api/me', { token: alice.token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(ME_KEYS);
      expect(res.body).toEqual({
        id: alice.id,
        first_name: 'Test',
        last_name: expect.stringMatching(/^User \d+$/),
        email: 'alice@example.test',
        username: 'alice',
        active: true,
        auth_source: 'local',
        created_at: expect.stringMatching(ISO_8601),
        updated_at: expect.stringMatching(ISO_8601),
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(
        Date.parse(res.body.created_at),
      );
      expect(res.text).not.toMatch(/password|totp|remember|secret|hash/i);
    });

    it('answers the admin with its own record', async () => {
      const res = await req('GET', '/api/me', { token: admin.token });
      expect(res.body).toMatchObject({
        id: 1,
        username: 'admin',
        email: 'admin@appliance.local',
        active: true,
        auth_source: 'local',
      });
    });

    it('answers 401 {status: false, hasError: true, message} without a valid bearer token', async () => {
      const signedIn = await signIn({ email: alice.username, password: alice.password });
      const cases: RequestOptions[] = [
        {},
        { token: 'garbage' },
        { token: `${alice.token}x` },
        { token: 'x'.repeat(600) },
        {
          headers: {
            authorization: `Basic ${Buffer.from(`alice:${alice.password}`).toString('base64')}`,
          },
        },
        { headers: { authorization: alice.token } },
        // A browser session cookie is not a credential for the API.
        { cookie: cookieOf(signedIn) },
      ];
      for (const options of cases) {
        const res = await req('GET', '/api/me', options);
        expect(res.status, JSON.stringify(options).slice(0, 80)).toBe(401);
        expect(res.body).toEqual(UNAUTHENTICATED);
      }
    });

    it('answers unknown /api paths with 404 in the legacy shape', async () => {
      const res = await req('GET', '/api/does-not-exist', { token: alice.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: false, hasError: true, message: 'Not Found' });
    });
  });

  // Last in this appliance: moves the clock past the sign-in token lifetime (default 12 hours).
  describe('sign-in token lifetime', () => {
    it('refuses a sign-in token (and its session) once APPLIANCE_LOGIN_TOKEN_TTL_HOURS have passed', async () => {
      const signedIn = await signIn({ email: alice.username, password: alice.password });
      const token = signedIn.body.access_token as string;
      const cookie = cookieOf(signedIn);
      const stored = tokenRow(token)!;
      expect(stored.expires_at - stored.created_at).toBe(12 * HOUR_MS);

      h.clock.advance(12 * HOUR_MS - 60_000);
      expect(await meStatus(token)).toBe(200);
      expect(await sessionLive(cookie)).toBe(true);

      h.clock.advance(2 * 60_000);
      const res = await req('GET', '/api/me', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
      expect(await sessionLive(cookie)).toBe(false);
      const web = await req('POST', '/api/ensureWebSession', { token });
      expect(web.status).toBe(401);
      expect(web.body).toEqual({ status: false, message: 'unauthenticated' });
    });
  });
});

// spec: part1 > Limits (POST /api/login: 10 requests per minute); General conventions 10
describe('sign-in rate limit (own appliance, default proxy settings)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startAppliance({ APPLIANCE_LOGIN_TOKEN_TTL_HOURS: '2' });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('serves 10 sign-ins a minute from one client, then 429 with Retry-After and the legacy body', async () => {
    const login = (body: unknown, headers: Record<string, string> = {}) =>
      call(h, 'POST', '/api/login', { body, headers });
    // One success among the ten: it also shows the configured token lifetime is applied.
    const ok = await login({ email: 'admin', password: ADMIN_PASSWORD });
    expect(ok.body.status).toBe(201);
    const row = h.appliance.db
      .prepare('SELECT created_at, expires_at FROM access_tokens WHERE token_hash = ?')
      .get(hashToken(ok.body.access_token)) as {
      created_at: number;
      expires_at: number;
    };
    expect(row.expires_at - row.created_at).toBe(2 * HOUR_MS);
    for (let i = 2; i <= 10; i++) {
      const res = await login({ email: 'admin', password: 'wrong' });
      expect(res.status, `attempt ${i}`).toBe(200);
      expect(res.body).toEqual(INVALID);
    }

    const limited = await login({ email: 'admin', password: ADMIN_PASSWORD });
    expect(limited.status).toBe(429);
    const retryAfter = String(limited.headers['retry-after']);
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({
      status: false,
      hasError: true,
      message: `Too Many Attempts. Retry after ${retryAfter} seconds.`,
    });
    expect(sessionCookieHeader(limited)).toBeUndefined();

    // X-Forwarded-For is not trusted without a configured proxy: it does not open a new bucket.
    const spoofed = await login(
      { email: 'admin', password: ADMIN_PASSWORD },
      { 'x-forwarded-for': '198.51.100.99' },
    );
    expect(spoofed.status).toBe(429);

    // Other endpoints are not throttled by it, and the token issued before still works.
    expect((await call(h, 'POST', '/api/information')).status).toBe(200);
    expect((await call(h, 'GET', '/api/me', { token: ok.body.access_token })).status).toBe(200);

    // The window runs on the appliance's clock and ends when Retry-After says: still closed 2 s
    // before, open after (a refused request takes far less than the 1 s of rounding left).
    const again = await login({ email: 'admin', password: 'wrong' });
    expect(again.status).toBe(429);
    const seconds = Number(again.headers['retry-after']);
    expect(seconds).toBeGreaterThan(2);
    h.clock.advance((seconds - 2) * 1000);
    expect((await login({ email: 'admin', password: 'wrong' })).status).toBe(429);
    h.clock.advance(2000);
    const reopened = await login({ email: 'admin', password: ADMIN_PASSWORD });
    expect(reopened.status).toBe(200);
    expect(reopened.body.status).toBe(201);
  });
});
