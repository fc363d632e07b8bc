/**
 * The Content-Security-Policy the protocol handler applies to the console's HTML.
 *
 * The policy is the console's: one string defined in renderer/ (the console issue), applied by
 * the appliance to the web console and by this handler to the desktop window. Until the console
 * exposes it in its build output, the desktop app applies this provisional policy of the same
 * shape; main/index.ts is the one place that chooses which policy is injected.
 * Everything the desktop console loads is same-origin (`app://console`, appliance APIs included,
 * through the proxy), so `'self'` covers fetch and event streams; terminals use MessagePorts.
 */
export function provisionalConsoleCsp(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
