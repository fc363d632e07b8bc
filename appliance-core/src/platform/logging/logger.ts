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
  'bind_password',
  '*.*.bind_password',
  '*.authpass',
  '*.privpass',
  '*.snmp_community',
  // Alert outlets and the mail relay: the outlet's config (webhook authorization header), a
  // request body (req.body.authpass) and an outlet object logged whole (outlet.config.x).
  'authpass',
  'authorization_header',
  '*.authorization_header',
  '*.*.authorization_header',
  '*.*.authpass',
  '*.*.*.authorization_header',
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
