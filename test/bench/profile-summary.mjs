/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=1 npm run bench`, or any `node --cpu-prof`):
 * self time by function, self time by module (npm package, appliance file, node internals),
 * and inclusive time of the functions the appliance's request path goes through.
 *
 *   node test/bench/profile-summary.mjs [file.cpuprofile] [top=25]
 *
 * Without a file it takes the newest profile in test/bench/results/profiles/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROFILE_DIR = path.join(HERE, 'results', 'profiles');

function newestProfile() {
  if (!fs.existsSync(PROFILE_DIR)) return null;
  const files = fs
    .readdirSync(PROFILE_DIR)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(PROFILE_DIR, f))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return files[0] ?? null;
}

const file = process.argv[2] ?? newestProfile();
const top = Number(process.argv[3] ?? 25);
if (!file) {
  process.stderr.write('no profile given and none in test/bench/results/profiles/\n');
  process.exit(1);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function moduleOf(url) {
  if (!url) return '(native / VM)';
  if (url.startsWith('node:')) return url;
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = clean.slice(nm + '/node_modules/'.length).split('/');
    return `npm:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const dist = clean.indexOf('/appliance-core/dist/');
  if (dist !== -1) return `appliance:${clean.slice(dist + '/appliance-core/dist/'.length)}`;
  return clean;
}

function keyOf(node) {
  const f = node.callFrame;
  const where = f.url ? `${moduleOf(f.url)}:${f.lineNumber + 1}` : moduleOf(f.url);
  return `${f.functionName || '(anonymous)'}  ${where}`;
}

// Sample durations (µs): timeDeltas[i] is the time before sample i.
const durations = new Map();
const samples = profile.samples;
const deltas = profile.timeDeltas;
let total = 0;
for (let i = 0; i < samples.length; i++) {
  const d = Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0);
  total += d;
  durations.set(i, d);
}

const selfByFn = new Map();
const selfByModule = new Map();
const inclusiveByFn = new Map();
let idle = 0;
for (let i = 0; i < samples.length; i++) {
  const d = durations.get(i);
  const node = nodes.get(samples[i]);
  const name = node.callFrame.functionName;
  if (name === '(idle)') idle += d;
  const key = keyOf(node);
  selfByFn.set(key, (selfByFn.get(key) ?? 0) + d);
  const mod = name.startsWith('(') ? name : moduleOf(node.callFrame.url);
  selfByModule.set(mod, (selfByModule.get(mod) ?? 0) + d);
  const seen = new Set();
  for (let id = samples[i]; id !== undefined; id = parent.get(id)) {
    const k = keyOf(nodes.get(id));
    if (seen.has(k)) continue;
    seen.add(k);
    inclusiveByFn.set(k, (inclusiveByFn.get(k) ?? 0) + d);
  }
}

const busy = total - idle;
const pct = (v, of) => `${((v / of) * 100).toFixed(1).padStart(5)}%`;
const ms = (v) => `${(v / 1000).toFixed(0).padStart(7)} ms`;

console.log(
  `${file}\nsampled ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s (percentages below are of busy time)\n`,
);

console.log(`self time by module (top ${top}):`);
for (const [k, v] of [...selfByModule]
  .filter(([k]) => k !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);

console.log(`\nself time by function (top ${top}):`);
for (const [k, v] of [...selfByFn]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);

console.log(`\ninclusive time of appliance functions (top ${top}):`);
for (const [k, v] of [...inclusiveByFn]
  .filter(([k]) => k.includes('appliance:'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);

const interesting =
  /pino|rate-limit|swagger|cookie|formbody|fast-json-stringify|ajv|better-sqlite3|light-my-request|avvio|find-my-way/;
console.log("\ninclusive time of selected npm packages' functions (top 15):");
for (const [k, v] of [...inclusiveByFn]
  .filter(([k]) => interesting.test(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, 15))
  console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);
