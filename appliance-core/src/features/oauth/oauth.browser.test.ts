/**
 * The /auth pages in a real browser: Playwright drives Debian's Chromium (headless) through the
 * sign-in page, the device page (its script runs under the strict CSP and normalizes the code)
 * and the consent page of the authorization-code flow. Screenshots of the device and consent
 * pages are saved under test-results/ for a person to look at.
 *
 * Chromium resolves no host name here (--host-resolver-rules): it reaches the appliance on
 * 127.0.0.1 and nothing else. The client of the code flow is a native app's loopback listener:
 * a small HTTP server on 127.0.0.1 that records the redirect it receives.
 */
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer, findProgram } from '../../../../test/harness/peers.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const HAS_CHROMIUM = havePeer('chromium', 'chromium');
const RESULTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../test-results',
);

describe.runIf(HAS_CHROMIUM)('the /auth pages in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let listener: Server;
  let redirectUri: string;
  const callbacks: URL[] = [];
  const cspViolations: string[] = [];
  const user = { username: 'pat', password: 'Pat-Passw0rd' };

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 900, height: 900 },
      colorScheme: 'light',
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text()))
        cspViolations.push(message.text());
    });
    return page;
  }

  async function signIn(page: Page): Promise<void> {
    await expect.poll(() => new URL(page.url()).pathname).toBe('/auth/signin');
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await Promise.all([
      page.waitForURL((url) => url.pathname !== '/auth/signin'),
      page.click('button[type=submit]'),
    ]);
  }

  beforeAll(async () => {
    fs.mkdirSync(RESULTS, { recursive: true });
    h = await startAppliance();
    const admin = await h.login();
    await h.request('POST', '/api/createUser', {
      token: admin,
      body: {
        first_name: 'Pat',
        last_name: 'Operator',
        email: 'pat@example.test',
        username: user.username,
        password: user.password,
      },
    });
    const id = (
      h.appliance.db.prepare("SELECT id FROM users WHERE username = 'pat'").get() as { id: number }
    ).id;
    await h.request('POST', '/api/saveUser', {
      token: admin,
      body: { user: id, permissions: ['api'] },
    });
    listener = createServer((request, response) => {
      callbacks.push(new URL(request.url ?? '/', redirectUri));
      response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    browser = await chromium.launch({
      executablePath: findProgram('chromium') ?? '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => listener?.close(resolve));
    await h?.close();
  });

  it('signs in and approves a device code; the script normalizes what is typed', async () => {
    const started = await h.request('POST', '/api/oauth/device/authorize', {
      body: { client_name: 'Nightly <backup> script', scopes: ['mcp:devices', 'mcp:logs'] },
    });
    expect(started.status).toBe(200);
    const { device_code: deviceCode, user_code: userCode } = started.body as {
      device_code: string;
      user_code: string;
    };

    const page = await newPage();
    await page.goto(`${h.url}/auth/device`);
    await signIn(page);
    expect(new URL(page.url()).pathname).toBe('/auth/device');

    // Typed in lower case with a dash: the page's script makes it the code.
    await page.fill('#user_code', '');
    await page.type(
      '#user_code',
      `${userCode.slice(0, 4).toLowerCase()}-${userCode.slice(4).toLowerCase()}`,
    );
    expect(await page.inputValue('#user_code')).toBe(userCode);
    await page.screenshot({ path: path.join(RESULTS, 'oauth-device-page.png'), fullPage: true });

    await Promise.all([page.waitForLoadState('load'), page.click('button[name=approve]')]);
    await expect.poll(() => page.textContent('h1')).toBe('Device connected');
    expect(await page.textContent('p.success')).toBe('You approved Nightly <backup> script.');
    await page.screenshot({
      path: path.join(RESULTS, 'oauth-device-approved.png'),
      fullPage: true,
    });

    const redeemed = await h.request('POST', '/api/oauth/device/token', {
      body: { device_code: deviceCode },
    });
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'mcp:devices mcp:logs',
    });
    expect(
      (await h.request('POST', '/api/oauth/device/token', { body: { device_code: deviceCode } }))
        .body.error,
    ).toBe('expired_token');
    await page.context().close();
  });

  it('opens verification_uri_complete with the code filled in, and shows the consent page of the code flow', async () => {
    const started = await h.request('POST', '/api/oauth/device/authorize', {
      body: { client_name: 'Second device' },
    });
    const page = await newPage();
    await page.goto(started.body.verification_uri_complete as string);
    await signIn(page);
    expect(await page.inputValue('#user_code')).toBe(started.body.user_code);

    // The code flow: a registered, approved client asks for consent.
    const registered = await h.request('POST', '/auth/register', {
      body: { client_name: 'Claude Desktop', redirect_uris: [redirectUri] },
    });
    const clientId = registered.body.client_id as string;
    const admin = await h.login();
    await h.request('POST', `/api/oauth/clients/${clientId}/approve`, { token: admin });
    const authorize = new URL(`${h.url}/auth/authorize`);
    const query = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'mcp:devices mcp:alerts mcp:logs',
      state: 'xyz',
    };
    for (const [k, v] of Object.entries(query)) authorize.searchParams.set(k, v);
    await page.goto(authorize.toString());
    expect(await page.textContent('h1')).toBe('Authorize Claude Desktop');
    expect(await page.textContent('.badge')).toBe('Unverified');
    await page.screenshot({ path: path.join(RESULTS, 'oauth-consent-page.png'), fullPage: true });

    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(redirectUri)),
      page.click('button[name=approve]'),
    ]);
    expect(await page.textContent('body')).toBe('You can close this window.');
    // The browser also asks the listener for /favicon.ico.
    const received = callbacks.filter((url) => url.pathname === '/callback');
    expect(received).toHaveLength(1);
    const params = received[0]!.searchParams;
    expect(params.get('state')).toBe('xyz');
    expect(params.get('iss')).toBe(h.url);
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.context().close();
  });

  it('ran every page without a Content-Security-Policy violation', () => {
    expect(cspViolations).toEqual([]);
  });
});
