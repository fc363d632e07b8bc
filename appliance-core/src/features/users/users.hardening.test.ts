/**
 * Issue 11 (Identity) at the HTTP level: one namespace for usernames and emails, an unambiguous
 * sign-in over rows that already collide, least privilege for a `users` holder without `sa`
 * (users and the token administration routes), and NFKC-normalised usernames without invisible
 * characters or confusable script mixing.
 *
 * One appliance is shared by the file. Sign-in is limited per client address; the appliance
 * trusts X-Forwarded-For from loopback, so every sign-in comes from its own address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  startAppliance,
  type Harness,
  type Response,
} from '../../../../test/harness/appliance.js';
import { insertDeviceTag } from '../../../../test/harness/tags.js';
import { hashPassword } from '../../platform/security/password.js';
import { USERNAME_INVISIBLE_MESSAGE, USERNAME_MIXED_SCRIPTS_MESSAGE } from './username.rules.js';

const INVALID_LOGIN = { status: false, hasError: true, message: 'Invalid Username/Password' };
const FORBIDDEN = { error: 'Forbidden' };
const refused = (message: string) => ({ status: false, hasError: true, message });
const USERNAME_TAKEN = refused('The username has already been taken.');
const EMAIL_TAKEN = refused('The email has already been taken.');

interface Account {
  id: number;
  token: string;
  username: string;
  email: string;
  password: string;
}

describe('identity hardening (shared appliance)', () => {
  let h: Harness;
  let admin: Account;
  let client = 0;
  let counter = 0;

  const req = (method: string, path: string, token: string | null, body?: unknown) =>
    h.request(method, path, { token, body });
  const post = (path: string, token: string | null, body?: unknown) =>
    req('POST', path, token, body);
  const signIn = (login: string, password: string): Promise<Response> => {
    client++;
    return h.request('POST', '/api/login', {
      body: { email: login, password },
      headers: { 'x-forwarded-for': `203.0.113.${client}` },
    });
  };
  const tokenOf = async (login: string, password: string) => {
    const res = await signIn(login, password);
    if (res.body?.status !== 201) throw new Error(`login failed: ${res.text}`);
    return res.body.access_token as string;
  };
  const db = () => h.appliance.db;
  const row = (id: number) =>
    db()
      .prepare('SELECT username, email, password_hash, active, first_name FROM users WHERE id = ?')
      .get(id) as {
      username: string;
      email: string;
      password_hash: string;
      active: number;
      first_name: string;
    };
  const idOf = (username: string) =>
    (
      db().prepare('SELECT id FROM users WHERE username = ?').get(username) as
        { id: number } | undefined
    )?.id;
  const userCount = () =>
    (db().prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  const permissionsOf = async (id: number): Promise<string[]> => {
    const res = await req('GET', '/api/getUsers', admin.token);
    return (res.body.users as { id: number; permissions: string[] }[]).find((u) => u.id === id)!
      .permissions;
  };
  const tagsOf = async (id: number): Promise<string[]> => {
    const res = await req('GET', '/api/getUsers', admin.token);
    return (res.body.users as { id: number; tags: string[] }[]).find((u) => u.id === id)!.tags;
  };

  const newUserBody = (overrides: Record<string, unknown> = {}) => {
    counter++;
    return {
      first_name: 'Hard',
      last_name: `Ening ${counter}`,
      email: `h${counter}@example.test`,
      username: `h${counter}`,
      password: `Passw0rd-${counter}`,
      ...overrides,
    };
  };

  /** Created by the super-admin, with permissions and tags set, signed in unless told not to. */
  const makeUser = async (
    permissions: string[] = [],
    options: { tags?: string[]; signIn?: boolean } = {},
  ): Promise<Account> => {
    const body = newUserBody();
    const created = await post('/api/createUser', admin.token, body);
    if (created.body?.status !== 201) throw new Error(`createUser failed: ${created.text}`);
    const id = idOf(body.username)!;
    if (permissions.length > 0 || options.tags) {
      const saved = await post('/api/saveUser', admin.token, {
        user: id,
        permissions,
        ...(options.tags ? { tags: options.tags.map((value) => ({ value })) } : {}),
      });
      if (saved.body?.status !== 201) throw new Error(`saveUser failed: ${saved.text}`);
    }
    const token = options.signIn === false ? '' : await tokenOf(body.username, body.password);
    return { id, token, username: body.username, email: body.email, password: body.password };
  };

  /** A row written straight to the database, as an older version (or an import) could have. */
  const insertLegacyUser = async (username: string, email: string, password: string) => {
    const hash = await hashPassword(password);
    const result = db()
      .prepare(
        `INSERT INTO users (first_name, last_name, email, username, password_hash, created_at, updated_at)
         VALUES ('Legacy', 'Row', ?, ?, ?, 0, 0)`,
      )
      .run(email, username, hash);
    return Number(result.lastInsertRowid);
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

  describe('usernames and emails share one namespace (case-insensitive)', () => {
    it("createUser refuses a username equal to another account's email, and an email equal to another's username", async () => {
      const before = userCount();
      expect(
        (
          await post(
            '/api/createUser',
            admin.token,
            newUserBody({ username: 'ADMIN@Appliance.local' }),
          )
        ).body,
      ).toEqual(USERNAME_TAKEN);
      const other = await makeUser([], { signIn: false });
      expect(
        (
          await post(
            '/api/createUser',
            admin.token,
            newUserBody({ email: `${other.username.toUpperCase()}@x.test` }),
          )
        ).body?.status,
      ).toBe(201);
      // An email that is exactly another account's username (usernames may look like addresses).
      const mailLike = await makeUser([], { signIn: false });
      db().prepare('UPDATE users SET username = ? WHERE id = ?').run('ops@corp.test', mailLike.id);
      const res = await post(
        '/api/createUser',
        admin.token,
        newUserBody({ email: 'OPS@corp.test' }),
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual(EMAIL_TAKEN);
      expect(userCount()).toBe(before + 3);
    });

    it("saveUser by a users holder refuses to set a username to another account's email (the sa account's included)", async () => {
      const manager = await makeUser(['users']);
      const victim = await makeUser([], { signIn: false });
      const accomplice = await makeUser([], { signIn: false });
      for (const username of [
        'admin@appliance.local',
        'Admin@APPLIANCE.local',
        victim.email.toUpperCase(),
      ]) {
        const res = await post('/api/saveUser', manager.token, { user: accomplice.id, username });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(USERNAME_TAKEN);
      }
      expect(row(accomplice.id).username).toBe(accomplice.username);
      // The sa account still signs in by its email.
      expect((await signIn('admin@appliance.local', ADMIN_PASSWORD)).body?.status).toBe(201);
    });

    it("saveUser refuses an email equal to another account's username", async () => {
      const target = await makeUser([], { signIn: false });
      const mailLike = await makeUser([], { signIn: false });
      db().prepare('UPDATE users SET username = ? WHERE id = ?').run('noc@corp.test', mailLike.id);
      const res = await post('/api/saveUser', admin.token, {
        user: target.id,
        email: 'NOC@corp.test',
      });
      expect(res.body).toEqual(EMAIL_TAKEN);
      expect(row(target.id).email).toBe(target.email);
    });

    it('sign-in by a name two existing accounts share is refused for both; each signs in by its other name', async () => {
      // Rows that collide already (written before this rule): B's username is A's email.
      const a = await insertLegacyUser('clash-a', 'clash@corp.test', 'Clash-A-Passw0rd');
      const b = await insertLegacyUser('CLASH@corp.test', 'clash-b@corp.test', 'Clash-B-Passw0rd');
      expect((await signIn('clash@corp.test', 'Clash-A-Passw0rd')).body).toEqual(INVALID_LOGIN);
      expect((await signIn('clash@corp.test', 'Clash-B-Passw0rd')).body).toEqual(INVALID_LOGIN);
      expect((await signIn('CLASH@corp.test', 'Clash-B-Passw0rd')).body).toEqual(INVALID_LOGIN);
      const byA = await signIn('clash-a', 'Clash-A-Passw0rd');
      expect(byA.body?.user?.id).toBe(a);
      const byB = await signIn('clash-b@corp.test', 'Clash-B-Passw0rd');
      expect(byB.body?.user?.id).toBe(b);
      const audit = db()
        .prepare(
          "SELECT detail FROM audit_log WHERE action = 'auth.login' AND outcome = 'failure' ORDER BY id DESC LIMIT 1",
        )
        .get() as { detail: string };
      expect(JSON.parse(audit.detail).reason).toBe('ambiguous login');
    });
  });

  describe('usernames: NFKC, no invisible characters, no confusable script mixing', () => {
    it('refuses a Latin name with a Cyrillic letter and names with invisible characters; nothing is created', async () => {
      const before = userCount();
      for (const [username, message] of [
        ['аdmin2', USERNAME_MIXED_SCRIPTS_MESSAGE],
        ['pаypal', USERNAME_MIXED_SCRIPTS_MESSAGE],
        ['ad\u200Bmin', USERNAME_INVISIBLE_MESSAGE],
        ['admin\u202E', USERNAME_INVISIBLE_MESSAGE],
        ['op\u00ADs', USERNAME_INVISIBLE_MESSAGE],
      ] as const) {
        const res = await post('/api/createUser', admin.token, newUserBody({ username }));
        expect(res.status).toBe(200);
        expect(res.body, username).toEqual(refused(message));
      }
      expect(userCount()).toBe(before);
      const target = await makeUser([], { signIn: false });
      const res = await post('/api/saveUser', admin.token, { user: target.id, username: 'rооt' });
      expect(res.body).toEqual(refused(USERNAME_MIXED_SCRIPTS_MESSAGE));
      expect(row(target.id).username).toBe(target.username);
    });

    it('accepts a name wholly in Japanese, and Latin with Japanese; they sign in', async () => {
      for (const username of ['山田たろう', 'tanaka田中タロウ']) {
        const body = newUserBody({ username });
        expect((await post('/api/createUser', admin.token, body)).body).toEqual({ status: 201 });
        expect((await signIn(username, body.password)).body?.status).toBe(201);
      }
    });

    it('stores the NFKC form, refuses a compatibility twin of a taken name, and signs in by either form', async () => {
      const body = newUserBody({ username: 'ｆｕｌｌｗｉｄｔｈ' });
      expect((await post('/api/createUser', admin.token, body)).body).toEqual({ status: 201 });
      const id = idOf('fullwidth');
      expect(id).toBeDefined();
      expect((await signIn('fullwidth', body.password)).body?.user?.id).toBe(id);
      expect((await signIn('ＦＵＬＬＷＩＤＴＨ', body.password)).body?.user?.id).toBe(id);
      expect(
        (await post('/api/createUser', admin.token, newUserBody({ username: 'ａｄｍｉｎ' }))).body,
      ).toEqual(USERNAME_TAKEN);
      const target = await makeUser([], { signIn: false });
      expect(
        (await post('/api/saveUser', admin.token, { user: target.id, username: 'ﬁnance' })).body,
      ).toEqual({
        status: 201,
      });
      expect(row(target.id).username).toBe('finance');
    });

    it('an existing account whose name fails the rules still signs in, and can be edited without renaming it', async () => {
      const mixed = await insertLegacyUser('lеgacy', 'legacy-mixed@corp.test', 'Legacy-Passw0rd'); // Cyrillic е
      const invisible = await insertLegacyUser(
        'zero\u200Bwidth',
        'legacy-zw@corp.test',
        'Legacy-Passw0rd',
      );
      expect((await signIn('lеgacy', 'Legacy-Passw0rd')).body?.user?.id).toBe(mixed);
      expect((await signIn('zero\u200Bwidth', 'Legacy-Passw0rd')).body?.user?.id).toBe(invisible);
      // The console sends the whole form back, the unchanged name included.
      const res = await post('/api/saveUser', admin.token, {
        user: mixed,
        username: 'lеgacy',
        first_name: 'Renamed',
      });
      expect(res.body).toEqual({ status: 201 });
      expect(row(mixed).first_name).toBe('Renamed');
    });
  });

  describe('least privilege for a users holder without sa', () => {
    it('may add only permissions they hold; permissions they lack keep their state on the target', async () => {
      const manager = await makeUser(['users', 'devices', 'alerts']);
      const target = await makeUser(['logs'], { signIn: false });
      const escalate = await post('/api/saveUser', manager.token, {
        user: target.id,
        permissions: ['devices', 'capture'],
      });
      expect(escalate.body).toEqual(
        refused('You can grant only permissions you hold yourself: capture.'),
      );
      expect(await permissionsOf(target.id)).toEqual(['logs']);
      // `permissions` replaces the set: `logs` (which the manager lacks) is kept, not removed.
      expect(
        (await post('/api/saveUser', manager.token, { user: target.id, permissions: ['devices'] }))
          .body,
      ).toEqual({
        status: 201,
      });
      expect((await permissionsOf(target.id)).sort()).toEqual(['devices', 'logs']);
      expect(
        (await post('/api/saveUser', manager.token, { user: target.id, permissions: [] })).body,
      ).toEqual({
        status: 201,
      });
      expect(await permissionsOf(target.id)).toEqual(['logs']);
      // Naming a lacked permission the target already holds is no escalation.
      expect(
        (
          await post('/api/saveUser', manager.token, {
            user: target.id,
            permissions: ['logs', 'alerts'],
          })
        ).body,
      ).toEqual({ status: 201 });
      expect((await permissionsOf(target.id)).sort()).toEqual(['alerts', 'logs']);
      // The manager may not grant themselves more either.
      expect(
        (
          await post('/api/saveUser', manager.token, {
            user: manager.id,
            permissions: ['users', 'system'],
          })
        ).body,
      ).toEqual(refused('You can grant only permissions you hold yourself: system.'));
    });

    it('may not change the password, email, username or active flag of an account holding a permission they lack', async () => {
      const manager = await makeUser(['users', 'devices']);
      const stronger = await makeUser(['devices', 'system'], { signIn: false });
      const before = row(stronger.id);
      for (const change of [
        { password: 'Attacker-Passw0rd' },
        { email: 'attacker@evil.test' },
        { username: 'renamed-by-manager' },
        { active: false },
      ]) {
        const res = await post('/api/saveUser', manager.token, { user: stronger.id, ...change });
        expect(res.status).toBe(200);
        expect(res.body, JSON.stringify(change)).toEqual(
          refused(
            'Only a user who holds every permission of this account can change its password, email, username or active flag.',
          ),
        );
      }
      expect(row(stronger.id)).toEqual(before);
      // Other fields of the same account may be changed.
      expect(
        (await post('/api/saveUser', manager.token, { user: stronger.id, first_name: 'Kept' }))
          .body,
      ).toEqual({
        status: 201,
      });
      // An account with no more than the caller's permissions may be changed.
      const peer = await makeUser(['devices'], { signIn: false });
      expect(
        (await post('/api/saveUser', manager.token, { user: peer.id, password: 'Peer-Passw0rd-2' }))
          .body,
      ).toEqual({
        status: 201,
      });
      // Deleting the stronger account is refused too.
      expect((await post('/api/deleteUser', manager.token, { user: stronger.id })).body).toEqual({
        status: false,
        message: 'Only a user who holds every permission of this account can delete it.',
      });
      expect(row(stronger.id)).toBeDefined();
    });

    it("accounts a tag-restricted caller creates or edits get tags within the caller's, never none", async () => {
      const scoped = await makeUser(['users', 'devices'], { tags: ['site-a'] });
      const body = newUserBody();
      expect((await post('/api/createUser', scoped.token, body)).body).toEqual({ status: 201 });
      const created = idOf(body.username)!;
      expect(await tagsOf(created)).toEqual(['site-a']);
      const TAGS_WITHIN = refused(
        'You can restrict an account only to tags you are restricted to yourself (at least one): site-a.',
      );
      for (const tags of [
        null,
        [],
        [{ value: 'site-b' }],
        [{ value: 'site-a' }, { value: 'site-b' }],
      ]) {
        const res = await post('/api/saveUser', scoped.token, { user: created, tags });
        expect(res.body, JSON.stringify(tags)).toEqual(TAGS_WITHIN);
      }
      expect(await tagsOf(created)).toEqual(['site-a']);
      // An unrestricted account is edited only by restricting it within the caller's tags.
      const unrestricted = await makeUser(['devices'], { signIn: false });
      expect(
        (await post('/api/saveUser', scoped.token, { user: unrestricted.id, first_name: 'X' }))
          .body,
      ).toEqual(TAGS_WITHIN);
      expect(row(unrestricted.id).first_name).not.toBe('X');
      expect(
        (
          await post('/api/saveUser', scoped.token, {
            user: unrestricted.id,
            first_name: 'X',
            tags: [{ value: 'site-a' }],
          })
        ).body,
      ).toEqual({ status: 201 });
      expect(await tagsOf(unrestricted.id)).toEqual(['site-a']);
    });

    it('may not list or revoke the tokens of an sa account (user 1 or another sa holder)', async () => {
      const manager = await makeUser(['users']);
      const otherSa = await makeUser(['sa']);
      const adminTokenId = (
        db()
          .prepare(
            'SELECT id FROM access_tokens WHERE user_id = 1 AND revoked_at IS NULL ORDER BY id LIMIT 1',
          )
          .get() as {
          id: number;
        }
      ).id;
      for (const saId of [1, otherSa.id]) {
        const list = await req('GET', `/api/users/${saId}/tokens`, manager.token);
        expect(list.status).toBe(403);
        expect(list.body).toEqual(FORBIDDEN);
        const all = await post(`/api/users/${saId}/tokens/revoke-all`, manager.token);
        expect(all.status).toBe(403);
        expect(all.body).toEqual(FORBIDDEN);
      }
      const one = await req('DELETE', `/api/users/1/tokens/${adminTokenId}`, manager.token);
      expect(one.status).toBe(403);
      expect(one.body).toEqual(FORBIDDEN);
      expect((await req('GET', '/api/me', admin.token)).status).toBe(200);
      expect((await req('GET', '/api/me', otherSa.token)).status).toBe(200);
      // A non-sa account's tokens stay administrable by the manager; sa callers keep full access.
      const plain = await makeUser([]);
      expect((await req('GET', `/api/users/${plain.id}/tokens`, manager.token)).status).toBe(200);
      expect((await req('GET', `/api/users/${otherSa.id}/tokens`, admin.token)).status).toBe(200);
    });
  });
});
