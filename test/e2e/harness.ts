/**
 * End-to-end harness: a real appliance (real clock, real pollers, HTTPS on a free loopback port,
 * the console build served at /) and Debian's Chromium driven by playwright-core.
 *
 * Network safety: the appliance runs with APPLIANCE_GEOIP_URL=off and the speed-test URL on
 * loopback; Chromium runs without background networking and with host-resolver rules that
 * resolve nothing outside loopback. Every page records CSP violations, runs of the stored-XSS
 * trap (`window.__x`) and dialogs, so a test can assert there were none.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Agent, request as undiciRequest } from 'undici';
import { buildApp, type Appliance } from '../../appliance-core/src/app.js';
import { loadConfig } from '../../appliance-core/src/platform/config/config.js';
import { findProgram, havePeer } from '../harness/peers.js';

export const ADMIN_PASSWORD = 'Admin-Passw0rd';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOT_DIR = path.join(root, 'test-results/console-screenshots');

/** Builds the console when renderer/dist is missing (npm ci builds it; a bare checkout may not). */
export function ensureConsoleBuild(): void {
  if (fs.existsSync(path.join(root, 'renderer/dist/index.html'))) return;
  const result = spawnSync(
    process.execPath,
    [
      path.join(root, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'renderer/vite.config.mjs',
      '--logLevel',
      'warn',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (result.status !== 0)
    throw new Error(`console build failed:\n${result.stdout}${result.stderr}`);
}

/** True when Chromium is there (under REQUIRE_PEERS=1 a missing one fails the run). */
export function haveChromium(): boolean {
  return havePeer('chromium', 'chromium');
}

export interface ConsoleAppliance {
  url: string;
  appliance: Appliance;
  dataDir: string;
  api<T = any>(
    method: string,
    urlPath: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: T }>;
  login(user?: string, password?: string): Promise<string>;
  close(): Promise<void>;
}

const agent = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 1000 });

export async function startConsoleAppliance(
  env: Record<string, string> = {},
): Promise<ConsoleAppliance> {
  ensureConsoleBuild();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-e2e-'));
  const config = loadConfig({
    APPLIANCE_DATA_DIR: dataDir,
    APPLIANCE_BIND: '127.0.0.1',
    APPLIANCE_HTTPS_PORT: '0',
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
    APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
    APPLIANCE_LOG_LEVEL: 'silent',
    APPLIANCE_GEOIP_URL: 'off',
    APPLIANCE_SPEEDTEST_URL: 'http://127.0.0.1:9',
    APPLIANCE_WHOIS_SERVER: '127.0.0.1:9',
    ...env,
  });
  const appliance = await buildApp(config);
  await appliance.start();
  await appliance.app.listen({ host: '127.0.0.1', port: 0 });
  const address = appliance.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `https://127.0.0.1:${port}`;
  const api: ConsoleAppliance['api'] = async (method, urlPath, body, token) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await undiciRequest(`${url}${urlPath}`, {
      method: method as never,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : null };
  };
  const login = async (user = 'admin', password = ADMIN_PASSWORD) => {
    const res = await api('POST', '/api/login', { email: user, password });
    if (!res.body?.access_token) throw new Error(`login failed: ${JSON.stringify(res.body)}`);
    return res.body.access_token as string;
  };
  return {
    url,
    appliance,
    dataDir,
    api,
    login,
    async close() {
      await appliance.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a user with these permissions; returns its credentials. */
export async function createUser(
  a: ConsoleAppliance,
  adminToken: string,
  username: string,
  permissions: string[],
): Promise<{ id: number; username: string; password: string }> {
  const password = 'Passw0rd-e2e';
  const created = await a.api(
    'POST',
    '/api/createUser',
    {
      first_name: 'E2E',
      last_name: username,
      email: `${username}@example.test`,
      username,
      password,
    },
    adminToken,
  );
  if (created.body?.status !== 201) throw new Error(`createUser: ${JSON.stringify(created.body)}`);
  const users = await a.api('GET', '/api/getUsers', undefined, adminToken);
  const id = (users.body.users as { id: number; username: string }[]).find(
    (u) => u.username === username,
  )!.id;
  const saved = await a.api('POST', '/api/saveUser', { user: id, permissions }, adminToken);
  if (saved.body?.status !== 201) throw new Error(`saveUser: ${JSON.stringify(saved.body)}`);
  return { id, username, password };
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // Nothing resolves outside loopback: a stray lookup fails instead of leaving the machine.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];

export async function launchBrowser(): Promise<Browser> {
  const executablePath = findProgram('chromium') ?? '/usr/bin/chromium';
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true, timeout: 60_000 });
}

export interface Watched {
  context: BrowserContext;
  page: Page;
  cspViolations: string[];
  dialogs: string[];
  pageErrors: string[];
  /** Requests that left loopback (must stay empty). */
  foreignRequests: string[];
}

/** A fresh context (its own storage) at 1280x800 with every watcher installed. */
export async function openPage(
  browser: Browser,
  options: { colorScheme?: 'dark' | 'light' } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'dark',
  });
  const cspViolations: string[] = [];
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];
  await context.addInitScript(() => {
    const g = globalThis as any;
    g.__cspViolations = [];
    g.document.addEventListener('securitypolicyviolation', (e: any) => {
      g.__cspViolations.push(
        `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  context.on('request', (req) => {
    const u = new URL(req.url());
    if (
      !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname) &&
      !['data:', 'blob:'].includes(u.protocol)
    )
      foreignRequests.push(req.url());
  });
  const page = await context.newPage();
  page.on('console', (msg) => {
    const text = msg.text();
    if (/Content Security Policy|Refused to (apply|load|execute|connect)/i.test(text))
      cspViolations.push(text);
  });
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  return { context, page, cspViolations, dialogs, pageErrors, foreignRequests };
}

/** CSP violations the page itself recorded (securitypolicyviolation events). */
export async function recordedViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => ((globalThis as any).__cspViolations as string[]) ?? []);
}

export async function signInThroughUi(
  page: Page,
  baseUrl: string,
  user = 'admin',
  password = ADMIN_PASSWORD,
) {
  await page.goto(`${baseUrl}/signin`);
  await page.getByLabel('Username or email').fill(user);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/signin'), { timeout: 15_000 });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/** axe-core's serious and critical violations on the page as it is painted now (one line each). */
export async function seriousAxe(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations: { id: string; impact: string; nodes: string[] }[] = await page.evaluate(
    async () => {
      const result = await (globalThis as any).axe.run((globalThis as any).document, {
        resultTypes: ['violations'],
      });
      return result.violations.map((v: any) => ({
        id: v.id,
        impact: v.impact,
        nodes: v.nodes.slice(0, 3).map((n: any) => String(n.html).slice(0, 160)),
      }));
    },
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}) ${JSON.stringify(v.nodes)}`);
}
