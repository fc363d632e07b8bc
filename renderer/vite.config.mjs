// Vite build of the console (npm run build, and so npm ci through prepare). Output: renderer/dist
// with hashed files under assets/, each also precompressed (.br, .gz) so the appliance serves
// them with their Content-Length, and console.json carrying the CSP (csp.mjs) for whoever serves
// index.html.
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

import { CONSOLE_CSP_TEMPLATE, CSP_NONCE_PLACEHOLDER } from './csp.mjs';

const root = import.meta.dirname;
const outDir = path.join(root, 'dist');
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const COMPRESSIBLE = /\.(js|css|svg|json|map|txt|woff)$/;

/** Writes .br and .gz beside every compressible asset (kept only when smaller). */
function precompress() {
  return {
    name: 'console-precompress',
    apply: 'build',
    async closeBundle() {
      const assets = path.join(outDir, 'assets');
      if (!fs.existsSync(assets)) return;
      for (const name of fs.readdirSync(assets)) {
        if (!COMPRESSIBLE.test(name) || name.endsWith('.map')) continue;
        const file = path.join(assets, name);
        const data = fs.readFileSync(file);
        if (data.length < 512) continue;
        const br = await brotli(data, {
          params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 },
        });
        const gz = await gzip(data, { level: 9 });
        if (br.length < data.length) fs.writeFileSync(`${file}.br`, br);
        if (gz.length < data.length) fs.writeFileSync(`${file}.gz`, gz);
      }
    },
  };
}

/** dist/console.json: what a server of this build needs besides the files. */
function consoleManifest() {
  return {
    name: 'console-manifest',
    apply: 'build',
    closeBundle() {
      fs.writeFileSync(
        path.join(outDir, 'console.json'),
        `${JSON.stringify({ csp: CONSOLE_CSP_TEMPLATE, noncePlaceholder: CSP_NONCE_PLACEHOLDER }, null, 2)}\n`,
      );
    },
  };
}

const VENDOR_CHUNKS = [
  [
    'vendor-react',
    /node_modules\/(react|react-dom|scheduler|react-router|cookie|set-cookie-parser)\//,
  ],
  ['vendor-query', /node_modules\/(@tanstack\/(react-query|query-core)|zustand)\//],
  [
    'vendor-mantine',
    /node_modules\/(@mantine|@floating-ui|react-remove-scroll|react-remove-scroll-bar|react-style-singleton|use-callback-ref|use-sidecar|react-number-format|react-textarea-autosize|clsx|tslib|get-nonce|detect-node-es|type-fest)\//,
  ],
  [
    'vendor-charts',
    /node_modules\/(recharts|d3-|victory-vendor|internmap|decimal\.js-light|eventemitter3|es-toolkit|@reduxjs|redux|reselect|immer|react-redux|use-sync-external-store|react-is|tiny-invariant)/,
  ],
  ['vendor-xterm', /node_modules\/@xterm\//],
  [
    'vendor-grid',
    /node_modules\/(react-grid-layout|react-resizable|react-draggable|fast-equals|prop-types|resize-observer-polyfill)\//,
  ],
  [
    'vendor-table',
    /node_modules\/@tanstack\/(react-table|table-core|react-virtual|virtual-core)\//,
  ],
];

export default defineConfig({
  root,
  base: '/',
  plugins: [react(), precompress(), consoleManifest()],
  // Vite stamps this placeholder as the nonce of its tags and of a <meta property="csp-nonce">;
  // the server replaces it with a fresh nonce per response.
  html: { cspNonce: CSP_NONCE_PLACEHOLDER },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 700,
    reportCompressedSize: false,
    rollupOptions: {
      output: {
        manualChunks(id) {
          for (const [name, pattern] of VENDOR_CHUNKS) if (pattern.test(id)) return name;
          return undefined;
        },
      },
    },
  },
  server: { host: '127.0.0.1' },
});
