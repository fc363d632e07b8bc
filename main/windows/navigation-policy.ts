/**
 * Which URLs the console window may navigate to, and which it may hand to the operating system.
 * Pure functions, so the policy is tested against a corpus of URLs without Electron.
 *
 * Origins are compared as `new URL().origin` strings. For the console's own `app://console` the
 * WHATWG parser gives every non-special scheme the opaque origin "null" (which `data:`, `blob:`
 * and `javascript:` URLs share), so consoleOriginOf spells that one origin out from scheme and
 * host instead of comparing "null" with "null".
 */
import { CONSOLE_HOST, CONSOLE_ORIGIN, CONSOLE_SCHEME } from '../../electron/contract/bridge.js';

/** `app://console` for the console, `new URL().origin` for http(s), undefined for anything else. */
export function consoleOriginOf(value: string): string | undefined {
  const url = parseUrl(value);
  if (!url) return undefined;
  if (url.protocol === `${CONSOLE_SCHEME}:`) {
    if (url.username !== '' || url.password !== '' || url.port !== '') return undefined;
    return url.host === CONSOLE_HOST ? CONSOLE_ORIGIN : undefined;
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.origin;
  return undefined;
}

/** The window never leaves the console's origin (appliance pages never load in it). */
export function isAllowedNavigation(targetUrl: string, consoleOrigin = CONSOLE_ORIGIN): boolean {
  return consoleOriginOf(targetUrl) === consoleOrigin;
}

/**
 * What may leave through shell.openExternal: https URLs on the origin of a saved connection
 * (its `/auth/*` pages: device verification, consent), nothing else.
 */
export function isAllowedExternalUrl(
  targetUrl: string,
  allowedOrigins: readonly string[],
): boolean {
  const url = parseUrl(targetUrl);
  if (!url || url.protocol !== 'https:') return false;
  if (url.username !== '' || url.password !== '') return false;
  return allowedOrigins.includes(url.origin);
}

/**
 * window.open and target=_blank: the window itself never opens (always `deny`); a URL that
 * isAllowedExternalUrl accepts is opened in the system browser instead.
 */
export function windowOpenDecision(
  targetUrl: string,
  allowedOrigins: readonly string[],
): { action: 'deny'; openExternally: boolean } {
  return { action: 'deny', openExternally: isAllowedExternalUrl(targetUrl, allowedOrigins) };
}

function parseUrl(value: string): URL | undefined {
  if (typeof value !== 'string' || value.length > 8192) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
