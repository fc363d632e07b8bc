// `npm run desktop` / `npm run dist` (after `npm run build`): the Electron console.
//
//   npm run desktop            runs the app (Electron Forge's `electron-forge start` when
//                              @electron-forge/cli is installed, else the Electron binary on `.`)
//   npm run dist [-- --linux]  builds installers with electron-builder (build/electron-builder.yml)
//
// Both need the Electron binary, which `npm ci` may skip (ELECTRON_SKIP_BINARY_DOWNLOAD=1 or no
// access to its download host): this says exactly what is missing and exits 1 instead of
// failing somewhere inside Electron's tooling. See docs/features/desktop.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const command = process.argv[2] === 'dist' ? 'dist' : 'desktop';
const passThrough = process.argv.slice(3);
const exists = (relative) => fs.existsSync(path.join(root, relative));

const missing = [];
if (!exists('node_modules/electron/path.txt')) {
  missing.push(
    'the Electron binary (skipped with ELECTRON_SKIP_BINARY_DOWNLOAD=1, or its download failed): run `node node_modules/electron/install.js` where github.com is reachable',
  );
}
for (const built of [
  'main/dist/index.cjs',
  'electron/dist/preload.cjs',
  'appliance-core/dist/server.js',
]) {
  if (!exists(built)) missing.push(`${built} (run \`npm run build\`)`);
}
if (command === 'dist' && !exists('node_modules/electron-builder')) {
  missing.push('electron-builder (a devDependency: run `npm ci`)');
}
if (missing.length > 0) {
  console.error(
    `npm run ${command}: cannot start. Missing:\n${missing.map((m) => `- ${m}`).join('\n')}`,
  );
  process.exit(1);
}
if (!exists('renderer/dist/index.html')) {
  console.error('note: renderer/dist is not built; the window will show "not found" until it is.');
}

function run(file, args) {
  const child = spawn(file, args, { cwd: root, stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const bin = (name) =>
  path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

if (command === 'dist') {
  run(bin('electron-builder'), ['--config', 'build/electron-builder.yml', ...passThrough]);
} else if (exists('node_modules/@electron-forge/cli')) {
  run(bin('electron-forge'), ['start', ...passThrough]);
} else {
  const electronBinary = path.join(
    root,
    'node_modules/electron/dist',
    fs.readFileSync(path.join(root, 'node_modules/electron/path.txt'), 'utf8').trim(),
  );
  run(electronBinary, ['.', ...passThrough]);
}
