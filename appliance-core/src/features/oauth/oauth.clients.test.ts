/**
 * Pending OAuth clients (issue 11): they expire 7 days after registration (the pending list shows
 * when), one client address holds at most 20 of them (then 429 with Retry-After), and the
 * 500-client cap counts approved clients only, so anonymous registration cannot fill it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
} from '../../../../test/harness/appliance.js';
import { DAY_MS } from '../../platform/time/time.js';
import { pendingQuotaKey } from './oauth.service.js';

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

let h: Harness;
let operatorToken: string;
let operator: { username: string; password: string };
/** Advances the appliance's clock; the operator signs in again (login tokens last 12 hours). */
const advance = async (ms: number) => {
  h.clock.advance(ms);
  operatorToken = await h.login(operator.username, operator.password);
};
let addressCounter = 0;

/** A fresh client address (a benchmarking range: a label only, nothing is sent there). */
const nextAddress = () => {
  addressCounter++;
  return `198.19.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
};
const call = (method: string, path: string, options: RequestOptions = {}, from = nextAddress()) =>
  h.request(method, path, { ...options, headers: { 'x-forwarded-for': from, ...options.headers } });
const register = (from: string, name = 'Pending client') =>
  call(
    'POST',
    '/auth/register',
    { body: { client_name: name, redirect_uris: ['https://c.example/cb'] } },
    from,
  );
const pendingList = async () => {
  const res = await call('GET', '/api/oauth/clients/pending', { token: operatorToken });
  expect(res.status).toBe(200);
  return res.body.clients as { client_id: string; created_at: string; expires_at: string }[];
};
const count = (where: string) =>
  (
    h.appliance.db.prepare(`SELECT COUNT(*) AS n FROM oauth_clients WHERE ${where}`).get() as {
      n: number;
    }
  ).n;
/** Rows written straight to the table (filling the cap through the API would take hours at 10 a minute). */
const fill = (n: number, prefix: string, options: { approved: boolean; from?: string }) => {
  const insert = h.appliance.db.prepare(
    `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types,
       token_endpoint_auth_method, created_at, approved_at, registered_from)
     VALUES (?, 'filler', '["https://f.example/cb"]', '["authorization_code"]', '["code"]', 'none', ?, ?, ?)`,
  );
  const now = h.clock.now();
  h.appliance.db.transaction(() => {
    for (let i = 0; i < n; i++)
      insert.run(`${prefix}-${i}`, now, options.approved ? now : null, options.from ?? null);
  })();
};
const drop = (prefix: string) =>
  h.appliance.db.prepare('DELETE FROM oauth_clients WHERE client_id LIKE ?').run(`${prefix}-%`);

beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
  const created = await h.userWith(['system']);
  operator = created;
  operatorToken = created.token;
});

afterAll(async () => {
  await h?.close();
});

describe('pending clients expire after 7 days', () => {
  it('the pending list shows each expires_at, 7 days after created_at', async () => {
    const res = await register(nextAddress());
    expect(res.status).toBe(201);
    const listed = (await pendingList()).find((c) => c.client_id === res.body.client_id)!;
    expect(listed.expires_at).toMatch(ISO_WITH_OFFSET);
    expect(Date.parse(listed.expires_at) - Date.parse(listed.created_at)).toBe(7 * DAY_MS);
  });

  it('an expired pending client is purged: gone from the list and the table, and cannot be approved; approved ones stay', async () => {
    const stale = (await register(nextAddress(), 'stale')).body.client_id as string;
    const kept = (await register(nextAddress(), 'kept')).body.client_id as string;
    const approve = (id: string) =>
      call('POST', `/api/oauth/clients/${id}/approve`, { token: operatorToken });
    expect((await approve(kept)).status).toBe(200);
    await advance(7 * DAY_MS - 60_000);
    expect((await pendingList()).map((c) => c.client_id)).toContain(stale);
    await advance(60_001);
    expect((await pendingList()).map((c) => c.client_id)).not.toContain(stale);
    expect(count(`client_id = '${stale}'`)).toBe(0);
    const late = await approve(stale);
    expect(late.status).toBe(404);
    expect(late.body).toEqual({ error: 'not_found' });
    expect(count(`client_id = '${kept}' AND approved_at IS NOT NULL`)).toBe(1);
  });
});

describe('at most 20 pending clients per client address', () => {
  it('the 21st answers 429 temporarily_unavailable with Retry-After (until the oldest expires) and stores nothing', async () => {
    const address = nextAddress();
    fill(19, 'quota', { approved: false, from: address });
    h.clock.advance(60_000);
    expect((await register(address)).status).toBe(201); // the 20th
    const before = count('approved_at IS NULL');
    const refused = await register(address);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'temporarily_unavailable',
      error_description:
        'This address has 20 client registrations awaiting approval; register again when an operator has approved or deleted one, or when one expires.',
    });
    expect(Number(refused.headers['retry-after'])).toBe(7 * 24 * 3600 - 60);
    expect(count('approved_at IS NULL')).toBe(before);
    // Another address is not affected; one approval frees a place.
    expect((await register(nextAddress())).status).toBe(201);
    const approved = await call('POST', '/api/oauth/clients/quota-0/approve', {
      token: operatorToken,
    });
    expect(approved.status).toBe(200);
    expect((await register(address)).status).toBe(201);
    drop('quota');
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(pendingQuotaKey('192.0.2.7')).toBe('192.0.2.7');
    expect(pendingQuotaKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(pendingQuotaKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(pendingQuotaKey('2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(pendingQuotaKey('2001:db8::5')).toBe('2001:db8:0:0::/64');
    expect(pendingQuotaKey('::1')).toBe('0:0:0:0::/64');
  });
});

describe('the 500-client cap counts approved clients only', () => {
  it('500 pending clients do not stop a registration; 500 approved ones do (503), and so does approving a 501st', async () => {
    fill(500, 'pending-fill', { approved: false });
    expect((await register(nextAddress(), 'beside 500 pending')).status).toBe(201);
    drop('pending-fill');

    const waiting = (await register(nextAddress(), 'waiting')).body.client_id as string;
    const approvedNow = count('approved_at IS NOT NULL');
    fill(500 - approvedNow, 'approved-fill', { approved: true });
    const full = await register(nextAddress(), 'number 501');
    expect(full.status).toBe(503);
    expect(full.body).toEqual({
      error: 'server_error',
      error_description:
        'The appliance holds the maximum of 500 OAuth clients; an operator must delete one first.',
    });
    const approve = await call('POST', `/api/oauth/clients/${waiting}/approve`, {
      token: operatorToken,
    });
    expect(approve.status).toBe(503);
    expect(approve.body).toEqual({ error: 'server_error' });
    expect(count(`client_id = '${waiting}' AND approved_at IS NULL`)).toBe(1);
    drop('approved-fill');
    expect(
      (await call('POST', `/api/oauth/clients/${waiting}/approve`, { token: operatorToken }))
        .status,
    ).toBe(200);
  });
});
