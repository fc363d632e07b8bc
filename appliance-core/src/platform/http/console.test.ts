import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleRoutes, isApiPath } from './console.js';
import { installErrorHandler } from './error-handler.js';

const PLACEHOLDER = '__CONSOLE_CSP_NONCE__';

function fakeBuild(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-dist-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html><html><head><meta property="csp-nonce" nonce="${PLACEHOLDER}"><script type="module" src="/assets/app-1.js" nonce="${PLACEHOLDER}"></script></head><body><div id="root"></div></body></html>`,
  );
  fs.writeFileSync(
    path.join(dir, 'console.json'),
    JSON.stringify({
      csp: "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-{nonce}'",
      noncePlaceholder: PLACEHOLDER,
    }),
  );
  const js = `console.log(${JSON.stringify('x'.repeat(4000))});`;
  fs.writeFileSync(path.join(dir, 'assets/app-1.js'), js);
  fs.writeFileSync(path.join(dir, 'assets/app-1.js.br'), brotliCompressSync(js));
  fs.writeFileSync(path.join(dir, 'assets/app-1.js.gz'), gzipSync(js));
  return dir;
}

async function serverWith(dir: string): Promise<{ app: FastifyInstance; built: boolean }> {
  const app = Fastify();
  installErrorHandler(app);
  app.get('/api/known', async () => ({ ok: true }));
  const built = await consoleRoutes(app, { dir });
  await app.ready();
  return { app, built };
}

describe('isApiPath', () => {
  it('matches the API families and nothing that only starts with their letters', () => {
    for (const p of ['/api', '/api/x', '/auth/signin', '/.well-known/x', '/openapi.json', '/mcp'])
      expect(isApiPath(p), p).toBe(true);
    for (const p of ['/', '/apiary', '/devices/1', '/authors', '/mcpanel'])
      expect(isApiPath(p), p).toBe(false);
  });
});

describe('console routes with a build', () => {
  let dir: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    dir = fakeBuild();
    ({ app } = await serverWith(dir));
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers / with index.html, a fresh nonce per response in the page and in the CSP header', async () => {
    const first = await app.inject({ method: 'GET', url: '/' });
    const second = await app.inject({ method: 'GET', url: '/' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^text\/html/);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).not.toContain(PLACEHOLDER);
    const nonce = /nonce="([^"]+)"/.exec(first.body)?.[1];
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(first.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'`,
    );
    expect(second.body).not.toContain(nonce);
  });

  it('answers client-side routes with index.html (the SPA fallback)', async () => {
    const res = await app.inject({ method: 'GET', url: '/devices/12?window=8h' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<div id="root">');
  });

  it('never shadows the API families: their unknown paths keep the API 404', async () => {
    for (const url of [
      '/api/nope',
      '/api',
      '/auth/nope',
      '/.well-known/nope',
      '/openapi.json/x',
      '/mcp',
      '/mcp/x',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('<div id="root">');
    }
    const api = await app.inject({ method: 'GET', url: '/api/nope' });
    expect(api.json()).toEqual({ status: false, hasError: true, message: 'Not Found' });
    expect((await app.inject({ method: 'GET', url: '/api/known' })).json()).toEqual({ ok: true });
  });

  it('gives a 404 for missing files rather than index.html', async () => {
    const res = await app.inject({ method: 'GET', url: '/assets/missing-1.js' });
    expect(res.statusCode).toBe(404);
    const other = await app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(other.statusCode).toBe(404);
  });

  it('serves precompressed assets with their own Content-Length', async () => {
    const br = await app.inject({
      method: 'GET',
      url: '/assets/app-1.js',
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    const brSize = fs.statSync(path.join(dir, 'assets/app-1.js.br')).size;
    expect(Number(br.headers['content-length'])).toBe(brSize);
    expect(br.headers['cache-control']).toContain('immutable');
    const gz = await app.inject({
      method: 'GET',
      url: '/assets/app-1.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    const plain = await app.inject({ method: 'GET', url: '/assets/app-1.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Number(plain.headers['content-length'])).toBe(
      fs.statSync(path.join(dir, 'assets/app-1.js')).size,
    );
  });
});

describe('console routes without a build', () => {
  it('start anyway and say so at /', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'console-none-'));
    const { app, built } = await serverWith(empty);
    expect(built).toBe(false);
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('without its web console');
    expect((await app.inject({ method: 'GET', url: '/devices' })).statusCode).toBe(404);
    await app.close();
    fs.rmSync(empty, { recursive: true, force: true });
  });
});
