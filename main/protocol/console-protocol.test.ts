import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { CONSOLE_CSP_TEMPLATE, CSP_NONCE_PLACEHOLDER } from '../../renderer/csp.mjs';
import { CONSOLE_PAGE_POLICY, consoleCsp, renderConsoleIndexHtml } from './console-csp.js';
import {
  CONSOLE_SCHEME_REGISTRATION,
  createConsoleProtocolHandler,
  resolveFile,
} from './console-protocol.js';

/** A stand-in for the console's CSP string (the console issue defines the real one). */
const PLACEHOLDER_CSP = (nonce: string) => `default-src 'self'; style-src 'self' 'nonce-${nonce}'`;

let root: string;
const proxied: string[] = [];
const handler = () =>
  createConsoleProtocolHandler({
    rendererRoot: root,
    contentSecurityPolicy: PLACEHOLDER_CSP,
    renderIndexHtml: (html, nonce) => html.replace('%NONCE%', nonce),
    proxy: (request) => {
      proxied.push(request.url);
      return Promise.resolve(new Response('proxied', { status: 299 }));
    },
  });

beforeAll(() => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'console-protocol-'));
  root = path.join(base, 'dist');
  fs.mkdirSync(path.join(root, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(root, 'index.html'), '<html><style nonce="%NONCE%"></style></html>');
  fs.writeFileSync(path.join(root, 'assets', 'app-1234.js'), 'console.log(1)');
  fs.writeFileSync(path.join(root, '.env'), 'SECRET=1');
  fs.writeFileSync(path.join(base, 'outside.txt'), 'outside');
});

describe('app://console', () => {
  it('is registered standard and secure, with fetch and streaming, no CSP bypass, no CORS', () => {
    expect(CONSOLE_SCHEME_REGISTRATION).toEqual({
      scheme: 'app',
      privileges: {
        standard: true,
        secure: true,
        supportFetchAPI: true,
        stream: true,
        codeCache: true,
        corsEnabled: false,
        bypassCSP: false,
        allowServiceWorkers: false,
      },
    });
  });

  it('serves index.html with the console CSP and a fresh nonce per answer', async () => {
    const serve = handler();
    const first = await serve(new Request('app://console/'));
    const second = await serve(new Request('app://console/index.html'));
    const csp = first.headers.get('content-security-policy') ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1] ?? '';
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(csp).toBe(PLACEHOLDER_CSP(nonce));
    expect(await first.text()).toBe(`<html><style nonce="${nonce}"></style></html>`);
    expect(second.headers.get('content-security-policy')).not.toBe(csp);
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('falls back to index.html for client routes, not for missing files', async () => {
    const serve = handler();
    const route = await serve(new Request('app://console/devices/12'));
    expect(route.status).toBe(200);
    expect(route.headers.get('content-security-policy')).toBeTruthy();
    expect((await serve(new Request('app://console/assets/missing.js'))).status).toBe(404);
    const asset = await serve(new Request('app://console/assets/app-1234.js'));
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await asset.text()).toBe('console.log(1)');
  });

  it('never serves outside the build, dotfiles, other hosts or other methods', async () => {
    const serve = handler();
    for (const url of [
      'app://console/../outside.txt',
      'app://console/%2e%2e/outside.txt',
      'app://console/assets/%2e%2e%2f%2e%2e%2foutside.txt',
      'app://console/.env',
      'app://console/assets/..%5c..%5coutside.txt',
      'app://other/index.html',
    ]) {
      const answer = await serve(new Request(url));
      expect(await answer.text(), url).not.toMatch(/outside|SECRET/);
    }
    expect((await serve(new Request('app://console/.env'))).status).toBe(404);
    expect((await serve(new Request('app://other/index.html'))).status).toBe(404);
    expect((await serve(new Request('app://console/', { method: 'POST', body: 'x' }))).status).toBe(
      405,
    );
    expect(resolveFile(root, '/%00')).toBeUndefined();
  });

  it('hands /appliances/* to the proxy', async () => {
    const answer = await handler()(new Request('app://console/appliances/embedded/api/me'));
    expect(answer.status).toBe(299);
    expect(proxied).toEqual(['app://console/appliances/embedded/api/me']);
  });

  it("applies the console's own CSP (renderer/csp.mjs), its nonce templated into index.html", async () => {
    const consoleRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'console-protocol-csp-'));
    // The shape of the console build's index.html: Vite's html.cspNonce placeholder on its tags.
    fs.writeFileSync(
      path.join(consoleRoot, 'index.html'),
      `<html><head><meta property="csp-nonce" nonce="${CSP_NONCE_PLACEHOLDER}">` +
        `<script type="module" nonce="${CSP_NONCE_PLACEHOLDER}" src="/assets/a.js"></script></head></html>`,
    );
    // What main/index.ts passes to the handler.
    const desktop = createConsoleProtocolHandler({
      rendererRoot: consoleRoot,
      ...CONSOLE_PAGE_POLICY,
      proxy: () => Promise.resolve(new Response(null, { status: 500 })),
    });
    const seen = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const answer = await desktop(new Request('app://console/devices/1'));
      const header = answer.headers.get('content-security-policy') ?? '';
      const html = await answer.text();
      const nonce = /nonce="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(html).not.toContain(CSP_NONCE_PLACEHOLDER);
      expect(html.split(`nonce="${nonce}"`)).toHaveLength(3);
      // The same string the appliance serves the web console with (its template, this nonce).
      expect(header).toBe(CONSOLE_CSP_TEMPLATE.replace('{nonce}', nonce));
      seen.add(nonce);
    }
    expect(seen.size).toBe(2);
  });

  it("the policy is the built console's when the build is there (renderer/dist/console.json)", () => {
    const manifest = path.resolve(import.meta.dirname, '../../renderer/dist/console.json');
    if (!fs.existsSync(manifest)) return;
    const built = JSON.parse(fs.readFileSync(manifest, 'utf8')) as {
      csp: string;
      noncePlaceholder: string;
    };
    expect(consoleCsp('N0NCE')).toBe(built.csp.replace('{nonce}', 'N0NCE'));
    expect(renderConsoleIndexHtml(`a${built.noncePlaceholder}b`, 'N0NCE')).toBe('aN0NCEb');
  });
});
