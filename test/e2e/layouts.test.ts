/**
 * Device page layouts and pinned widgets, table density, and the terminal that ends with its page:
 * Chromium against a started appliance (the harness's network rules apply).
 */
import type { Browser, Page } from 'playwright-core';
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

type Box = { x: number; y: number; width: number; height: number };

/** Each widget's box on screen, by its key (`<trackerTable>:<trackerId>`). */
async function widgetBoxes(page: Page, scope = 'section[aria-label="Device widgets"]') {
  const widgets = page.locator(`${scope} [data-testid="widget"]`);
  const boxes: Record<string, Box> = {};
  for (let i = 0; i < (await widgets.count()); i++) {
    const w = widgets.nth(i);
    boxes[(await w.getAttribute('data-widget'))!] = (await w.boundingBox())!;
  }
  return boxes;
}

async function until(check: () => Promise<boolean>, what: string, tries = 50) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.runIf(enabled)('device layouts, density, terminal end', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let token: string;
  let latencyKey: string;
  let portKey: string;

  const stored = async () =>
    (await a.api('GET', '/api/getDeviceTrackers?deviceId=1', undefined, token)).body as {
      layouts: { lg?: { i: string; x: number; y: number; w: number; h: number }[] };
      pinnedWidgets: string[];
    };

  const clean = async () => {
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
    expect(w.dialogs, 'dialogs').toEqual([]);
    expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
  };

  const openWidgets = async () => {
    await w.page.goto(`${a.url}/devices/1`);
    await w.page.getByTestId('device-label').waitFor();
    await w.page.getByRole('tab', { name: 'Widgets' }).click();
    await w.page
      .locator('section[aria-label="Device widgets"] [data-testid="widget"]')
      .nth(2)
      .waitFor();
    // react-grid-layout measures its width, then places the items.
    await w.page.waitForTimeout(300);
  };

  beforeAll(async () => {
    a = await startConsoleAppliance();
    token = await a.login();
    // Device 1 (the appliance) gets two TCP port trackers besides its latency tracker.
    const port = Number(new URL(a.url).port);
    const p1 = await a.api(
      'POST',
      '/api/port/set',
      { deviceId: 1, port, label: 'https', interval: 60 },
      token,
    );
    await a.api(
      'POST',
      '/api/port/set',
      { deviceId: 1, port: 9, label: 'discard', interval: 60 },
      token,
    );
    const trackers = (await a.api('GET', '/api/getDeviceTrackers?deviceId=1', undefined, token))
      .body.trackers as { trackerTable: string; trackerId: number }[];
    latencyKey = `latency:${trackers.find((t) => t.trackerTable === 'latency')!.trackerId}`;
    portKey = `ports:${p1.body.id as number}`;
    browser = await launchBrowser();
    w = await openPage(browser);
    await signInThroughUi(w.page, a.url);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
  });

  it('arranges the device widgets, reloads, and finds them unchanged; reset puts them back', async () => {
    await openWidgets();
    const initial = await widgetBoxes(w.page);
    expect(Object.keys(initial).sort()).toEqual(expect.arrayContaining([latencyKey, portKey]));
    expect((await stored()).layouts).toEqual({});
    // Drag the latency widget by its title bar below the others.
    const handle = w.page.locator(`[data-widget="${latencyKey}"] .console-widget-handle`);
    const from = (await handle.boundingBox())!;
    await w.page.mouse.move(from.x + 40, from.y + from.height / 2);
    await w.page.mouse.down();
    for (let i = 1; i <= 10; i++)
      await w.page.mouse.move(from.x + 40 + i * 30, from.y + from.height / 2 + i * 60);
    await w.page.mouse.up();
    await until(async () => ((await stored()).layouts.lg ?? []).length > 0, 'the saved layout');
    const saved = (await stored()).layouts.lg!;
    const moved = saved.find((l) => l.i === latencyKey)!;
    expect(moved.y).toBeGreaterThan(0);
    await w.page.waitForTimeout(400);
    const arranged = await widgetBoxes(w.page);
    expect(arranged[latencyKey]!.y).toBeGreaterThan(initial[latencyKey]!.y);

    await w.page.reload();
    await w.page.getByTestId('device-label').waitFor();
    await w.page.getByRole('tab', { name: 'Widgets' }).click();
    await w.page
      .locator('section[aria-label="Device widgets"] [data-testid="widget"]')
      .nth(2)
      .waitFor();
    await w.page.waitForTimeout(300);
    expect(await widgetBoxes(w.page)).toEqual(arranged);
    expect((await stored()).layouts.lg).toEqual(saved);
    await screenshot(w.page, 'device-widgets-arranged-dark');

    await w.page.getByTestId('reset-layout').click();
    await until(async () => (await stored()).layouts.lg === undefined, 'the layout to be deleted');
    await w.page.waitForTimeout(400);
    expect(await widgetBoxes(w.page)).toEqual(initial);
    await clean();
  });

  it('pins a widget: it shows at the top of the device page, after a reload too; unpins', async () => {
    await openWidgets();
    expect(await w.page.getByTestId('pinned-widgets').count()).toBe(0);
    await w.page
      .locator(`section[aria-label="Device widgets"] [data-widget="${portKey}"]`)
      .getByTestId('pin-widget')
      .click();
    await until(
      async () => (await stored()).pinnedWidgets.includes(portKey),
      'the pin to be saved',
    );
    expect((await stored()).pinnedWidgets).toEqual([portKey]);

    await w.page.reload();
    await w.page.getByTestId('device-label').waitFor();
    const pinned = w.page.getByTestId('pinned-widgets');
    await pinned.locator(`[data-widget="${portKey}"]`).waitFor();
    expect(await pinned.getByTestId('widget').count()).toBe(1);
    await expect(pinned.getByText(/^Port \d+ https$/).count()).resolves.toBe(1);
    // At the top: above the tabs, whichever tab is open.
    const tabs = (await w.page.getByRole('tablist').boundingBox())!;
    const box = (await pinned.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(tabs.y);
    await expect(
      pinned.getByRole('button', { name: /^Unpin Port/ }).getAttribute('aria-pressed'),
    ).resolves.toBe('true');
    await screenshot(w.page, 'device-pinned-dark');

    await w.page.getByRole('tab', { name: 'Widgets' }).click();
    await pinned.getByRole('button', { name: /^Unpin Port/ }).click();
    await until(async () => (await stored()).pinnedWidgets.length === 0, 'the unpin to be saved');
    // The page re-reads the pins after the save: wait for the row to go rather than racing it.
    await w.page.getByTestId('pinned-widgets').waitFor({ state: 'detached', timeout: 10_000 });
    await expect(w.page.getByTestId('pinned-widgets').count()).resolves.toBe(0);
    await clean();
  });

  it('hides widgets and pins from a caller without `devices` and never asks for them', async () => {
    const watcher = await createUser(a, token, 'nocwatch', ['overwatch']);
    const other = await openPage(browser);
    try {
      const asked: string[] = [];
      other.page.on('request', (r) => {
        if (r.url().includes('/api/getDeviceTrackers')) asked.push(r.url());
      });
      await signInThroughUi(other.page, a.url, watcher.username, watcher.password);
      await other.page.goto(`${a.url}/devices/1`);
      // The device page itself needs `devices`: the appliance's refusal shows, nothing else.
      await other.page.getByTestId('error-notice').waitFor();
      await other.page.waitForTimeout(500);
      expect(await other.page.getByRole('tab', { name: 'Widgets' }).count()).toBe(0);
      expect(await other.page.getByTestId('pin-widget').count()).toBe(0);
      expect(asked).toEqual([]);
    } finally {
      await other.context.close();
    }
  });

  it('switches tables between compact and comfortable and remembers it', async () => {
    await w.page.goto(`${a.url}/devices`);
    const table = w.page.getByTestId('virtual-table');
    await table.locator('[data-row-index="0"]').waitFor();
    await expect(table.getAttribute('data-density')).resolves.toBe('compact');
    const compact = (await table.locator('[data-row-index="0"]').boundingBox())!.height;
    await w.page.getByTestId('density-switch').click();
    await w.page.locator('[data-testid="virtual-table"][data-density="comfortable"]').waitFor();
    const comfortable = (await table.locator('[data-row-index="0"]').boundingBox())!.height;
    expect(comfortable).toBeGreaterThan(compact);
    await w.page.reload();
    await w.page.locator('[data-testid="virtual-table"][data-density="comfortable"]').waitFor();
    await screenshot(w.page, 'devices-comfortable-dark');
    await w.page.getByTestId('density-switch').click();
    await w.page.locator('[data-testid="virtual-table"][data-density="compact"]').waitFor();
    await clean();
  });

  it('ends the shell when the terminal page is left: by a route change and by signing out', async () => {
    const open = () => {
      const row = (action: string) =>
        (
          a.appliance.db
            .prepare('SELECT count(*) AS n FROM audit_log WHERE action = ?')
            .get(action) as { n: number }
        ).n;
      return row('terminal.open') - row('terminal.close');
    };
    const openTerminal = async () => {
      await w.page.goto(`${a.url}/terminal`);
      await w.page
        .getByTestId('terminal-status')
        .filter({ hasText: 'open' })
        .waitFor({ timeout: 20_000 });
      await until(async () => open() === 1, 'one open session');
    };

    await openTerminal();
    // A route change inside the app (no page load): the socket closes, the shell ends.
    await w.page.getByRole('link', { name: 'Devices', exact: true }).click();
    await w.page.getByTestId('virtual-table').waitFor();
    await until(async () => open() === 0, 'the session to end after a route change');

    await openTerminal();
    await w.page.getByTestId('account-menu').click();
    await w.page.getByTestId('sign-out').click();
    await w.page.waitForURL((u) => u.pathname.startsWith('/signin'));
    await until(async () => open() === 0, 'the session to end after signing out');
    await clean();
  });
});
