/**
 * The console in Chromium against a started appliance: the scenarios, one page at a time,
 * with a screenshot of each (test-results/console-screenshots, not in git). Every page must load
 * without a CSP violation, a page error, a dialog or a request outside loopback.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  haveChromium,
  launchBrowser,
  openPage,
  recordedViolations,
  screenshot,
  signInThroughUi,
  startConsoleAppliance,
  type ConsoleAppliance,
  type Watched,
} from './harness.js';

const enabled = haveChromium() && process.platform === 'linux';

describe.runIf(enabled)('console in Chromium', { timeout: 90_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let adminToken: string;

  beforeAll(async () => {
    a = await startConsoleAppliance();
    adminToken = await a.login();
    // Device 1's latency tracker pings every second, so its chart has real points quickly.
    const tracker = await a.api('GET', '/api/device/1/latency', undefined, adminToken);
    await a.api('POST', '/api/latency/set', { id: tracker.body.id, interval: 1 }, adminToken);
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
  });

  const clean = async () => {
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
    expect(w.dialogs, 'dialogs').toEqual([]);
    expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
  };

  it('signs in and lands on the overview', async () => {
    await signInThroughUi(w.page, a.url);
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
    await w.page.getByTestId('tile-Devices').waitFor();
    const session = await w.page.evaluate(() =>
      (globalThis as any).sessionStorage.getItem('console.session'),
    );
    expect(session).toContain('"token"');
    await screenshot(w.page, 'overview-dark');
    await clean();
  });

  it('opens device 1 and shows a latency chart with real points', async () => {
    // The last hour's points are the raw readings (longer windows are rolled up).
    const curve = w.page.locator('[data-testid="latency-panel"] .recharts-line-curve');
    for (let i = 0; i < 15; i++) {
      await w.page.goto(`${a.url}/devices/1`);
      await w.page.getByTestId('device-label').waitFor();
      await w.page.getByText('Last hour', { exact: true }).click();
      await w.page.waitForTimeout(1000);
      if ((await curve.count()) > 0) break;
    }
    const path = await w.page
      .locator('[data-testid="latency-panel"] .recharts-line-curve')
      .first()
      .getAttribute('d');
    // A line through at least two real points.
    expect(path ?? '').toMatch(/^M[\d.,-]+L[\d.,-]+/);
    await screenshot(w.page, 'device-1-dark');
    await clean();
  });

  it('a latency tracker without readings in the window is still named as a tracker', async () => {
    const created = await a.api(
      'POST',
      '/api/device/set',
      { ip_address: '127.0.0.9', label: 'Quiet one', profile: 'dash_generic' },
      adminToken,
    );
    const id = created.body.device.id as number;
    // A tracker row the pollers were never told about: it exists, and has no reading.
    const now = Date.now();
    a.appliance.db
      .prepare(
        "INSERT INTO latency_trackers (device_id, label, interval, created_at, updated_at) VALUES (?, 'Quiet ping', 3600, ?, ?)",
      )
      .run(id, now, now);
    await w.page.goto(`${a.url}/devices/${id}`);
    const panel = w.page.getByTestId('latency-panel');
    await panel.getByText('No latency readings in this window').waitFor();
    await panel.getByText('Readings arrive at the tracker interval', { exact: false }).waitFor();
    expect(await panel.getByText('no latency tracker', { exact: false }).count()).toBe(0);
    await clean();
  });

  it('adds a device for 127.0.0.2 and sees it go up', async () => {
    await w.page.goto(`${a.url}/devices`);
    await w.page.getByTestId('add-device').click();
    await w.page.getByLabel('Name').fill('Loopback two');
    await w.page.getByLabel('IP address').fill('127.0.0.2');
    await w.page.getByTestId('ping-every').fill('1');
    await w.page.getByTestId('save-device').click();
    await w.page.getByRole('link', { name: 'Loopback two' }).waitFor();
    await screenshot(w.page, 'devices-dark');
    const row = w.page.getByRole('row').filter({ hasText: 'Loopback two' });
    for (let i = 0; i < 20; i++) {
      if ((await row.getByText('Up', { exact: true }).count()) > 0) break;
      await w.page.waitForTimeout(1500);
      await w.page.reload();
      await w.page.getByRole('link', { name: 'Loopback two' }).waitFor();
    }
    await expect(row.getByText('Up', { exact: true }).count()).resolves.toBe(1);
    await clean();
  });

  it('runs a live ping: rows appear one at a time before the stream ends', async () => {
    await w.page.goto(`${a.url}/tools/ping`);
    await w.page.getByLabel('ping target').fill('127.0.0.1');
    // Record (rows, state) at every DOM change, in the page itself.
    await w.page.evaluate(() => {
      const g = globalThis as any;
      g.__pingLog = [];
      const observer = new g.MutationObserver(() => {
        const rows = g.document.querySelectorAll('[data-testid="ping-row"]').length;
        const state = g.document.querySelector('[data-testid="run-state"]')?.textContent ?? '';
        const last = g.__pingLog[g.__pingLog.length - 1];
        if (!last || last.rows !== rows || last.state !== state)
          g.__pingLog.push({ rows, state, t: Date.now() });
      });
      observer.observe(g.document.body, { childList: true, subtree: true, characterData: true });
    });
    await w.page.getByTestId('run').click();
    await w.page
      .getByTestId('run-state')
      .filter({ hasText: 'finished' })
      .waitFor({ timeout: 30_000 });
    const log: { rows: number; state: string; t: number }[] = await w.page.evaluate(
      () => (globalThis as any).__pingLog,
    );
    const whileRunning = log.filter((e) => e.state === 'running').map((e) => e.rows);
    // One row at a time: 1, 2, 3 ... seen while the stream was still open.
    expect(whileRunning).toEqual(expect.arrayContaining([1, 2, 3]));
    for (let i = 1; i < whileRunning.length; i++)
      expect(whileRunning[i]! - whileRunning[i - 1]!).toBeLessThanOrEqual(1);
    const first = log.find((e) => e.rows === 1)!;
    const finished = log.find((e) => e.state === 'finished')!;
    expect(finished.t - first.t).toBeGreaterThan(2000);
    expect(await w.page.getByTestId('ping-row').count()).toBe(10);
    await screenshot(w.page, 'tools-ping-dark');
    await clean();
  });

  it('runs MTR and fills the hop table', async () => {
    await w.page.goto(`${a.url}/tools/mtr?target=127.0.0.1&run=1`);
    await w.page.getByTestId('mtr-hop').first().waitFor({ timeout: 30_000 });
    await w.page
      .getByTestId('run-state')
      .filter({ hasText: 'finished' })
      .waitFor({ timeout: 60_000 });
    const hop = w.page.getByTestId('mtr-hop').first();
    await expect(hop.textContent()).resolves.toContain('127.0.0.1');
    await screenshot(w.page, 'tools-mtr-dark');
    await clean();
  });

  it('a user without tools sees the denial message and stays signed in', async () => {
    const user = await createUser(a, adminToken, 'notools', ['devices']);
    const other = await openPage(browser);
    try {
      await signInThroughUi(other.page, a.url, user.username, user.password);
      await other.page.goto(`${a.url}/tools/ping?target=127.0.0.1&run=1`);
      const alert = other.page.getByRole('alert').filter({ hasText: 'permission' });
      await alert.waitFor({ timeout: 15_000 });
      await expect(alert.textContent()).resolves.toContain(
        'You do not have permission to perform this action.',
      );
      expect(new URL(other.page.url()).pathname).toBe('/tools/ping');
      // Still signed in: another page loads its data.
      await other.page.goto(`${a.url}/devices`);
      await other.page.getByRole('link', { name: 'appliance (loopback)' }).waitFor();
      await screenshot(other.page, 'tools-denied-dark');
    } finally {
      await other.context.close();
    }
  });

  it('opens the terminal, types echo hello and reads it back', async () => {
    await w.page.goto(`${a.url}/terminal`);
    await w.page
      .getByTestId('terminal-status')
      .filter({ hasText: 'open' })
      .waitFor({ timeout: 20_000 });
    await w.page.locator('[data-testid="terminal"] textarea').focus();
    await w.page.keyboard.type('echo hello-$((40+2))\n');
    await w.page
      .locator('[data-testid="terminal"] .xterm-rows')
      .filter({ hasText: 'hello-42' })
      .waitFor({ timeout: 15_000 });
    await screenshot(w.page, 'terminal-dark');
    await clean();
  });

  it('builds a dashboard with two widgets, reloads, and finds it unchanged', async () => {
    await w.page.goto(`${a.url}/dashboards`);
    await w.page.getByTestId('new-dashboard').click();
    await w.page.getByLabel('Name').fill('NOC wall');
    await w.page.getByTestId('save-dashboard-name').click();
    await w.page.waitForURL(/\/dashboards\/NOC%20wall$/);
    // A device-status summary, then device 1's latency.
    await w.page.getByTestId('add-widget').click();
    await w.page.getByRole('dialog').getByLabel('Widget').click();
    await w.page.getByRole('option', { name: 'Device status summary' }).click();
    await w.page.getByTestId('add-widget-confirm').click();
    await w.page.getByTestId('add-widget').click();
    await w.page.getByRole('dialog').getByLabel('Device', { exact: true }).click();
    await w.page.getByRole('option', { name: /appliance \(loopback\)/ }).click();
    await w.page.getByTestId('add-widget-confirm').click();
    await expect(w.page.getByTestId('widget').count()).resolves.toBe(2);
    // Saved through setDashboards: wait for it, then reload.
    for (let i = 0; i < 30; i++) {
      const stored = await a.api('GET', '/api/getDashboards', undefined, adminToken);
      const widgets = stored.body?.dashboards?.['NOC wall']?.widgets ?? [];
      const layout = stored.body?.layouts?.['NOC wall'] ?? [];
      if (widgets.length === 2 && layout.length === 2) break;
      await w.page.waitForTimeout(200);
    }
    const before = await a.api('GET', '/api/getDashboards', undefined, adminToken);
    await w.page.reload();
    await w.page.getByTestId('widget').nth(1).waitFor();
    await expect(w.page.getByTestId('widget').count()).resolves.toBe(2);
    await expect(w.page.getByRole('tab', { name: 'NOC wall' }).count()).resolves.toBe(1);
    const after = await a.api('GET', '/api/getDashboards', undefined, adminToken);
    expect(after.body).toEqual(before.body);
    await screenshot(w.page, 'dashboards-dark');
    await clean();
  });

  it('creates a token (shown once) and revokes it', async () => {
    await w.page.goto(`${a.url}/tokens`);
    await w.page.getByTestId('new-token-button').click();
    await w.page.getByRole('dialog').getByLabel(/^Name/).fill('nightly backup script');
    await w.page.getByTestId('create-token').click();
    const token = (await w.page.getByTestId('new-token').textContent())?.trim() ?? '';
    expect(token.length).toBeGreaterThan(20);
    // The token works: it is a real bearer of the admin.
    const me = await a.api('GET', '/api/me', undefined, token);
    expect(me.status).toBe(200);
    await w.page.getByRole('button', { name: 'Done' }).click();
    const row = w.page.getByTestId('token-row').filter({ hasText: 'nightly backup script' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    for (let i = 0; i < 20 && (await a.api('GET', '/api/me', undefined, token)).status === 200; i++)
      await w.page.waitForTimeout(100);
    expect((await a.api('GET', '/api/me', undefined, token)).status).toBe(401);
    await screenshot(w.page, 'tokens-dark');
    await clean();
  });

  it('approves a pending OAuth client', async () => {
    const registered = await a.api('POST', '/auth/register', {
      client_name: 'Field laptop MCP',
      redirect_uris: ['http://127.0.0.1:53682/callback'],
    });
    expect(registered.status).toBe(201);
    await w.page.goto(`${a.url}/oauth-clients`);
    const row = w.page.getByTestId('oauth-client').filter({ hasText: 'Field laptop MCP' });
    await screenshot(w.page, 'oauth-clients-dark');
    await row.getByTestId('approve').click();
    await w.page.getByTestId('empty-state').waitFor();
    const pending = await a.api('GET', '/api/oauth/clients/pending', undefined, adminToken);
    expect(pending.body.clients).toEqual([]);
    await clean();
  });
});
