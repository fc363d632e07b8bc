/**
 * Standalone entry (`npm start`): configuration from flags and environment, then listen.
 * Also the entry of the Electron utility process: when a parent port exists, readiness is
 * posted to it as `{type: 'ready', url}`.
 */
import { ADMIN_PASSWORD_FILE, buildApp, StartupError } from './app.js';
import { ConfigError, loadConfig } from './platform/config/config.js';

const SHUTDOWN_LIMIT_MS = 5_000;

interface ParentPort {
  postMessage(message: unknown): void;
}

function fail(message: string): never {
  process.stderr.write(`appliance: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }

  let appliance;
  try {
    appliance = await buildApp(config);
  } catch (err) {
    if (err instanceof StartupError) fail(err.message);
    throw err;
  }

  try {
    await appliance.start();
    await appliance.app.listen({ host: config.bind, port: config.httpsPort });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    fail(
      code === 'EADDRINUSE'
        ? `port ${config.httpsPort} on ${config.bind} is already in use`
        : code === 'EACCES'
          ? `no permission to listen on ${config.bind}:${config.httpsPort}`
          : (err as Error).message,
    );
  }

  const address = appliance.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.httpsPort;
  const host = config.bind.includes(':') ? `[${config.bind}]` : config.bind;
  const url = `https://${host}:${port}`;
  if (appliance.initialAdminPassword) {
    process.stdout.write(
      `initial admin password (user "admin"): ${appliance.initialAdminPassword}\n` +
        `  (also written to ${config.dataDir}/${ADMIN_PASSWORD_FILE}; change it after signing in)\n`,
    );
  }
  process.stdout.write(`appliance listening on ${url}\n`);
  (process as unknown as { parentPort?: ParentPort }).parentPort?.postMessage({
    type: 'ready',
    url,
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    appliance.ctx.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      process.stderr.write('appliance: shutdown took longer than 5 s, exiting\n');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    force.unref();
    appliance
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        process.stderr.write(`appliance: error while shutting down: ${(err as Error).message}\n`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => fail((err as Error).message ?? String(err)));
