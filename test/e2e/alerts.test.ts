/**
 * The alerting pages in Chromium against a started appliance (issue 17, Console):
 * - an outlet created through its form (a webhook to a receiver this test starts on 127.0.0.1,
 *   allowlisted with APPLIANCE_OUTLET_ALLOW), its authorization header shown as "stored" and never
 *   in the page, and send-test reaching the receiver;
 * - an alert created through its form (the syslog class's parameter form), a syslog line sent
 *   with `logger`, the webhook delivered, and the occurrence in the history page with its
 *   notification;
 * - an email template restored to its seeded body (after a confirmation; Cancel changes nothing);
 * - the maintenance-window form refusing a `dawom` window without its nth weekday, then saving;
 * - the mail relay form: the password saved, then shown as stored (masked), never in the page;
 * - a tag-restricted user creating a global alert sees the appliance's 403 text; no mail relay;
 * - the device page's Alerting tab setting the device's parent (dependency-aware suppression);
 * - every alerting page in both themes: screenshot, no CSP violation, no serious axe violation.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer } from '../harness/peers.js';
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
  seriousAxe,
} from './harness.js';

const RUN = `e2e${process.pid}`;
const HEADER_CANARY = `Bearer canary-hdr-${process.pid}`;
const PASS_CANARY = `canary-pass-${process.pid}`;

const enabled = haveChromium() && havePeer('logger', 'bsdutils') && process.platform === 'linux';

const ALERT_PAGES = [
  { name: 'alerts', path: '/alerts', ready: 'Alerts' },
  { name: 'alerts-history', path: '/alerts/history', ready: 'Alert history' },
  { name: 'alerts-outlets', path: '/alerts/outlets', ready: 'Outlets and routing' },
  { name: 'alerts-templates', path: '/alerts/templates', ready: 'Classes and templates' },
  { name: 'alerts-windows', path: '/alerts/windows', ready: 'Maintenance windows' },
  { name: 'alerts-legacy', path: '/alerts/legacy', ready: 'Legacy alerts' },
  { name: 'mail-relay', path: '/mail-relay', ready: 'Mail relay' },
];

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe.runIf(enabled)('alerting pages in Chromium', { timeout: 180_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let token: string;
  let syslogPort: number;
  let receiver: http.Server;
  let receiverPort: number;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c.slice(0, 100_000)));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverPort = (receiver.address() as AddressInfo).port;
    a = await startConsoleAppliance({
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_OUTLET_ALLOW: '127.0.0.1',
    });
    token = await a.login();
    syslogPort = a.appliance.ctx.collectorPorts.report().syslog!.udp!;
    expect(syslogPort, 'the syslog receiver bound a UDP port').toBeGreaterThan(0);
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
    await new Promise((r) => receiver?.close(r));
  });

  const clean = async (watched: Watched = w) => {
    expect(watched.pageErrors, 'page errors').toEqual([]);
    expect(watched.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(watched.page), 'CSP violations (events)').toEqual([]);
    expect(watched.foreignRequests, 'requests outside loopback').toEqual([]);
  };

  /** Waits (bounded) until `check` holds. */
  async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000) {
    const end = Date.now() + ms;
    for (let i = 0; i < 400 && Date.now() < end; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('creates a webhook outlet through its form, keeps its secret masked, sends a test', async () => {
    const page = w.page;
    await signInThroughUi(page, a.url);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Outlets and routing' })
      .click();
    await page.getByRole('heading', { name: 'Outlets and routing' }).waitFor();
    await page.getByTestId('empty-state').waitFor();
    await page.getByRole('button', { name: 'New outlet' }).click();
    const form = page.getByRole('form', { name: 'Outlet' });
    await form.getByLabel(/^Name/).fill('ops hook');
    await form.getByLabel(/^URL/).fill(`http://127.0.0.1:${receiverPort}/hook`);
    await form.getByLabel('Authorization header').fill(HEADER_CANARY);
    await form.getByRole('button', { name: 'Save outlet' }).click();
    const row = page.getByRole('table', { name: 'Outlets' }).getByRole('row', { name: /ops hook/ });
    await row.waitFor();
    // Editing shows the header as stored, never its value.
    await row.getByRole('button', { name: 'Edit ops hook' }).click();
    await page.getByTestId('secret-stored').waitFor();
    expect(await page.getByLabel('Authorization header').inputValue()).toBe('');
    expect(await page.content()).not.toContain('canary-hdr');
    await screenshot(page, 'alerts-outlet-edit');
    await page
      .getByRole('form', { name: 'Outlet' })
      .getByRole('button', { name: 'Save outlet' })
      .click();
    await page.getByRole('form', { name: 'Outlet' }).waitFor({ state: 'detached' });
    // The sentinel kept the stored header: send-test carries it to the receiver.
    await row.getByRole('button', { name: 'Send test' }).click();
    await expect
      .poll(async () => row.getByTestId('send-test-result').textContent(), { timeout: 15_000 })
      .toBe('Delivered');
    await until('the test webhook', () => received.length > 0);
    expect(received[0]!.path).toBe('/hook');
    expect(received[0]!.headers.authorization).toBe(HEADER_CANARY);
    await clean();
  });

  it('an alert made in its form fires on a logger line; the history shows the delivery', async () => {
    const page = w.page;
    const outlets = await a.api('GET', '/api/outlets', undefined, token);
    const rule = await a.api(
      'POST',
      '/api/alert-routing-rules',
      { label: 'everything', outlet_ids: [outlets.body[0].id] },
      token,
    );
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);

    await page.goto(`${a.url}/alerts`);
    await page.getByRole('heading', { name: 'Alerts', exact: true }).waitFor();
    await page.getByTestId('empty-state').waitFor();
    await page.getByRole('button', { name: 'New alert' }).click();
    const dialog = page.getByRole('dialog', { name: 'New alert' });
    await dialog.getByTestId('param-form').waitFor();
    await dialog.getByLabel(/^Label/).fill(`${RUN} link down`);
    await dialog.getByLabel(/Message contains/).fill(`${RUN}\nlink down`);
    await screenshot(page, 'alerts-editor');
    await dialog.getByRole('button', { name: 'Create alert' }).click();
    await dialog.waitFor({ state: 'detached' });
    const table = page.getByRole('table', { name: 'Alerts' });
    await table.getByText(`${RUN} link down`).waitFor();

    const before = received.length;
    execFileSync(
      'logger',
      [
        '-n',
        '127.0.0.1',
        '-P',
        String(syslogPort),
        '-d',
        '--rfc3164',
        '-p',
        'user.err',
        '-t',
        'e2eapp',
        `${RUN} link down on ge-0/0/1`,
      ],
      { timeout: 5_000 },
    );
    await until('the alert webhook', () => received.length > before, 45_000);
    const delivered = received[received.length - 1]!;
    expect(delivered.body).toContain(`${RUN} link down`);
    expect(delivered.headers.authorization).toBe(HEADER_CANARY);

    await page
      .getByRole('navigation', { name: 'Alerting pages' })
      .getByRole('link', { name: 'History' })
      .click();
    await page.getByRole('heading', { name: 'Alert history' }).waitFor();
    const row = page
      .getByTestId('history-row')
      .filter({ hasText: `${RUN} link down` })
      .first();
    await row.waitFor({ timeout: 20_000 });
    await expect
      .poll(async () => row.getByTestId('notification').first().textContent(), { timeout: 20_000 })
      .toMatch(/ops hook.*sent/);
    await screenshot(page, 'alerts-history');
    const alerts = await a.api('GET', '/api/alerts', undefined, token);
    const ledger = await a.api(
      'GET',
      `/api/alerts/history?alert_id=${alerts.body[0].id}`,
      undefined,
      token,
    );
    expect(ledger.body[0].notifications).toEqual([
      expect.objectContaining({ outlet_name: 'ops hook', status: 'sent', attempts: 1 }),
    ]);
    expect(JSON.stringify(ledger.body)).not.toContain('canary-hdr');
    expect(await page.content()).not.toContain('canary-hdr');
    await clean();
  });

  it('the maintenance-window form asks for the fields of its unit', async () => {
    const page = w.page;
    await page.goto(`${a.url}/alerts/windows`);
    await page.getByRole('heading', { name: 'Maintenance windows' }).first().waitFor();
    await page.getByTestId('time-zone-note').waitFor();
    await page.getByRole('button', { name: 'New window' }).click();
    const form = page.getByRole('form', { name: 'Maintenance window' });
    await form.getByLabel(/^Label/).fill('Patch night');
    // Week: a weekday, no date.
    await expect.poll(() => form.getByLabel('Weekday').count()).toBe(1);
    expect(await form.getByLabel('Day of the month').count()).toBe(0);
    await form.getByLabel('Repeats').click();
    await page.getByRole('option', { name: 'Every month (nth weekday)' }).click();
    await form.getByLabel('Which').waitFor();
    await form.getByRole('button', { name: 'Save window' }).click();
    await form.getByText('Pick which weekday of the month').waitFor();
    await screenshot(page, 'alerts-window-invalid');
    expect((await a.api('GET', '/api/alerts/maintenance-windows', undefined, token)).body).toEqual(
      [],
    );
    await form.getByLabel('Which').click();
    await page.getByRole('option', { name: 'last' }).click();
    await form.getByRole('button', { name: 'Save window' }).click();
    await page
      .getByRole('table', { name: 'Maintenance windows' })
      .getByText('The last Sunday of every month at 02:00 for 60 min')
      .waitFor();
    const saved = await a.api('GET', '/api/alerts/maintenance-windows', undefined, token);
    expect(saved.body).toEqual([
      expect.objectContaining({ label: 'Patch night', unit: 'dawom', day: 0, month: 5, hour: 2 }),
    ]);
    await clean();
  });

  it('the mail relay form saves a password and then shows it only as stored', async () => {
    const page = w.page;
    await page.goto(`${a.url}/mail-relay`);
    await page.getByRole('heading', { name: 'Mail relay' }).waitFor();
    const form = page.getByRole('form', { name: 'Mail relay' });
    await form.getByLabel(/^Sender name/).fill('Appliance');
    await form.getByLabel(/^From address/).fill('noc@example.test');
    await form.getByLabel(/^Relay server/).fill('127.0.0.1');
    await form.getByLabel(/^Port/).fill('2525');
    await form.getByLabel('Authenticate').check();
    await form.getByLabel('User name').fill('noc');
    await form.getByLabel(/^Password/).fill(PASS_CANARY);
    await form.getByRole('button', { name: 'Save relay' }).click();
    await form.getByTestId('relay-result').waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Mail relay' }).waitFor();
    await page.getByTestId('password-stored').waitFor();
    expect(await page.getByLabel(/^Password/).inputValue()).toBe('');
    expect(await page.content()).not.toContain(PASS_CANARY);
    await screenshot(page, 'mail-relay');
    const stored = await a.api('POST', '/api/smtpSettings', { action: 'get' }, token);
    expect(stored.body.smtp).toMatchObject({
      server: '127.0.0.1',
      port: 2525,
      auth: true,
      authname: 'noc',
      authpass: { __encrypted__: true },
    });
    // Saving again without touching the password keeps it (the sentinel is sent).
    await page
      .getByRole('form', { name: 'Mail relay' })
      .getByRole('button', { name: 'Save relay' })
      .click();
    await page.getByTestId('relay-result').waitFor();
    const again = await a.api('POST', '/api/smtpSettings', { action: 'get' }, token);
    expect(again.body.smtp.authpass).toEqual({ __encrypted__: true });
    await clean();
  });

  it('restores an email template to its seeded body after a confirmation', async () => {
    const page = w.page;
    const list = await a.api('GET', '/api/email-templates', undefined, token);
    const tpl = (list.body as { id: number; label: string; email_template: string }[]).find(
      (t) => t.label === 'Syslog alert',
    )!;
    const seeded = tpl.email_template;
    const edited = await a.api(
      'PUT',
      `/api/email-templates/${tpl.id}`,
      { email_template: '<p>edited {$alert_label}</p>' },
      token,
    );
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    await page.goto(`${a.url}/alerts/templates`);
    const row = page
      .getByRole('table', { name: 'Email templates' })
      .getByRole('row', { name: /Syslog alert/ });
    await row.getByRole('button', { name: 'Restore' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore a template' });
    await dialog.getByText(/Your edits are lost/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(
      (await a.api('GET', `/api/email-templates/${tpl.id}`, undefined, token)).body.email_template,
    ).toBe('<p>edited {$alert_label}</p>');
    await row.getByRole('button', { name: 'Restore' }).click();
    await page.getByTestId('confirm-action').click();
    await expect
      .poll(async () => {
        const t = await a.api('GET', `/api/email-templates/${tpl.id}`, undefined, token);
        return t.body.email_template as string;
      })
      .toBe(seeded);
    await clean();
  });

  it("the device page's Alerting tab sets the device's parent", async () => {
    const page = w.page;
    const created = await a.api(
      'POST',
      '/api/device/set',
      { ip_address: '127.0.3.7', label: 'behind-core', profile: 'dash_generic' },
      token,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const child = created.body.device.id as number;
    await page.goto(`${a.url}/devices/${child}`);
    await page.getByRole('tab', { name: 'Alerting' }).click();
    await page.getByLabel('Parent device').first().click();
    await page.getByRole('option', { name: /appliance \(loopback\)/ }).click();
    await page.getByRole('button', { name: 'Save parent' }).click();
    await expect
      .poll(
        async () => (await a.api('GET', `/api/alert-dependencies/${child}`, undefined, token)).body,
      )
      .toEqual({ device_id: child, parent_id: 1 });
    await screenshot(page, 'device-alerting');
    expect(await seriousAxe(page), 'axe on the Alerting tab').toEqual([]);
    await clean();
  });

  it("a tag-restricted user sees the appliance's 403 when scoping an alert outside their tags", async () => {
    const tagged = await a.api(
      'POST',
      '/api/device/set',
      { ip_address: '127.0.3.8', label: 'east-edge', profile: 'dash_generic', tags: ['east'] },
      token,
    );
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(200);
    const user = await createUser(a, token, 'east-op', ['alerts']);
    const restricted = await a.api(
      'POST',
      '/api/saveUser',
      { user: user.id, permissions: ['alerts'], tags: [{ value: 'east' }] },
      token,
    );
    expect(restricted.body?.status, JSON.stringify(restricted.body)).toBe(201);
    const before = (await a.api('GET', '/api/alerts', undefined, token)).body.length;
    const t = await openPage(browser);
    try {
      await signInThroughUi(t.page, a.url, user.username, user.password);
      const nav = t.page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Alerts', exact: true }).waitFor();
      expect(await nav.getByRole('link', { name: 'Mail relay' }).count()).toBe(0);
      await t.page.goto(`${a.url}/alerts`);
      await t.page.getByRole('button', { name: 'New alert' }).click();
      const dialog = t.page.getByRole('dialog', { name: 'New alert' });
      await dialog.getByTestId('param-form').waitFor();
      await dialog.getByLabel(/^Label/).fill('Everything everywhere');
      await dialog.getByRole('button', { name: 'Create alert' }).click();
      await expect
        .poll(() => dialog.getByTestId('form-refusal').textContent(), { timeout: 15_000 })
        .toBe(
          'Your access is limited to tags: scope the alert to a device or tag inside your tags.',
        );
      expect((await a.api('GET', '/api/alerts', undefined, token)).body).toHaveLength(before);
      await screenshot(t.page, 'alerts-scope-refused');
      await t.page.goto(`${a.url}/mail-relay`);
      await t.page.getByText('The system permission is needed').waitFor();
      await clean(t);
    } finally {
      await t.context.close();
    }
  });

  for (const theme of ['dark', 'light'] as const) {
    it(`${theme} theme: every alerting page without serious axe violations`, async () => {
      const t = await openPage(browser, { colorScheme: theme });
      try {
        await t.context.addInitScript((scheme: string) => {
          (globalThis as any).localStorage.setItem('console.color-scheme', scheme);
        }, theme);
        await signInThroughUi(t.page, a.url);
        const failing: string[] = [];
        for (const p of ALERT_PAGES) {
          await t.page.goto(`${a.url}${p.path}`);
          await t.page.getByRole('heading', { name: p.ready }).first().waitFor({ timeout: 20_000 });
          await t.page.waitForTimeout(500);
          await screenshot(t.page, `${p.name}-${theme}`);
          for (const v of await seriousAxe(t.page)) failing.push(`${p.name}: ${v}`);
        }
        expect(failing, 'serious or critical axe violations').toEqual([]);
        await clean(t);
      } finally {
        await t.context.close();
      }
    });
  }
});
