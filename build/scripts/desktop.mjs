// `npm run desktop` / `npm run dist` (after `npm run build`): the Electron console.
//
//   npm run desktop            runs the app (Electron Forge's `electron-forge start` when
//                              @electron-forge/cli is installed, else the Electron binary on `.`)
//   npm run dist [-- --linux]  builds installers with electron-builder (build/electron-builder.yml)
//
// `desktop` needs the Electron binary, which `npm ci` may skip (ELECTRON_SKIP_BINARY_DOWNLOAD=1
// or no access to its download host); `dist` downloads the Electron build of each target itself.
// Missing pieces are named and the script exits 1 instead of failing somewhere inside Electron's
// tooling. Afterwards the native modules are rebuilt for Node again (both tools rebuild them for
// Electron in node_modules). See docs/features/desktop.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const command = process.argv[2] === 'dist' ? 'dist' : 'desktop';
const passThrough = process.argv.slice(3);
const exists = (relative) => fs.existsSync(path.join(root, relative));

const missing = [];
// electron-builder downloads the Electron build of each target platform itself.
if (command === 'desktop' && !exists('node_modules/electron/path.txt')) {
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

const packaging = JSON.parse(fs.readFileSync(path.join(root, 'build/packaging.json'), 'utf8'));

function spawnInherit(file, args) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: root, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * electron-builder and Forge rebuild the native modules in node_modules for Electron's ABI; put
 * the Node builds back so that `npm test` and `npm start` keep working.
 */
async function restoreNodeBuilds() {
  const installed = packaging.nativeModules.filter((name) => exists(`node_modules/${name}`));
  console.error(`restoring the Node builds of ${installed.join(', ')} (npm rebuild)`);
  return spawnInherit(process.platform === 'win32' ? 'npm.cmd' : 'npm', [
    'rebuild',
    '--build-from-source',
    ...installed,
  ]);
}

async function run(file, args) {
  const code = await spawnInherit(file, args);
  const restored = await restoreNodeBuilds();
  process.exit(code !== 0 ? code : restored);
}

const bin = (name) =>
  path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

if (command === 'dist') {
  await run(bin('electron-builder'), ['--config', 'build/electron-builder.yml', ...passThrough]);
} else if (exists('node_modules/@electron-forge/cli')) {
  await run(bin('electron-forge'), ['start', ...passThrough]);
} else {
  const electronBinary = path.join(
    root,
    'node_modules/electron/dist',
    fs.readFileSync(path.join(root, 'node_modules/electron/path.txt'), 'utf8').trim(),
  );
  // Without Forge nothing rebuilds the native modules for Electron: do it, run, then restore.
  const rebuilt = await spawnInherit(bin('electron-rebuild'), [
    '--force',
    '--build-from-source',
    '--only',
    packaging.nativeModules.filter((name) => exists(`node_modules/${name}`)).join(','),
  ]);
  if (rebuilt !== 0) process.exit(rebuilt);
  await run(electronBinary, ['.', ...passThrough]);
}
