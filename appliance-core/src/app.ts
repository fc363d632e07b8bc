/**
 * buildApp(config): the composition root. Prepares the data dir (database, secret key, TLS
 * identity, first-start seed), builds the HTTP server with every feature, and returns it with
 * its engines. It never listens: server.ts (or a test) does.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { createFeatures, type Engine } from './features/index.js';
import { seedSuperAdmin } from './features/users/index.js';
import type { ApplianceConfig } from './platform/config/config.js';
import type { CoreContext } from './platform/context.js';
import { openDatabase, type DB } from './platform/db/database.js';
import { auditRoutes } from './platform/audit/audit.routes.js';
import { ensureIncrementalVacuum, migrate } from './platform/db/migrate.js';
import { attachTablespaces, parseTablespaces } from './platform/db/tablespaces.js';
import { EngineRegistry } from './platform/engines/engine-registry.js';
import { HttpMetrics, MetricsRegistry, processCollector } from './platform/metrics/metrics.js';
import { metricsRoutes } from './platform/metrics/metrics.routes.js';
import { CollectorPorts } from './platform/net/collector-ports.js';
import { consoleRoutes } from './platform/http/console.js';
import { createHttpServer, type App } from './platform/http/http-server.js';
import { openapiRoutes } from './platform/http/openapi.routes.js';
import { createLogger } from './platform/logging/logger.js';
import { loadOrCreateTls, type TlsMaterial } from './platform/security/certificate.js';
import { createPrivateFile, tightenDataDir } from './platform/security/file-modes.js';
import { loadOrCreateKey, SecretBox } from './platform/security/secret-box.js';
import { systemClock, type Clock } from './platform/time/time.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
export const APPLIANCE_VERSION = pkg.version;

/** A failure at start that deserves one clear line, not a stack trace. */
export class StartupError extends Error {}

export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /** Serve plain HTTP (tests of the HTTP layer only); the appliance always uses HTTPS. */
  insecureHttp?: boolean;
}

export interface Appliance {
  app: App;
  db: DB;
  ctx: CoreContext;
  tls: TlsMaterial | null;
  engines: Engine[];
  /** Every engine by name with its state; start, stop and restart one (settings lists them). */
  registry: EngineRegistry;
  /** Set on first start when the admin password was generated. */
  initialAdminPassword: string | null;
  start(): Promise<void>;
  close(): Promise<void>;
}

export const ADMIN_PASSWORD_FILE = 'initial-admin-password';

function prepareDataDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const probe = path.join(dir, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, 'ok');
    fs.rmSync(probe);
    createPrivateFile(path.join(dir, 'appliance.db'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new StartupError(
      `data directory ${dir} is not usable (${code}): ${(err as Error).message.replace(/^\w+: /, '')}`,
    );
  }
}

export async function buildApp(
  config: ApplianceConfig,
  options: BuildOptions = {},
): Promise<Appliance> {
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? createLogger(config.logLevel);
  prepareDataDir(config.dataDir);

  let db: DB;
  try {
    db = openDatabase(path.join(config.dataDir, 'appliance.db'));
    const vacuum = ensureIncrementalVacuum(db);
    if (vacuum === 'vacuumed')
      log.info('database switched to incremental auto_vacuum (VACUUM once)');
    if (vacuum === 'too-large')
      log.warn(
        'database too large to switch to incremental auto_vacuum at start: dropped partitions are reused but the file does not shrink (docs/features/maintenance.md)',
      );
    migrate(db, clock.now());
    attachTablespaces(db, parseTablespaces(config.tablespaces));
  } catch (err) {
    throw new StartupError((err as Error).message);
  }

  let secrets: SecretBox;
  let tls: TlsMaterial | null = null;
  try {
    secrets = new SecretBox(loadOrCreateKey(path.join(config.dataDir, 'secret.key')));
    if (!options.insecureHttp)
      tls = await loadOrCreateTls(config.dataDir, config.bind, secrets, clock.now());
  } catch (err) {
    db.close();
    throw new StartupError((err as Error).message);
  }

  const seeded = await seedSuperAdmin(db, clock.now(), config.adminPassword);
  let initialAdminPassword: string | null = null;
  if (seeded?.generated) {
    initialAdminPassword = seeded.password;
    fs.writeFileSync(path.join(config.dataDir, ADMIN_PASSWORD_FILE), `${seeded.password}\n`, {
      mode: 0o600,
    });
  }
  tightenDataDir(config.dataDir, (message) => log.warn(message));

  const ctx: CoreContext = {
    db,
    clock,
    secrets,
    config,
    log,
    hostname: () => os.hostname(),
    collectorPorts: new CollectorPorts(),
    metrics: new MetricsRegistry(),
  };
  const httpMetrics = new HttpMetrics();
  const processMetrics = processCollector();
  ctx.metrics.register('process', processMetrics.collect);
  ctx.metrics.register('http', () => httpMetrics.collect());
  const features = createFeatures(ctx);
  const app = await createHttpServer({
    logger: log,
    tls,
    trustedProxies: config.trustedProxies,
    resolver: features.resolver,
    publicOrigin: config.publicOrigin,
    version: APPLIANCE_VERSION,
    metrics: httpMetrics,
    clock,
  });
  await openapiRoutes(app);
  await auditRoutes(app, { db });
  await metricsRoutes(app, { metrics: ctx.metrics });
  await features.register(app);
  if (!(await consoleRoutes(app)))
    log.warn('no web console build found (npm run build): / explains, the API is unaffected');
  await app.ready();

  const registry = new EngineRegistry(
    () => clock.now(),
    (engine, err) => log.error({ err, engine }, 'engine failed to stop'),
  );
  for (const engine of features.engines) registry.register(engine);
  features.attachRegistry(registry);
  return {
    app,
    db,
    ctx,
    tls,
    engines: features.engines,
    registry,
    initialAdminPassword,
    start: () => registry.startAll(),
    async close() {
      await app.close();
      await registry.stopAll();
      processMetrics.stop();
      db.close();
    },
  };
}
