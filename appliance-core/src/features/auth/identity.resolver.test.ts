/**
 * The bearer cache must never outlive a change: writes made by any code path through the
 * appliance's connection (here: raw SQL, as another feature's repository would) take effect on
 * the very next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

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
