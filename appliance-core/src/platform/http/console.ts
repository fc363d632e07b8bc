/**
 * The web console: the production build of renderer/ (renderer/dist) served at `/`.
 *
 * Invariants:
 * - The console never shadows the API: unknown paths under /api, /auth, /.well-known,
 *   /openapi.json and /mcp get the API's own 404 (the not-found handler), never index.html.
 * - index.html is answered with the console's CSP (read from the build's console.json, where
 *   renderer/csp.mjs put it) and a fresh nonce per response, templated into the page's tags and
 *   its `<meta property="csp-nonce">`; it is never cached.
 * - Hashed assets are served from assets/ with their precompressed .br/.gz siblings when the
 *   client accepts them (with the compressed file's Content-Length), cached for a year.
 * - Without a build (a headless install), the appliance still starts and `/` says so.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Path families of the API: the SPA fallback never answers under them. */
export const API_PREFIXES = ['/api', '/auth', '/.well-known', '/openapi.json', '/mcp'] as const;

/** renderer/dist of this checkout (same depth from src/ and dist/ of appliance-core). */
export const DEFAULT_CONSOLE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../renderer/dist',
);

interface ConsoleBuild {
  dir: string;
  /** index.html split around the nonce placeholder. */
  pageParts: string[];
  cspParts: string[];
}

export function isApiPath(url: string): boolean {
  const pathname = url.split('?')[0] as string;
  return API_PREFIXES.some(
    (prefix) =>
      pathname === prefix || pathname.startsWith(`${prefix}/`) || pathname.startsWith(`${prefix}?`),
  );
}

function loadBuild(dir: string): ConsoleBuild | null {
  const indexFile = path.join(dir, 'index.html');
  const manifestFile = path.join(dir, 'console.json');
  if (!fs.existsSync(indexFile) || !fs.existsSync(manifestFile)) return null;
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as {
    csp: string;
    noncePlaceholder: string;
  };
  const page = fs.readFileSync(indexFile, 'utf8');
  return {
    dir,
    pageParts: page.split(manifest.noncePlaceholder),
    cspParts: manifest.csp.split('{nonce}'),
  };
}

const NO_CONSOLE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Appliance</title></head>
<body>
<h1>Appliance</h1>
<p>This appliance runs without its web console: no console build was found on this install.
Build it with <code>npm run build</code> (it is part of <code>npm ci</code>) and restart.</p>
<p>The REST API is served under <code>/api</code>; <a href="/openapi.json">/openapi.json</a> describes it.</p>
</body></html>
`;

function sendPage(build: ConsoleBuild, reply: FastifyReply): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  return reply
    .code(200)
    .header('content-security-policy', build.cspParts.join(nonce))
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(build.pageParts.join(nonce));
}

export interface ConsoleOptions {
  /** Where the console build lives (default: renderer/dist of this checkout). */
  dir?: string;
}

/** Registers the console routes; returns whether a build was found. */
export async function consoleRoutes(
  app: FastifyInstance,
  options: ConsoleOptions = {},
): Promise<boolean> {
  const build = loadBuild(options.dir ?? DEFAULT_CONSOLE_DIR);
  if (!build) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply.code(200).type('text/html; charset=utf-8').send(NO_CONSOLE_PAGE),
    );
    return false;
  }

  const assets = path.join(build.dir, 'assets');
  if (fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      preCompressed: true,
      decorateReply: false,
      index: false,
      wildcard: true,
      // Every file name under assets/ carries its content hash.
      maxAge: '365d',
      immutable: true,
      schemaHide: true,
    });
  }

  app.get('/', { schema: { hide: true } }, async (_request, reply) => sendPage(build, reply));
  // The SPA fallback: client-side routes (/devices/12) get index.html; API families and file-like
  // paths keep the 404 of the not-found handler.
  app.get('/*', { schema: { hide: true } }, async (request: FastifyRequest, reply) => {
    const pathname = request.url.split('?')[0] as string;
    const last = pathname.slice(pathname.lastIndexOf('/') + 1);
    if (isApiPath(pathname) || last.includes('.')) return reply.callNotFound();
    return sendPage(build, reply);
  });
  return true;
}
