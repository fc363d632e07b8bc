/**
 * The `app://console` scheme: the console's fixed origin in the desktop app. A plain function
 * from a Fetch Request to a Fetch Response, registered with protocol.handle by main/index.ts.
 *
 * - `/appliances/<connectionId>/...` goes to the appliance proxy (same origin for the renderer,
 *   so the console's `connect-src 'self'` covers every appliance, and no CORS is involved);
 * - everything else is a file of the console's build (renderer/dist), GET and HEAD only, never
 *   outside that folder; paths without a file extension fall back to index.html (client routes);
 * - every HTML answer carries the console's Content-Security-Policy, the one string the console
 *   defines (injected here), with a fresh nonce per answer for styles that libraries inject.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { CustomScheme } from 'electron';

import {
  APPLIANCE_PATH_PREFIX,
  CONSOLE_HOST,
  CONSOLE_SCHEME,
} from '../../electron/contract/bridge.js';
import type { ApplianceProxy } from '../proxy/appliance-proxy.js';

/**
 * Registered before the app is ready (protocol.registerSchemesAsPrivileged): a standard scheme
 * (a real origin, relative URLs), secure (a secure context), with fetch and streamed responses.
 * No CSP bypass, no CORS, no service workers.
 */
export const CONSOLE_SCHEME_REGISTRATION: CustomScheme = {
  scheme: CONSOLE_SCHEME,
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
};

export interface ConsoleProtocolOptions {
  /** renderer/dist of the packaged app. */
  rendererRoot: string;
  /** The console's CSP for an answer carrying `nonce` (defined by the console in renderer/). */
  contentSecurityPolicy(nonce: string): string;
  /** Puts the nonce where the console's index.html expects it; identity by default. */
  renderIndexHtml?(html: string, nonce: string): string;
  proxy: ApplianceProxy;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

export function createConsoleProtocolHandler(
  options: ConsoleProtocolOptions,
): (request: Request) => Promise<Response> {
  const root = path.resolve(options.rendererRoot);

  return async function handleConsoleRequest(request) {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return plain(400, 'bad request');
    }
    if (url.protocol !== `${CONSOLE_SCHEME}:` || url.host !== CONSOLE_HOST) {
      return plain(404, 'not found');
    }
    if (url.pathname.startsWith(APPLIANCE_PATH_PREFIX)) return options.proxy(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return plain(405, 'method not allowed', { allow: 'GET, HEAD' });
    }

    const file = resolveFile(root, url.pathname);
    if (!file) return plain(404, 'not found');
    let content = await readFileOrUndefined(file);
    let servedFile = file;
    if (content === undefined && path.extname(file) === '') {
      servedFile = path.join(root, 'index.html');
      content = await readFileOrUndefined(servedFile);
    }
    if (content === undefined) return plain(404, 'not found');

    const extension = path.extname(servedFile).toLowerCase();
    const headers = new Headers({
      'content-type': CONTENT_TYPES[extension] ?? 'application/octet-stream',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': extension === '.html' ? 'no-cache' : 'max-age=31536000, immutable',
    });
    let body: Uint8Array | string = content;
    if (extension === '.html') {
      const nonce = crypto.randomBytes(16).toString('base64');
      headers.set('content-security-policy', options.contentSecurityPolicy(nonce));
      const html = content.toString('utf8');
      body = options.renderIndexHtml ? options.renderIndexHtml(html, nonce) : html;
    }
    return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers });
  };
}

/** The file under root a URL path names, or undefined for anything that would leave root. */
export function resolveFile(root: string, pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const relative = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  const file = path.resolve(root, relative);
  const inside = path.relative(root, file);
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return undefined;
  // Dotfiles are never part of the build.
  if (inside.split(path.sep).some((segment) => segment.startsWith('.'))) return undefined;
  return file;
}

async function readFileOrUndefined(file: string): Promise<Buffer | undefined> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return undefined;
    return await fs.readFile(file);
  } catch {
    return undefined;
  }
}

function plain(status: number, text: string, extra: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
      ...extra,
    },
  });
}
