// The console's Content-Security-Policy: one string, defined here only. The Vite build writes it
// into dist/console.json; the appliance (platform/http/console.ts) and later the desktop's
// protocol handler read it from there and replace {nonce} with a fresh per-response nonce, the
// same one they template into index.html (Vite's html.cspNonce placeholder below).
//
// No 'unsafe-inline' for scripts or styles: scripts come only from the console's own files;
// <style> elements (Mantine's CSS variables, xterm's renderer) carry the page's nonce.
export const CSP_NONCE_PLACEHOLDER = '__CONSOLE_CSP_NONCE__';

export const CONSOLE_CSP_TEMPLATE = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'nonce-{nonce}'",
  "img-src 'self' data:",
  "font-src 'self'",
  // 'self' covers same-origin fetch, event streams and the terminal's wss:// socket.
  "connect-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** The policy for one response. */
export function consoleCsp(nonce) {
  return CONSOLE_CSP_TEMPLATE.replace('{nonce}', nonce);
}
