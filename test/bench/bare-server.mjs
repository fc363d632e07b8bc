/**
 * The baseline of the benchmark: a bare Fastify 5 HTTPS server with the same TLS identity and
 * minimum TLS version as the appliance, one route (GET /bare) answering a constant JSON body,
 * no logger, no plugins, no hooks.
 *
 * Environment: BARE_CERT_FILE, BARE_KEY_FILE (PEM files) or BARE_DATA_DIR (an appliance data dir
 * whose sealed key is opened in memory), BARE_BODY (the JSON body to answer;
 * the bench passes the appliance's own GET /api/me answer so both bodies have the same size),
 * BARE_PORT (0 = free port). Prints `bare listening on https://127.0.0.1:PORT` when ready.
 */
import fs from 'node:fs';
import Fastify from 'fastify';
import { openTlsKey } from './tls-key.mjs';

const certFile = process.env.BARE_CERT_FILE;
const keyFile = process.env.BARE_KEY_FILE;
const keyDataDir = process.env.BARE_DATA_DIR;
if (!certFile || (!keyFile && !keyDataDir)) {
  process.stderr.write(
    'bare-server: BARE_CERT_FILE and BARE_KEY_FILE (or BARE_DATA_DIR) are required\n',
  );
  process.exit(1);
}

const body = JSON.parse(
  process.env.BARE_BODY ??
    '{"id":1,"first_name":"","last_name":"","email":"admin@example.invalid","username":"admin","active":true,"auth_source":"local","created_at":"2024-01-01T00:00:00.000Z","updated_at":"2024-01-01T00:00:00.000Z"}',
);

const app = Fastify({
  logger: false,
  https: {
    key: keyFile ? fs.readFileSync(keyFile, 'utf8') : openTlsKey(keyDataDir),
    cert: fs.readFileSync(certFile, 'utf8'),
    minVersion: 'TLSv1.2',
  },
});

app.get('/bare', async () => body);

try {
  await app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT ?? 0) });
} catch (err) {
  process.stderr.write(`bare-server: ${err.message}\n`);
  process.exit(1);
}
const address = app.server.address();
process.stdout.write(`bare listening on https://127.0.0.1:${address.port}\n`);

let closing = false;
const shutdown = () => {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(1), 3_000).unref();
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
