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
  // License registration keys (validateLicense's body): answered by getLicenseInfo, never logged.
  'registrationKey',
  '*.registrationKey',
  '*.*.registrationKey',
  // The HTTPS certificate's private key (extractCertificate's answer, a stored pair logged whole).
  'private_key',
  '*.private_key',
  '*.privateKey',
  // The OS upgrader's one-time token (features/upgrader), should it ever be logged as a field.
  'token',
  '*.*.token',
  // Daemon variables (features/maintenance/daemons.*): a config body logged whole, and the
  // catalogue's secret variables by name.
  'config[*].value',
  '*.config[*].value',
  '*.proxy_password',
  // Agents (features/agents): enrollment tokens and adoption keys arrive as `token` (covered
  // above); the sealed appliance key and download secret, and an adoption key by its own name.
  'sealed',
  '*.sealed',
  'adoption_key',
  '*.adoption_key',
  'adoptionKey',
  '*.adoptionKey',
  'downloadSecret',
  '*.downloadSecret',
];

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { app: 'appliance' },
  });
}
