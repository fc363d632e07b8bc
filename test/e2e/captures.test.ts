/**
 * The packet capture page in Chromium against a started appliance (issue 16, Console): start a
 * capture on lo from the form (interface choice, ICMP), watch its packet counter move while pings
 * run, stop it, download the pcapng (capinfos counts the packets the row shows); no page error,
 * no CSP violation, no request outside loopback.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer } from '../harness/peers.js';
import {
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

const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

const enabled =
  haveChromium() && havePeer('dumpcap', 'wireshark-common') && process.platform === 'linux';

describe.runIf(enabled)('packet capture page in Chromium', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;

  beforeAll(async () => {
    a = await startConsoleAppliance();
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
  });

  it('starts a capture on lo, shows live counters, stops it and downloads the pcapng', async () => {
    const page = w.page;
    await signInThroughUi(page, a.url);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Packet capture', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Packet capture' }).waitFor();
    await page.getByTestId('start-capture').click();
    await page.getByLabel('Label').fill('e2e pings');
    await page.getByTestId('capture-ifaces').click();
    await page.getByRole('option', { name: 'lo', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByLabel('ICMP').check();
    await page.getByTestId('capture-submit').click();
    const row = page.locator('[data-testid^="capture-row-"]').first();
    await row.getByText('running').waitFor({ timeout: 15_000 });
    const id = Number((await row.getAttribute('data-testid'))!.replace('capture-row-', ''));
    execFileSync('ping', ['-c', '4', '-i', '0.2', '127.0.0.1'], { stdio: 'ignore' });
    // The counter follows the capture (the list polls every second while one runs).
    await page.waitForFunction(
      (cell) =>
        Number(
          (globalThis as any).document.querySelector(cell)?.textContent?.replace(/\D/g, '') ?? 0,
        ) >= 8,
      `[data-testid="capture-packets-${id}"]`,
      { timeout: 15_000 },
    );
    await screenshot(page, 'captures-running');
    await page.getByRole('button', { name: `Stop capture ${id}` }).click();
    await page
      .getByTestId(`capture-status-${id}`)
      .getByText('stopped')
      .waitFor({ timeout: 15_000 });
    const shown = Number(
      (await page.getByTestId(`capture-packets-${id}`).textContent())!.replace(/\D/g, ''),
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Download capture ${id}` }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('e2e_pings.pcapng');
    const file = await download.path();
    const bytes = fs.readFileSync(file);
    expect(bytes.readUInt32LE(0)).toBe(0x0a0d0d0a);
    const info = execFileSync('capinfos', ['-M', '-c', file], { encoding: 'utf8' });
    expect(Number(/Number of packets:\s+(\d+)/.exec(info)![1])).toBe(shown);
    // The list and the start form: no serious or critical axe violation.
    await page.evaluate(axeSource);
    const serious = async () =>
      (
        (await page.evaluate(async () => {
          const result = await (globalThis as any).axe.run((globalThis as any).document, {
            resultTypes: ['violations'],
          });
          return result.violations.map((v: any) => ({ id: v.id, impact: v.impact }));
        })) as { id: string; impact: string }[]
      ).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(await serious(), 'axe: capture list').toEqual([]);
    await page.getByTestId('start-capture').click();
    await page.getByLabel('Label').waitFor();
    // The modal fades in: axe measures contrast on what is painted, so wait for the transition to end.
    await page.waitForFunction(() =>
      (globalThis as any).document
        .getAnimations()
        .every((a: { playState: string }) => a.playState !== 'running'),
    );
    expect(await serious(), 'axe: start form').toEqual([]);
    await page.keyboard.press('Escape');
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations').toEqual([]);
    expect(await recordedViolations(page)).toEqual([]);
    expect(w.foreignRequests).toEqual([]);
  });
});
