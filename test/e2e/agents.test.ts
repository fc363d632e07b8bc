/**
 * The agent pages in Chromium against a started appliance (issue 20, Console), as a person uses them:
 * - Agents: create an enrollment token, see its plaintext once (with the warning and a copy
 *   button), close the dialog and find only the row (never the plaintext) in the list and after a
 *   reload; revoke it after a confirmation; the appliance agrees it is revoked;
 * - the installer download with nothing staged says so;
 * - adopt by key against a loopback address where no agent listens: the appliance's one 404 text;
 * - a device's Agent tab when no agent answers: the appliance's message, plainly, for processes,
 *   services and disk usage;
 * - adopt by key with a protocol peer (test/harness/agent-peer.ts: a real
 *   client of docs/agent-protocol.md on its own loopback address and UDP socket): an unacknowledged
 *   push shows `enrolled=false` with a Retry, the retry adopts; the new device's Agent tab then shows
 *   the processes the peer answers (sorted, filtered), its "services unavailable", the disk report
 *   as a tree with a drill-down, and a deletion whose hostile path reaches the peer literally;
 * - screenshots at 1280x800 (test-results/console-screenshots/agents-*.png), no CSP violation, no
 *   page error, no request outside loopback, no serious axe violation.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPeer, freeUdpPort } from '../harness/agent-peer.js';
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
const PEER_IP = '127.0.61.2';
const ADOPTION_KEY = 'e2e_Adopt-key_0123';
const HOSTILE_PATH = '/tmp/e2e;id $(id) -rf';
const GiB = 1024 ** 3;

/** What the peer answers, per operation (the shapes of docs/agent-protocol.md, Operations). */
function peerAnswer(op: string, args: { path?: string }) {
  switch (op) {
    case 'processes':
      return {
        ok: true as const,
        data: [
          {
            pid: 1,
            ppid: 0,
            name: 'systemd',
            user: 'root',
            state: 'S',
            cpu_percent: 0.2,
            memory_bytes: 12 * 1024 ** 2,
            command: '/sbin/init',
          },
          {
            pid: 812,
            ppid: 1,
            name: 'postgres',
            user: 'postgres',
            state: 'S',
            cpu_percent: 7.5,
            memory_bytes: 1.5 * GiB,
            command: 'postgres -D /var/lib/postgresql/16/main',
          },
          {
            pid: 1290,
            ppid: 1,
            name: 'node',
            user: 'app',
            state: 'R',
            cpu_percent: 38.4,
            memory_bytes: 420 * 1024 ** 2,
            command: 'node /srv/app/server.js --port 8080',
          },
          {
            pid: 2044,
            ppid: 1,
            name: 'sshd',
            user: 'root',
            state: 'S',
            cpu_percent: 0,
            memory_bytes: 8 * 1024 ** 2,
            command: 'sshd: /usr/sbin/sshd -D',
          },
        ],
      };
    case 'services':
      return { ok: false as const, error: 'services unavailable: no systemd' };
    case 'disk.generate':
      return { ok: true as const, data: { started: true } };
    case 'disk.detail':
      return {
        ok: true as const,
        data: [
          {
            path: '/',
            size: 40 * GiB,
            children: [
              {
                path: '/var',
                size: 22 * GiB,
                children: [{ path: '/var/lib', size: 18 * GiB, children: [] }],
              },
              { path: '/home', size: 12 * GiB, children: [] },
              { path: '/usr', size: 6 * GiB, children: [] },
            ],
          },
        ],
      };
    case 'folder.usage':
      return {
        ok: true as const,
        data: {
          path: args.path,
          size: 18 * GiB,
          children: [
            { path: `${args.path}/postgresql`, size: 15 * GiB, children: [] },
            { path: `${args.path}/docker`, size: 3 * GiB, children: [] },
          ],
        },
      };
    case 'file.delete':
    case 'folder.delete':
      return { ok: true as const, data: { deleted: args.path } };
    default:
      return { ok: false as const, error: `unknown op ${op}` };
  }
}

describe.runIf(enabled)('agent pages in Chromium', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let adminToken: string;
  let plaintext = '';
  let peer: AgentPeer;

  beforeAll(async () => {
    const udpPort = await freeUdpPort();
    a = await startConsoleAppliance({ APPLIANCE_AGENT_UDP_PORT: String(udpPort) });
    peer = new AgentPeer(a.url, PEER_IP, 'e2e-agent-0001', 'fileserver-e2e');
    peer.adoptionKey = ADOPTION_KEY;
    peer.answer = (op, args) => peerAnswer(op, args as { path?: string });
    await peer.listen(udpPort);
    adminToken = await a.login();
    browser = await launchBrowser();
    w = await openPage(browser);
    await signInThroughUi(w.page, a.url);
  }, 120_000);

  afterAll(async () => {
    await peer?.close();
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
    expect(text).toMatch(/Could not read the processes/);
    // The appliance's own words follow the title (never a blank).
    expect(text.replace(/Could not read the processes|Retry/g, '').trim()).not.toBe('');
    expect(await panel.getByTestId('processes').count()).toBe(0);
    await page.waitForTimeout(300); // the Refresh button's loader fades out
    await screenshot(page, 'agents-device-tab-no-agent');
    expect(await seriousAxe(page), 'axe: device agent tab').toEqual([]);

    await panel.getByRole('tab', { name: 'Services' }).click();
    await panel.getByTestId('error-notice').waitFor({ timeout: 30_000 });
    await panel.getByRole('tab', { name: 'Disk usage' }).click();
    await panel.getByTestId('error-notice').waitFor({ timeout: 30_000 });
    await page.waitForTimeout(300);
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

  it('adopts a peer by key: enrolled=false with a Retry, then adopted', async () => {
    const page = w.page;
    await page.goto(`${a.url}/agents`);
    const form = page.getByTestId('adopt-form');
    await form.getByLabel(/IP address/).fill(PEER_IP);
    await form.getByLabel(/Adoption key/).fill(ADOPTION_KEY);
    await form.getByLabel(/^Label/).fill('File server (e2e)');
    peer.ack = false;
    await form.getByTestId('adopt-submit').click();
    const unconfirmed = form.getByTestId('adopt-unconfirmed');
    await unconfirmed.waitFor({ timeout: 30_000 });
    expect(await unconfirmed.textContent()).toMatch(/did not confirm/);
    await screenshot(page, 'agents-adopt-unconfirmed');
    peer.ack = true;
    await unconfirmed.getByRole('button', { name: 'Retry' }).click();
    const done = form.getByTestId('adopt-done');
    await done.waitFor({ timeout: 30_000 });
    expect(await done.textContent()).toMatch(/e2e-agent-0001/);
    expect(peer.bundle, 'the peer stored its key bundle').not.toBeNull();
    await screenshot(page, 'agents-adopt-done');
    await clean();
  });

  it("the adopted device's Agent tab: processes, services unavailable, disk tree, deletion", async () => {
    const page = w.page;
    const deviceId = peer.bundle.device_id as number;
    await page.goto(`${a.url}/devices/${deviceId}`);
    await page.getByTestId('device-label').waitFor();
    await page.getByTestId('agent-tab').click();
    const panel = page.getByTestId('agent-panel');
    const rows = panel.getByTestId('process-row');
    await rows.first().waitFor({ timeout: 30_000 });
    const pids = async () =>
      (await rows.locator('td:first-child').allTextContents()).map((t) => t.trim());
    expect(await pids()).toEqual(['812', '1290', '1', '2044']);
    expect(await rows.first().textContent()).toMatch(/1\.5 GB/);
    await page.waitForTimeout(300);
    await screenshot(page, 'agents-device-processes');
    expect(await seriousAxe(page), 'axe: processes').toEqual([]);
    await panel.getByTestId('sort-cpu').click();
    expect(await pids()).toEqual(['1290', '812', '1', '2044']);
    await panel.getByLabel('Filter processes').fill('ssh');
    expect(await pids()).toEqual(['2044']);

    await panel.getByRole('tab', { name: 'Services' }).click();
    const unavailable = panel.getByTestId('services-unavailable');
    await unavailable.waitFor({ timeout: 30_000 });
    expect(await unavailable.textContent()).toMatch(/no systemd/);
    await page.waitForTimeout(300);
    await screenshot(page, 'agents-device-services-unavailable');

    await panel.getByRole('tab', { name: 'Disk usage' }).click();
    await panel.getByTestId('usage-tree').waitFor({ timeout: 30_000 });
    await panel.getByTestId('generate-disk-usage').click();
    await panel.getByLabel('Expand /', { exact: true }).click();
    await panel.getByLabel('Expand /var', { exact: true }).click();
    await panel.getByLabel('Open /var/lib', { exact: true }).click();
    // The folder's own measurement replaces the report: its root, then its children.
    await panel.getByLabel('Expand /var/lib', { exact: true }).click({ timeout: 30_000 });
    await panel.getByText('postgresql', { exact: true }).waitFor();
    expect(await panel.getByTestId('usage-tree').textContent()).toMatch(/15 GB/);
    await page.waitForTimeout(300);
    await screenshot(page, 'agents-device-disk-drilldown');
    expect(peer.seen.find((s) => s.op === 'folder.usage')?.args).toEqual({ path: '/var/lib' });
    expect(peer.seen.some((s) => s.op === 'disk.generate')).toBe(true);

    await panel.getByRole('tab', { name: 'Delete files' }).click();
    await panel.getByLabel('Absolute path to delete').fill(HOSTILE_PATH);
    await panel.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this file?' });
    expect(await confirm.getByTestId('delete-path').textContent()).toBe(HOSTILE_PATH);
    expect(
      peer.seen.some((s) => s.op === 'file.delete'),
      'nothing before the confirmation',
    ).toBe(false);
    await confirm.getByTestId('confirm-delete').click();
    await panel.getByTestId('delete-done').waitFor({ timeout: 30_000 });
    expect(peer.seen.find((s) => s.op === 'file.delete')?.args).toEqual({ path: HOSTILE_PATH });
    await screenshot(page, 'agents-device-deleted');
    await clean();
  });
});
