/**
 * Sign-in, the device flow and refresh against a real appliance (HTTPS on a free loopback port,
 * its clock advanced by the test to expire tokens), through the main process's pinned agent and
 * proxy. The user's side of the device flow goes through the appliance's real pages.
 */
import * as OTPAuth from 'otpauth';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DEVICE_FLOW_FAILURE_CAUSES } from '../../electron/contract/bridge.js';
import { ADMIN_PASSWORD, startAppliance, type Harness } from '../../test/harness/appliance.js';
import {
  createDesktopStack,
  readAll,
  type DesktopStack,
} from '../../test/harness/desktop-stack.js';
import { answerDeviceCode } from '../../test/harness/device-approval.js';
import type { SessionClock } from './session-manager.js';

/** Main's clock: real time plus an offset; waiting between polls moves it instead of sleeping. */
class TestSessionClock implements SessionClock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new Error('aborted'));
        return;
      }
      this.offset += ms;
      setTimeout(resolve, 5);
    });
  }
}

let h: Harness;
const stacks: DesktopStack[] = [];

beforeAll(async () => {
  h = await startAppliance();
}, 60_000);

afterAll(async () => {
  await h.close();
});

afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

async function connected(clock = new TestSessionClock()) {
  const desktop = createDesktopStack({ clock });
  stacks.push(desktop);
  const probe = await desktop.registry.probe(h.url);
  const connection = await desktop.registry.add({
    url: h.url,
    acceptSha256: probe.certificate.sha256,
  });
  return { desktop, id: connection.id, clock };
}

/** Every refresh token of every grant: one row per grant plus one per rotation. */
function refreshRows(): Array<{
  family_id: number;
  used_at: number | null;
  revoked_at: number | null;
}> {
  return h.appliance.db
    .prepare('SELECT family_id, used_at, revoked_at FROM oauth_refresh_tokens ORDER BY id')
    .all() as Array<{ family_id: number; used_at: number | null; revoked_at: number | null }>;
}

function familyRevoked(familyId: number): boolean {
  const row = h.appliance.db
    .prepare('SELECT revoked_at FROM oauth_token_families WHERE id = ?')
    .get(familyId) as { revoked_at: number | null };
  return row.revoked_at !== null;
}

async function signInWithDeviceFlow(
  desktop: DesktopStack,
  id: string,
  account: { username: string; password: string },
) {
  const flow = await desktop.sessions.startDeviceFlow(id);
  await answerDeviceCode(flow.verificationUriComplete, account);
  await expect(desktop.sessions.waitDeviceFlow(flow.flowId)).resolves.toEqual({
    status: 'signed-in',
  });
  const tokens = desktop.tokens.get(id);
  if (tokens?.kind !== 'oauth') throw new Error('expected OAuth tokens');
  const family = refreshRows().at(-1)!.family_id;
  return { tokens, family };
}

describe('password sign-in', () => {
  it('signs in with browser_id spa:<uuid>:<fp>, fixed per installation and connection', async () => {
    const { desktop, id } = await connected();
    await expect(
      desktop.sessions.signInWithPassword({
        connectionId: id,
        username: 'admin',
        password: 'wrong',
      }),
    ).resolves.toEqual({ status: 'invalid-credentials', message: 'Invalid Username/Password' });
    expect(desktop.sessions.status(id).signedIn).toBe(false);

    const result = await desktop.sessions.signInWithPassword({
      connectionId: id,
      username: 'admin',
      password: ADMIN_PASSWORD,
    });
    expect(result).toMatchObject({ status: 'signed-in', user: { id: 1 } });
    const browserId = desktop.store.browserIdOf(desktop.store.get(id)!);
    const names = h.appliance.db
      .prepare("SELECT name FROM access_tokens WHERE kind = 'login' AND revoked_at IS NULL")
      .all() as Array<{ name: string }>;
    expect(names.map((row) => row.name)).toContain(browserId);

    const me = await readAll(await desktop.fetch(id, '/api/me'));
    expect(me.status).toBe(200);
    expect(JSON.parse(me.text)).toMatchObject({ username: 'admin' });

    // Signing out revokes the token on the appliance.
    const token = desktop.tokens.get(id)!.accessToken;
    await desktop.sessions.signOut(id);
    expect(desktop.sessions.status(id).signedIn).toBe(false);
    expect((await h.request('GET', '/api/me', { token })).status).toBe(401);
  });

  it('asks for the TOTP code when MFA is on, then signs in with it', async () => {
    const user = await h.userWith(['api', 'users']);
    const generated = await h.request('POST', '/api/generateMfa', {
      token: user.token,
      body: { userId: user.id },
    });
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(generated.body.mfaKey) });
    const confirmed = await h.request('POST', '/api/confirmMfa', {
      token: user.token,
      body: { userId: user.id, code: totp.generate({ timestamp: h.clock.now() }) },
    });
    expect(confirmed.status).toBe(200);
    h.clock.advance(30_000); // a code works once: the sign-in uses the next one

    const { desktop, id } = await connected();
    const account = { connectionId: id, username: user.username, password: user.password };
    await expect(desktop.sessions.signInWithPassword(account)).resolves.toEqual({
      status: 'totp-required',
    });
    await expect(
      desktop.sessions.signInWithPassword({
        ...account,
        totp: totp.generate({ timestamp: h.clock.now() }),
      }),
    ).resolves.toMatchObject({ status: 'signed-in', user: { id: user.id } });
  });
});

describe('device flow', () => {
  let alice: { id: number; token: string; username: string; password: string };

  beforeAll(async () => {
    alice = await h.userWith(['api', 'devices']);
  });

  it('shows a code and a verification URL on the connection origin, and signs in once approved', async () => {
    const { desktop, id } = await connected();
    const flow = await desktop.sessions.startDeviceFlow(id);
    expect(flow.userCode).toMatch(/^[A-Z]{8}$/);
    expect(flow.verificationUri).toBe(`${h.url}/auth/device`);
    expect(flow.verificationUriComplete).toBe(`${h.url}/auth/device?user_code=${flow.userCode}`);
    expect(flow).toMatchObject({ expiresInSeconds: 600, intervalSeconds: 5 });

    await answerDeviceCode(flow.verificationUriComplete, alice);
    await expect(desktop.sessions.waitDeviceFlow(flow.flowId)).resolves.toEqual({
      status: 'signed-in',
    });
    expect(desktop.sessions.status(id)).toEqual({
      connectionId: id,
      signedIn: true,
      method: 'device',
    });
    const me = await readAll(await desktop.fetch(id, '/api/me'));
    expect(JSON.parse(me.text)).toMatchObject({ username: alice.username });
  });

  it('a denied code ends as denied; an expired one lists every cause; cancel stops waiting', async () => {
    const { desktop, id } = await connected();
    const denied = await desktop.sessions.startDeviceFlow(id);
    await answerDeviceCode(denied.verificationUriComplete, alice, 'deny');
    await expect(desktop.sessions.waitDeviceFlow(denied.flowId)).resolves.toEqual({
      status: 'denied',
    });

    const expired = await desktop.sessions.startDeviceFlow(id);
    h.clock.advance(601_000);
    await expect(desktop.sessions.waitDeviceFlow(expired.flowId)).resolves.toEqual({
      status: 'expired',
      causes: DEVICE_FLOW_FAILURE_CAUSES,
    });
    expect(DEVICE_FLOW_FAILURE_CAUSES.join(' ')).toMatch(
      /api \(or sa\) permission.*typed wrong.*expired.*already used/,
    );

    const cancelled = await desktop.sessions.startDeviceFlow(id);
    desktop.sessions.cancelDeviceFlow(cancelled.flowId);
    await expect(desktop.sessions.waitDeviceFlow(cancelled.flowId)).rejects.toThrow(
      /no such sign-in/,
    );
    const waited = await desktop.sessions.startDeviceFlow(id);
    const waiting = desktop.sessions.waitDeviceFlow(waited.flowId);
    desktop.sessions.cancelDeviceFlow(waited.flowId);
    await expect(waiting).resolves.toEqual({ status: 'cancelled' });
    expect(desktop.sessions.status(id).signedIn).toBe(false);
  });
});

describe('refresh', () => {
  let bob: { id: number; token: string; username: string; password: string };
  let carol: { id: number; token: string; username: string; password: string };

  beforeAll(async () => {
    bob = await h.userWith(['api', 'devices']);
    carol = await h.userWith(['api']);
  });

  it('two concurrent requests near expiry cause one refresh grant, and the chain survives', async () => {
    const { desktop, id, clock } = await connected();
    const { tokens, family } = await signInWithDeviceFlow(desktop, id, bob);
    const rowsBefore = refreshRows().filter((row) => row.family_id === family).length;

    // 30 s before expiry by the main process's clock: due for refresh (60 s ahead).
    clock.offset += tokens.expiresAt - clock.now() - 30_000;
    const [first, second] = await Promise.all([
      desktop.fetch(id, '/api/me').then(readAll),
      desktop.fetch(id, '/api/devices').then(readAll),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const rows = refreshRows().filter((row) => row.family_id === family);
    expect(rows.length).toBe(rowsBefore + 1);
    expect(familyRevoked(family)).toBe(false);
    const renewed = desktop.tokens.get(id);
    expect(renewed?.accessToken).not.toBe(tokens.accessToken);

    // The chain goes on: the next expiry refreshes again with the rotated token.
    clock.offset += 3600_000;
    const third = await readAll(await desktop.fetch(id, '/api/me'));
    expect(third.status).toBe(200);
    expect(refreshRows().filter((row) => row.family_id === family).length).toBe(rowsBefore + 2);
    expect(familyRevoked(family)).toBe(false);
  });

  it('on a 401 it refreshes once, only when GET /api/me is 401 too, and retries', async () => {
    const { desktop, id } = await connected();
    const { family } = await signInWithDeviceFlow(desktop, id, bob);
    const count = () => refreshRows().filter((row) => row.family_id === family).length;
    const before = count();

    // The appliance's clock passes the access token's expiry; ours does not know.
    h.clock.advance(3601_000);
    const [one, two] = await Promise.all([
      desktop.fetch(id, '/api/devices').then(readAll),
      desktop.fetch(id, '/api/me').then(readAll),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(count()).toBe(before + 1);
    expect(familyRevoked(family)).toBe(false);
  });

  it('a 401 for a missing permission is passed through without a refresh', async () => {
    const { desktop, id } = await connected();
    const { family, tokens } = await signInWithDeviceFlow(desktop, id, carol);
    const before = refreshRows().filter((row) => row.family_id === family).length;
    const answer = await readAll(await desktop.fetch(id, '/api/devices'));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toMatchObject({ status: false, hasError: true });
    expect(refreshRows().filter((row) => row.family_id === family).length).toBe(before);
    expect(desktop.tokens.get(id)?.accessToken).toBe(tokens.accessToken);
    expect(desktop.sessions.status(id).signedIn).toBe(true);
  });

  it('a refused refresh (grant revoked) signs the connection out', async () => {
    const { desktop, id, clock } = await connected();
    const { tokens } = await signInWithDeviceFlow(desktop, id, bob);
    await h.request('POST', '/api/oauth/token/revoke', {
      body: { token: tokens.refreshToken, token_type_hint: 'refresh_token' },
    });
    clock.offset += 3600_000;
    const answer = await readAll(await desktop.fetch(id, '/api/me'));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toMatchObject({ proxy: { code: 'not-signed-in' } });
    expect(desktop.sessions.status(id).signedIn).toBe(false);
    expect(desktop.authChanges.at(-1)).toEqual({ connectionId: id, signedIn: false, method: null });
  });
});
