/**
 * Which appliance paths the main-process proxy forwards. The renderer reaches the appliance's
 * API and its OpenAPI document; sign-in, sign-out and every OAuth token endpoint go through IPC
 * (so the connection's own tokens never reach the renderer); `/auth/*` pages open in the system
 * browser. Pure, so it is tested against a corpus of spellings.
 *
 * The check runs on the path as the appliance's router will see it: percent-decoded (its router
 * decodes once), case-folded, with repeated and trailing slashes removed; a path that does not
 * decode is refused. Dot segments are already resolved by URL parsing in the proxy.
 */
export type PathVerdict = { allowed: true } | { allowed: false; reason: string };

const REFUSED: ReadonlyArray<{ prefix: string; reason: string }> = [
  { prefix: '/api/login', reason: 'sign-in goes through the desktop app (IPC), not the proxy' },
  { prefix: '/api/logout', reason: 'sign-out goes through the desktop app (IPC), not the proxy' },
  {
    prefix: '/api/oauth/device',
    reason: 'the device flow is run by the desktop app (IPC), not the proxy',
  },
  {
    prefix: '/api/oauth/token',
    reason: 'OAuth token endpoints are used by the desktop app only',
  },
];

export function checkForwardPath(pathname: string): PathVerdict {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return { allowed: false, reason: 'the path is not valid percent-encoding' };
  }
  if (/[\\\0]/.test(decoded) || /(^|\/)\.\.?(\/|$)/.test(decoded)) {
    return { allowed: false, reason: 'the path has dot segments or backslashes' };
  }
  const canonical = decoded
    .toLowerCase()
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
  if (canonical === '/openapi.json') return { allowed: true };
  if (!canonical.startsWith('/api/')) {
    return {
      allowed: false,
      reason: canonical.startsWith('/auth')
        ? '/auth/* pages open in the system browser'
        : 'only the appliance API (/api/*, /openapi.json) is forwarded',
    };
  }
  for (const { prefix, reason } of REFUSED) {
    // `/api/login/`, `/api/login;x`, `/api/login.json`: anything that is not a longer name.
    if (canonical.startsWith(prefix) && !/^[a-z0-9_-]/.test(canonical.slice(prefix.length))) {
      return { allowed: false, reason };
    }
  }
  return { allowed: true };
}
