/**
 * The pure rules of the authorization server: redirect URIs, scopes, user codes, PKCE, and the
 * sign-in page's return target. No I/O, so each rule is unit-tested on its own.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { SCOPES } from '../tokens/index.js';

export const DEFAULT_SCOPES = ['mcp:devices'] as const;

/** RFC 8628 §6.1: 20 consonants, no vowels (no words) and nothing that looks alike. 8 give 34.6 bits. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

export function sha256(text: string): Buffer {
  return crypto.createHash('sha256').update(text).digest();
}

export function randomSecret(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++)
    code += USER_CODE_ALPHABET[crypto.randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** What the device page accepts: case and separators ignored ("bcdf-ghjk" is BCDFGHJK). */
export function normalizeUserCode(input: string): string | null {
  const cleaned = input.toUpperCase().replace(/[^A-Z0-9]/g, '');
  if (cleaned.length !== USER_CODE_LENGTH) return null;
  for (const ch of cleaned) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return cleaned;
}

const PRINTABLE = /^[\x20-\x7E]+$/;

/** Client names: printable ASCII, 1 to 100 characters, not blank. */
export function clientNameProblem(name: string): string | null {
  if (name.trim() === '') return 'client_name must not be empty.';
  if (name.length > 100) return 'client_name must not be longer than 100 characters.';
  if (!PRINTABLE.test(name)) return 'client_name must be printable ASCII.';
  return null;
}

function isLoopbackHost(hostname: string): boolean {
  const host =
    hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.split('.')[0] === '127';
  if (net.isIPv6(host)) return host === '::1';
  return false;
}

/**
 * Spec: "http(s); localhost/loopback or HTTPS only". Also: absolute, no fragment (RFC 6749
 * §3.1.2), no user info, at most 2000 characters. Returns the problem, or null when allowed.
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length === 0 || uri.length > 2000) return 'a redirect URI must be 1 to 2000 characters';
  if (/[\s\p{Cc}]/u.test(uri))
    return 'a redirect URI must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'a redirect URI must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return 'a redirect URI must use http or https';
  if (url.username !== '' || url.password !== '')
    return 'a redirect URI must not carry user information';
  if (uri.includes('#')) return 'a redirect URI must not contain a fragment';
  if (url.hostname === '') return 'a redirect URI must name a host';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    return 'plain http is allowed only for localhost and loopback addresses';
  return null;
}

/** Splits a space-delimited scope (or takes an array), checks every entry against the eight. */
export function parseScopes(
  input: string | readonly string[] | undefined,
): { scopes: string[] } | { invalid: string } {
  const list =
    input === undefined
      ? []
      : typeof input === 'string'
        ? input.split(' ').filter((s) => s !== '')
        : [...input];
  if (list.length === 0) return { scopes: [...DEFAULT_SCOPES] };
  const known = new Set<string>(SCOPES);
  for (const scope of list) if (!known.has(scope)) return { invalid: scope };
  // Ordered as the catalogue lists them, without duplicates.
  const wanted = new Set(list);
  return { scopes: SCOPES.filter((s) => wanted.has(s)) };
}

/** A base64url SHA-256 (43 characters), the only challenge S256 can produce. */
export function isCodeChallenge(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export function isCodeVerifier(value: string): boolean {
  return /^[A-Za-z0-9\-._~]{43,128}$/.test(value);
}

export function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

export function equalSecrets(presented: string, storedHash: Buffer): boolean {
  const digest = sha256(presented);
  return digest.length === storedHash.length && crypto.timingSafeEqual(digest, storedHash);
}

/** Pages the sign-in form may return to. Anything else (another origin, other paths) is refused. */
const RETURN_PAGES = new Set(['/auth/device', '/auth/authorize']);
export const DEFAULT_RETURN = '/auth/device';

/**
 * The sign-in page's `redirect`: a same-origin relative path to one of the /auth pages, with its
 * query. Absolute URLs, scheme-relative `//host`, backslashes, dot segments that leave /auth/
 * and control characters are refused (the default page is used instead): no open redirect.
 */
export function safeReturnTarget(value: string | undefined): string {
  if (value === undefined || value.length > 3000) return DEFAULT_RETURN;
  if (
    !value.startsWith('/') ||
    value.startsWith('//') ||
    value.includes('\\') ||
    /\p{Cc}/u.test(value)
  )
    return DEFAULT_RETURN;
  const base = 'https://appliance.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return DEFAULT_RETURN;
  }
  if (url.origin !== base || !RETURN_PAGES.has(url.pathname)) return DEFAULT_RETURN;
  return `${url.pathname}${url.search}`;
}

/** Adds parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2). */
export function withParameters(
  uri: string,
  parameters: Record<string, string | undefined>,
): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(parameters))
    if (value !== undefined) url.searchParams.append(key, value);
  return url.toString();
}
