/**
 * HTTP-level tests of personal access tokens (spec part 1 > Personal access tokens), the
 * administration of other users' tokens (> Administering other users' tokens), the token
 * record (> Token record) and immediate revocation (> States and transitions, Authentication 10).
 *
 * One appliance for the file. Callers mostly use personal access tokens with a long lifetime,
 * so the clock can be moved (30-day listing rule) without their credentials expiring.
 * Logins (10 per minute per client address) are kept under the limit: 8 in all.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { hashToken } from '../../platform/security/tokens.js';

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
const RECORD_KEYS = [
  'client_id',
  'created_at',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'origin',
  'revoked',
  'scopes',
];
const SQL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const DAY_MS = 86_400_000;
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const NO_PERMISSION = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const FORBIDDEN = { error: 'Forbidden' };
const TOKEN_NOT_FOUND = { error: 'Token not found' };
const USER_NOT_FOUND = { error: 'User not found' };

interface Caller {
  id: number;
  token: string;
}

let h: Harness;
let admin: Caller;
/** Holds `api`: the owner of the tokens under test. */
let owner: Caller & { pat: string };
/** Holds `api`: someone else whose tokens the owner must not touch. */
let other: Caller & { pat: string };
/** Holds `users` only (neither `api` nor `sa`): cannot mint a token, so it uses its sign-in token. */
let manager: Caller;
/** Holds nothing. */
let plain: Caller;

/** Every response: security headers present, never a stack trace or an internal path. */
async function call<T = any>(
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

function row(id: number) {
  return h.appliance.db.prepare('SELECT * FROM access_tokens WHERE id = ?').get(id) as
    | {
        id: number;
        user_id: number;
        name: string;
        kind: string;
        scopes: string;
        created_at: number;
        expires_at: number;
        last_used_at: number | null;
        revoked_at: number | null;
        revoked_by_user_id: number | null;
      }
    | undefined;
}

function idOf(plaintext: string): number {
  return (
    h.appliance.db
      .prepare('SELECT id FROM access_tokens WHERE token_hash = ?')
      .get(hashToken(plaintext)) as { id: number }
  ).id;
}

function tokenCount(): number {
  return (h.appliance.db.prepare('SELECT COUNT(*) AS n FROM access_tokens').get() as { n: number })
    .n;
}

async function createPat(
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: number; access_token: string }> {
  const res = await call('POST', '/api/tokens', { token, body });
  expect(res.status).toBe(201);
  return res.body;
}

async function listOwn(token: string): Promise<any[]> {
  const res = await call('GET', '/api/tokens', { token });
  expect(res.status).toBe(200);
  return res.body.tokens;
}

async function meStatus(token: string): Promise<number> {
  return (await call('GET', '/api/me', { token })).status;
}

function cookieOf(res: Response): string {
  const header = [res.headers['set-cookie'] ?? []]
    .flat()
    .find((c) => c.startsWith('appliance_session='));
  if (!header) throw new Error(`no session cookie in ${JSON.stringify(res.headers)}`);
  return header.split(';')[0] as string;
}

async function sessionLive(cookie: string): Promise<boolean> {
  const res = await call('POST', '/api/information', { cookie });
  expect(res.status).toBe(200);
  return res.body.data.sessionId;
}

/** A browser session cookie for the holder of `token` (POST /api/ensureWebSession). */
async function webSession(token: string): Promise<string> {
  const res = await call('POST', '/api/ensureWebSession', { token });
  expect(res.status).toBe(200);
  const cookie = cookieOf(res);
  expect(await sessionLive(cookie)).toBe(true);
  return cookie;
}

beforeAll(async () => {
  h = await startAppliance();
  admin = { id: 1, token: await h.login() };
  const longLived = async (user: { id: number; token: string }) =>
    (await createPat(user.token, { name: 'caller', expires_in_days: 3650 })).access_token;
  const o = await h.userWith(['api']);
  owner = { id: o.id, token: o.token, pat: await longLived(o) };
  const x = await h.userWith(['api']);
  other = { id: x.id, token: x.token, pat: await longLived(x) };
  const m = await h.userWith(['users']);
  manager = { id: m.id, token: m.token };
  const p = await h.userWith([]);
  plain = { id: p.id, token: p.token };
});

afterAll(async () => {
  await h?.close();
});

// spec: part1 > Personal access tokens > GET /api/tokens; Resources > Token record
describe('GET /api/tokens', () => {
  it("lists the caller's own tokens with exactly the token-record fields", async () => {
    const tokens = await listOwn(owner.pat);
    const ownIds = (
      h.appliance.db
        .prepare('SELECT id FROM access_tokens WHERE user_id = ? ORDER BY id')
        .all(owner.id) as { id: number }[]
    ).map((r) => r.id);
    expect(tokens.map((t) => t.id).sort((a, b) => a - b)).toEqual(ownIds);
    expect(tokens.map((t) => t.id)).not.toContain(idOf(other.pat));
    for (const token of tokens) {
      expect(Object.keys(token).sort()).toEqual(RECORD_KEYS);
      expect(token.id).toEqual(expect.any(Number));
      expect(token.origin).toBe('pat');
      expect(token.client_id).toBeNull();
      expect(token.revoked).toBe(false);
      expect(token.expires_at).toMatch(SQL_TIME);
      expect(token.created_at).toMatch(SQL_TIME);
      expect(token.scopes).toEqual(ALL_SCOPES);
    }
    // The sign-in token (no browser_id) and the long-lived personal token.
    const login = tokens.find((t) => t.id === idOf(owner.token));
    expect(login).toMatchObject({ name: 'authToken', revoked: false });
    const pat = tokens.find((t) => t.id === idOf(owner.pat));
    expect(pat).toMatchObject({ name: 'caller', revoked: false });
    // The listing call itself used the token.
    expect(pat.last_used_at).toMatch(SQL_TIME);
  });

  it('lists the newest token first', async () => {
    const first = await createPat(owner.pat, { name: 'older' });
    const second = await createPat(owner.pat, { name: 'newer' });
    const ids = (await listOwn(owner.pat)).map((t) => t.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
  });

  it("reports origin 'oauth' and the client id for a token named 'MCP Client: ...'", async () => {
    const now = h.clock.now();
    const id = Number(
      h.appliance.db
        .prepare(
          `INSERT INTO access_tokens (user_id, name, kind, token_hash, client_id, scopes, created_at, expires_at)
           VALUES (?, 'MCP Client: Desktop', 'oauth', randomblob(32), 'client-abc', '["mcp:devices","mcp:logs"]', ?, ?)`,
        )
        .run(owner.id, now, now + 3_600_000).lastInsertRowid,
    );
    const token = (await listOwn(owner.pat)).find((t) => t.id === id);
    expect(token).toEqual({
      id,
      name: 'MCP Client: Desktop',
      origin: 'oauth',
      client_id: 'client-abc',
      scopes: ['mcp:devices', 'mcp:logs'],
      revoked: false,
      expires_at: expect.stringMatching(SQL_TIME),
      created_at: expect.stringMatching(SQL_TIME),
      last_used_at: null,
    });
  });

  it('never returns a plaintext token, and the database holds only digests', async () => {
    const created = await createPat(owner.pat, { name: 'secret-check' });
    const res = await call('GET', '/api/tokens', { token: owner.pat });
    expect(res.text).not.toContain(created.access_token);
    expect(res.text).not.toContain(owner.pat);
    expect(res.text).not.toContain(owner.token);
    expect(res.text).not.toMatch(/access_token|token_hash/);
    const stored = JSON.stringify(h.appliance.db.prepare('SELECT * FROM access_tokens').all());
    expect(stored).not.toContain(created.access_token);
    expect(stored).not.toContain(created.access_token.slice(4));
    // The stored value is the SHA-256 digest of the whole token, computed here independently.
    const rows = h.appliance.db
      .prepare("SELECT token_hash FROM access_tokens WHERE name = 'secret-check'")
      .all() as { token_hash: unknown }[];
    expect(rows).toHaveLength(1);
    expect(Buffer.isBuffer(rows[0]!.token_hash)).toBe(true);
    expect((rows[0]!.token_hash as Buffer).toString('hex')).toBe(
      crypto.createHash('sha256').update(created.access_token, 'utf8').digest('hex'),
    );
  });

  it('refuses a request without a valid bearer token with 401', async () => {
    for (const token of [undefined, 'garbage', `${owner.pat}x`]) {
      const res = await call('GET', '/api/tokens', { token: token ?? null });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
    }
  });

  it('refuses a caller without `api` with 401 and the legacy body (GET, POST, DELETE)', async () => {
    const mine = idOf(owner.pat);
    for (const caller of [plain.token, manager.token]) {
      for (const [method, path, body] of [
        ['GET', '/api/tokens', undefined],
        ['POST', '/api/tokens', { name: 'not allowed' }],
        ['DELETE', `/api/tokens/${mine}`, undefined],
      ] as const) {
        const res = await call(method, path, { token: caller, body });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(NO_PERMISSION);
      }
    }
    expect(row(mine)?.revoked_at).toBeNull();
    expect(
      (
        h.appliance.db
          .prepare("SELECT COUNT(*) AS n FROM access_tokens WHERE name = 'not allowed'")
          .get() as { n: number }
      ).n,
    ).toBe(0);
  });
});

// spec: part1 > Personal access tokens > POST /api/tokens
describe('POST /api/tokens', () => {
  it('creates a token: 201 {id, name, access_token, expires_at, created_at}, ISO 8601 with offset, 365 days by default', async () => {
    const res = await call('POST', '/api/tokens', {
      token: owner.pat,
      body: { name: 'ci pipeline' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'created_at',
      'expires_at',
      'id',
      'name',
    ]);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'ci pipeline',
      access_token: expect.stringMatching(/^\S{32,}$/),
      expires_at: expect.stringMatching(ISO_WITH_OFFSET),
      created_at: expect.stringMatching(ISO_WITH_OFFSET),
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(365 * DAY_MS);
    expect(Math.abs(Date.parse(res.body.created_at) - h.clock.now())).toBeLessThan(5_000);

    const stored = row(res.body.id);
    expect(stored).toMatchObject({
      user_id: owner.id,
      name: 'ci pipeline',
      kind: 'pat',
      revoked_at: null,
      last_used_at: null,
    });
    expect(stored!.expires_at - stored!.created_at).toBe(365 * DAY_MS);
    const listed = (await listOwn(owner.pat)).find((t) => t.id === res.body.id);
    expect(listed).toEqual({
      id: res.body.id,
      name: 'ci pipeline',
      origin: 'pat',
      client_id: null,
      scopes: ALL_SCOPES,
      revoked: false,
      expires_at: res.body.expires_at.replace('T', ' ').replace('+00:00', ''),
      created_at: res.body.created_at.replace('T', ' ').replace('+00:00', ''),
      last_used_at: null,
    });
  });

  it('mints a token that works as a bearer token for its owner', async () => {
    const created = await createPat(owner.pat, { name: 'works' });
    const me = await call('GET', '/api/me', { token: created.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(owner.id);
    expect((await call('GET', '/api/tokens', { token: created.access_token })).status).toBe(200);
  });

  it('trims the name', async () => {
    const res = await call('POST', '/api/tokens', {
      token: owner.pat,
      body: { name: '  padded  ' },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('padded');
    expect(row(res.body.id)?.name).toBe('padded');
  });

  it('accepts expires_in_days 1 and 3650', async () => {
    for (const days of [1, 3650]) {
      const res = await call('POST', '/api/tokens', {
        token: owner.pat,
        body: { name: `${days} days`, expires_in_days: days },
      });
      expect(res.status).toBe(201);
      expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(days * DAY_MS);
    }
  });

  it('refuses expires_in_days 0, 3651, a fraction or a string with 400 {errors: {expires_in_days}}', async () => {
    const before = tokenCount();
    const cases: [unknown, string][] = [
      [0, 'The expires in days field must be at least 1.'],
      [-5, 'The expires in days field must be at least 1.'],
      [3651, 'The expires in days field must not be greater than 3650.'],
      [1.5, 'The expires in days field must be an integer.'],
      ['30', 'The expires in days field must be an integer.'],
      [null, 'The expires in days field must be an integer.'],
    ];
    for (const [value, message] of cases) {
      const res = await call('POST', '/api/tokens', {
        token: owner.pat,
        body: { name: 'bad lifetime', expires_in_days: value },
      });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body).toEqual({ errors: { expires_in_days: [message] } });
    }
    expect(tokenCount()).toBe(before);
  });

  it('refuses a missing, empty, blank or 101-character name with 400 {errors: {name}}; 100 characters are accepted', async () => {
    const before = tokenCount();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'The name field is required.'],
      [{ name: '' }, 'The name field is required.'],
      [{ name: '    ' }, 'The name field is required.'],
      [{ name: 'a'.repeat(101) }, 'The name field must not be greater than 100 characters.'],
      [{ name: 42 }, 'The name field must be a string.'],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', '/api/tokens', { token: owner.pat, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ errors: { name: [message] } });
    }
    expect(tokenCount()).toBe(before);
    const longest = await call('POST', '/api/tokens', {
      token: owner.pat,
      body: { name: 'n'.repeat(100) },
    });
    expect(longest.status).toBe(201);
    expect(longest.body.name).toBe('n'.repeat(100));
  });

  it("refuses the reserved prefixes 'spa:' and 'MCP Client: ' with 400 {errors: {name}}", async () => {
    // Fixed in tokens.routes.ts: these failures used to be rendered as {error: 'reserved prefix'} / {error: 'empty'}.
    const before = tokenCount();
    const cases: [string, string][] = [
      ['spa:0b7d3c1e-8a4f-4b6e-9c2d-1f5e6a7b8c9d:fp', 'spa:'],
      ['  spa:x', 'spa:'],
      ['MCP Client: Claude', 'MCP Client: '],
    ];
    for (const [name, prefix] of cases) {
      const res = await call('POST', '/api/tokens', { token: owner.pat, body: { name } });
      expect(res.status, name).toBe(400);
      expect(res.body).toEqual({
        errors: { name: [`The name must not begin with the reserved prefix "${prefix}".`] },
      });
    }
    expect(tokenCount()).toBe(before);
  });

  it('grants all eight scopes when scopes is omitted or empty, and keeps a subset as given', async () => {
    const scopesOf = async (body: Record<string, unknown>) => {
      const created = await createPat(owner.pat, { name: 'scoped', ...body });
      return (await listOwn(owner.pat)).find((t) => t.id === created.id).scopes;
    };
    expect(await scopesOf({})).toEqual(ALL_SCOPES);
    expect(await scopesOf({ scopes: [] })).toEqual(ALL_SCOPES);
    expect(await scopesOf({ scopes: ['mcp:logs', 'mcp:devices'] })).toEqual([
      'mcp:logs',
      'mcp:devices',
    ]);
    expect(await scopesOf({ scopes: ['mcp:vne', 'mcp:vne'] })).toEqual(['mcp:vne']);
    expect(await scopesOf({ scopes: [...ALL_SCOPES].reverse() })).toEqual(
      [...ALL_SCOPES].reverse(),
    );
  });

  it('refuses an unknown scope or a non-array with 400 {errors}', async () => {
    const before = tokenCount();
    const unknown = await call('POST', '/api/tokens', {
      token: owner.pat,
      body: { name: 'x', scopes: ['mcp:devices', 'mcp:everything'] },
    });
    expect(unknown.status).toBe(400);
    // A union of literals yields one AJV error per branch; the message must appear once.
    expect(unknown.body).toEqual({ errors: { 'scopes.1': ['The selected scopes.1 is invalid.'] } });
    const notArray = await call('POST', '/api/tokens', {
      token: owner.pat,
      body: { name: 'x', scopes: 'mcp:logs' },
    });
    expect(notArray.status).toBe(400);
    expect(notArray.body).toEqual({ errors: { scopes: ['The scopes field must be an array.'] } });
    expect(tokenCount()).toBe(before);
  });

  it('refuses prototype-poisoning keys, malformed JSON and other media types, creating nothing', async () => {
    const before = tokenCount();
    for (const data of [
      '{"name":"p","__proto__":{"admin":true}}',
      '{"name":"p","constructor":{"prototype":{"admin":true}}}',
    ]) {
      const res = await call('POST', '/api/tokens', {
        token: owner.pat,
        raw: { contentType: 'application/json', data },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        errors: { body: ['The request body contains a forbidden property name.'] },
      });
    }
    const malformed = await call('POST', '/api/tokens', {
      token: owner.pat,
      raw: { contentType: 'application/json', data: '{"name":' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ errors: { body: ['The request body is not valid JSON.'] } });
    for (const raw of [
      { contentType: 'text/plain', data: 'name=p' },
      { contentType: 'application/x-www-form-urlencoded', data: 'name=p' },
    ]) {
      const res = await call('POST', '/api/tokens', { token: owner.pat, raw });
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        error: 'Unsupported Media Type: this endpoint accepts application/json.',
      });
    }
    expect(tokenCount()).toBe(before);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('records last_used_at once the token is used (listing merges pending uses; the batch reaches the database)', async () => {
    const created = await createPat(owner.pat, { name: 'usage' });
    const listedBefore = (await listOwn(owner.pat)).find((t) => t.id === created.id);
    expect(listedBefore.last_used_at).toBeNull();

    expect(await meStatus(created.access_token)).toBe(200);
    const listedAfter = (await listOwn(owner.pat)).find((t) => t.id === created.id);
    expect(listedAfter.last_used_at).toMatch(SQL_TIME);
    expect(listedAfter.last_used_at >= listedAfter.created_at).toBe(true);

    // Stopping the usage engine flushes the pending batch; start it again for the rest of the file.
    const usage = h.appliance.engines.find((e) => e.name === 'token-usage');
    expect(usage).toBeDefined();
    await usage!.stop();
    await usage!.start();
    const stored = row(created.id)!;
    expect(stored.last_used_at).not.toBeNull();
    expect(new Date(stored.last_used_at!).toISOString().slice(0, 19).replace('T', ' ')).toBe(
      listedAfter.last_used_at,
    );
  });
});

// spec: part1 > Personal access tokens > DELETE /api/tokens/{id}
describe('DELETE /api/tokens/{id}', () => {
  it('revokes an own token: 200 {revoked: true}, refused on the very next request, listed as revoked', async () => {
    const created = await createPat(owner.pat, { name: 'to revoke' });
    expect(await meStatus(created.access_token)).toBe(200);
    const res = await call('DELETE', `/api/tokens/${created.id}`, { token: owner.pat });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true });
    expect(await meStatus(created.access_token)).toBe(401);
    expect((await listOwn(owner.pat)).find((t) => t.id === created.id)).toMatchObject({
      revoked: true,
    });
    const stored = row(created.id)!;
    expect(stored.revoked_at).not.toBeNull();
    expect(stored.revoked_by_user_id).toBeNull();
  });

  it('lets a token revoke itself', async () => {
    const created = await createPat(owner.pat, { name: 'self revoke' });
    const res = await call('DELETE', `/api/tokens/${created.id}`, { token: created.access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true });
    expect(await meStatus(created.access_token)).toBe(401);
  });

  it("answers 404 {error: 'Token not found'} for someone else's token or an unknown id, and leaves it alive", async () => {
    const theirs = await createPat(other.pat, { name: 'not yours' });
    for (const id of [theirs.id, idOf(admin.token), 99_999_999]) {
      const res = await call('DELETE', `/api/tokens/${id}`, { token: owner.pat });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(TOKEN_NOT_FOUND);
    }
    expect(row(theirs.id)?.revoked_at).toBeNull();
    expect(await meStatus(theirs.access_token)).toBe(200);
    expect(await meStatus(admin.token)).toBe(200);
  });

  it('answers 400 {errors: {id}} for an id that is not a positive integer', async () => {
    const cases: [string, string][] = [
      ['abc', 'The id field must be an integer.'],
      ['1.5', 'The id field must be an integer.'],
      ['0', 'The id field must be at least 1.'],
    ];
    for (const [id, message] of cases) {
      const res = await call('DELETE', `/api/tokens/${id}`, { token: owner.pat });
      expect(res.status, id).toBe(400);
      expect(res.body).toEqual({ errors: { id: [message] } });
    }
  });
});

// spec: part1 > Personal access tokens > GET /api/tokens (revoked rows older than 30 days hidden); Limits
describe('revoked rows in the listing', () => {
  it('keeps revoked rows created within 30 days (revoked: true) and hides revoked rows created earlier', async () => {
    const now = h.clock.now();
    const insert = (name: string, createdAgoDays: number, revoked: boolean) =>
      Number(
        h.appliance.db
          .prepare(
            `INSERT INTO access_tokens (user_id, name, kind, token_hash, scopes, created_at, expires_at, revoked_at)
             VALUES (?, ?, 'pat', randomblob(32), ?, ?, ?, ?)`,
          )
          .run(
            owner.id,
            name,
            JSON.stringify(ALL_SCOPES),
            now - createdAgoDays * DAY_MS,
            now + 300 * DAY_MS,
            revoked ? now - DAY_MS : null,
          ).lastInsertRowid,
      );
    const recentRevoked = insert('recent revoked', 29, true);
    const oldRevoked = insert('old revoked', 31, true);
    const oldLive = insert('old live', 31, false);
    const listed = await listOwn(owner.pat);
    expect(listed.find((t) => t.id === recentRevoked)).toMatchObject({
      name: 'recent revoked',
      revoked: true,
    });
    expect(listed.find((t) => t.id === oldRevoked)).toBeUndefined();
    expect(listed.find((t) => t.id === oldLive)).toMatchObject({
      name: 'old live',
      revoked: false,
    });
  });
});

// spec: part1 > Administering other users' tokens
describe('GET /api/users/{userId}/tokens', () => {
  it("lists the user's tokens for a caller holding `users` (and for `sa`) in the same envelope", async () => {
    const own = await listOwn(owner.pat);
    for (const caller of [manager.token, admin.token]) {
      const res = await call('GET', `/api/users/${owner.id}/tokens`, { token: caller });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['tokens']);
      expect(res.body.tokens.map((t: { id: number }) => t.id)).toEqual(own.map((t) => t.id));
      for (const token of res.body.tokens) expect(Object.keys(token).sort()).toEqual(RECORD_KEYS);
      expect(res.text).not.toContain(owner.pat);
    }
  });

  it("answers 403 {error: 'Forbidden'} without `users` or `sa`, 401 without a token", async () => {
    for (const caller of [owner.pat, plain.token]) {
      const res = await call('GET', `/api/users/${other.id}/tokens`, { token: caller });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
    const anonymous = await call('GET', `/api/users/${other.id}/tokens`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(UNAUTHENTICATED);
  });

  it("answers 404 {error: 'User not found'} for an unknown user and 400 for a non-integer id", async () => {
    const res = await call('GET', '/api/users/99999999/tokens', { token: manager.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(USER_NOT_FOUND);
    const bad = await call('GET', '/api/users/abc/tokens', { token: manager.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: { userId: ['The userId field must be an integer.'] } });
  });
});

describe('DELETE /api/users/{userId}/tokens/{id}', () => {
  it('revokes the token: 200 {revoked: true}, records the revoking admin, refused at once', async () => {
    const victim = await createPat(other.pat, { name: 'admin revokes' });
    expect(await meStatus(victim.access_token)).toBe(200);
    const res = await call('DELETE', `/api/users/${other.id}/tokens/${victim.id}`, {
      token: manager.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true });
    expect(await meStatus(victim.access_token)).toBe(401);
    const stored = row(victim.id)!;
    expect(stored.revoked_at).not.toBeNull();
    expect(stored.revoked_by_user_id).toBe(manager.id);
    expect((await listOwn(other.pat)).find((t) => t.id === victim.id)).toMatchObject({
      revoked: true,
    });
  });

  it("answers 404 {error: 'Token not found'} for another user's token or an unknown id, touching nothing", async () => {
    const theirs = await createPat(other.pat, { name: 'wrong user in path' });
    for (const path of [
      `/api/users/${owner.id}/tokens/${theirs.id}`,
      `/api/users/${other.id}/tokens/99999999`,
      `/api/users/99999999/tokens/${theirs.id}`,
    ]) {
      const res = await call('DELETE', path, { token: manager.token });
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual(TOKEN_NOT_FOUND);
    }
    expect(row(theirs.id)?.revoked_at).toBeNull();
    expect(await meStatus(theirs.access_token)).toBe(200);
  });

  it("answers 403 {error: 'Forbidden'} without `users`, touching nothing", async () => {
    const theirs = await createPat(other.pat, { name: 'not an admin' });
    for (const caller of [owner.pat, plain.token]) {
      const res = await call('DELETE', `/api/users/${other.id}/tokens/${theirs.id}`, {
        token: caller,
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
    expect(row(theirs.id)?.revoked_at).toBeNull();
    expect(await meStatus(theirs.access_token)).toBe(200);
  });
});

describe('POST /api/users/{userId}/tokens/revoke-all', () => {
  it('revokes every live token of the user, ends their web session, and counts only newly revoked rows', async () => {
    const target = await h.userWith(['api']);
    const patA = await createPat(target.token, { name: 'a' });
    const patB = await createPat(target.token, { name: 'b', expires_in_days: 10 });
    const early = await createPat(target.token, { name: 'already revoked' });
    // Revoked beforehand (by the user): must not be counted nor re-stamped.
    h.appliance.db
      .prepare('UPDATE access_tokens SET revoked_at = ? WHERE id = ?')
      .run(h.clock.now() - 1000, early.id);
    const earlyBefore = row(early.id)!;
    const cookie = await webSession(target.token);
    const live = (
      h.appliance.db
        .prepare('SELECT COUNT(*) AS n FROM access_tokens WHERE user_id = ? AND revoked_at IS NULL')
        .get(target.id) as { n: number }
    ).n;
    expect(live).toBe(3);

    const res = await call('POST', `/api/users/${target.id}/tokens/revoke-all`, {
      token: manager.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: 3, user_id: target.id });

    for (const token of [target.token, patA.access_token, patB.access_token])
      expect(await meStatus(token)).toBe(401);
    expect(await sessionLive(cookie)).toBe(false);
    for (const id of [idOf(target.token), patA.id, patB.id]) {
      expect(row(id)).toMatchObject({ revoked_by_user_id: manager.id });
      expect(row(id)!.revoked_at).not.toBeNull();
    }
    expect(row(early.id)).toEqual(earlyBefore);

    const again = await call('POST', `/api/users/${target.id}/tokens/revoke-all`, {
      token: manager.token,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ revoked: 0, user_id: target.id });

    // Other users keep their tokens.
    expect(await meStatus(other.pat)).toBe(200);
    expect(await meStatus(owner.pat)).toBe(200);
  });

  it("answers 404 {error: 'User not found'}, 403 {error: 'Forbidden'} without `users`, and revokes nothing", async () => {
    const missing = await call('POST', '/api/users/99999999/tokens/revoke-all', {
      token: manager.token,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(USER_NOT_FOUND);
    for (const caller of [owner.pat, plain.token]) {
      const res = await call('POST', `/api/users/${other.id}/tokens/revoke-all`, { token: caller });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
    expect(await meStatus(other.pat)).toBe(200);
  });
});

// spec: part1 > States and transitions (saveUser with active=false); Authentication 10
describe('deactivating a user', () => {
  it('makes every token of that user fail on the very next request, and ends their web session', async () => {
    const leaver = await h.userWith(['api']);
    const pat = await createPat(leaver.token, { name: 'leaver pat' });
    const cookie = await webSession(pat.access_token);
    expect(await meStatus(leaver.token)).toBe(200);
    expect(await meStatus(pat.access_token)).toBe(200);

    const saved = await call('POST', '/api/saveUser', {
      token: admin.token,
      body: { user: leaver.id, active: false },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ status: 201 });

    expect(await meStatus(leaver.token)).toBe(401);
    expect(await meStatus(pat.access_token)).toBe(401);
    expect(await sessionLive(cookie)).toBe(false);
    const rows = h.appliance.db
      .prepare('SELECT revoked_at, revoked_by_user_id FROM access_tokens WHERE user_id = ?')
      .all(leaver.id) as { revoked_at: number | null; revoked_by_user_id: number | null }[];
    expect(rows.length).toBe(2);
    for (const r of rows)
      expect(r).toEqual({ revoked_at: expect.any(Number), revoked_by_user_id: admin.id });

    // Reactivation does not bring the old tokens back.
    const reactivated = await call('POST', '/api/saveUser', {
      token: admin.token,
      body: { user: leaver.id, active: true },
    });
    expect(reactivated.body).toEqual({ status: 201 });
    expect(await meStatus(leaver.token)).toBe(401);
    expect(await meStatus(pat.access_token)).toBe(401);
  });
});

// Last: moves the clock by 31 days (sign-in tokens of this file expire).
describe('ageing of revoked rows', () => {
  it('hides a revoked token once it was created more than 30 days ago; live and expired tokens stay listed', async () => {
    const revoked = await createPat(owner.pat, { name: 'ages out' });
    const live = await createPat(owner.pat, { name: 'stays' });
    const shortLived = await createPat(owner.pat, { name: 'expires', expires_in_days: 1 });
    h.appliance.db
      .prepare('UPDATE access_tokens SET revoked_at = ? WHERE id = ?')
      .run(h.clock.now(), revoked.id);
    expect((await listOwn(owner.pat)).find((t) => t.id === revoked.id)).toMatchObject({
      revoked: true,
    });

    h.clock.advance(29 * DAY_MS);
    expect((await listOwn(owner.pat)).find((t) => t.id === revoked.id)).toMatchObject({
      revoked: true,
    });

    h.clock.advance(2 * DAY_MS);
    const listed = await listOwn(owner.pat);
    expect(listed.find((t) => t.id === revoked.id)).toBeUndefined();
    expect(listed.find((t) => t.id === live.id)).toMatchObject({ revoked: false });
    expect(listed.find((t) => t.id === shortLived.id)).toMatchObject({ revoked: false });
    // Expired tokens are refused even though they are not revoked.
    expect(await meStatus(shortLived.access_token)).toBe(401);
    expect(await meStatus(owner.token)).toBe(401);
    expect(await meStatus(live.access_token)).toBe(200);
  });
});
