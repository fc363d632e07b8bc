/**
 * The appliance settings pages in Chromium against a started appliance (issue 18, Console), as a
 * person uses them. The appliance runs with APPLIANCE_NETWORK_MODE=dry-run (set explicitly):
 * nothing here can change this machine's network, hostname or clock.
 * - Network: the DRY RUN banner is up; saving an interface shows the appliance's "would have
 *   written" message as a dry run, never as a success, and the interfaces are unchanged;
 * - Hostname: an invalid name shows the 422 message under the field (only invalid names are
 *   sent) and the machine's hostname is unchanged;
 * - Retention: a row's days edited and saved are still there after a reload (and in the API);
 * - Daemons: a secret stored through the API shows as "set", its value never on the page;
 * - every settings page: screenshot at 1280x800, no page error, CSP violation, request outside
 *   loopback or serious axe violation.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
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
const SECRET_CANARY = `community-canary-${process.pid}`;

describe.runIf(enabled)('settings pages in Chromium', { timeout: 180_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let token: string;
  const hostname = os.hostname();

  beforeAll(async () => {
    a = await startConsoleAppliance({ APPLIANCE_NETWORK_MODE: 'dry-run' });
    token = await a.login();
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
  };

  /** Opens a page through the main navigation, as a person does. */
  const open = async (label: string, heading = label) => {
    // A dialog a failed step left open would cover the navigation.
    if (await w.page.getByRole('dialog').count()) await w.page.keyboard.press('Escape');
    await w.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: label, exact: true })
      .click();
    await w.page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
  };

  it('network: the dry-run banner, and a change answered with what would have been written', async () => {
    const before = await a.api('POST', '/api/getNetworkInfo', undefined, token);
    expect(before.body.network_mode).toBe('dry-run');
    await open('Network');
    await w.page.getByTestId('dry-run-banner').waitFor();
    const first = before.body.interfaces[0].name as string;
    await w.page.getByTestId('interfaces').getByText(first, { exact: true }).waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-network');

    await w.page.getByRole('button', { name: `Edit ${first}` }).click();
    const dialog = w.page.getByRole('dialog');
    await dialog.getByLabel('Packet capture (use_sniffer)').check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    const outcome = w.page.getByTestId('outcome');
    await outcome.getByText('Dry run: nothing was applied to this machine').waitFor();
    const text = (await outcome.textContent()) ?? '';
    expect(text).toContain('Would write');
    expect(text).toContain(first);
    // Titled as a dry run, not as a success; only the appliance's own roles were stored.
    expect(await outcome.locator('.mantine-Alert-label').textContent()).toBe(
      'Dry run: nothing was applied to this machine',
    );
    expect(text).toContain('nothing was applied to the host');
    await screenshot(w.page, 'settings-network-dry-run');

    // A bad static address: the appliance's refusal inside the form, nothing written or stored.
    await w.page.getByRole('button', { name: `Edit ${first}` }).click();
    const form = w.page.getByRole('dialog');
    await form.getByRole('textbox', { name: 'Configuration' }).click();
    await w.page.getByRole('option', { name: 'static' }).click();
    await form.getByRole('textbox', { name: /^Address/ }).fill('999.1.1.1');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toMatch(/address/i);
    await screenshot(w.page, 'settings-network-refused');
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });

    const after = await a.api('POST', '/api/getNetworkInfo', undefined, token);
    const strip = (body: any) =>
      body.interfaces.map((i: any) => ({ name: i.name, ipv4: i.ipv4, type: i.config.type }));
    expect(strip(after.body)).toEqual(strip(before.body));
    expect(after.body.interfaces[0].config.use_sniffer).toBe(true);
    await clean();
  });

  it('hostname: an invalid name shows the 422 message, and the host keeps its name', async () => {
    await open('Hostname and host map');
    await w.page.getByText(`This host is ${hostname}`).waitFor();
    await w.page.getByLabel('Hostname').fill('not_a valid-name-');
    await w.page.getByRole('button', { name: 'Set hostname' }).click();
    const error = w.page.locator('.mantine-TextInput-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/hostname/i);
    await w.page.getByTestId('empty-state').getByText('The host map is empty').waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-hostname-invalid');
    expect(os.hostname()).toBe(hostname);
    await clean();
  });

  it('retention: an edited row is kept after a reload', async () => {
    const policy = await a.api('GET', '/api/getRetentionPolicy', undefined, token);
    const row = policy.body.message[0] as { id: number; table: string; retention: number };
    const days = row.retention === 41 ? 42 : 41;
    await open('Retention');
    const field = w.page.getByLabel(`Days to keep ${row.table}`);
    await field.fill('0');
    await w.page.getByText('At least 1 day').waitFor();
    expect(await w.page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await field.fill(String(days));
    await w.page.getByRole('button', { name: 'Save' }).click();
    await w.page.getByTestId('outcome').getByText('Retention policy saved').waitFor();
    await w.page.reload();
    await w.page.getByRole('heading', { name: 'Retention', exact: true, level: 1 }).waitFor();
    expect(await w.page.getByLabel(`Days to keep ${row.table}`).inputValue()).toBe(String(days));
    const saved = await a.api('GET', '/api/getRetentionPolicy', undefined, token);
    expect(saved.body.message.find((r: { id: number }) => r.id === row.id).retention).toBe(days);
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-retention');
    await clean();
  });

  it('daemons: a stored secret shows as set and never as text', async () => {
    const stored = await a.api(
      'POST',
      '/api/daemon/discovery/config',
      { config: [{ var: 'snmp_community', value: SECRET_CANARY }] },
      token,
    );
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    await open('Daemons');
    const card = w.page.getByTestId('daemon-discovery');
    await card.getByTestId('secret-snmp_community').getByText('set').waitFor();
    const html = await w.page.content();
    expect(html).not.toContain(SECRET_CANARY);
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-daemons');

    // Saving the daemon untouched keeps the secret (the sentinel goes back).
    await card.getByRole('button', { name: 'Save variables' }).click();
    await w.page.getByTestId('outcome').getByText('discovery saved', { exact: true }).waitFor();
    const after = await a.api('GET', '/api/daemon/discovery', undefined, token);
    expect(after.body.config).toEqual([{ var: 'snmp_community', value: { __encrypted__: true } }]);
    expect(JSON.stringify(after.body)).not.toContain(SECRET_CANARY);

    // A value that breaks the daemon's rule: the appliance's 422 message, nothing saved.
    const syslog = w.page.getByTestId('daemon-syslog');
    await syslog.getByRole('textbox', { name: 'Add a variable to syslog' }).click();
    await w.page.getByRole('option', { name: 'port' }).click();
    await syslog.getByLabel('Value of port').fill('514; id');
    await syslog.getByRole('button', { name: 'Save variables' }).click();
    await w.page.getByTestId('outcome').getByText('syslog: nothing was saved').waitFor();
    expect(await w.page.getByTestId('outcome').textContent()).toMatch(/port/);
    expect((await a.api('GET', '/api/daemon/syslog', undefined, token)).body.config).toEqual([]);
    await clean();
  });

  it('services, time and license pages render the appliance state', async () => {
    await open('Services');
    await w.page.getByTestId('services').getByText('scheduler', { exact: true }).waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-services');

    await open('Time');
    await w.page.getByTestId('appliance-clock').waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-time');

    await open('License');
    await w.page.getByText('This appliance is not licensed').waitFor();
    await w.page.getByLabel('Registration key').fill('123-abc');
    await w.page.getByRole('button', { name: 'Activate' }).click();
    await w.page.getByText('Six groups of six hex digits separated by dashes.').waitFor();
    // Well-formed but with a wrong check group: the appliance's 422 message is shown.
    await w.page.getByLabel('Registration key').fill('000000-000000-000000-000000-000000-000000');
    await w.page.getByRole('button', { name: 'Activate' }).click();
    await w.page.locator('.mantine-TextInput-error').waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await screenshot(w.page, 'settings-license');
    await clean();
  });

  it('services: restart one engine after a confirmation, then the whole appliance', async () => {
    await open('Services');
    await w.page.getByRole('button', { name: 'restart syslog' }).click();
    const dialog = w.page.getByRole('dialog', { name: 'Restart syslog' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await w.page.getByRole('button', { name: 'restart syslog' }).click();
    await w.page
      .getByRole('dialog', { name: 'Restart syslog' })
      .getByRole('button', { name: 'Restart' })
      .click();
    await w.page.getByTestId('outcome').getByText('restart syslog', { exact: true }).waitFor();
    // A shared resource offers no action; the appliance would refuse it anyway.
    expect(await w.page.getByRole('button', { name: 'stop scheduler' }).count()).toBe(0);

    await w.page.getByRole('button', { name: 'Restart appliance' }).click();
    await w.page
      .getByRole('dialog', { name: 'Restart the appliance' })
      .getByRole('button', { name: 'Restart appliance' })
      .click();
    const outcome = w.page.getByTestId('outcome');
    await outcome.getByText('Appliance restarted', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await outcome.textContent()).toMatch(/\d+ services restarted: .*syslog/);
    const services = await a.api('GET', '/api/manageApplianceServices', undefined, token);
    for (const s of services.body.data.services as { name: string; status: string }[])
      expect(s.status, s.name).toBe('running');
    await clean();
  });

  it('host map: add, edit and delete an entry', async () => {
    await open('Hostname and host map');
    await w.page.getByRole('button', { name: 'Add entry' }).click();
    let dialog = w.page.getByRole('dialog');
    await dialog.getByLabel(/^IP address/).fill('192.0.2.77');
    await dialog.getByLabel(/^Host name/).fill('bad name');
    await dialog.getByRole('button', { name: 'Save' }).click();
    // The appliance's refusal, in its words, inside the form; nothing stored.
    await dialog.getByRole('alert').waitFor();
    expect((await a.api('POST', '/api/getHostnames', {}, token)).body.total).toBe(0);
    await dialog.getByLabel(/^Host name/).fill('nas.example.test');
    await dialog.getByRole('textbox', { name: 'Name type' }).click();
    await w.page.getByRole('option', { name: /^fqdn/ }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    const table = w.page.getByTestId('host-map');
    await table.getByText('nas.example.test').waitFor();
    await table.getByText('fqdn', { exact: true }).waitFor();

    await w.page.getByRole('button', { name: 'Edit 192.0.2.77 nas.example.test' }).click();
    dialog = w.page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: 'Node type' }).click();
    await w.page.getByRole('option', { name: 'printer' }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await table.getByText('printer', { exact: true }).waitFor();
    await screenshot(w.page, 'settings-host-map');

    await w.page.getByRole('button', { name: 'Delete 192.0.2.77 nas.example.test' }).click();
    await w.page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await w.page.getByText('The host map is empty').waitFor();
    expect((await a.api('POST', '/api/getHostnames', {}, token)).body.total).toBe(0);

    // Paging: 12 entries at 10 a page leave 2 on the second page.
    for (let i = 1; i <= 12; i++) {
      const made = await a.api(
        'POST',
        '/api/createHostname',
        {
          ip: `192.0.2.${100 + i}`,
          hostname: `host${i}.example.test`,
          host_name_type: 'fqdn',
          node_type: 'host',
        },
        token,
      );
      expect(made.body.status, JSON.stringify(made.body)).toBe(201);
    }
    await w.page.reload();
    await w.page.getByText('12 entries').waitFor();
    await w.page.getByRole('textbox', { name: 'Entries per page' }).click();
    await w.page.getByRole('option', { name: '10', exact: true }).click();
    await w.page.getByRole('button', { name: '2', exact: true }).click();
    await w.page.waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('[data-testid="host-map"] tbody tr')
          .length === 2,
      undefined,
      { timeout: 10_000 },
    );
    expect(await seriousAxe(w.page), 'axe').toEqual([]);
    await clean();
  });

  it('time and license: a dry-run time change and an activated key', async () => {
    await open('Time');
    await w.page.locator('.mantine-SegmentedControl-label', { hasText: 'NTP servers' }).click();
    await w.page.getByRole('textbox', { name: 'Servers' }).fill('127.0.0.1  ntp.example.test');
    await w.page.getByRole('button', { name: 'Save time settings' }).click();
    const outcome = w.page.getByTestId('outcome');
    await outcome.getByText('Dry run: the host clock was not changed').waitFor();

    // A key with its check group (docs/features/settings.md, License).
    const groups = ['0A1B2C', '3D4E5F', '600000', '7ABCDE', 'F01234'];
    const check = crypto
      .createHash('sha256')
      .update(groups.join('-'))
      .digest('hex')
      .slice(0, 6)
      .toUpperCase();
    const key = [...groups, check].join('-');
    await open('License');
    await w.page.getByLabel('Registration key').fill(key.toLowerCase());
    await w.page.getByRole('button', { name: 'Activate' }).click();
    await w.page.getByTestId('outcome').getByText('License activated', { exact: true }).waitFor({
      timeout: 60_000,
    });
    await w.page.getByTestId('licenses').getByText(key).waitFor();
    await w.page.getByTestId('licenses').getByText('active', { exact: true }).waitFor();
    await clean();
  });

  it('permissions: system sees the settings pages but not daemons; without system, none', async () => {
    const system = await createUser(a, token, 'settings-system', ['system']);
    const devices = await createUser(a, token, 'settings-devices', ['devices']);
    for (const [user, expected] of [
      [system, ['Services', 'Network', 'Time', 'Retention']],
      [devices, []],
    ] as const) {
      const v = await openPage(browser);
      const asked: string[] = [];
      v.page.on('request', (r) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith('/api/daemon') || path.startsWith('/api/getRetentionPolicy'))
          asked.push(path);
      });
      try {
        await signInThroughUi(v.page, a.url, user.username, user.password);
        const nav = v.page.getByRole('navigation', { name: 'Main' });
        await nav.getByRole('link', { name: 'Overview', exact: true }).waitFor();
        for (const label of ['Services', 'Network', 'Time', 'Retention', 'Daemons'])
          expect(
            await nav.getByRole('link', { name: label, exact: true }).count(),
            `${user.username}: ${label}`,
          ).toBe((expected as readonly string[]).includes(label) ? 1 : 0);
        await v.page.goto(`${a.url}/settings/daemons`);
        await v.page.getByText('The sa permission is needed').waitFor();
        if (user === devices) {
          await v.page.goto(`${a.url}/settings/retention`);
          await v.page.getByText('The system permission is needed').waitFor();
        }
        expect(asked, `${user.username}: requests the page may not make`).toEqual([]);
      } finally {
        await v.context.close();
      }
    }
  });

  it('every settings page in the light theme: no serious axe violation', async () => {
    const light = await openPage(browser, { colorScheme: 'light' });
    await light.context.addInitScript(() => {
      (globalThis as any).localStorage.setItem('console.color-scheme', 'light');
    });
    try {
      await signInThroughUi(light.page, a.url);
      const pages: [string, string][] = [
        ['/settings/services', 'Services'],
        ['/settings/network', 'Network'],
        ['/settings/hostname', 'Hostname and host map'],
        ['/settings/time', 'Time'],
        ['/settings/license', 'License'],
        ['/settings/retention', 'Retention'],
        ['/settings/daemons', 'Daemons'],
      ];
      for (const [path, heading] of pages) {
        await light.page.goto(`${a.url}${path}`);
        await light.page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
        await light.page.getByLabel('Loading').first().waitFor({ state: 'detached' });
        if (path === '/settings/hostname') {
          // The field error in the light theme too.
          await light.page.getByLabel('Hostname').fill('-bad-');
          await light.page.getByRole('button', { name: 'Set hostname' }).click();
          await light.page.locator('.mantine-TextInput-error').waitFor();
        }
        expect(await seriousAxe(light.page), `${path} (light)`).toEqual([]);
        await screenshot(light.page, `settings-${path.split('/').pop()}-light`);
      }
      expect(light.pageErrors, 'page errors').toEqual([]);
      expect(light.foreignRequests, 'requests outside loopback').toEqual([]);
    } finally {
      await light.context.close();
    }
    expect(os.hostname()).toBe(hostname);
  });
});
