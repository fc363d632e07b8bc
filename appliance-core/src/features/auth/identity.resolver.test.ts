/**
 * The bearer cache must never outlive a change: writes made by any code path through the
 * appliance's connection (here: raw SQL, as another feature's repository would) take effect on
 * the very next request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { systemClock } from '../../platform/time/time.js';
import { TokenService } from '../tokens/index.js';
import { seedSuperAdmin } from '../users/index.js';
import { CachedIdentityResolver } from './identity.resolver.js';

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await startAppliance();
  token = await h.login();
});
afterAll(() => h.close());

const me = () => h.request('GET', '/api/me', { token });

describe('identity cache invalidation', () => {
  it('serves repeated requests from the cache and still sees a revocation written by raw SQL', async () => {
    expect((await me()).status).toBe(200);
    expect((await me()).status).toBe(200);
    h.appliance.db
      .prepare('UPDATE access_tokens SET revoked_at = ? WHERE revoked_at IS NULL')
      .run(Date.now());
    expect((await me()).status).toBe(401);
    token = await h.login();
  });

  it('sees an expiry moved into the past, a deactivation and a permission change', async () => {
    expect((await me()).status).toBe(200);
    h.appliance.db
      .prepare('UPDATE access_tokens SET expires_at = 1 WHERE revoked_at IS NULL')
      .run();
    expect((await me()).status).toBe(401);
    token = await h.login();

    const user = await h.userWith(['users']);
    const asUser = () => h.request('GET', '/api/getUsers', { token: user.token });
    expect((await asUser()).body.self_only).toBe(false);
    h.appliance.db.prepare('DELETE FROM user_permissions WHERE user_id = ?').run(user.id);
    expect((await asUser()).body.self_only).toBe(true);
    h.appliance.db.prepare('UPDATE users SET active = 0 WHERE id = ?').run(user.id);
    expect((await asUser()).status).toBe(401);
  });

  it('sees a tag restriction added to a user', async () => {
    const user = await h.userWith(['users']);
    const tagId = Number(
      h.appliance.db
        .prepare(`INSERT INTO tags (slug, name, type) VALUES ('cache-site', 'Site', 'device')`)
        .run().lastInsertRowid,
    );
    expect(
      (await h.request('GET', '/api/getUsers', { token: user.token })).body.users.find(
        (u: { id: number }) => u.id === user.id,
      ).tags,
    ).toEqual([]);
    h.appliance.db
      .prepare(`INSERT INTO user_tags (user_id, tag_id) VALUES (?, ?)`)
      .run(user.id, tagId);
    const after = await h.request('GET', '/api/getUsers', { token: user.token });
    expect(after.body.users.find((u: { id: number }) => u.id === user.id).tags).toEqual([
      'cache-site',
    ]);
  });
});

/**
 * The database as the resolver sees it, counting every statement it executes (get, all, run,
 * iterate): a cache hit executes none, so the count tells hits from lookups.
 */
function countingDb(db: DB): { db: DB; executed: () => number } {
  let executed = 0;
  const wrapStatement = (statement: object) =>
    new Proxy(statement, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== 'function') return value;
        if (key === 'get' || key === 'all' || key === 'run' || key === 'iterate')
          return (...args: unknown[]) => {
            executed++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  const proxy = new Proxy(db, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'prepare')
        return (...args: unknown[]) =>
          wrapStatement((value as (...a: unknown[]) => object).apply(target, args));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { db: proxy, executed: () => executed };
}

describe('identity cache hits (statements executed per resolution)', () => {
  let dir: string;
  let db: DB;
  let tokens: TokenService;
  let resolver: CachedIdentityResolver;
  let executed: () => number;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'identity-cache-'));
    db = openDatabase(path.join(dir, 'appliance.db'));
    migrate(db, systemClock.now());
    await seedSuperAdmin(db, systemClock.now(), 'Admin-Passw0rd');
    tokens = new TokenService(db, systemClock);
    const counting = countingDb(db);
    executed = counting.executed;
    resolver = new CachedIdentityResolver(counting.db, systemClock, tokens);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const mint = () =>
    tokens.mint({ userId: 1, name: 'cache test', kind: 'pat', ttlMs: 3_600_000 }).plaintext;

  /** Statements the resolver executes for one bearer resolution, and what it resolved. */
  function resolve(token: string): { statements: number; userId: number | undefined } {
    const before = executed();
    const identity = resolver.fromBearer(token);
    return { statements: executed() - before, userId: identity?.user.id };
  }

  it('a repeated bearer token is answered from memory: no statement at all', () => {
    const token = mint();
    const first = resolve(token);
    expect(first.userId).toBe(1);
    // The token lookup, then the user, the permissions and the tags.
    expect(first.statements).toBeGreaterThanOrEqual(4);
    for (let i = 0; i < 3; i++) expect(resolve(token)).toEqual({ statements: 0, userId: 1 });
  });

  it("a second token of the same user reuses the cached profile: only the token's own lookup", () => {
    expect(resolve(mint())).toEqual({ statements: 1, userId: 1 });
  });

  it('a write to an identity table drops the cached entries: the next resolution looks up again', () => {
    const token = mint();
    resolve(token);
    expect(resolve(token).statements).toBe(0);
    db.prepare("UPDATE users SET first_name = 'Changed' WHERE id = 1").run();
    const after = resolve(token);
    expect(after.userId).toBe(1);
    expect(after.statements).toBeGreaterThanOrEqual(4);
    expect(resolve(token).statements).toBe(0);
  });
});
