import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { openDatabase, type DB } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { actorOf, AuditMisuseError, listAudit, recordAudit, SYSTEM_ACTOR } from './audit-log.js';

describe('audit log module', () => {
  let dir: string;
  let db: DB;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-'));
    db = openDatabase(path.join(dir, 'a.db'));
    migrate(db, 0);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const admin = { userId: 1, name: 'admin', tokenId: 7, sourceIp: '127.0.0.1' };

  it('commits with the change it records and rolls back with it', () => {
    db.exec('CREATE TABLE IF NOT EXISTS thing (id INTEGER PRIMARY KEY, name TEXT) STRICT');
    const change = (name: string, fail: boolean) =>
      db.transaction(() => {
        const id = Number(
          db.prepare('INSERT INTO thing (name) VALUES (?)').run(name).lastInsertRowid,
        );
        recordAudit(db, 1000, admin, {
          action: 'thing.create',
          outcome: 'success',
          target: { type: 'thing', id, label: name },
        });
        if (fail) throw new Error('constraint after the audit row');
      })();
    change('kept', false);
    expect(() => change('lost', true)).toThrow('constraint after the audit row');
    const { rows, total } = listAudit(db, { page: 1, limit: 10, action: 'thing.create' });
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({
      actor: 'admin',
      actor_user_id: 1,
      token_id: 7,
      target_label: 'kept',
      outcome: 'success',
    });
  });

  it('refuses detail keys that name a secret, and bad action names', () => {
    for (const key of [
      'password',
      'new_password',
      'client_secret',
      'access_token',
      'token',
      'totp',
      'otp_code',
      'secret',
      'hash',
      'cookie',
      'code',
      'api_key',
    ])
      expect(
        () =>
          recordAudit(db, 1, admin, { action: 'x.y', outcome: 'success', detail: { [key]: 'v' } }),
        key,
      ).toThrow(AuditMisuseError);
    for (const key of ['permissions', 'token_name', 'scopes', 'username', 'tokens_revoked'])
      expect(
        () =>
          recordAudit(db, 1, admin, { action: 'x.ok', outcome: 'success', detail: { [key]: 'v' } }),
        key,
      ).not.toThrow();
    for (const action of ['', 'login', 'User.create', 'user.', 'user..x', 'user.create;drop'])
      expect(() => recordAudit(db, 1, admin, { action, outcome: 'success' }), action).toThrow(
        AuditMisuseError,
      );
  });

  it('lists newest first, filters by area, action, actor and outcome, and pages', () => {
    for (let i = 0; i < 5; i++)
      recordAudit(db, 2000 + i, admin, {
        action: 'user.update',
        outcome: 'success',
        target: { type: 'user', id: i },
      });
    recordAudit(db, 3000, SYSTEM_ACTOR, { action: 'user.delete', outcome: 'failure' });
    recordAudit(
      db,
      3001,
      { userId: null, name: 'anonymous', tokenId: null, sourceIp: '127.0.0.9' },
      { action: 'auth.login', outcome: 'failure' },
    );
    const user = listAudit(db, { page: 1, limit: 100, action: 'user' });
    expect(user.rows.map((r) => r.action)).toEqual([
      'user.delete',
      ...Array(5).fill('user.update'),
    ]);
    expect(listAudit(db, { page: 1, limit: 100, action: 'user.up' }).total).toBe(0);
    expect(
      listAudit(db, { page: 1, limit: 100, outcome: 'failure' }).rows.map((r) => r.action),
    ).toEqual(['auth.login', 'user.delete']);
    expect(listAudit(db, { page: 1, limit: 100, userId: 1, action: 'user' }).total).toBe(5);
    const page2 = listAudit(db, { page: 2, limit: 2, action: 'user.update' });
    expect(page2.total).toBe(5);
    expect(page2.rows.map((r) => r.target_id)).toEqual(['2', '1']);
    expect(
      listAudit(db, { page: 1, limit: 100, start: 2003, end: 3000 }).rows.map((r) => r.at),
    ).toEqual([3000, 2004, 2003]);
  });

  it('takes the actor from the request identity, anonymous without one', () => {
    expect(actorOf({ identity: null, ip: '127.0.0.5' })).toEqual({
      userId: null,
      name: 'anonymous',
      tokenId: null,
      sourceIp: '127.0.0.5',
    });
  });
});

describe('GET /api/audit', () => {
  let h: Harness;
  let admin: string;
  let at: number;
  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    at = h.clock.now();
    for (let i = 1; i <= 3; i++)
      recordAudit(
        h.appliance.db,
        at + i,
        { userId: 1, name: 'admin', tokenId: null, sourceIp: '127.0.0.1' },
        {
          action: 'user.update',
          outcome: 'success',
          target: { type: 'user', id: i, label: `u${i}` },
          detail: { permissions: ['devices'] },
        },
      );
  });
  afterAll(() => h.close());

  it('answers a page newest first in the paginated-feed shape', async () => {
    const res = await h.request('GET', '/api/audit?action=user.update&limit=2', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.current_page).toBe(1);
    expect(res.body.per_page).toBe(2);
    expect(res.body.total).toBe(3);
    expect(res.body.data[0]).toEqual({
      id: expect.any(Number),
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      user_id: 1,
      actor: 'admin',
      token_id: null,
      source_ip: '127.0.0.1',
      action: 'user.update',
      target: { type: 'user', id: '3', label: 'u3' },
      outcome: 'success',
      detail: { permissions: ['devices'] },
    });
    expect(res.body.data[1].target.id).toBe('2');
  });

  it('filters by startTime and endTime in the spec date-time forms', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const only2 = await h.request(
      'GET',
      `/api/audit?action=user.update&startTime=${encodeURIComponent(iso(at + 2))}&endTime=${encodeURIComponent(iso(at + 2))}`,
      { token: admin },
    );
    expect(only2.body.data.map((r: { target: { id: string } }) => r.target.id)).toEqual(['2']);
    const bad = await h.request('GET', '/api/audit?startTime=yesterday', { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: {
        startTime: [
          'The startTime field must be a date-time such as 2026-11-21 10:20:30 or 2026-11-21T10:20:30Z.',
        ],
      },
    });
  });

  it('needs permission system', async () => {
    const user = await h.userWith(['users']);
    const res = await h.request('GET', '/api/audit', { token: user.token });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: false, hasError: true });
    expect((await h.request('GET', '/api/audit')).status).toBe(401);
    const system = await h.userWith(['system']);
    expect((await h.request('GET', '/api/audit', { token: system.token })).status).toBe(200);
  });

  it('refuses bad query values with 400 {errors}', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'page=0',
      'action=User',
      'outcome=maybe',
      'user_id=x',
    ]) {
      const res = await h.request('GET', `/api/audit?${query}`, { token: admin });
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body), query).toEqual(['errors']);
    }
  });
});
