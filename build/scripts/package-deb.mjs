// Builds the Debian host package (npm run package:deb; the build must exist: npm run build).
//
// Output, in --out (default dist-deb/): netmon-appliance_<version>_<arch>.deb, which holds the
// upgrader package netmon-appliance-upgrader_<version>_all.deb under
// /usr/lib/netmon-appliance/upgrader/ (also written beside it). Staging trees are made from the
// templates of build/appliance/ in a temporary directory and packed with `dpkg-deb --build
// --root-owner-group`. Programs run with argument arrays, never a shell.
//
// Options: --out DIR, --fast (gzip -1 instead of xz: tests), --keep-staging (print its path).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const templates = path.join(root, 'build/appliance');
const NAME = 'netmon-appliance';
const UPGRADER = 'netmon-appliance-upgrader';
const LIB = `usr/lib/${NAME}`;

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const outDir = path.resolve(option('--out') ?? path.join(root, 'dist-deb'));
const fast = args.includes('--fast');
const keepStaging = args.includes('--keep-staging');

function fail(message) {
  console.error(`package-deb: ${message}`);
  process.exit(1);
}

function run(program, programArgs) {
  const result = spawnSync(program, programArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) fail(`${program} could not run: ${result.error.message}`);
  if (result.status !== 0) fail(`${program} ${programArgs.join(' ')} failed:\n${result.stderr}`);
  return result.stdout;
}

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const version = pkg.version;
if (!/^[0-9][A-Za-z0-9.+~-]*$/.test(version))
  fail(`package.json version ${version} is not a Debian version`);
const arch = run('dpkg', ['--print-architecture']).trim();
const nodeMajor = Number(process.versions.node.split('.')[0]);

for (const built of [
  'appliance-core/dist/server.js',
  'appliance-core/dist/host-helper/root-helper.main.js',
])
  if (!fs.existsSync(path.join(root, built))) fail(`${built} is missing: run npm run build first`);
const consoleDir = path.join(root, 'renderer/dist');
if (!fs.existsSync(path.join(consoleDir, 'index.html')))
  fail('renderer/dist is missing: run npm run build first');

const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'package-deb-'));

/**
 * Files 0644, directories 0755, programs (ELF or #!) that were executable 0755; native addons
 * (.node) 0644 and stripped; build leftovers, dotfiles, Windows libraries and tests dropped.
 */
const SKIP_DIRS = new Set([
  '.github',
  '.deps',
  'obj.target',
  'node_gyp_bins',
  'test',
  'tests',
  '__tests__',
  'integration',
]);
const SKIP_FILE =
  /(\.d\.[cm]?ts|\.map|\.tsbuildinfo|\.o|\.a|\.lib|\.dll|\.exe|\.pdb|\.sh|\.mk|Makefile|\.gypi?|\.c|\.cc|\.cpp|\.h|\/test_extension\.node)$/;
const nativeAddons = [];
function copyTree(from, to, { skipNested = false, modules = false } = {}) {
  const stat = fs.statSync(from);
  if (stat.isDirectory()) {
    fs.mkdirSync(to, { recursive: true, mode: 0o755 });
    fs.chmodSync(to, 0o755);
    for (const entry of fs.readdirSync(from)) {
      if (SKIP_DIRS.has(entry)) continue;
      // Dotfiles of npm packages (.eslintrc, .npmignore, .gitignore ...) are never needed to run.
      if (modules && entry.startsWith('.')) continue;
      // Native sources and Windows libraries bundled by addons (better-sqlite3, cap): only beside a
      // binding.gyp; other packages keep theirs (@fastify/busboy's deps/ is its JavaScript).
      if (modules && entry === 'deps' && fs.existsSync(path.join(from, 'binding.gyp'))) continue;
      if (skipNested && entry === 'node_modules') continue;
      copyTree(path.join(from, entry), path.join(to, entry), { skipNested, modules });
    }
    return;
  }
  if (!stat.isFile() || SKIP_FILE.test(from)) return;
  fs.copyFileSync(from, to);
  if (to.endsWith('.node')) {
    fs.chmodSync(to, 0o644);
    nativeAddons.push(to);
    return;
  }
  let program = false;
  if (stat.mode & 0o111) {
    const head = Buffer.alloc(4);
    const fd = fs.openSync(from, 'r');
    fs.readSync(fd, head, 0, 4, 0);
    fs.closeSync(fd);
    program = head.toString('latin1').startsWith('#!') || head.toString('latin1') === '\x7fELF';
  }
  fs.chmodSync(to, program ? 0o755 : 0o644);
}

function put(rel, content, mode = 0o644) {
  const file = path.join(staging, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  fs.writeFileSync(file, content);
  fs.chmodSync(file, mode);
}

function fill(text, values) {
  return text.replace(/@([A-Z_]+)@/g, (_, key) => {
    if (!(key in values)) fail(`template value ${key} is unknown`);
    return String(values[key]);
  });
}

function duKiB(dir) {
  let bytes = 0;
  const walk = (p) => {
    const st = fs.lstatSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    else bytes += st.size;
  };
  walk(dir);
  return Math.ceil(bytes / 1024);
}

function md5sums(tree) {
  const lines = [];
  const walk = (rel) => {
    const abs = path.join(tree, rel);
    const st = fs.lstatSync(abs);
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(abs).sort())
        if (rel !== '' || e !== 'DEBIAN') walk(path.join(rel, e));
    } else if (st.isFile())
      lines.push(`${crypto.createHash('md5').update(fs.readFileSync(abs)).digest('hex')}  ${rel}`);
  };
  walk('');
  return `${lines.join('\n')}\n`;
}

function changelog(packageName) {
  const date = new Date(Number(process.env.SOURCE_DATE_EPOCH ?? 0) * 1000 || Date.now())
    .toUTCString()
    .replace('GMT', '+0000');
  const text = `${packageName} (${version}) unstable; urgency=medium\n\n  * Release ${version}.\n\n -- netmon appliance maintainers <maintainers@netmon-appliance.invalid>  ${date}\n`;
  return zlib.gzipSync(text, { level: 9 });
}

function docs(tree, packageName) {
  const doc = path.join(tree, 'usr/share/doc', packageName);
  fs.mkdirSync(doc, { recursive: true, mode: 0o755 });
  fs.copyFileSync(path.join(templates, 'debian/copyright'), path.join(doc, 'copyright'));
  fs.chmodSync(path.join(doc, 'copyright'), 0o644);
  fs.writeFileSync(path.join(doc, 'changelog.gz'), changelog(packageName), { mode: 0o644 });
}

function fixDirModes(dir) {
  fs.chmodSync(dir, 0o755);
  for (const e of fs.readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) fixDirModes(path.join(dir, e.name));
}

function build(tree, file) {
  fixDirModes(tree);
  const compression = fast ? ['-Zgzip', '-z1'] : ['-Zxz'];
  run('dpkg-deb', ['--root-owner-group', ...compression, '--build', tree, file]);
  return file;
}

// The production dependency closure (dependencies and optional ones present; not electron, which
// only the desktop app uses), resolved as Node resolves them.
function productionModules() {
  const found = new Map();
  const resolve = (name, fromDir) => {
    let dir = fromDir;
    for (;;) {
      const candidate = path.join(dir, 'node_modules', name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
      if (dir === root) return null;
      const up = path.dirname(dir);
      // From node_modules/a/node_modules/b up to node_modules/a, then to the root.
      dir = path.basename(up) === 'node_modules' ? path.dirname(up) : up;
      if (!dir.startsWith(root)) return null;
    }
  };
  const visit = (name, fromDir, optional) => {
    const dir = resolve(name, fromDir);
    if (!dir) {
      if (!optional) fail(`production dependency ${name} is not installed (npm ci first)`);
      return;
    }
    if (found.has(dir)) return;
    found.set(dir, name);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir, false);
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, dir, true);
    // Peers are resolved when present (the dependant then finds them); a missing one is optional.
    for (const dep of Object.keys(manifest.peerDependencies ?? {})) visit(dep, dir, true);
  };
  for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, root, false);
  for (const dep of Object.keys(pkg.optionalDependencies ?? {}))
    if (dep !== 'electron') visit(dep, root, true);
  return [...found.keys()]
    .map((dir) => path.relative(root, dir))
    .filter((rel) => rel.startsWith('node_modules'));
}

// 1. The upgrader package: its program bundled into one file (no other module needed).
const upgraderTree = path.join(staging, 'upgrader-tree');
const upgraderProgram = path.join(upgraderTree, 'usr/lib', UPGRADER, 'os-upgrader.mjs');
fs.mkdirSync(path.dirname(upgraderProgram), { recursive: true });
const esbuild = await import('esbuild');
await esbuild.build({
  entryPoints: [path.join(root, 'appliance-core/src/host-helper/os-upgrader.main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${nodeMajor}`,
  outfile: upgraderProgram,
  logLevel: 'warning',
  legalComments: 'none',
});
fs.chmodSync(upgraderProgram, 0o755);
docs(upgraderTree, UPGRADER);
fs.mkdirSync(path.join(upgraderTree, 'DEBIAN'), { recursive: true });
fs.writeFileSync(
  path.join(upgraderTree, 'DEBIAN/control'),
  fill(fs.readFileSync(path.join(templates, 'upgrader/control.in'), 'utf8'), {
    VERSION: version,
    NODE_MAJOR: nodeMajor,
    INSTALLED_SIZE: duKiB(upgraderTree),
  }),
);
fs.writeFileSync(path.join(upgraderTree, 'DEBIAN/md5sums'), md5sums(upgraderTree), { mode: 0o644 });
fs.mkdirSync(outDir, { recursive: true });
const upgraderDeb = build(upgraderTree, path.join(outDir, `${UPGRADER}_${version}_all.deb`));

// 2. The appliance package.
const tree = path.join(staging, 'tree');
const withTree = (rel) => path.join(tree, rel);
fs.mkdirSync(tree);
copyTree(path.join(root, 'appliance-core/dist'), withTree(`${LIB}/appliance-core/dist`));
copyTree(consoleDir, withTree(`${LIB}/renderer/dist`));
for (const rel of productionModules())
  copyTree(fs.realpathSync(path.join(root, rel)), withTree(`${LIB}/${rel}`), {
    skipNested: true,
    modules: true,
  });
for (const addon of nativeAddons)
  run('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', addon]);
fs.mkdirSync(withTree(LIB), { recursive: true });
fs.writeFileSync(
  withTree(`${LIB}/package.json`),
  `${JSON.stringify({ name: NAME, version, private: true, type: 'module', description: pkg.description }, null, 2)}\n`,
  { mode: 0o644 },
);
fs.mkdirSync(withTree(`${LIB}/upgrader`), { recursive: true });
fs.copyFileSync(upgraderDeb, withTree(`${LIB}/upgrader/${path.basename(upgraderDeb)}`));
fs.chmodSync(withTree(`${LIB}/upgrader/${path.basename(upgraderDeb)}`), 0o644);
// Entry points that must stay runnable.
for (const entry of [
  'appliance-core/dist/host-helper/root-helper.main.js',
  'appliance-core/dist/host-helper/os-upgrader.main.js',
])
  fs.chmodSync(withTree(`${LIB}/${entry}`), 0o755);
for (const unit of fs.readdirSync(path.join(templates, 'systemd'))) {
  fs.mkdirSync(withTree('usr/lib/systemd/system'), { recursive: true });
  fs.copyFileSync(
    path.join(templates, 'systemd', unit),
    withTree(`usr/lib/systemd/system/${unit}`),
  );
  fs.chmodSync(withTree(`usr/lib/systemd/system/${unit}`), 0o644);
}
fs.mkdirSync(withTree(`etc/${NAME}`), { recursive: true });
for (const file of ['appliance.env', 'upgrader.env']) {
  fs.copyFileSync(path.join(templates, 'etc', file), withTree(`etc/${NAME}/${file}`));
  fs.chmodSync(withTree(`etc/${NAME}/${file}`), 0o644);
}
docs(tree, NAME);
fs.copyFileSync(
  path.join(root, 'docs/features/host-package.md'),
  withTree(`usr/share/doc/${NAME}/README.md`),
);
fs.chmodSync(withTree(`usr/share/doc/${NAME}/README.md`), 0o644);
if (fs.existsSync(path.join(templates, 'debian/lintian-overrides'))) {
  fs.mkdirSync(withTree('usr/share/lintian/overrides'), { recursive: true });
  fs.copyFileSync(
    path.join(templates, 'debian/lintian-overrides'),
    withTree(`usr/share/lintian/overrides/${NAME}`),
  );
  fs.chmodSync(withTree(`usr/share/lintian/overrides/${NAME}`), 0o644);
}
fs.mkdirSync(withTree('DEBIAN'));
put(
  'tree/DEBIAN/control',
  fill(fs.readFileSync(path.join(templates, 'debian/control.in'), 'utf8'), {
    VERSION: version,
    ARCH: arch,
    NODE_MAJOR: nodeMajor,
    NODE_NEXT: nodeMajor + 1,
    INSTALLED_SIZE: duKiB(tree),
  }),
);
put('tree/DEBIAN/conffiles', `/etc/${NAME}/appliance.env\n/etc/${NAME}/upgrader.env\n`);
for (const script of ['postinst', 'prerm', 'postrm'])
  put(`tree/DEBIAN/${script}`, fs.readFileSync(path.join(templates, 'debian', script)), 0o755);
put('tree/DEBIAN/md5sums', md5sums(tree));
const deb = build(tree, path.join(outDir, `${NAME}_${version}_${arch}.deb`));

if (keepStaging) console.log(`staging: ${staging}`);
else fs.rmSync(staging, { recursive: true, force: true });
console.log(deb);
console.log(upgraderDeb);
