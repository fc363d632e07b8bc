/**
 * The console as the desktop window runs it, in Chromium: the preload replaced by the typed test
 * double (desktop-bridge-double.ts), the main process by its real modules running in Node
 * (desktop-host.ts: the `app://console` protocol handler with the console's CSP, the appliance
 * proxy, the IPC handlers, terminal sessions), an embedded appliance started as a real child
 * process (as the supervisor starts it) and a remote appliance started by the test, reached
 * through a TLS front whose certificate the test controls (self-signed; replaced for the changed
 * certificate screen).
 *
 * Screenshots of the new screens go to test-results/console-screenshots (desktop-*.png).
 */
import type http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';

import type { Browser, Request as PwRequest } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CONSOLE_CHANNELS, DEVICE_FLOW_FAILURE_CAUSES } from '../../electron/contract/bridge.js';
import { createDesktopStack, type DesktopStack } from '../harness/desktop-stack.js';
import { makeSelfSigned, type TestCertificate } from '../harness/tls-certs.js';
import { startDesktopHost, type DesktopHost } from './desktop-host.js';
import {
  ADMIN_PASSWORD,
  haveChromium,
  launchBrowser,
  openPage,
  recordedViolations,
  screenshot,
  startConsoleAppliance,
  type ConsoleAppliance,
  type Watched,
} from './harness.js';

const enabled = haveChromium() && process.platform === 'linux';
const IMG = '<img src=x onerror=window.__x=1>';

/** A TLS front for an appliance: its own certificate (swappable), requests passed through. */
async function startTlsFront(target: string, certificate: TestCertificate) {
  const upstream = new URL(target);
  const server = https.createServer(
    { key: certificate.key, cert: certificate.cert },
    (req, res) => {
      const forwarded = https.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
          rejectUnauthorized: false,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      req.pipe(forwarded);
    },
  );
  // WebSocket upgrades (the appliance terminal) pass through as raw bytes.
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const up = tls.connect(
      { host: upstream.hostname, port: Number(upstream.port), rejectUnauthorized: false },
      () => {
        let raw = `${req.method} ${req.url} HTTP/1.1\r\n`;
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          raw += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
        up.write(`${raw}\r\n`);
        if (head.length > 0) up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      },
    );
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Presents another certificate from the next connection on. */
    swap(next: TestCertificate) {
      server.setSecureContext({ key: next.key, cert: next.cert });
      server.closeAllConnections();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.runIf(enabled)('desktop console in Chromium', { timeout: 120_000 }, () => {
  let stack: DesktopStack;
  let host: DesktopHost;
  let remote: ConsoleAppliance;
  let front: Awaited<ReturnType<typeof startTlsFront>>;
  let firstCert: TestCertificate;
  let browser: Browser;
  let w: Watched;
  let remoteId = '';
  const requests: PwRequest[] = [];

  beforeAll(async () => {
    stack = createDesktopStack({ embedded: { supervisor: { maxFailures: 1 } } });
    remote = await startConsoleAppliance();
    const token = await remote.login();
    const created = await remote.api(
      'POST',
      '/api/device/set',
      { label: `${IMG} remote switch`, ip_address: '127.0.0.3', profile: 'dash_appliance' },
      token,
    );
    if (created.status !== 200 && created.status !== 201)
      throw new Error(`device/set: ${JSON.stringify(created.body)}`);
    firstCert = await makeSelfSigned();
    front = await startTlsFront(remote.url, firstCert);
    await stack.embedded.start();
    host = await startDesktopHost(stack);
    browser = await launchBrowser();
    w = await openPage(browser);
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
    await host.attach(w.context);
    w.page.on('request', (request) => requests.push(request));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await stack?.close();
    await front?.close();
    await remote?.close();
  });

  const clean = async () => {
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
    expect(w.dialogs, 'dialogs').toEqual([]);
    expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
    expect(await w.page.evaluate(() => (globalThis as any).__xssRuns), 'XSS runs').toBe(0);
  };

  const apiRequests = () =>
    requests.map((r) => new URL(r.url()).pathname).filter((p) => p.includes('/api/'));

  it('serves the console under the desktop CSP, the same string the appliance serves', async () => {
    const desktop = await fetch(`${host.url}/`);
    const html = await desktop.text();
    const nonce = /nonce="([^"]+)"/.exec(html)?.[1] ?? '';
    const desktopCsp = desktop.headers.get('content-security-policy') ?? '';
    const webAnswer = await new Promise<string>((resolve, reject) => {
      https
        .get(`${remote.url}/`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(String(res.headers['content-security-policy'] ?? ''));
        })
        .on('error', reject);
    });
    const webNonce = /'nonce-([^']+)'/.exec(webAnswer)?.[1] ?? '';
    expect(nonce.length).toBeGreaterThan(10);
    expect(desktopCsp).toBe(webAnswer.replace(webNonce, nonce));
  });

  it('starts on the embedded appliance: every call goes through the per-connection base, no token', async () => {
    await w.page.goto(`${host.url}/`);
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 30_000 });
    await w.page.getByTestId('connection-switcher').waitFor();
    const api = apiRequests();
    expect(api.length).toBeGreaterThan(0);
    expect(api.every((p) => p.startsWith('/appliances/embedded/api/'))).toBe(true);
    for (const request of requests) {
      const headers = await request.allHeaders();
      expect(headers.authorization).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
    }
    // The page never saw a token: nothing in its storage, nothing in any answer it read.
    const stored = await w.page.evaluate(() =>
      JSON.stringify({
        ...(globalThis as any).localStorage,
        ...(globalThis as any).sessionStorage,
      }),
    );
    expect(stored).not.toMatch(/access_token|eyJ|Bearer/);
    await screenshot(w.page, 'desktop-overview-embedded');
    await clean();
  });

  it('adds a remote appliance: trust on first use shows its SHA-256, pins it after acceptance', async () => {
    await w.page.goto(`${host.url}/desktop/connections`);
    await w.page.getByTestId('add-connection').click();
    await w.page.getByTestId('connection-url').fill(front.url);
    await w.page.getByTestId('connection-name').fill('Remote lab');
    await w.page.getByTestId('connection-save').click();
    const shown = w.page.getByTestId('tofu-fingerprint');
    await shown.waitFor();
    expect(await shown.getAttribute('data-sha256')).toBe(firstCert.sha256);
    expect(stack.store.list().some((c) => c.origin === front.url)).toBe(false);
    await screenshot(w.page, 'desktop-tofu');
    await w.page.getByTestId('tofu-accept').click();
    await w.page.getByTestId('connections-table').getByText('Remote lab').waitFor();
    const saved = stack.store.list().find((c) => c.origin === front.url);
    expect(saved?.pinnedSha256).toBe(firstCert.sha256);
    remoteId = saved!.id;
    await screenshot(w.page, 'desktop-connections');
    await clean();
  });

  it('switches to the remote, signs in through IPC, and shows its device text as text', async () => {
    await w.page.getByTestId('connection-switcher').click();
    await w.page.getByRole('option', { name: 'Remote lab' }).click();
    await w.page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await screenshot(w.page, 'desktop-signin');
    await w.page.getByLabel('Username or email').fill('admin');
    await w.page.getByLabel(/^Password/).fill(ADMIN_PASSWORD);
    await w.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 20_000 });
    const signIn = host.calls.find((c) => c.channel === CONSOLE_CHANNELS.authSignIn);
    expect(signIn?.input).toMatchObject({ connectionId: remoteId, username: 'admin' });
    // The proxy refused nothing: /api/login never went over HTTP.
    expect(apiRequests().some((p) => p.includes('/api/login'))).toBe(false);

    const before = host.calls.length;
    const requestMark = requests.length;
    await w.page.goto(`${host.url}/devices`);
    const link = w.page.getByRole('link', { name: `${IMG} remote switch` });
    await link.waitFor({ timeout: 20_000 });
    await link.click();
    await w.page.getByTestId('device-label').waitFor();
    expect(await w.page.getByTestId('device-label').textContent()).toContain(IMG);
    await w.page.waitForTimeout(500);
    expect(await w.page.locator('img[src="x"]').count()).toBe(0);
    // No bridge call made by the device text (the page's reload asks only for the start-up state).
    const during = host.calls.slice(before).map((c) => c.channel);
    const startUp = new Set<string>([
      CONSOLE_CHANNELS.appGetBootstrap,
      CONSOLE_CHANNELS.connectionsList,
      CONSOLE_CHANNELS.coreStatus,
      CONSOLE_CHANNELS.authStatus,
    ]);
    expect(during.filter((c) => !startUp.has(c))).toEqual([]);
    expect(requests.some((r) => new URL(r.url()).pathname === '/x')).toBe(false);
    const viewed = requests
      .slice(requestMark)
      .map((r) => new URL(r.url()).pathname)
      .filter((p) => p.includes('/api/'));
    expect(viewed.length).toBeGreaterThan(0);
    expect(viewed.every((p) => p.startsWith(`/appliances/${remoteId}/api/`))).toBe(true);
    await screenshot(w.page, 'desktop-remote-device-xss');
    await clean();
  });

  it('keeps a cache per appliance: switching shows each its own data, switching back uses the first cache', async () => {
    await w.page.goto(`${host.url}/devices`);
    await w.page.getByRole('link', { name: `${IMG} remote switch` }).waitFor();
    await w.page.getByTestId('connection-switcher').click();
    await w.page.getByRole('option', { name: 'This computer' }).click();
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
    await w.page.getByRole('link', { name: 'Devices' }).first().click();
    await w.page.getByRole('row').nth(1).waitFor();
    expect(await w.page.getByText(`${IMG} remote switch`).count()).toBe(0);

    await w.page.getByTestId('connection-switcher').click();
    await w.page.getByRole('option', { name: 'Remote lab' }).click();
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
    const mark = requests.length;
    await w.page.getByRole('link', { name: 'Devices' }).first().click();
    await w.page.getByRole('link', { name: `${IMG} remote switch` }).waitFor();
    // The list came from the remote's cache (fresh for 15 s): no new list request.
    const listRequests = requests
      .slice(mark)
      .map((r) => new URL(r.url()).pathname)
      .filter((p) => p === `/appliances/${remoteId}/api/devices`);
    expect(listRequests).toEqual([]);
    await clean();
  });

  it('an event stream arrives through the proxy frame by frame (live ping)', async () => {
    await w.page.goto(`${host.url}/tools/ping`);
    await w.page.getByLabel('ping target').fill('127.0.0.1');
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
    expect(whileRunning).toEqual(expect.arrayContaining([1, 2, 3]));
    const first = log.find((e) => e.rows === 1)!;
    const finished = log.find((e) => e.state === 'finished')!;
    expect(finished.t - first.t).toBeGreaterThan(2000);
    expect(
      apiRequests().some(
        (p) => p.startsWith(`/appliances/${remoteId}/api/`) && p.includes('/api/SSEgetPingInfo/'),
      ),
    ).toBe(true);
    await clean();
  });

  it('terminals: a local shell beside the appliance terminal, both over MessagePorts', async () => {
    await w.page.goto(`${host.url}/desktop/terminals`);
    await w.page
      .getByTestId('local-terminal-status')
      .filter({ hasText: 'open' })
      .waitFor({ timeout: 20_000 });
    await w.page
      .getByTestId('appliance-terminal-status')
      .filter({ hasText: 'open' })
      .waitFor({ timeout: 20_000 });
    await w.page
      .locator('[data-testid="local-terminal"] [data-testid="terminal"] textarea')
      .focus();
    await w.page.keyboard.type('echo local-$((40+2))\n');
    await w.page
      .locator('[data-testid="local-terminal"] .xterm-rows')
      .filter({ hasText: 'local-42' })
      .waitFor({ timeout: 15_000 });
    await w.page
      .locator('[data-testid="appliance-terminal"] [data-testid="terminal"] textarea')
      .focus();
    await w.page.keyboard.type('echo remote-$((6*7))\n');
    await w.page
      .locator('[data-testid="appliance-terminal"] .xterm-rows')
      .filter({ hasText: 'remote-42' })
      .waitFor({ timeout: 15_000 });
    const opened = host.calls.filter((c) => c.channel.startsWith('console:terminal:'));
    expect(opened.map((c) => c.channel)).toEqual(
      expect.arrayContaining([
        CONSOLE_CHANNELS.terminalOpenLocal,
        CONSOLE_CHANNELS.terminalOpenAppliance,
      ]),
    );
    expect(
      opened.find((c) => c.channel === CONSOLE_CHANNELS.terminalOpenAppliance)?.input,
    ).toMatchObject({
      connectionId: remoteId,
    });
    await screenshot(w.page, 'desktop-terminals');
    await clean();
  });

  it('a changed certificate: both fingerprints side by side, refused until re-pinned', async () => {
    const next = await makeSelfSigned();
    front.swap(next);
    await w.page.goto(`${host.url}/devices`);
    const screen = w.page.getByTestId('certificate-changed');
    await screen.waitFor({ timeout: 20_000 });
    expect(await w.page.getByTestId('pinned-fingerprint').getAttribute('data-sha256')).toBe(
      firstCert.sha256,
    );
    expect(await w.page.getByTestId('presented-fingerprint').getAttribute('data-sha256')).toBe(
      next.sha256,
    );
    expect(stack.store.get(remoteId)?.pinnedSha256).toBe(firstCert.sha256);
    await screenshot(w.page, 'desktop-certificate-changed');
    await w.page.getByTestId('repin').click();
    await screen.waitFor({ state: 'detached', timeout: 15_000 });
    expect(stack.store.get(remoteId)?.pinnedSha256).toBe(next.sha256);
    await w.page.getByRole('link', { name: `${IMG} remote switch` }).waitFor({ timeout: 20_000 });
    await clean();
  });

  it('device flow: shows the code and the URL, opens it in the system browser, lists the causes of the generic failure', async () => {
    await w.page.getByTestId('account-menu').click();
    await w.page.getByTestId('sign-out').click();
    await w.page.getByTestId('device-flow-start').waitFor({ timeout: 15_000 });
    expect(stack.sessions.status(remoteId).signedIn).toBe(false);
    await w.page.getByTestId('device-flow-start').click();
    const code = w.page.getByTestId('device-user-code');
    await code.waitFor({ timeout: 15_000 });
    const userCode = (await code.textContent()) ?? '';
    expect(userCode).toMatch(/\w{4}/);
    expect(await w.page.getByTestId('device-verification-uri').textContent()).toContain(front.url);
    await screenshot(w.page, 'desktop-device-flow');
    await w.page.getByTestId('device-open-browser').click();
    await expect.poll(() => host.opened.length).toBe(1);
    expect(host.opened[0]!.startsWith(`${front.url}/`)).toBe(true);
    expect(host.opened[0]).toContain(encodeURIComponent(userCode).slice(0, 4));

    // The flow ending without tokens, as main answers it (the appliance's one message for a
    // missing permission, a wrong, expired or used code): scripted, the code lives 600 s.
    host.override(CONSOLE_CHANNELS.authDeviceWait, () =>
      Promise.resolve({
        ok: true,
        value: { status: 'expired', causes: DEVICE_FLOW_FAILURE_CAUSES },
      }),
    );
    try {
      await w.page.getByRole('button', { name: 'Cancel' }).click();
      await w.page.getByTestId('device-flow-start').click();
      await w.page.getByTestId('device-flow-causes').waitFor({ timeout: 15_000 });
      for (const cause of DEVICE_FLOW_FAILURE_CAUSES)
        await w.page.getByTestId('device-flow-causes').getByText(cause).waitFor();
      await screenshot(w.page, 'desktop-device-flow-failed');
    } finally {
      host.clearOverrides();
    }
    await clean();
  });

  it('the embedded appliance crashes: the report with its log tail, then restart from the window', async () => {
    await w.page.getByTestId('connection-switcher').click();
    await w.page.getByRole('option', { name: 'This computer' }).click();
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
    process.kill(stack.embedded.pid as number, 'SIGKILL');
    const report = w.page.getByTestId('crash-report');
    await report.waitFor({ timeout: 30_000 });
    expect(await w.page.getByTestId('crash-message').textContent()).toMatch(/exited|signal|code/);
    expect(await w.page.getByTestId('crash-log').textContent()).toContain('appliance listening on');
    await screenshot(w.page, 'desktop-crash');
    await w.page.goto(`${host.url}/desktop/appliance`);
    await w.page.getByTestId('collectors').waitFor();
    await screenshot(w.page, 'desktop-appliance-failed');
    await w.page.getByTestId('core-restart').click();
    await w.page
      .getByTestId('core-state')
      .filter({ hasText: 'ready' })
      .first()
      .waitFor({ timeout: 45_000 });
    await report.waitFor({ state: 'detached' });
    await w.page.goto(`${host.url}/`);
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 20_000 });
    await screenshot(w.page, 'desktop-appliance-restarted');
    await clean();
  });

  it('collectors: off until turned on, then on, with the bound address and ports main reports', async () => {
    await w.page.goto(`${host.url}/desktop/appliance`);
    await w.page.getByTestId('collectors').waitFor();
    expect(await w.page.getByTestId('collector-ports').count()).toBe(0);
    await w.page.getByTestId('collectors-switch').click({ force: true });
    const ports = w.page.getByTestId('collector-ports');
    await ports.waitFor({ timeout: 45_000 });
    await w.page
      .getByTestId('core-state')
      .filter({ hasText: 'ready' })
      .first()
      .waitFor({ timeout: 45_000 });
    const bound = stack.embedded.status().collectors;
    expect(bound.enabled).toBe(true);
    const text = (await ports.textContent()) ?? '';
    const shown = Object.values(bound.ports)
      .flatMap((p) => [p.udp, p.tcp])
      .filter((p) => p !== undefined);
    // Exactly what the running appliance reported binding: syslog on UDP and TCP with one
    // ephemeral number, never the standalone default (the NetFlow collector does not exist yet).
    expect(bound.ports.syslog?.udp).toBeGreaterThan(0);
    expect(bound.ports.syslog?.tcp).toBe(bound.ports.syslog?.udp);
    expect(bound.ports.syslog?.udp).not.toBe(5514);
    for (const port of shown) expect(text).toContain(`${bound.bindAddress}:${port}/`);
    expect(await w.page.getByTestId('collectors-switch').isChecked()).toBe(true);
    await screenshot(w.page, 'desktop-appliance-collectors');
    await clean();
  });
});
