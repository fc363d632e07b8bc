/**
 * The audit trail of identity changes, end to end: sign-in success and failure, sign-out, users
 * (create, update with permissions and tags, delete, refusals), MFA, personal tokens (create,
 * revoke, an operator's revoke and revoke-all) and OAuth client approval and deletion each leave
 * one row with actor, source address, target and outcome; no row ever holds a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startAppliance, type Harness } from '../harness/appliance.js';

interface Row {
  actor_user_id: number | null;
  actor: string;
  token_id: number | null;
  source_ip: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  outcome: string;
  detail: string | null;
}

let h: Harness;
let admin: string;
let seen = 0;

/** The audit rows written since the previous call, oldest first. */
function fresh(): Row[] {
  const rows = h.appliance.db
    .prepare('SELECT * FROM audit_log WHERE id > ? ORDER BY id')
    .all(seen) as (Row & { id: number })[];
  if (rows.length > 0) seen = rows.at(-1)!.id;
  return rows;
}
const detail = (row: Row) => (row.detail === null ? null : JSON.parse(row.detail));

beforeAll(async () => {
  h = await startAppliance();
  admin = await h.login();
});
afterAll(() => h.close());

describe('audit trail', () => {
  it('sign-in: success with the token used, failures without the name typed when it is no account', async () => {
    fresh();
    const token = await h.login();
    const [ok] = fresh();
    expect(ok).toMatchObject({
      action: 'auth.login',
      outcome: 'success',
      actor_user_id: 1,
      actor: 'admin',
      source_ip: '127.0.0.1',
      target_type: 'user',
      target_id: '1',
      target_label: 'admin',
    });
    expect(ok!.token_id).toBeGreaterThan(0);
    expect(detail(ok!)).toEqual({ via: 'api' });

    await h.request('POST', '/api/login', { body: { email: 'admin', password: 'Wrong-Passw0rd' } });
    await h.request('POST', '/api/login', {
      body: { email: 'S3cret-typed-as-name', password: 'whatever' },
    });
    const [wrong, unknown] = fresh();
    expect(wrong).toMatchObject({
      action: 'auth.login',
      outcome: 'failure',
      actor_user_id: null,
      actor: 'anonymous',
      target_id: '1',
      target_label: 'admin',
    });
    expect(detail(wrong!)).toEqual({ via: 'api', reason: 'wrong password' });
    expect(unknown).toMatchObject({ action: 'auth.login', outcome: 'failure', target_type: null });
    expect(detail(unknown!)).toEqual({ via: 'api', reason: 'unknown account' });

    await h.request('POST', '/api/logout', { token });
    expect(fresh()).toMatchObject([
      { action: 'auth.logout', outcome: 'success', actor_user_id: 1, target_id: '1' },
    ]);
  });

  it('users: create, update (permissions and tags), refusal by a users holder, MFA, delete', async () => {
    fresh();
    const operator = await h.userWith(['users']);
    // The harness signs in as admin (once), creates the user, grants it `users`, signs it in.
    const setup = fresh().filter((r) => r.action.startsWith('user.'));
    expect(setup.map((r) => `${r.action}:${r.outcome}`)).toEqual([
      'user.create:success',
      'user.update:success',
    ]);
    expect(setup[0]).toMatchObject({ actor: 'admin', target_label: operator.username });
    expect(detail(setup[1]!)).toEqual({
      fields: [],
      permissions_added: ['users'],
      permissions_removed: [],
      tags_added: [],
      tags_removed: [],
    });

    // A users holder reaching for the sa account: refused and audited with the reason.
    const refused = await h.request('POST', '/api/saveUser', {
      token: operator.token,
      body: { user: 1, password: 'Takeover-Passw0rd1' },
    });
    expect(refused.body).toMatchObject({ hasError: true });
    const [refusal] = fresh();
    expect(refusal).toMatchObject({
      action: 'user.update',
      outcome: 'failure',
      actor_user_id: operator.id,
      target_type: 'user',
      target_id: '1',
    });
    expect(detail(refusal!)).toEqual({
      reason: 'Only a super-admin can modify a super-admin account.',
    });

    await h.request('POST', '/api/saveUser', {
      token: admin,
      body: { user: operator.id, first_name: 'Renamed', password: 'Changed-Passw0rd1' },
    });
    const [update] = fresh();
    expect(detail(update!).fields).toEqual(['first_name', 'password']);

    await h.request('POST', '/api/generateMfa', { token: admin, body: { userId: operator.id } });
    await h.request('POST', '/api/disableMfa', { token: admin, body: { userId: operator.id } });
    expect(fresh().map((r) => `${r.action}:${r.target_id}`)).toEqual([
      `user.mfa_disable:${operator.id}`,
    ]);

    await h.request('POST', '/api/deleteUser', { token: admin, body: { user: operator.id } });
    expect(fresh()).toMatchObject([
      {
        action: 'user.delete',
        outcome: 'success',
        actor: 'admin',
        target_id: String(operator.id),
        target_label: operator.username,
      },
    ]);
  });

  it('a refused create leaves a failure row and no success row', async () => {
    fresh();
    const res = await h.request('POST', '/api/createUser', {
      token: admin,
      body: {
        first_name: 'A',
        last_name: 'B',
        email: 'admin@appliance.local',
        username: 'someone',
        password: 'Good-Passw0rd1',
      },
    });
    expect(res.body).toMatchObject({ hasError: true });
    const rows = fresh();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: 'user.create',
      outcome: 'failure',
      target_label: 'someone',
    });
  });

  it('personal tokens: create, revoke, an operator revoking one and all of a user', async () => {
    const user = await h.userWith(['api']);
    fresh();
    const created = await h.request('POST', '/api/tokens', {
      token: user.token,
      body: { name: 'ci script', scopes: ['mcp:devices'], expires_in_days: 30 },
    });
    expect(created.status).toBe(201);
    const [create] = fresh();
    expect(create).toMatchObject({
      action: 'token.create',
      actor_user_id: user.id,
      target_type: 'token',
      target_id: String(created.body.id),
      target_label: 'ci script',
    });
    expect(detail(create!)).toEqual({ scopes: ['mcp:devices'], expires_in_days: 30 });

    await h.request('DELETE', `/api/tokens/${created.body.id}`, { token: user.token });
    expect(fresh()).toMatchObject([{ action: 'token.revoke', target_id: String(created.body.id) }]);

    const second = await h.request('POST', '/api/tokens', {
      token: user.token,
      body: { name: 'b' },
    });
    fresh();
    await h.request('DELETE', `/api/users/${user.id}/tokens/${second.body.id}`, { token: admin });
    const [byOperator] = fresh();
    expect(byOperator).toMatchObject({ action: 'token.revoke', actor: 'admin' });
    expect(detail(byOperator!)).toEqual({ owner_user_id: user.id });

    await h.request('POST', `/api/users/${user.id}/tokens/revoke-all`, { token: admin });
    const [all] = fresh();
    expect(all).toMatchObject({ action: 'token.revoke_all', target_id: String(user.id) });
    expect(detail(all!).tokens_revoked).toBeGreaterThanOrEqual(1);
  });

  it('OAuth clients: approval and deletion by an operator', async () => {
    const registered = await h.request('POST', '/auth/register', {
      body: { client_name: 'Audit probe', redirect_uris: ['http://127.0.0.1:33418/cb'] },
    });
    const clientId = registered.body.client_id as string;
    fresh();
    await h.request('POST', `/api/oauth/clients/${clientId}/approve`, { token: admin });
    await h.request('DELETE', `/api/oauth/clients/${clientId}`, { token: admin });
    expect(fresh()).toMatchObject([
      { action: 'oauth_client.approve', outcome: 'success', target_id: clientId, actor: 'admin' },
      { action: 'oauth_client.delete', outcome: 'success', target_id: clientId, actor: 'admin' },
    ]);
  });

  it('no audit row holds a password or a token', async () => {
    const text = JSON.stringify(h.appliance.db.prepare('SELECT * FROM audit_log').all());
    for (const secret of [
      ADMIN_PASSWORD,
      'Wrong-Passw0rd',
      'S3cret-typed-as-name',
      'Takeover-Passw0rd1',
      'Changed-Passw0rd1',
      'Good-Passw0rd1',
      admin,
    ])
      expect(text).not.toContain(secret);
  });
});
