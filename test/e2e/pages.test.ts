/**
 * Every page of the console, in both themes, against an appliance that monitors a real snmpd
 * whose sysName, sysDescr, sysLocation and ifAlias are script-injection strings (and a device
 * labelled with one):
 * - stored XSS: a `window.__x` trap and a dialog listener see 0 executions on every page;
 * - every HTML response carries the console's CSP; Chromium reports no violation;
 * - axe-core finds no serious or critical violation on any page;
 * - a screenshot of each page in each theme (test-results/console-screenshots, not in git).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer } from '../harness/peers.js';
import { startSnmpd, type Snmpd } from '../harness/snmpd.js';
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

const IMG = '<img src=x onerror=window.__x=1>';
const SVG = '"><svg onload=window.__x=1>';
const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

const enabled = haveChromium() && havePeer('snmpd', 'snmpd') && process.platform === 'linux';

/** Pages to visit: path, a text that proves the page rendered, and an optional action. */
const PAGES: { name: string; path: string; ready: string; act?: (page: Page) => Promise<void> }[] =
  [
    { name: 'overview', path: '/', ready: 'Overview' },
    { name: 'devices', path: '/devices', ready: 'Devices' },
    { name: 'device-charts', path: '/devices/{xss}', ready: 'Latency and loss' },
    {
      name: 'device-trackers',
      path: '/devices/{xss}',
      ready: 'Latency and loss',
      act: async (page) => {
        await page.getByRole('tab', { name: 'Trackers' }).click();
        await page.getByText('Custom OIDs').waitFor();
      },
    },
    {
      name: 'device-walk',
      path: '/devices/{xss}',
      ready: 'Latency and loss',
      act: async (page) => {
        await page.getByRole('tab', { name: 'SNMP walk' }).click();
        await page.getByRole('table', { name: 'SNMP walk' }).waitFor();
      },
    },
    {
      // The device's trackers as widgets (titles carry the device's text), one of them pinned.
      name: 'device-widgets',
      path: '/devices/{xss}',
      ready: 'Latency and loss',
      act: async (page) => {
        await page.getByRole('tab', { name: 'Widgets' }).click();
        await page.getByTestId('widget').first().waitFor();
        if ((await page.getByTestId('pinned-widgets').count()) === 0)
          await page.getByTestId('pin-widget').first().click();
        await page.getByTestId('pinned-widgets').waitFor();
      },
    },
    {
      name: 'device-edit',
      path: '/devices/{xss}',
      ready: 'Latency and loss',
      act: async (page) => {
        await page.getByRole('button', { name: 'Edit' }).click();
        await page.getByRole('dialog').getByLabel(/^Name/).waitFor();
      },
    },
    { name: 'dashboards', path: '/dashboards', ready: 'Dashboards' },
    { name: 'urls', path: '/urls', ready: 'URL monitoring' },
    { name: 'tools-ping', path: '/tools/ping', ready: 'Tools' },
    { name: 'tools-portscan', path: '/tools/portscan', ready: 'Tools' },
    { name: 'tools-iperf', path: '/tools/iperf', ready: 'Tools' },
    { name: 'tools-speedtest', path: '/tools/speedtest', ready: 'Tools' },
    { name: 'terminal', path: '/terminal', ready: 'Terminal' },
    { name: 'pending', path: '/pending', ready: 'Pending devices' },
    { name: 'credentials', path: '/credentials', ready: 'Discovery credentials' },
    { name: 'localnets', path: '/localnets', ready: 'Local networks' },
    { name: 'users', path: '/users', ready: 'Users' },
    { name: 'tokens', path: '/tokens', ready: 'Access tokens' },
    { name: 'oauth-clients', path: '/oauth-clients', ready: 'OAuth clients' },
    { name: 'alerts', path: '/alerts', ready: 'Alerts' },
    { name: 'alerts-history', path: '/alerts/history', ready: 'Alert history' },
    { name: 'alerts-outlets', path: '/alerts/outlets', ready: 'Outlets and routing' },
    { name: 'alerts-templates', path: '/alerts/templates', ready: 'Classes and templates' },
    { name: 'alerts-windows', path: '/alerts/windows', ready: 'Maintenance windows' },
    { name: 'alerts-legacy', path: '/alerts/legacy', ready: 'Legacy alerts' },
    { name: 'mail-relay', path: '/mail-relay', ready: 'Mail relay' },
    { name: 'directory', path: '/directory', ready: 'Connection' },
    { name: 'agents', path: '/agents', ready: 'Agents' },
    {
      // A device without an agent: the probe's refusal in the appliance's words.
      name: 'device-agent',
      path: '/devices/{xss}',
      ready: 'Latency and loss',
      act: async (page) => {
        await page.getByTestId('agent-tab').click();
        await page.getByTestId('agent-panel').getByTestId('error-notice').waitFor();
      },
    },
    {
      name: 'palette',
      path: '/devices',
      ready: 'Devices',
      act: async (page) => {
        await page.keyboard.press('Control+k');
        await page.getByLabel('Search', { exact: true }).fill('127.0.0.3');
        await page.getByRole('option').first().waitFor();
      },
    },
    {
      // Last: the density is remembered for the pages after it.
      name: 'devices-comfortable',
      path: '/devices',
      ready: 'Devices',
      act: async (page) => {
        await page.keyboard.press('Escape');
        const toggle = page.getByTestId('density-switch');
        if ((await toggle.getAttribute('data-density')) === 'compact') await toggle.click();
        await page.locator('[data-testid="virtual-table"][data-density="comfortable"]').waitFor();
      },
    },
  ];

describe.runIf(enabled)('every console page', { timeout: 180_000 }, () => {
  let a: ConsoleAppliance;
  let snmpd: Snmpd;
  let browser: Browser;
  let deviceId: number;

  beforeAll(async () => {
    snmpd = await startSnmpd({
      addresses: ['127.0.0.3'],
      sysName: IMG,
      extraConfig: [
        `sysDescr ${SVG}`,
        `sysLocation ${IMG}`,
        // ifAlias of interface 1 (lo): one token without spaces or quotes for snmpd's parser
        'override .1.3.6.1.2.1.31.1.1.1.18.1 octet_str <svg/onload=window.__x=1>',
      ],
    });
    a = await startConsoleAppliance();
    const token = await a.login();
    const created = await a.api(
      'POST',
      '/api/device/set',
      {
        label: `${IMG} lab switch`,
        ip_address: '127.0.0.3',
        profile: 'dash_appliance',
        enable_snmp: true,
        snmpconfig: { snmp_version: 2, snmp_port: snmpd.port, snmp_community: snmpd.community },
        tags: [{ slug: 'xss', name: SVG, type: 'device' }],
      },
      token,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    deviceId = created.body.device.id;
    await a.api('POST', '/api/latency/set', { deviceId, label: IMG, interval: 2 }, token);
    await a.api('POST', `/api/device/${deviceId}/recrawl`, {}, token);
    // The crawl stores a walk and creates interface trackers (names and ifAlias from snmpd).
    for (let i = 0; i < 60; i++) {
      const walk = await a.api('GET', `/api/getLastWalk/${deviceId}`, undefined, token);
      const ifaces = await a.api('GET', `/api/device/${deviceId}/interfaces`, undefined, token);
      if (walk.body?.walk && Array.isArray(ifaces.body) && ifaces.body.length > 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const walk = await a.api('GET', `/api/getLastWalk/${deviceId}`, undefined, token);
    const text = JSON.stringify(walk.body);
    expect(text, 'the walk carries the injected sysName').toContain('onerror=window.__x=1');
    const ifaces = await a.api('GET', `/api/device/${deviceId}/interfaces`, undefined, token);
    expect(JSON.stringify(ifaces.body), 'an interface carries the injected ifAlias').toContain(
      '<svg/onload=window.__x=1>',
    );
    await a.api(
      'POST',
      '/api/saveUrl',
      {
        newtracker: {
          url: `http://127.0.0.1:9/${encodeURIComponent(IMG)}`,
          pattern: SVG,
          interval: 3600,
        },
      },
      token,
    );
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
    await snmpd?.stop();
  });

  async function visitAll(w: Watched, theme: 'dark' | 'light') {
    const results: { page: string; axe: string[] }[] = [];
    for (const p of PAGES) {
      const response = await w.page.goto(`${a.url}${p.path.replace('{xss}', String(deviceId))}`);
      const csp = response?.headers()['content-security-policy'] ?? '';
      expect(csp, `${p.name}: CSP header`).toContain("script-src 'self'");
      expect(csp, `${p.name}: no unsafe-inline`).not.toContain('unsafe-inline');
      await w.page.getByRole('heading', { name: p.ready }).first().waitFor({ timeout: 20_000 });
      if (p.act) await p.act(w.page);
      await w.page.waitForTimeout(400);
      await screenshot(w.page, `${p.name}-${theme}`);
      await w.page.evaluate(axeSource);
      const violations: { id: string; impact: string; nodes: { target: string[] }[] }[] =
        await w.page.evaluate(async () => {
          const result = await (globalThis as any).axe.run((globalThis as any).document, {
            resultTypes: ['violations'],
          });
          return result.violations.map((v: any) => ({
            id: v.id,
            impact: v.impact,
            nodes: v.nodes
              .slice(0, 3)
              .map((n: any) => ({ target: n.target, html: String(n.html).slice(0, 160) })),
          }));
        });
      const serious = violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map(
          (v) =>
            `${v.id} (${v.impact}) ${JSON.stringify(v.nodes.map((n: any) => n.html ?? n.target))}`,
        );
      results.push({ page: p.name, axe: serious });
      expect(await w.page.evaluate(() => (globalThis as any).__xssRuns), `${p.name}: __x`).toBe(0);
      // The injected markup must not exist as elements at all (the CSP would also stop its
      // handlers; this catches markup rendering even where the CSP saves the day).
      const injected = await w.page.evaluate(
        () =>
          (globalThis as any).document.querySelectorAll('img[src="x"], svg[onload], img[onerror]')
            .length,
      );
      expect(injected, `${p.name}: device text rendered as markup`).toBe(0);
      if (p.name === 'palette') await w.page.keyboard.press('Escape');
    }
    return results;
  }

  for (const theme of ['dark', 'light'] as const) {
    it(`${theme} theme: no XSS execution, no CSP violation, no serious axe violation`, async () => {
      const w = await openPage(browser, { colorScheme: theme });
      try {
        await w.context.addInitScript(() => {
          const g = globalThis as any;
          g.__xssRuns = 0;
          Object.defineProperty(g, '__x', {
            configurable: false,
            get: () => undefined,
            set: () => {
              g.__xssRuns++;
            },
          });
        });
        await w.context.addInitScript((scheme: string) => {
          (globalThis as any).localStorage.setItem('console.color-scheme', scheme);
        }, theme);
        await signInThroughUi(w.page, a.url);
        const results = await visitAll(w, theme);
        const failing = results.filter((r) => r.axe.length > 0);
        expect(failing, 'serious or critical axe violations').toEqual([]);
        expect(w.dialogs, 'dialogs').toEqual([]);
        expect(w.pageErrors, 'page errors').toEqual([]);
        expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
        expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
        expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
      } finally {
        await w.context.close();
      }
    });
  }
});
