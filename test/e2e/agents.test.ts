/**
 * The agent pages in Chromium against a started appliance (issue 20, Console), as a person uses them:
 * - Agents: create an enrollment token, see its plaintext once (with the warning and a copy
 *   button), close the dialog and find only the row (never the plaintext) in the list and after a
 *   reload; revoke it after a confirmation; the appliance agrees it is revoked;
 * - the installer download with nothing staged says so;
 * - adopt by key against a loopback address where no agent listens: the appliance's one 404 text;
 * - a device's Agent tab when no agent answers: the appliance's message, plainly, for processes,
 *   services and disk usage;
 * - screenshots at 1280x800 (test-results/console-screenshots/agents-*.png), no CSP violation, no
 *   page error, no request outside loopback, no serious axe violation.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  haveChromium,
  launchBrowser,
  openPage,
  recordedViolations,
  screenshot,
  seriousAxe,
  signInThroughUi,
  startConsoleAppliance,
  type ConsoleAppliance,
  type Watched,
} from './harness.js';

const enabled = haveChromium() && process.platform === 'linux';
const LABEL = `e2e-site-${process.pid}`;

describe.runIf(enabled)('agent pages in Chromium', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let adminToken: string;
  let plaintext = '';

  beforeAll(async () => {
    a = await startConsoleAppliance();
    adminToken = await a.login();
    browser = await launchBrowser();
    w = await openPage(browser);
    await signInThroughUi(w.page, a.url);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
  });

  const clean = async () => {
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
    expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
    expect(w.dialogs, 'native dialogs').toEqual([]);
  };

  it('creates a token, shows it once, lists only its row, and revokes it after a confirmation', async () => {
    const page = w.page;
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Agents', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    await page.getByTestId('empty-state').waitFor();
    await screenshot(page, 'agents-page-empty');
    expect(await seriousAxe(page), 'axe: agents page').toEqual([]);

    await page.getByTestId('new-agent-token-button').click();
    const dialog = page.getByRole('dialog', { name: 'Create an enrollment token' });
    await dialog.getByLabel('Label').fill(LABEL);
    const tags = dialog.getByRole('textbox', { name: 'Tags' });
    await tags.fill('branch');
    await tags.press('Enter');
    await dialog.getByTestId('create-agent-token').click();

    const shown = page.getByTestId('new-agent-token');
    await shown.waitFor();
    plaintext = (await shown.textContent()) ?? '';
    expect(plaintext.length).toBeGreaterThanOrEqual(32);
    expect(plaintext.length).toBeLessThanOrEqual(128);
    expect(await page.getByTestId('token-once-warning').textContent()).toMatch(/not shown again/);
    await page.getByRole('button', { name: 'Copy token' }).waitFor();
    await screenshot(page, 'agents-token-once');
    expect(await seriousAxe(page), 'axe: token dialog').toEqual([]);

    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('agent-token-row').filter({ hasText: LABEL });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/branch/);
    expect(await row.textContent()).toMatch(/single use/);
    // The plaintext is gone from the page, and a reload does not bring it back.
    expect(await page.content()).not.toContain(plaintext);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(plaintext);
    await screenshot(page, 'agents-token-listed');

    // Revoke: nothing happens before the confirmation.
    await page.getByRole('button', { name: `Revoke token ${LABEL}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke an enrollment token' });
    await confirm.waitFor();
    await screenshot(page, 'agents-token-revoke-confirm');
    const before = await a.api('GET', '/api/agent-tokens', undefined, adminToken);
    const id = (before.body as { id: number; label: string }[]).find((t) => t.label === LABEL)!.id;
    expect(
      (await a.api('GET', `/api/agent-tokens/${id}`, undefined, adminToken)).body,
    ).toMatchObject({
      revoked_at: null,
    });
    await confirm.getByTestId('confirm-revoke').click();
    await row.waitFor({ state: 'detached' });
    const after = await a.api('GET', `/api/agent-tokens/${id}`, undefined, adminToken);
    expect(after.status).toBe(200);
    expect(after.body.revoked_at).not.toBeNull();
    // The appliance still refuses a second revoke with the spec's 409.
    const again = await a.api('DELETE', `/api/agent-tokens/${id}`, undefined, adminToken);
    expect(again).toEqual({ status: 409, body: { error: 'Token already revoked' } });
    expect(await page.content()).not.toContain(plaintext);
    await clean();
  });

  it('says no installer is staged', async () => {
    const page = w.page;
    await page.getByTestId('download-amd64').click();
    const result = page.getByTestId('download-amd64-result');
    await result.waitFor();
    expect(await result.textContent()).toBe('amd64: No installer staged for amd64.');
    await clean();
  });

  it("adopting where no agent listens shows the appliance's one 404 text", async () => {
    const page = w.page;
    const form = page.getByTestId('adopt-form');
    await form.getByLabel(/IP address/).fill('127.0.0.1');
    await form.getByLabel(/Adoption key/).fill('no-agent-listens-here');
    await form.getByTestId('adopt-submit').click();
    const notice = form.getByTestId('error-notice');
    await notice.waitFor({ timeout: 30_000 });
    expect(await notice.textContent()).toMatch(/Adoption failed/);
    await screenshot(page, 'agents-adopt-404');
    expect(await page.getByTestId('adopt-done').count()).toBe(0);
    await clean();
  });

  it("a device's Agent tab shows the honest error when no agent answers", async () => {
    const page = w.page;
    await page.goto(`${a.url}/devices/1`);
    await page.getByTestId('device-label').waitFor();
    await page.getByTestId('agent-tab').click();
    const panel = page.getByTestId('agent-panel');
    const notice = panel.getByTestId('error-notice');
    await notice.waitFor({ timeout: 30_000 });
    const text = (await notice.textContent()) ?? '';
    expect(text).toMatch(/did not give its processes/);
    // The appliance's own words follow the title (never a blank).
    expect(text.replace(/The agent did not give its processes|Retry/g, '').trim()).not.toBe('');
    expect(await panel.getByTestId('processes').count()).toBe(0);
    await screenshot(page, 'agents-device-tab-no-agent');
    expect(await seriousAxe(page), 'axe: device agent tab').toEqual([]);

    await panel.getByRole('tab', { name: 'Services' }).click();
    await panel.getByTestId('error-notice').waitFor({ timeout: 30_000 });
    await panel.getByRole('tab', { name: 'Disk usage' }).click();
    await panel.getByTestId('error-notice').waitFor({ timeout: 30_000 });
    await screenshot(page, 'agents-device-disk-no-agent');
    await panel.getByRole('tab', { name: 'Delete files' }).click();
    await panel.getByLabel('Absolute path to delete').fill('/tmp/e2e-nothing');
    await panel.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this file?' });
    expect(await confirm.getByTestId('delete-path').textContent()).toBe('/tmp/e2e-nothing');
    expect(await confirm.textContent()).toMatch(/permanent/);
    await screenshot(page, 'agents-device-delete-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await clean();
  });
});
