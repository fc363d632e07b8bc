/**
 * Where does the appliance's GET /api/me spend its CPU? In-process timings (no TLS, no socket)
 * of the pieces of the authenticated request path, each in a tight loop, against a real
 * appliance built in-process on a temp data dir. Tight loops run with warm caches: inside a
 * loaded server the same pieces cost several times more (see test/bench/ladder.mjs, which
 * measures layers over real TLS connections).
 *
 *   node test/bench/hotpath.mjs        (needs `npm run build`; ~15 s)
 *
 * Figures are CPU µs per operation (process.cpuUsage), so a busy machine disturbs them less
 * than wall-clock figures. Every loop is bounded by a count and a time limit.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(HERE, '../../appliance-core/dist');
if (!fs.existsSync(path.join(DIST, 'app.js'))) {
  process.stderr.write('appliance-core/dist not found: run `npm run build` first\n');
  process.exit(1);
}
const load = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);

const { buildApp } = await load('app.js');
const { loadConfig } = await load('platform/config/config.js');
const { hashToken } = await load('platform/security/tokens.js');
const { createLogger } = await load('platform/logging/logger.js');
const { toIso } = await load('platform/time/time.js');
const { CachedIdentityResolver } = await load('features/auth/identity.resolver.js');
const { TokenService, prepareBearerLookup } = await load('features/tokens/index.js');
const { findUserById } = await load('features/users/index.js');

const PASSWORD = 'Hotpath-Passw0rd!';
const MAX_MS = Number(process.env.HOTPATH_MAX_MS ?? 800);

function round(v, d = 2) {
  const f = 10 ** d;
  return Math.round(v * f) / f;
}

function measureSync(fn, iterations = 200_000) {
  for (let i = 0; i < 2_000; i++) fn();
  const cpu0 = process.cpuUsage();
  const deadline = performance.now() + MAX_MS;
  let n = 0;
  while (n < iterations) {
    fn();
    n++;
    if ((n & 255) === 0 && performance.now() > deadline) break;
  }
  const cpu = process.cpuUsage(cpu0);
  return { n, us: (cpu.user + cpu.system) / n };
}

const rows = [];
function report(section, name, result, base) {
  const delta =
    base === undefined ? '' : `${result.us - base >= 0 ? '+' : ''}${round(result.us - base, 1)}`;
  rows.push({ section, name, us: round(result.us, 2), delta, n: result.n });
  process.stdout.write(
    `${section.padEnd(8)} ${name.padEnd(64)} ${String(round(result.us, 2)).padStart(8)} µs  ${delta.padStart(7)}  (n=${result.n})\n`,
  );
}

// --- a real appliance in-process (plain HTTP, inject only) ---------------------------------

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-hotpath-'));
// Also when the output pipe closes early or the run is interrupted.
process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(130));
process.stdout.on('error', () => process.exit(1));
let appliance;
try {
  const config = loadConfig({
    APPLIANCE_DATA_DIR: dataDir,
    APPLIANCE_BIND: '127.0.0.1',
    APPLIANCE_HTTPS_PORT: '0',
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
    APPLIANCE_ADMIN_PASSWORD: PASSWORD,
    APPLIANCE_LOG_LEVEL: 'warn',
  });
  appliance = await buildApp(config, { insecureHttp: true });
  await appliance.start();
  const app = appliance.app;
  const db = appliance.db;

  const login = await app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { email: 'admin', password: PASSWORD },
  });
  const loginToken = login.json().access_token;
  const created = await app.inject({
    method: 'POST',
    url: '/api/tokens',
    headers: { authorization: `Bearer ${loginToken}` },
    payload: { name: 'bench' },
  });
  const token = created.json().access_token;
  if (!token) throw new Error(`could not create a token: ${created.body}`);

  process.stdout.write(
    `${os.cpus().length} CPU cores, node ${process.version}; CPU µs per operation, bounded to ${MAX_MS} ms each\n\n`,
  );

  // --- the pieces ---------------------------------------------------------------------------
  const hash = hashToken(token);
  const bearerLookup = prepareBearerLookup(db);
  const row = bearerLookup(hash);
  const clock = { now: () => Date.now() };
  const resolver = new CachedIdentityResolver(db, clock, new TokenService(db, clock));
  const userStatement = db.prepare('SELECT * FROM users WHERE id = ?');
  const pinoRoot = createLogger('warn');
  const user = findUserById(db, 1);

  report(
    'piece',
    'hashToken (sha256 of the bearer)',
    measureSync(() => hashToken(token)),
  );
  report(
    'piece',
    'prepareBearerLookup(...)(hash): token JOIN users by hash',
    measureSync(() => bearerLookup(hash)),
  );
  report(
    'piece',
    'JSON.parse(row.scopes)',
    measureSync(() => JSON.parse(row.scopes)),
  );
  report(
    'piece',
    'CachedIdentityResolver.fromBearer (all of the above + profile)',
    measureSync(() => resolver.fromBearer(token)),
  );
  report(
    'piece',
    'findUserById (db.prepare on every call + get)',
    measureSync(() => findUserById(db, 1)),
  );
  report(
    'piece',
    'same SELECT with a statement prepared once',
    measureSync(() => userStatement.get(1)),
  );
  const rawBearer = db
    .prepare(
      `SELECT t.id, t.user_id, t.scopes, t.expires_at, t.revoked_at, u.active, u.access_version
       FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?`,
    )
    .raw(true);
  report(
    'piece',
    'same bearer lookup, statement.raw(true) (array row)',
    measureSync(() => rawBearer.get(hash)),
  );
  const meColumns = db.prepare(
    'SELECT id, first_name, last_name, email, username, active, auth_source, created_at, updated_at FROM users WHERE id = ?',
  );
  report(
    'piece',
    'user SELECT of the 9 /api/me columns, prepared once',
    measureSync(() => meColumns.get(1)),
  );
  const meColumnsRaw = db
    .prepare(
      'SELECT id, first_name, last_name, email, username, active, auth_source, created_at, updated_at FROM users WHERE id = ?',
    )
    .raw(true);
  report(
    'piece',
    'same, statement.raw(true)',
    measureSync(() => meColumnsRaw.get(1)),
  );
  report(
    'piece',
    "crypto.hash('sha256', token, 'buffer') one-shot",
    measureSync(() => crypto.hash('sha256', token, 'buffer')),
  );
  report(
    'piece',
    'toIso x2 (created_at, updated_at)',
    measureSync(() => toIso(user.created_at) + toIso(user.updated_at)),
  );
  report(
    'piece',
    "pino child({reqId}, {}) as Fastify's default factory does",
    measureSync(() => pinoRoot.child({ reqId: 'req-1' }, {})),
  );
  report(
    'piece',
    'pino child({reqId}) without options',
    measureSync(() => pinoRoot.child({ reqId: 'req-1' })),
  );
  report(
    'piece',
    'bearerOf-style header regex',
    measureSync(() => /^Bearer\s+(\S+)\s*$/i.exec(`Bearer ${token}`)),
  );

  const resultsDir = path.join(HERE, 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(
    path.join(resultsDir, 'hotpath.json'),
    `${JSON.stringify({ finishedAt: new Date().toISOString(), cpuCores: os.cpus().length, node: process.version, rows }, null, 2)}\n`,
  );
  process.stdout.write('\nresults: test/bench/results/hotpath.json\n');
} finally {
  if (appliance) await appliance.close().catch(() => {});
  fs.rmSync(dataDir, { recursive: true, force: true });
}
