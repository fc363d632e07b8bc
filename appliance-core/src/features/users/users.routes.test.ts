/**
 * HTTP-level tests of users, MFA and permissions (spec part 1 > Users, MFA, permissions; User
 * record; Permission; States and transitions (MFA rows); Authentication 7-10; Errors).
 *
 * One appliance is shared by the file (each password hash costs ~0.4 s). Sign-in is limited to
 * 10 requests per minute per client address; the appliance trusts X-Forwarded-For from loopback
 * (APPLIANCE_TRUSTED_PROXIES), so every sign-in below comes from its own client address.
 */
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';
import { insertDeviceTag } from '../../../../test/harness/tags.js';
import { verifyPassword } from '../../platform/security/password.js';
import { hashToken } from '../../platform/security/tokens.js';
import { totpCodeAt } from '../../platform/security/totp.js';

const USER_KEYS = [
  'active',
  'auth_source',
  'email',
  'first_name',
  'id',
  'last_name',
  'permissions',
  'tags',
  'totp',
  'username',
];
const ALL_SLUGS = [
  'sa',
  'api',
  'users',
  'system',
  'devices',
  'write_devices',
  'overwatch',
  'alerts',
  'logs',
  'vne',
  'capture',
  'urls',
  'tools',
  'agentadmin',
];
const UNAUTHENTICATED = { status: false, hasError: true, message: 'Unauthenticated.' };
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const INVALID_LOGIN = { status: false, hasError: true, message: 'Invalid Username/Password' };
const TOTP_REQUIRED = { status: false, hasError: true, message: 'TOTP Required' };
const NOT_YOURS = { status: false, message: 'Not authorized to modify this user' };
const NO_SUCH_USER = { status: false, message: 'User not found' };
const STEP_MS = 30_000;

const legacyFailure = (message: string) => ({ status: false, hasError: true, message });

interface Account {
  id: number;
  token: string;
  username: string;
  email: string;
  password: string;
}

interface UserRecordBody {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  username: string;
  active: boolean;
  totp: boolean;
  auth_source: string;
  permissions: string[];
  tags: string[];
}

describe('users, MFA and permissions (shared appliance)', () => {
  let h: Harness;
  let admin: Account;
  let client = 0;
  let counter = 0;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const post = (path: string, token: string | null, body?: unknown) =>
    req('POST', path, { token, body });

  /** POST /api/login from a fresh client address (see the header comment). */
  const signIn = (body: Record<string, unknown>) => {
    client++;
    return req('POST', '/api/login', {
      body,
      headers: { 'x-forwarded-for': `198.51.100.${client}` },
    });
  };
  const tokenOf = async (login: string, password: string) => {
    const res = await signIn({ email: login, password });
    if (res.body?.status !== 201) throw new Error(`login failed: ${res.text}`);
    return res.body.access_token as string;
  };

  const db = () => h.appliance.db;
  const userCount = () =>
    (db().prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  const userRow = (id: number) =>
    db().prepare('SELECT * FROM users WHERE id = ?').get(id) as
      | {
          id: number;
          username: string;
          email: string;
          first_name: string;
          last_name: string;
          password_hash: string | null;
          active: number;
          auth_source: string;
          totp_secret: string | null;
          totp_pending_secret: string | null;
          totp_last_step: number;
        }
      | undefined;
  const liveTokensOf = (id: number) =>
    (
      db()
        .prepare('SELECT count(*) AS n FROM access_tokens WHERE user_id = ? AND revoked_at IS NULL')
        .get(id) as { n: number }
    ).n;
  const meStatus = async (token: string) => (await req('GET', '/api/me', { token })).status;

  /** The user's row as getUsers shows it to the super-admin. */
  const recordOf = async (id: number): Promise<UserRecordBody | undefined> => {
    const res = await req('GET', '/api/getUsers', { token: admin.token });
    expect(res.status).toBe(200);
    return (res.body.users as UserRecordBody[]).find((u) => u.id === id);
  };

  const newUserBody = (overrides: Record<string, unknown> = {}) => {
    counter++;
    return {
      first_name: 'Test',
      last_name: `User ${counter}`,
      email: `u${counter}@example.test`,
      username: `u${counter}`,
      password: `Passw0rd-${counter}`,
      ...overrides,
    };
  };

  /** Creates a user through the API (as the super-admin), sets its permissions and tags, and signs it in. */
  const makeUser = async (
    permissions: string[] = [],
    options: { tags?: string[]; signIn?: boolean } = {},
  ): Promise<Account> => {
    const body = newUserBody();
    const created = await post('/api/createUser', admin.token, body);
    if (created.body?.status !== 201) throw new Error(`createUser failed: ${created.text}`);
    const id = (
      db().prepare('SELECT id FROM users WHERE username = ?').get(body.username) as { id: number }
    ).id;
    if (permissions.length > 0 || options.tags) {
      const tags = options.tags?.map((value) => ({ value }));
      const saved = await post('/api/saveUser', admin.token, {
        user: id,
        permissions,
        ...(tags ? { tags } : {}),
      });
      if (saved.body?.status !== 201) throw new Error(`saveUser failed: ${saved.text}`);
    }
    const token = options.signIn === false ? '' : await tokenOf(body.username, body.password);
    return { id, token, username: body.username, email: body.email, password: body.password };
  };

  /** A six-digit code that matches none of the steps around now for this secret. */
  const wrongCode = (secret: string) => {
    const now = h.clock.now();
    const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, now + d * STEP_MS)));
    for (let n = 0; ; n++) {
      const code = String(n).padStart(6, '0');
      if (!near.has(code)) return code;
    }
  };

  beforeAll(async () => {
    h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
    admin = {
      id: 1,
      token: await tokenOf('admin', ADMIN_PASSWORD),
      username: 'admin',
      email: 'admin@appliance.local',
      password: ADMIN_PASSWORD,
    };
    insertDeviceTag(db(), 'site-a', 'Site A');
    insertDeviceTag(db(), 'site-b', 'Site B');
  });

  afterAll(async () => {
    await h?.close();
  });

  // spec: part1 > Users, MFA, permissions > GET /api/getUsers; User record
  describe('GET /api/getUsers', () => {
    it('gives the super-admin every user: HTTP 200 {status: 201, hasError: false, users, self_only: false, caller_id}', async () => {
      const other = await makeUser(['devices'], { signIn: false });
      const res = await req('GET', '/api/getUsers', { token: admin.token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'caller_id',
        'hasError',
        'self_only',
        'status',
        'users',
      ]);
      expect(res.body).toMatchObject({
        status: 201,
        hasError: false,
        self_only: false,
        caller_id: 1,
      });
      const users = res.body.users as UserRecordBody[];
      expect(users.length).toBe(userCount());
      expect(users.map((u) => u.id)).toContain(other.id);
      expect(users[0]).toEqual({
        id: 1,
        first_name: 'Appliance',
        last_name: 'Administrator',
        email: 'admin@appliance.local',
        username: 'admin',
        active: true,
        totp: false,
        auth_source: 'local',
        permissions: ['sa'],
        tags: [],
      });
    });

    it('gives every row exactly id, first_name, last_name, email, username, active, totp, auth_source, permissions (slugs), tags (slugs)', async () => {
      const tagged = await makeUser(['devices', 'logs'], {
        tags: ['site-a', 'site-b'],
        signIn: false,
      });
      const res = await req('GET', '/api/getUsers', { token: admin.token });
      for (const row of res.body.users as UserRecordBody[])
        expect(Object.keys(row).sort()).toEqual(USER_KEYS);
      expect((res.body.users as UserRecordBody[]).find((u) => u.id === tagged.id)).toEqual({
        id: tagged.id,
        first_name: 'Test',
        last_name: expect.stringMatching(/^User \d+$/),
        email: tagged.email,
        username: tagged.username,
        active: true,
        totp: false,
        auth_source: 'local',
        permissions: ['devices', 'logs'],
        tags: ['site-a', 'site-b'],
      });
    });

    it('never includes a password, its hash or an MFA secret, even for a user with MFA on', async () => {
      const mfa = await makeUser(['users'], { signIn: false });
      const generated = await post('/api/generateMfa', admin.token, { userId: mfa.id });
      expect(generated.status).toBe(200);
      const confirmed = await post('/api/confirmMfa', admin.token, {
        userId: mfa.id,
        code: totpCodeAt(generated.body.mfaKey, h.clock.now()),
      });
      expect(confirmed.status).toBe(200);
      await post('/api/generateMfa', admin.token, { userId: mfa.id }); // and a staged one on top
      const row = userRow(mfa.id)!;
      expect(row.totp_secret).not.toBeNull();
      expect(row.totp_pending_secret).not.toBeNull();
      const res = await req('GET', '/api/getUsers', { token: admin.token });
      expect((res.body.users as UserRecordBody[]).find((u) => u.id === mfa.id)?.totp).toBe(true);
      expect(res.text).not.toMatch(/password|secret|scrypt|remember/i);
      expect(res.text).not.toContain(generated.body.mfaKey);
      expect(res.text).not.toContain(row.totp_secret!);
      expect(res.text).not.toContain(row.password_hash!);
    });

    it('gives a holder of `users` (without sa) every user, self_only false', async () => {
      const manager = await makeUser(['users']);
      const res = await req('GET', '/api/getUsers', { token: manager.token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 201,
        hasError: false,
        self_only: false,
        caller_id: manager.id,
      });
      expect((res.body.users as UserRecordBody[]).length).toBe(userCount());
      expect((res.body.users as UserRecordBody[]).map((u) => u.id)).toEqual(
        expect.arrayContaining([1, manager.id]),
      );
    });

    it('gives any other authenticated user only their own row, self_only true', async () => {
      const plain = await makeUser(['devices', 'alerts'], { tags: ['site-a'] });
      const res = await req('GET', '/api/getUsers', { token: plain.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        self_only: true,
        caller_id: plain.id,
        users: [
          {
            id: plain.id,
            first_name: 'Test',
            last_name: expect.any(String),
            email: plain.email,
            username: plain.username,
            active: true,
            totp: false,
            auth_source: 'local',
            permissions: ['devices', 'alerts'],
            tags: ['site-a'],
          },
        ],
      });
    });

    it('gives a user without any permission their own row', async () => {
      const nobody = await makeUser([]);
      const res = await req('GET', '/api/getUsers', { token: nobody.token });
      expect(res.status).toBe(200);
      expect(res.body.self_only).toBe(true);
      expect((res.body.users as UserRecordBody[]).map((u) => u.id)).toEqual([nobody.id]);
      expect(res.body.users[0]).toMatchObject({ permissions: [], tags: [] });
    });

    it('refuses a request without a valid token: 401 {status: false, hasError: true, message}', async () => {
      for (const token of [null, 'not-a-token']) {
        const res = await req('GET', '/api/getUsers', { token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHENTICATED);
      }
    });
  });

  // spec: part1 > Users, MFA, permissions > POST /api/createUser; Authentication 8
  describe('POST /api/createUser', () => {
    it('creates an active local account: HTTP 200 {status: 201}; the account can sign in', async () => {
      const body = newUserBody({ email: 'New.Person@Example.test' });
      const before = userCount();
      const res = await post('/api/createUser', admin.token, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 201 });
      expect(userCount()).toBe(before + 1);
      const id = (
        db().prepare('SELECT id FROM users WHERE username = ?').get(body.username) as { id: number }
      ).id;
      const row = userRow(id)!;
      expect(row).toMatchObject({
        first_name: body.first_name,
        last_name: body.last_name,
        email: body.email,
        active: 1,
        auth_source: 'local',
        totp_secret: null,
      });
      expect(row.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
      expect(row.password_hash).not.toContain(body.password);
      expect(await recordOf(id)).toEqual({
        id,
        first_name: body.first_name,
        last_name: body.last_name,
        email: body.email,
        username: body.username,
        active: true,
        totp: false,
        auth_source: 'local',
        permissions: [],
        tags: [],
      });
      const login = await signIn({ email: body.username, password: body.password });
      expect(login.status).toBe(200);
      expect(login.body).toMatchObject({
        status: 201,
        hasError: false,
        user: { id, email: body.email },
      });
      expect(await meStatus(login.body.access_token)).toBe(200);
    });

    it('accepts names and a username of exactly 255 characters', async () => {
      const long = 'x'.repeat(255);
      const body = newUserBody({
        first_name: long,
        last_name: long,
        username: `${'y'.repeat(250)}${counter}`.slice(0, 255),
      });
      const res = await post('/api/createUser', admin.token, body);
      expect(res.body).toEqual({ status: 201 });
    });

    const long = 'z'.repeat(256);
    const cases: [string, (b: Record<string, unknown>) => Record<string, unknown>, string][] = [
      ['first_name missing', ({ first_name: _, ...b }) => b, 'The first name field is required.'],
      ['last_name missing', ({ last_name: _, ...b }) => b, 'The last name field is required.'],
      ['email missing', ({ email: _, ...b }) => b, 'The email field is required.'],
      ['username missing', ({ username: _, ...b }) => b, 'The username field is required.'],
      ['password missing', ({ password: _, ...b }) => b, 'The password field is required.'],
      ['first_name empty', (b) => ({ ...b, first_name: '' }), 'The first name field is required.'],
      [
        'first_name of 256 characters',
        (b) => ({ ...b, first_name: long }),
        'The first name field must not be greater than 255 characters.',
      ],
      [
        'last_name of 256 characters',
        (b) => ({ ...b, last_name: long }),
        'The last name field must not be greater than 255 characters.',
      ],
      [
        'username of 256 characters',
        (b) => ({ ...b, username: long }),
        'The username field must not be greater than 255 characters.',
      ],
      [
        'an invalid email',
        (b) => ({ ...b, email: 'not-an-email' }),
        'The email field must be a valid email address.',
      ],
      [
        'an email without a domain',
        (b) => ({ ...b, email: 'someone@' }),
        'The email field must be a valid email address.',
      ],
      [
        'an email in use (other case)',
        (b) => ({ ...b, email: 'ADMIN@Appliance.Local' }),
        'The email has already been taken.',
      ],
      [
        'a username in use',
        (b) => ({ ...b, username: 'admin' }),
        'The username has already been taken.',
      ],
      [
        'a username in use (other case)',
        (b) => ({ ...b, username: 'ADMIN' }),
        'The username has already been taken.',
      ],
      [
        'a password of 7 characters',
        (b) => ({ ...b, password: 'Abcde1!' }),
        'The password field must be at least 8 characters.',
      ],
      [
        'a password without a lowercase letter',
        (b) => ({ ...b, password: 'ABCDEFG1' }),
        'The password field must contain at least one uppercase and one lowercase letter.',
      ],
      [
        'a password without an uppercase letter',
        (b) => ({ ...b, password: 'abcdefg1' }),
        'The password field must contain at least one uppercase and one lowercase letter.',
      ],
      [
        'a password without a digit',
        (b) => ({ ...b, password: 'Abcdefgh' }),
        'The password field must contain at least one number.',
      ],
      [
        'a first_name that is not a string',
        (b) => ({ ...b, first_name: 42 }),
        'The first name field must be a string.',
      ],
    ];
    it.each(cases)(
      'refuses %s: HTTP 200 {status: false, hasError: true, message} and creates nothing',
      async (_label, mutate, message) => {
        const body = mutate(newUserBody());
        const before = userCount();
        const res = await post('/api/createUser', admin.token, body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(legacyFailure(message));
        expect(userCount()).toBe(before);
      },
    );

    it('refuses an email already used by another user in another case', async () => {
      const first = await makeUser([], { signIn: false });
      const before = userCount();
      const res = await post(
        '/api/createUser',
        admin.token,
        newUserBody({ email: first.email.toUpperCase() }),
      );
      expect(res.body).toEqual(legacyFailure('The email has already been taken.'));
      expect(userCount()).toBe(before);
    });

    it('refuses a caller without `users`: 401 {status: false, hasError: true, message}; nothing is created', async () => {
      const plain = await makeUser(['devices', 'system', 'api']);
      const before = userCount();
      const res = await post('/api/createUser', plain.token, newUserBody());
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
      expect(userCount()).toBe(before);
    });

    it('refuses an unauthenticated caller with 401; nothing is created', async () => {
      const before = userCount();
      const res = await post('/api/createUser', null, newUserBody());
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
      expect(userCount()).toBe(before);
    });

    it('lets a holder of `users` (without sa) create a user', async () => {
      const manager = await makeUser(['users']);
      const before = userCount();
      const res = await post('/api/createUser', manager.token, newUserBody());
      expect(res.body).toEqual({ status: 201 });
      expect(userCount()).toBe(before + 1);
    });
  });

  // spec: part1 > Users, MFA, permissions > POST /api/saveUser; User record (user 1)
  describe('POST /api/saveUser', () => {
    it('changes only the fields present', async () => {
      const target = await makeUser(['devices'], { tags: ['site-a'], signIn: false });
      const before = await recordOf(target.id);
      const hashBefore = userRow(target.id)!.password_hash;
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        first_name: 'Renamed',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 201 });
      expect(await recordOf(target.id)).toEqual({ ...before, first_name: 'Renamed' });
      expect(userRow(target.id)!.password_hash).toBe(hashBefore);
    });

    it('changes last_name, email and username together; the account signs in with the new username', async () => {
      const target = await makeUser([], { signIn: false });
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        last_name: 'Moved',
        email: `moved-${target.email}`,
        username: `moved-${target.username}`,
      });
      expect(res.body).toEqual({ status: 201 });
      expect(await recordOf(target.id)).toMatchObject({
        last_name: 'Moved',
        email: `moved-${target.email}`,
        username: `moved-${target.username}`,
        permissions: [],
        tags: [],
      });
      // The user's own email and username again (other case) are not "in use".
      const same = await post('/api/saveUser', admin.token, {
        user: target.id,
        email: `MOVED-${target.email}`,
        username: `Moved-${target.username}`,
      });
      expect(same.body).toEqual({ status: 201 });
    });

    it('refuses an email or a username in use by another user (any case) and changes nothing', async () => {
      const target = await makeUser([], { signIn: false });
      const other = await makeUser([], { signIn: false });
      const before = await recordOf(target.id);
      for (const [body, message] of [
        [{ email: other.email.toUpperCase() }, 'The email has already been taken.'],
        [
          { email: 'admin@appliance.local', first_name: 'Changed' },
          'The email has already been taken.',
        ],
        [{ username: other.username }, 'The username has already been taken.'],
        [{ username: 'Admin', first_name: 'Changed' }, 'The username has already been taken.'],
      ] as const) {
        const res = await post('/api/saveUser', admin.token, { user: target.id, ...body });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(legacyFailure(message));
      }
      expect(await recordOf(target.id)).toEqual(before);
    });

    it('changes the password (new hash verifies) and refuses one that fails the policy', async () => {
      const target = await makeUser([], { signIn: false });
      const original = userRow(target.id)!.password_hash;
      for (const [password, message] of [
        ['Short1a', 'The password field must be at least 8 characters.'],
        [
          'NOLOWER1',
          'The password field must contain at least one uppercase and one lowercase letter.',
        ],
        [
          'noupper1',
          'The password field must contain at least one uppercase and one lowercase letter.',
        ],
        ['NoDigits', 'The password field must contain at least one number.'],
      ]) {
        const res = await post('/api/saveUser', admin.token, {
          user: target.id,
          password,
          first_name: 'Changed',
        });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(legacyFailure(message!));
      }
      expect(userRow(target.id)!.password_hash).toBe(original);
      expect(userRow(target.id)!.first_name).toBe('Test');

      const ok = await post('/api/saveUser', admin.token, {
        user: target.id,
        password: 'New-Passw0rd',
      });
      expect(ok.body).toEqual({ status: 201 });
      const changed = userRow(target.id)!.password_hash;
      expect(changed).not.toBe(original);
      expect(await verifyPassword('New-Passw0rd', changed)).toBe(true);
      expect(await verifyPassword(target.password, changed)).toBe(false);
    });

    it('refuses a password change on a directory (LDAP) user, but saves its other fields', async () => {
      const target = await makeUser([], { signIn: false });
      db().prepare("UPDATE users SET auth_source = 'ldap' WHERE id = ?").run(target.id);
      const hash = userRow(target.id)!.password_hash;
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        password: 'Valid-Passw0rd',
        first_name: 'Changed',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        legacyFailure('The password of a directory (LDAP) user cannot be changed here.'),
      );
      expect(userRow(target.id)).toMatchObject({ password_hash: hash, first_name: 'Test' });
      const other = await post('/api/saveUser', admin.token, {
        user: target.id,
        first_name: 'Directory',
      });
      expect(other.body).toEqual({ status: 201 });
      expect(await recordOf(target.id)).toMatchObject({
        first_name: 'Directory',
        auth_source: 'ldap',
      });
    });

    it('replaces the permission set with the array given (an empty array clears it)', async () => {
      const target = await makeUser(['devices', 'logs'], { signIn: false });
      expect((await recordOf(target.id))!.permissions).toEqual(['devices', 'logs']);
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: ['alerts', 'api', 'alerts'],
      });
      expect(res.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.permissions).toEqual(['api', 'alerts']);
      // Absent: unchanged.
      await post('/api/saveUser', admin.token, { user: target.id, first_name: 'Same' });
      expect((await recordOf(target.id))!.permissions).toEqual(['api', 'alerts']);
      const cleared = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: [],
      });
      expect(cleared.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.permissions).toEqual([]);
    });

    it("leaves a directory user's LDAP-managed permissions and tags untouched when replacing the local ones", async () => {
      const target = await makeUser(['devices'], { signIn: false });
      const siteB = (
        db().prepare("SELECT id FROM tags WHERE slug = 'site-b'").get() as { id: number }
      ).id;
      db().prepare("UPDATE users SET auth_source = 'ldap' WHERE id = ?").run(target.id);
      db()
        .prepare(
          "INSERT INTO user_permissions (user_id, permission_id, source) SELECT ?, id, 'ldap' FROM permissions WHERE slug = 'logs'",
        )
        .run(target.id);
      db()
        .prepare("INSERT INTO user_tags (user_id, tag_id, source) VALUES (?, ?, 'ldap')")
        .run(target.id, siteB);
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: ['alerts'],
        tags: [{ value: 'site-a' }],
      });
      expect(res.body).toEqual({ status: 201 });
      expect(await recordOf(target.id)).toMatchObject({
        permissions: ['alerts', 'logs'],
        tags: ['site-a', 'site-b'],
      });
      const cleared = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: [],
        tags: null,
      });
      expect(cleared.body).toEqual({ status: 201 });
      expect(await recordOf(target.id)).toMatchObject({ permissions: ['logs'], tags: ['site-b'] });
    });

    it('refuses an unknown permission slug and changes nothing', async () => {
      const target = await makeUser(['devices'], { signIn: false });
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: ['alerts', 'no-such-permission'],
        first_name: 'Changed',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(legacyFailure('Unknown permission: no-such-permission'));
      expect(await recordOf(target.id)).toMatchObject({
        permissions: ['devices'],
        first_name: 'Test',
      });
    });

    it('sets the tag restriction from [{value: slug}], replaces it, and clears it with null', async () => {
      const target = await makeUser(['devices'], { signIn: false });
      const set = await post('/api/saveUser', admin.token, {
        user: target.id,
        tags: [{ value: 'site-b' }, { value: 'site-a' }],
      });
      expect(set.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.tags).toEqual(['site-a', 'site-b']);
      const replaced = await post('/api/saveUser', admin.token, {
        user: target.id,
        tags: [{ value: 'site-b' }],
      });
      expect(replaced.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.tags).toEqual(['site-b']);
      const cleared = await post('/api/saveUser', admin.token, { user: target.id, tags: null });
      expect(cleared.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.tags).toEqual([]);
      expect((await recordOf(target.id))!.permissions).toEqual(['devices']);
    });

    it('refuses an unknown tag and changes nothing', async () => {
      const target = await makeUser([], { tags: ['site-a'], signIn: false });
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        tags: [{ value: 'site-b' }, { value: 'nowhere' }],
        first_name: 'Changed',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(legacyFailure('Unknown tag: nowhere'));
      expect(await recordOf(target.id)).toMatchObject({ tags: ['site-a'], first_name: 'Test' });
    });

    it("never changes user 1's username or active flag, and keeps its sa permission", async () => {
      const before = await recordOf(1);
      for (const [body, message] of [
        [{ username: 'root' }, 'The username of the super-admin account cannot be changed.'],
        [{ active: false }, 'The super-admin account cannot be deactivated.'],
        [
          { permissions: ['users', 'system'] },
          'The super-admin account must keep the sa permission.',
        ],
        [{ permissions: [] }, 'The super-admin account must keep the sa permission.'],
      ] as const) {
        const res = await post('/api/saveUser', admin.token, {
          user: 1,
          first_name: 'Changed',
          ...body,
        });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(legacyFailure(message));
      }
      expect(await recordOf(1)).toEqual(before);
      expect(await meStatus(admin.token)).toBe(200);
      // Other fields of user 1 may change; its permissions may grow as long as sa stays.
      const ok = await post('/api/saveUser', admin.token, {
        user: 1,
        last_name: 'Admin',
        active: true,
        permissions: ['sa', 'api'],
      });
      expect(ok.body).toEqual({ status: 201 });
      expect(await recordOf(1)).toEqual({
        ...before,
        last_name: 'Admin',
        permissions: ['sa', 'api'],
      });
      await post('/api/saveUser', admin.token, {
        user: 1,
        last_name: before!.last_name,
        permissions: ['sa'],
      });
    });

    it("active=false ends the user's tokens at once; active=true lets them sign in again", async () => {
      const target = await makeUser(['devices']);
      const second = await tokenOf(target.username, target.password);
      expect(await meStatus(target.token)).toBe(200);
      expect(await meStatus(second)).toBe(200);
      expect(liveTokensOf(target.id)).toBe(2);

      const off = await post('/api/saveUser', admin.token, { user: target.id, active: false });
      expect(off.body).toEqual({ status: 201 });
      for (const token of [target.token, second]) {
        const me = await req('GET', '/api/me', { token });
        expect(me.status).toBe(401);
        expect(me.body).toEqual(UNAUTHENTICATED);
      }
      expect(liveTokensOf(target.id)).toBe(0);
      expect(
        db()
          .prepare('SELECT revoked_by_user_id FROM access_tokens WHERE user_id = ?')
          .all(target.id),
      ).toEqual([{ revoked_by_user_id: 1 }, { revoked_by_user_id: 1 }]);
      expect((await recordOf(target.id))!.active).toBe(false);
      const refused = await signIn({ email: target.username, password: target.password });
      expect(refused.body).toEqual(INVALID_LOGIN);

      const on = await post('/api/saveUser', admin.token, { user: target.id, active: true });
      expect(on.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.active).toBe(true);
      // The old tokens stay revoked; a new sign-in works.
      expect(await meStatus(target.token)).toBe(401);
      const again = await signIn({ email: target.username, password: target.password });
      expect(again.body).toMatchObject({ status: 201, hasError: false });
      expect(await meStatus(again.body.access_token)).toBe(200);
    });

    it("a change of permissions applies to the user's very next request, without signing in again", async () => {
      const target = await makeUser(['devices']);
      const before = await req('GET', '/api/getUsers', { token: target.token });
      expect(before.body.self_only).toBe(true);
      expect((await post('/api/createUser', target.token, newUserBody())).status).toBe(401);

      await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: ['devices', 'users'],
      });
      const granted = await req('GET', '/api/getUsers', { token: target.token });
      expect(granted.body).toMatchObject({ status: 201, self_only: false, caller_id: target.id });
      expect(granted.body.users.length).toBe(userCount());
      expect(
        granted.body.users.find((u: UserRecordBody) => u.id === target.id).permissions,
      ).toEqual(['users', 'devices']);

      await post('/api/saveUser', admin.token, { user: target.id, permissions: ['devices'] });
      const revoked = await req('GET', '/api/getUsers', { token: target.token });
      expect(revoked.body.self_only).toBe(true);
      expect(revoked.body.users.map((u: UserRecordBody) => u.id)).toEqual([target.id]);
      const denied = await post('/api/createUser', target.token, newUserBody());
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual(DENIED);
    });

    it('refuses to let a caller without sa grant sa (to anyone, themselves included)', async () => {
      const manager = await makeUser(['users', 'alerts']);
      const target = await makeUser(['devices'], { signIn: false });
      for (const user of [target.id, manager.id]) {
        const res = await post('/api/saveUser', manager.token, { user, permissions: ['sa'] });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(legacyFailure('Only a super-admin can grant the sa permission.'));
      }
      expect((await recordOf(target.id))!.permissions).toEqual(['devices']);
      expect((await recordOf(manager.id))!.permissions).toEqual(['users', 'alerts']);
      // Other permissions a `users` holder may grant: those they hold (users.hardening.test.ts).
      const ok = await post('/api/saveUser', manager.token, {
        user: target.id,
        permissions: ['devices', 'alerts'],
      });
      expect(ok.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.permissions).toEqual(['devices', 'alerts']);
    });

    it('lets the super-admin grant sa', async () => {
      const target = await makeUser([], { signIn: false });
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        permissions: ['sa'],
      });
      expect(res.body).toEqual({ status: 201 });
      expect((await recordOf(target.id))!.permissions).toEqual(['sa']);
    });

    it('refuses a caller without sa who changes an sa account (password, email, permissions, active flag)', async () => {
      const manager = await makeUser(['users']);
      const sa = await makeUser(['sa'], { signIn: false });
      const before = { one: await recordOf(1), sa: await recordOf(sa.id) };
      const hashes = { one: userRow(1)!.password_hash, sa: userRow(sa.id)!.password_hash };
      for (const user of [1, sa.id]) {
        for (const body of [
          { password: 'Taken-0ver-pass' },
          { email: `takeover-${user}@example.test` },
          { permissions: ['sa', 'devices'] },
          { active: false },
          { first_name: 'Owned' },
        ]) {
          const res = await post('/api/saveUser', manager.token, { user, ...body });
          expect(res.status).toBe(200);
          expect(res.body).toEqual(
            legacyFailure('Only a super-admin can modify a super-admin account.'),
          );
        }
      }
      expect(await recordOf(1)).toEqual(before.one);
      expect(await recordOf(sa.id)).toEqual(before.sa);
      expect(userRow(1)!.password_hash).toBe(hashes.one);
      expect(userRow(sa.id)!.password_hash).toBe(hashes.sa);
      // Removing sa from another account is refused too.
      const res = await post('/api/saveUser', manager.token, {
        user: sa.id,
        permissions: ['devices'],
      });
      expect(res.body).toEqual(
        legacyFailure('Only a super-admin can modify a super-admin account.'),
      );
      expect((await recordOf(sa.id))!.permissions).toEqual(['sa']);
      // The super-admin still can.
      const bySa = await post('/api/saveUser', admin.token, {
        user: sa.id,
        permissions: ['sa', 'devices'],
      });
      expect(bySa.body).toEqual({ status: 201 });
      expect((await recordOf(sa.id))!.permissions).toEqual(['sa', 'devices']);
    });

    it('refuses an unknown user id and a missing user with HTTP 200 {status: false, hasError: true, message}', async () => {
      const unknown = await post('/api/saveUser', admin.token, {
        user: 999_999,
        first_name: 'Ghost',
      });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toEqual(legacyFailure('User not found'));
      const missing = await post('/api/saveUser', admin.token, { first_name: 'Ghost' });
      expect(missing.status).toBe(200);
      expect(missing.body).toEqual(legacyFailure('The user field is required.'));
      const wrongType = await post('/api/saveUser', admin.token, { user: 'two' });
      expect(wrongType.body).toEqual(legacyFailure('The user field must be an integer.'));
    });

    it('refuses a caller without `users`: 401 {status: false, hasError: true, message}; nothing changes', async () => {
      const plain = await makeUser(['devices']);
      const res = await post('/api/saveUser', plain.token, {
        user: plain.id,
        permissions: ['users'],
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
      expect((await recordOf(plain.id))!.permissions).toEqual(['devices']);
    });
  });

  // spec: part1 > Users, MFA, permissions > POST /api/deleteUser
  describe('POST /api/deleteUser', () => {
    it("deletes the user: HTTP 200 {status: 201}; the user's tokens stop working", async () => {
      const target = await makeUser(['devices']);
      expect(await meStatus(target.token)).toBe(200);
      const before = userCount();
      const res = await post('/api/deleteUser', admin.token, { user: target.id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 201 });
      expect(userCount()).toBe(before - 1);
      expect(userRow(target.id)).toBeUndefined();
      const me = await req('GET', '/api/me', { token: target.token });
      expect(me.status).toBe(401);
      expect(me.body).toEqual(UNAUTHENTICATED);
      expect(
        db()
          .prepare('SELECT 1 FROM access_tokens WHERE token_hash = ?')
          .get(hashToken(target.token)),
      ).toBeUndefined();
      expect(await recordOf(target.id)).toBeUndefined();
    });

    it("never passes a deleted user's permissions to a new account (ids are never reused)", async () => {
      // Without AUTOINCREMENT SQLite would reuse the highest rowid after a delete, and the new
      // account (same number of access changes) would hit the deleted one's cached access.
      const INHERITED = "the new account acts with the deleted account's cached access";
      const old = await makeUser(['users', 'system']);
      expect(
        (await req('GET', '/api/getUsers', { token: old.token })).body.self_only,
        INHERITED,
      ).toBe(false);
      expect((await post('/api/deleteUser', admin.token, { user: old.id })).body).toEqual({
        status: 201,
      });
      const fresh = await makeUser(['devices'], { signIn: false });
      expect(fresh.id).toBeGreaterThan(old.id);
      // Whether or not the id is reused, the new account has only its own permissions.
      const token = await tokenOf(fresh.username, fresh.password);
      const res = await req('GET', '/api/getUsers', { token });
      expect(res.body.self_only, INHERITED).toBe(true);
      expect(res.body).toMatchObject({ self_only: true, caller_id: fresh.id });
      expect(res.body.users).toEqual([
        expect.objectContaining({
          id: fresh.id,
          username: fresh.username,
          permissions: ['devices'],
        }),
      ]);
      const denied = await post('/api/createUser', token, newUserBody());
      expect(denied.status).toBe(401);
    });

    it('refuses to delete user 1 and refuses deleting yourself: HTTP 200 {status: false, message}', async () => {
      const manager = await makeUser(['users']);
      const before = userCount();
      for (const [token, user, message] of [
        [manager.token, 1, 'The super-admin account cannot be deleted.'],
        [admin.token, 1, 'The super-admin account cannot be deleted.'],
        [manager.token, manager.id, 'You cannot delete your own account.'],
      ] as const) {
        const res = await post('/api/deleteUser', token, { user });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: false, message });
      }
      expect(userCount()).toBe(before);
      expect(await meStatus(manager.token)).toBe(200);
      expect(await meStatus(admin.token)).toBe(200);
    });

    it('refuses a caller without sa who deletes another sa account', async () => {
      const manager = await makeUser(['users']);
      const sa = await makeUser(['sa'], { signIn: false });
      const res = await post('/api/deleteUser', manager.token, { user: sa.id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: false,
        message: 'Only a super-admin can delete a super-admin account.',
      });
      expect(userRow(sa.id)).toBeDefined();
      const bySa = await post('/api/deleteUser', admin.token, { user: sa.id });
      expect(bySa.body).toEqual({ status: 201 });
      expect(userRow(sa.id)).toBeUndefined();
    });

    it('answers an unknown id and a missing user with HTTP 200 {status: false, message}', async () => {
      const before = userCount();
      const unknown = await post('/api/deleteUser', admin.token, { user: 999_999 });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toEqual({ status: false, message: 'User not found' });
      const missing = await post('/api/deleteUser', admin.token, {});
      expect(missing.status).toBe(200);
      expect(missing.body).toEqual({ status: false, message: 'The user field is required.' });
      const noBody = await post('/api/deleteUser', admin.token);
      expect(noBody.status).toBe(200);
      expect(noBody.body).toMatchObject({ status: false, message: expect.any(String) });
      expect(userCount()).toBe(before);
    });

    it('refuses a caller without `users`: 401 {status: false, hasError: true, message}', async () => {
      const plain = await makeUser(['devices', 'system']);
      const target = await makeUser([], { signIn: false });
      const res = await post('/api/deleteUser', plain.token, { user: target.id });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
      expect(userRow(target.id)).toBeDefined();
    });
  });

  // spec: part1 > Users, MFA, permissions > generateMfa, confirmMfa, disableMfa; States and transitions (MFA); Authentication 7
  describe('MFA: POST /api/generateMfa, /api/confirmMfa, /api/disableMfa', () => {
    it('generateMfa stages a secret: 200 {status: true, message, mfaKey, hostname, username, pending: true}; the live state is unchanged', async () => {
      const self = await makeUser(['users']);
      const res = await post('/api/generateMfa', self.token, { userId: self.id });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'hostname',
        'message',
        'mfaKey',
        'pending',
        'status',
        'username',
      ]);
      expect(res.body).toEqual({
        status: true,
        message: expect.stringMatching(/\S/),
        mfaKey: expect.stringMatching(/^[A-Z2-7]{32}$/),
        hostname: os.hostname(),
        username: self.username,
        pending: true,
      });
      const row = userRow(self.id)!;
      expect(row.totp_secret).toBeNull();
      expect(row.totp_pending_secret).not.toBeNull();
      expect(row.totp_pending_secret).not.toContain(res.body.mfaKey);
      expect((await recordOf(self.id))!.totp).toBe(false);
      const login = await signIn({ email: self.username, password: self.password });
      expect(login.body).toMatchObject({ status: 201, hasError: false });
    });

    it('confirmMfa refuses an empty code, a missing staged secret and a wrong code with 400 {status: false, message}', async () => {
      const self = await makeUser(['users']);
      const none = await post('/api/confirmMfa', self.token, { userId: self.id, code: '123456' });
      expect(none.status).toBe(400);
      expect(none.body).toEqual({
        status: false,
        message: 'No MFA secret is staged: generate one first.',
      });

      const generated = await post('/api/generateMfa', self.token, { userId: self.id });
      for (const code of ['', '   ']) {
        const empty = await post('/api/confirmMfa', self.token, { userId: self.id, code });
        expect(empty.status).toBe(400);
        expect(empty.body).toEqual({ status: false, message: 'The code field is required.' });
      }
      const missing = await post('/api/confirmMfa', self.token, { userId: self.id });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ status: false, message: 'The code field is required.' });
      for (const code of [wrongCode(generated.body.mfaKey), 'abcdef', '12345']) {
        const wrong = await post('/api/confirmMfa', self.token, { userId: self.id, code });
        expect(wrong.status).toBe(400);
        expect(wrong.body).toEqual({
          status: false,
          message: 'The code does not match the staged secret.',
        });
      }
      const row = userRow(self.id)!;
      expect(row.totp_secret).toBeNull();
      expect(row.totp_pending_secret).not.toBeNull();
      expect((await recordOf(self.id))!.totp).toBe(false);
    });

    it('a second generateMfa replaces the staged secret: codes of the first no longer confirm', async () => {
      const self = await makeUser(['users']);
      const first = await post('/api/generateMfa', self.token, { userId: self.id });
      const second = await post('/api/generateMfa', self.token, { userId: self.id });
      expect(second.body.mfaKey).not.toBe(first.body.mfaKey);
      const now = h.clock.now();
      const firstCode = totpCodeAt(first.body.mfaKey, now);
      const secondNear = [-1, 0, 1].map((d) => totpCodeAt(second.body.mfaKey, now + d * STEP_MS));
      if (!secondNear.includes(firstCode)) {
        const stale = await post('/api/confirmMfa', self.token, {
          userId: self.id,
          code: firstCode,
        });
        expect(stale.status).toBe(400);
        expect(stale.body).toEqual({
          status: false,
          message: 'The code does not match the staged secret.',
        });
      }
      const ok = await post('/api/confirmMfa', self.token, {
        userId: self.id,
        code: totpCodeAt(second.body.mfaKey, h.clock.now()),
      });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ status: true, message: expect.stringMatching(/\S/) });
    });

    it('confirmMfa with the right code enables MFA: sign-in then needs the TOTP; disableMfa turns it off again', async () => {
      const self = await makeUser(['users']);
      const generated = await post('/api/generateMfa', self.token, { userId: self.id });
      const key = generated.body.mfaKey as string;
      const confirmed = await post('/api/confirmMfa', self.token, {
        userId: self.id,
        code: totpCodeAt(key, h.clock.now()),
      });
      expect(confirmed.status).toBe(200);
      expect(Object.keys(confirmed.body).sort()).toEqual(['message', 'status']);
      expect(confirmed.body).toEqual({ status: true, message: expect.stringMatching(/\S/) });
      const row = userRow(self.id)!;
      expect(row.totp_secret).not.toBeNull();
      expect(row.totp_pending_secret).toBeNull();
      expect((await recordOf(self.id))!.totp).toBe(true);
      // The token used to enable MFA keeps working.
      expect(await meStatus(self.token)).toBe(200);

      const withoutCode = await signIn({ email: self.username, password: self.password });
      expect(withoutCode.status).toBe(200);
      expect(withoutCode.body).toEqual(TOTP_REQUIRED);
      // The confirming code was used; the next step's code (one step of drift) signs in.
      const withCode = await signIn({
        email: self.username,
        password: self.password,
        totp: totpCodeAt(key, h.clock.now() + STEP_MS),
      });
      expect(withCode.body).toMatchObject({ status: 201, hasError: false, user: { id: self.id } });

      const disabled = await post('/api/disableMfa', self.token, { userId: self.id });
      expect(disabled.status).toBe(200);
      expect(disabled.body).toEqual({ status: true, message: expect.stringMatching(/\S/) });
      expect(userRow(self.id)).toMatchObject({ totp_secret: null, totp_pending_secret: null });
      expect((await recordOf(self.id))!.totp).toBe(false);
      const plain = await signIn({ email: self.username, password: self.password });
      expect(plain.body).toMatchObject({ status: 201, hasError: false, user: { id: self.id } });
    });

    it("lets the super-admin manage another user's MFA", async () => {
      const target = await makeUser([], { signIn: false });
      const generated = await post('/api/generateMfa', admin.token, { userId: target.id });
      expect(generated.status).toBe(200);
      expect(generated.body).toMatchObject({
        status: true,
        username: target.username,
        pending: true,
      });
      const confirmed = await post('/api/confirmMfa', admin.token, {
        userId: target.id,
        code: totpCodeAt(generated.body.mfaKey, h.clock.now()),
      });
      expect(confirmed.status).toBe(200);
      expect((await recordOf(target.id))!.totp).toBe(true);
      const disabled = await post('/api/disableMfa', admin.token, { userId: target.id });
      expect(disabled.status).toBe(200);
      expect((await recordOf(target.id))!.totp).toBe(false);
    });

    it('disableMfa also drops a staged secret, and answers 200 when MFA was off', async () => {
      const self = await makeUser(['users']);
      await post('/api/generateMfa', self.token, { userId: self.id });
      const res = await post('/api/disableMfa', self.token, { userId: self.id });
      expect(res.status).toBe(200);
      expect(userRow(self.id)).toMatchObject({ totp_secret: null, totp_pending_secret: null });
      const noStage = await post('/api/confirmMfa', self.token, {
        userId: self.id,
        code: '123456',
      });
      expect(noStage.status).toBe(400);
    });

    it("refuses another user's id without sa: 403 {status: false, message: 'Not authorized to modify this user'}", async () => {
      const manager = await makeUser(['users']);
      const target = await makeUser(['users'], { signIn: false });
      const staged = await post('/api/generateMfa', admin.token, { userId: target.id });
      const code = totpCodeAt(staged.body.mfaKey, h.clock.now());
      for (const [path, body] of [
        ['/api/generateMfa', { userId: target.id }],
        ['/api/confirmMfa', { userId: target.id, code }],
        ['/api/disableMfa', { userId: target.id }],
        ['/api/generateMfa', { userId: 1 }],
        ['/api/disableMfa', { userId: 999_999 }],
      ] as const) {
        const res = await post(path, manager.token, body);
        expect(res.status, path).toBe(403);
        expect(res.body).toEqual(NOT_YOURS);
      }
      const row = userRow(target.id)!;
      expect(row.totp_secret).toBeNull();
      expect(row.totp_pending_secret).not.toBeNull();
    });

    it('answers an unknown user (as sa) with 404 {status: false, message}', async () => {
      for (const [path, body] of [
        ['/api/generateMfa', { userId: 999_999 }],
        ['/api/confirmMfa', { userId: 999_999, code: '123456' }],
        ['/api/disableMfa', { userId: 999_999 }],
      ] as const) {
        const res = await post(path, admin.token, body);
        expect(res.status, path).toBe(404);
        expect(res.body).toEqual(NO_SUCH_USER);
      }
    });

    it('refuses a caller without `users` (even for themselves): 401 {status: false, hasError: true, message}', async () => {
      const plain = await makeUser(['devices', 'api']);
      for (const [path, body] of [
        ['/api/generateMfa', { userId: plain.id }],
        ['/api/confirmMfa', { userId: plain.id, code: '123456' }],
        ['/api/disableMfa', { userId: plain.id }],
      ] as const) {
        const res = await post(path, plain.token, body);
        expect(res.status, path).toBe(401);
        expect(res.body).toEqual(DENIED);
      }
      expect(userRow(plain.id)).toMatchObject({ totp_secret: null, totp_pending_secret: null });
      for (const path of ['/api/generateMfa', '/api/disableMfa']) {
        const res = await post(path, null, { userId: plain.id });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHENTICATED);
      }
    });

    it('refuses a missing or malformed userId with 400 {status: false, message}', async () => {
      const missing = await post('/api/generateMfa', admin.token, {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ status: false, message: 'The userId field is required.' });
      const wrong = await post('/api/disableMfa', admin.token, { userId: 'me' });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({
        status: false,
        message: 'The userId field must be an integer.',
      });
    });
  });

  // spec: part1 > Users, MFA, permissions > GET /api/getPermissions; Permission
  describe('GET /api/getPermissions', () => {
    it('gives any authenticated user {status: 201, hasError: false, permissions: [{id, slug, name}]} with every slug the spec names', async () => {
      const nobody = await makeUser([]);
      for (const token of [nobody.token, admin.token]) {
        const res = await req('GET', '/api/getPermissions', { token });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['hasError', 'permissions', 'status']);
        expect(res.body).toMatchObject({ status: 201, hasError: false });
        const permissions = res.body.permissions as { id: number; slug: string; name: string }[];
        for (const p of permissions) {
          expect(Object.keys(p).sort()).toEqual(['id', 'name', 'slug']);
          expect(Number.isInteger(p.id)).toBe(true);
          expect(p.name.trim().length).toBeGreaterThan(0);
        }
        expect(permissions.map((p) => p.slug)).toEqual(expect.arrayContaining(ALL_SLUGS));
        expect(new Set(permissions.map((p) => p.id)).size).toBe(permissions.length);
        expect(new Set(permissions.map((p) => p.slug)).size).toBe(permissions.length);
      }
    });

    it('refuses a request without a token: 401 {status: false, hasError: true, message}', async () => {
      const res = await req('GET', '/api/getPermissions');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
    });
  });
});
