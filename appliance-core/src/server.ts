/**
 * Standalone entry (`npm start`): configuration from flags and environment, then listen.
 *
 * Readiness is announced three ways, once the API listens and the engines (collectors included)
 * have started:
 * - stdout: `appliance listening on https://HOST:PORT`, then `collector ports: <JSON>` (what each
 *   collector bound, `{}` when none runs; `auto` ports are known only here);
 * - the ready message `{type: 'ready', url, certSha256, ports}` on Electron's `process.parentPort`
 *   (utility process) or through `process.send` (a Node child forked with an IPC channel), so a
 *   parent needs no log parsing. `certSha256` is the SHA-256 fingerprint of the served certificate
 *   as Node prints it (`AB:CD:…`, 32 colon-separated pairs), for pinning; `ports` is the report.
 */
import { X509Certificate } from 'node:crypto';
import { ADMIN_PASSWORD_FILE, buildApp, StartupError } from './app.js';
import { ConfigError, loadConfig } from './platform/config/config.js';

const SHUTDOWN_LIMIT_MS = 5_000;

interface ParentPort {
  postMessage(message: unknown): void;
}

export interface ReadyMessage {
  type: 'ready';
  url: string;
  certSha256: string | null;
  ports: Record<string, { udp?: number; tcp?: number }>;
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

  // Signal handlers first: a parent that reads the ready line may send SIGTERM at once (on another
  // core, before the next line of this function runs), and must still get a clean exit 0.
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

  try {
    await appliance.start();
    await appliance.app.listen({ host: config.bind, port: config.httpsPort });
  } catch (err) {
    if (closing) return;
    const code = (err as NodeJS.ErrnoException).code;
    fail(
      code === 'EADDRINUSE'
        ? `port ${config.httpsPort} on ${config.bind} is already in use`
        : code === 'EACCES'
          ? `no permission to listen on ${config.bind}:${config.httpsPort}`
          : (err as Error).message,
    );
  }
  if (closing) return;

  const address = appliance.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.httpsPort;
  const host = config.bind.includes(':') ? `[${config.bind}]` : config.bind;
  const url = `https://${host}:${port}`;
  const ports = appliance.ctx.collectorPorts.report();
  const certSha256 = appliance.tls ? new X509Certificate(appliance.tls.cert).fingerprint256 : null;
  const ready: ReadyMessage = { type: 'ready', url, certSha256, ports };
  if (appliance.initialAdminPassword) {
    process.stdout.write(
      `initial admin password (user "admin"): ${appliance.initialAdminPassword}\n` +
        `  (also written to ${config.dataDir}/${ADMIN_PASSWORD_FILE}; change it after signing in)\n`,
    );
  }
  process.stdout.write(
    `appliance listening on ${url}\ncollector ports: ${JSON.stringify(ports)}\n` +
      `network mode: ${config.networkMode ?? 'dry-run'}\n`,
  );
  const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
  if (parentPort) parentPort.postMessage(ready);
  else if (process.send) process.send(ready);
}

main().catch((err: unknown) => fail((err as Error).message ?? String(err)));
