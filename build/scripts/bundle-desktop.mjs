// Bundles the Electron main process and the preload with esbuild (part of `npm run build`):
// - main/index.ts -> main/dist/index.cjs: one CommonJS file for Electron's main process;
//   electron and the native node-pty stay external (node-pty is unpacked from the asar and
//   rebuilt for Electron), as do ws's optional native helpers.
// - electron/preload/index.ts -> electron/dist/preload.cjs: one CommonJS file, because a
//   sandboxed preload can require nothing but `electron`.
// appliance-core is not bundled: it runs as its own process from appliance-core/dist (tsc).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  absWorkingDir: root,
};

await Promise.all([
  build({
    ...common,
    entryPoints: ['main/index.ts'],
    outfile: 'main/dist/index.cjs',
    external: ['electron', 'node-pty', 'bufferutil', 'utf-8-validate'],
  }),
  build({
    ...common,
    entryPoints: ['electron/preload/index.ts'],
    outfile: 'electron/dist/preload.cjs',
    // Sandboxed preloads run in a renderer: only `electron` can be required there.
    external: ['electron'],
    platform: 'browser',
    target: 'chrome130',
  }),
]);
