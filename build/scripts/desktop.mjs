// `npm run desktop` / `npm run dist`: the Electron console. It needs the Electron binary and a
// built main process; until both exist this says exactly what is missing and exits 1, instead
// of failing somewhere inside Electron's tooling.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const command = process.argv[2] === 'dist' ? 'dist' : 'desktop';
const missing = [];
if (!fs.existsSync(path.join(root, 'node_modules/electron/path.txt'))) {
  missing.push(
    'the Electron binary (installed with ELECTRON_SKIP_BINARY_DOWNLOAD=1, or its download failed): run `node node_modules/electron/install.js` where the download is reachable',
  );
}
if (!fs.existsSync(path.join(root, 'main/dist/index.js'))) {
  missing.push(
    'a built main process (main/dist/index.js): main/, electron/ and renderer/ hold the type-checked process model and the tested core supervisor; the Vite build of the console and the main process comes with the console issue',
  );
}
if (command === 'dist' && !fs.existsSync(path.join(root, 'node_modules/electron-builder'))) {
  missing.push(
    'electron-builder (26.x needs Node >= 22.12 for @electron/rebuild 4; it is not a dependency on Node 20)',
  );
}
if (missing.length > 0) {
  console.error(
    `npm run ${command}: cannot start yet. Missing:\n${missing.map((m) => `- ${m}`).join('\n')}`,
  );
  process.exit(1);
}
console.error(
  `npm run ${command}: prerequisites present; run electron-forge/electron-builder from the console issue's scripts.`,
);
process.exit(1);
