/**
 * The Directory page in Chromium against a started appliance and a real slapd (issue 19,
 * Console): the admin fills the connection form, tests it (the groups found are listed), saves
 * it (the bind password field is empty again on reload and the password never comes back from
 * the API), gives a group a permission, and a directory user who signs in through the console
 * gets it; a sync shows its counts. A user without `sa` has no Directory navigation entry.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer } from '../harness/peers.js';
import { groupLdif, personLdif, startSlapd, type Slapd } from '../harness/slapd.js';
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

const CANARY = 'Canary-e2e-Bind-9c1';
const enabled =
  haveChromium() &&
  havePeer('slapd', 'slapd') &&
  havePeer('ldapadd', 'ldap-utils') &&
  process.platform === 'linux';

describe.skipIf(!enabled)('directory page', () => {
  let a: ConsoleAppliance;
  let ldap: Slapd;
  let browser: Browser;
  let w: Watched;
  let adminToken: string;

  beforeAll(async () => {
    ldap = await startSlapd({ adminPassword: CANARY });
    ldap.add(
      [
        personLdif(ldap.suffix, { uid: 'dana', password: 'dana-Pw1', mail: 'dana@example.org' }),
        groupLdif(`cn=noc,ou=groups,${ldap.suffix}`, 'noc', [`uid=dana,ou=people,${ldap.suffix}`]),
      ].join('\n'),
    );
    a = await startConsoleAppliance();
    adminToken = await a.login();
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
    await ldap?.stop();
  });

  it('configures, tests, maps a group and syncs', async () => {
    const page = w.page;
    await signInThroughUi(page, a.url);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Directory', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Connection' }).waitFor();
    await page.getByLabel('Enabled').check();
    await page.getByLabel('Host').fill('127.0.0.1');
    await page.getByLabel('Port').fill(String(ldap.port));
    await page.getByLabel('StartTLS').check();
    await page.getByLabel('Verify the certificate').uncheck();
    await page.getByLabel('Base DN').fill(ldap.suffix);
    await page.getByLabel('Bind DN').fill(ldap.adminDn);
    await page.getByLabel('Bind password').fill(CANARY);
    await page.getByLabel('Create users on first sign-in').check();
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('test-result').getByText('1 groups found').waitFor({ timeout: 15_000 });
    await page.getByText(`cn=noc,ou=groups,${ldap.suffix}`).first().waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Directory settings saved.').waitFor();

    const read = await a.api('GET', '/api/ldap/config', undefined, adminToken);
    expect(read.body.config).toMatchObject({ enabled: true, port: ldap.port, use_tls: true });
    expect(JSON.stringify(read.body)).not.toContain(CANARY);

    await page.getByLabel('Group DN').fill(`cn=noc,ou=groups,${ldap.suffix}`);
    await page.getByLabel('Permissions').first().click();
    await page.getByRole('option', { name: 'devices', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Save group' }).click();
    await page.getByTestId('mappings').getByText('devices').waitFor();
    await screenshot(page, 'directory-configured');

    await page.reload();
    await page.getByRole('heading', { name: 'Connection' }).waitFor();
    expect(await page.getByLabel('Bind password').inputValue()).toBe('');
    expect(await page.getByLabel('Host').inputValue()).toBe('127.0.0.1');

    const dana = await a.login('dana', 'dana-Pw1');
    const own = await a.api('GET', '/api/getUsers', undefined, dana);
    expect(own.body.users[0].permissions).toEqual(['devices']);

    await page.getByRole('button', { name: 'Sync users' }).click();
    await page.getByTestId('sync-counts').getByText('1 synced, 0 errors').waitFor();
    expect(w.pageErrors).toEqual([]);
    expect(w.cspViolations).toEqual([]);
    expect(await recordedViolations(page)).toEqual([]);
    expect(w.foreignRequests).toEqual([]);
    expect(await page.content()).not.toContain(CANARY);
  });

  it('a directory user signs in through the /auth/* sign-in page too', async () => {
    const other = await openPage(browser);
    await other.page.goto(`${a.url}/auth/device`);
    await expect.poll(() => new URL(other.page.url()).pathname).toBe('/auth/signin');
    await other.page.fill('#username', 'dana');
    await other.page.fill('#password', 'dana-Pw1');
    await Promise.all([
      other.page.waitForURL((url) => url.pathname !== '/auth/signin'),
      other.page.click('button[type=submit]'),
    ]);
    expect(new URL(other.page.url()).pathname).toBe('/auth/device');
    const audit = a.appliance.db
      .prepare(
        "SELECT detail FROM audit_log WHERE action = 'auth.login' AND outcome = 'success' AND target_label = 'dana'",
      )
      .all() as { detail: string }[];
    expect(audit.map((r) => JSON.parse(r.detail).via)).toContain('signin-page');
    await other.context.close();
  });

  it('a user without sa has no Directory entry', async () => {
    const user = await createUser(a, adminToken, 'nodir', ['users', 'system']);
    const other = await openPage(browser);
    await signInThroughUi(other.page, a.url, user.username, user.password);
    const nav = other.page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Users', exact: true }).waitFor();
    expect(await nav.getByRole('link', { name: 'Directory', exact: true }).count()).toBe(0);
    await other.context.close();
  });
});
