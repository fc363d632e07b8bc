/**
 * One rung of the ladder (test/bench/ladder.mjs): a Fastify 5 HTTPS server serving GET /api/me
 * with some of the appliance's layers, taken from the built appliance (appliance-core/dist), so
 * each layer's cost can be measured over real TLS connections.
 *
 * Environment:
 *   LADDER_DATA_DIR  an appliance data dir (its tls/cert.pem, tls/key.sealed and appliance.db)
 *   LADDER_BODY      the constant JSON answered when the user is not read from the database
 *   LADDER_LAYERS    comma-separated, any of:
 *     logger      the appliance's pino logger (redaction) as loggerInstance, request logging off
 *     cheapchild  childLoggerFactory (logger, bindings) => logger.child(bindings)
 *     plugins     @fastify/cookie and @fastify/formbody
 *     ratelimit   the appliance's @fastify/rate-limit set-up (installRateLimits)
 *     gates       the content-type gate (onRequest) and the security-header hook (onSend)
 *     schema      the appliance's response schema Me for 200
 *     auth        the auth hook with the real CachedIdentityResolver over the data dir's database
 *     user        the handler reads the user with findUserById (db.prepare on every call)
 *     userprep    the handler reads the user with a statement prepared once
 *   what-if prototypes (not the appliance's code; to size possible changes):
 *     protoauth   the auth hook with a local copy of CachedIdentityResolver.fromBearer's logic
 *     hashone     protoauth hashes with the one-shot crypto.hash() instead of createHash()
 *     rowcache    protoauth keeps bearer rows in memory (no invalidation: an upper bound for a
 *                 cache that token/user writes would invalidate)
 *     usercache   the handler keeps the user row in memory (same caveat)
 *     rawrows     protoauth reads the bearer row with statement.raw(true) (an array, no row object)
 *     userraw     the handler reads only the columns /api/me needs, statement.raw(true)
 *     dbcopy      use a private copy of the database (VACUUM INTO), no other connection on it
 *     exclusive   with dbcopy: PRAGMA locking_mode = EXCLUSIVE (no per-transaction file locks)
 * Prints `ladder listening on https://127.0.0.1:PORT` when ready.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify, { LogController } from 'fastify';
import { openTlsKey } from './tls-key.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(HERE, '../../appliance-core/dist');
const load = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);

const dataDir = process.env.LADDER_DATA_DIR;
if (!dataDir) {
  process.stderr.write('ladder-server: LADDER_DATA_DIR is required\n');
  process.exit(1);
}
const layers = new Set(
  (process.env.LADDER_LAYERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const body = JSON.parse(process.env.LADDER_BODY ?? '{}');

const options = {
  logger: false,
  https: {
    key: openTlsKey(dataDir),
    cert: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'),
    minVersion: 'TLSv1.2',
  },
};
if (layers.has('logger')) {
  const { createLogger } = await load('platform/logging/logger.js');
  delete options.logger;
  options.loggerInstance = createLogger('warn');
  options.logController = new LogController({ disableRequestLogging: true });
  if (layers.has('cheapchild'))
    options.childLoggerFactory = (logger, bindings) => logger.child(bindings);
}
const app = Fastify(options);

if (layers.has('plugins')) {
  await app.register((await import('@fastify/cookie')).default);
  await app.register((await import('@fastify/formbody')).default);
}
if (layers.has('ratelimit')) {
  const { installRateLimits } = await load('platform/http/rate-limit.js');
  await installRateLimits(app);
}

let db = null;
if (['auth', 'protoauth', 'user', 'userprep', 'usercache'].some((l) => layers.has(l))) {
  const { openDatabase } = await load('platform/db/database.js');
  db = openDatabase(path.join(dataDir, 'appliance.db'));
  if (layers.has('dbcopy')) {
    const copy = path.join(dataDir, `ladder-copy-${process.pid}.db`);
    db.prepare('VACUUM INTO ?').run(copy);
    db.close();
    db = openDatabase(copy);
    if (layers.has('exclusive')) db.pragma('locking_mode = EXCLUSIVE');
  }
}
// Installed before the auth hook, as the appliance does: both prepend route-level hooks, so the
// auth check runs first.
if (layers.has('gates')) {
  const { installContentTypeGate, installSecurityHeaders } = await load(
    'platform/http/security-headers.js',
  );
  installContentTypeGate(app);
  installSecurityHeaders(app);
}

if (layers.has('protoauth')) {
  const { installAuthHook } = await load('platform/http/auth-hook.js');
  const { hashToken } = await load('platform/security/tokens.js');
  const { TokenService, prepareBearerLookup } = await load('features/tokens/index.js');
  const { findUserById, permissionSlugsOf, tagsOf } = await load('features/users/index.js');
  const crypto = await import('node:crypto');
  const clock = { now: () => Date.now() };
  const tokens = new TokenService(db, clock);
  const rawStatement = db
    .prepare(
      `SELECT t.id, t.user_id, t.scopes, t.expires_at, t.revoked_at, u.active, u.access_version
       FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?`,
    )
    .raw(true);
  const lookup = layers.has('rawrows')
    ? (h) => {
        const r = rawStatement.get(h);
        return (
          r && {
            id: r[0],
            user_id: r[1],
            scopes: r[2],
            expires_at: r[3],
            revoked_at: r[4],
            active: r[5],
            access_version: r[6],
          }
        );
      }
    : prepareBearerLookup(db);
  const hash = layers.has('hashone') ? (t) => crypto.hash('sha256', t, 'buffer') : hashToken;
  const rows = new Map();
  const cachedLookup = layers.has('rowcache')
    ? (t) => {
        let row = rows.get(t);
        if (row === undefined) {
          row = lookup(hash(t));
          rows.set(t, row);
        }
        return row;
      }
    : (t) => lookup(hash(t));
  const profiles = new Map();
  const profile = (userId, version) => {
    const cached = profiles.get(userId);
    if (cached && cached.version === version) return cached;
    const user = findUserById(db, userId);
    const permissions = new Set(permissionSlugsOf(db, userId));
    const tags = tagsOf(db, userId);
    const p = {
      version,
      user: {
        id: user.id,
        username: user.username,
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        auth_source: user.auth_source,
      },
      permissions,
      tagIds: permissions.has('sa') || tags.length === 0 ? null : tags.map((t) => t.id),
      tagSlugs: tags.map((t) => t.slug),
    };
    profiles.set(userId, p);
    return p;
  };
  installAuthHook(app, {
    fromSession: () => null,
    fromBearer(token) {
      if (token.length > 512) return null;
      const row = cachedLookup(token);
      if (!row || row.revoked_at !== null || row.expires_at <= clock.now() || row.active !== 1)
        return null;
      const p = profile(row.user_id, row.access_version);
      tokens.noteUse(row.id);
      return { ...p, tokenId: row.id, sessionId: null, scopes: JSON.parse(row.scopes) };
    },
  });
}
if (layers.has('auth')) {
  const { installAuthHook } = await load('platform/http/auth-hook.js');
  const { CachedIdentityResolver } = await load('features/auth/identity.resolver.js');
  const { TokenService } = await load('features/tokens/index.js');
  const clock = { now: () => Date.now() };
  installAuthHook(app, new CachedIdentityResolver(db, clock, new TokenService(db, clock)));
}
const schema = layers.has('schema')
  ? { response: { 200: (await load('features/auth/auth.schema.js')).Me } }
  : undefined;
let handler = async () => body;
if (
  layers.has('user') ||
  layers.has('userprep') ||
  layers.has('usercache') ||
  layers.has('userraw')
) {
  const { toIso } = await load('platform/time/time.js');
  const { findUserById } = await load('features/users/index.js');
  const statement = db.prepare('SELECT * FROM users WHERE id = ?');
  const rawUser = db
    .prepare(
      'SELECT id, first_name, last_name, email, username, active, auth_source, created_at, updated_at FROM users WHERE id = ?',
    )
    .raw(true);
  const users = new Map();
  const read = layers.has('userraw')
    ? (id) => {
        const r = rawUser.get(id);
        return {
          id: r[0],
          first_name: r[1],
          last_name: r[2],
          email: r[3],
          username: r[4],
          active: r[5],
          auth_source: r[6],
          created_at: r[7],
          updated_at: r[8],
        };
      }
    : layers.has('usercache')
      ? (id) => {
          let user = users.get(id);
          if (!user) users.set(id, (user = statement.get(id)));
          return user;
        }
      : layers.has('userprep')
        ? (id) => statement.get(id)
        : (id) => findUserById(db, id);
  handler = async (request) => {
    const user = read(request.identity?.user.id ?? 1);
    return {
      id: user.id,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      username: user.username,
      active: user.active === 1,
      auth_source: user.auth_source,
      created_at: toIso(user.created_at),
      updated_at: toIso(user.updated_at),
    };
  };
}
app.get(
  '/api/me',
  {
    config: {
      access: { kind: 'authenticated' },
      errors: { validation: 'legacy', failure: 'legacy' },
    },
    schema,
  },
  handler,
);

try {
  await app.listen({ host: '127.0.0.1', port: 0 });
} catch (err) {
  process.stderr.write(`ladder-server: ${err.message}\n`);
  process.exit(1);
}
process.stdout.write(`ladder listening on https://127.0.0.1:${app.server.address().port}\n`);

let closing = false;
const shutdown = () => {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(1), 3_000).unref();
  app.close().then(
    () => {
      db?.close();
      process.exit(0);
    },
    () => process.exit(1),
  );
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
