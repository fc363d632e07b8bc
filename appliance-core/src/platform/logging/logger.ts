import pino, { type Logger } from 'pino';

/** Paths that never reach a log line, whatever a caller logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.access_token',
  '*.refresh_token',
  '*.token',
  '*.client_secret',
  '*.bind_password',
  '*.authpass',
  '*.privpass',
  '*.snmp_community',
  // Outlet secrets (alerting): the webhook's authorization header, wherever a config is logged.
  '*.authorization_header',
  '*.config.authorization_header',
  'config.authorization_header',
];

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { app: 'appliance' },
  });
}
