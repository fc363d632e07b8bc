/**
 * Unit tests of the authorization server's pure rules: redirect URIs, scopes, user codes, PKCE,
 * the sign-in page's return target, and HTML escaping of the pages.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { escapeHtml, escaped, Markup } from './oauth.pages.js';
import {
  clientNameProblem,
  DEFAULT_RETURN,
  equalSecrets,
  generateUserCode,
  isCodeChallenge,
  isCodeVerifier,
  normalizeUserCode,
  parseScopes,
  pkceMatches,
  randomSecret,
  redirectUriProblem,
  s256,
  safeReturnTarget,
  sha256,
  USER_CODE_ALPHABET,
  withParameters,
} from './oauth.rules.js';

describe('redirect URIs (spec: http(s); localhost/loopback or HTTPS only)', () => {
  it.each([
    'https://client.example/callback',
    'https://client.example:8443/cb?x=1',
    'http://localhost/callback',
    'http://localhost:33418/callback',
    'http://127.0.0.1:8080/cb',
    'http://127.255.0.9/cb',
    'http://[::1]:9000/cb',
    // 2000 characters exactly (the limit is inclusive).
    `https://client.example/${'a'.repeat(2000 - 'https://client.example/'.length)}`,
  ])('allows %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeNull();
  });

  it.each([
    [
      'http://client.example/callback',
      'plain http is allowed only for localhost and loopback addresses',
    ],
    ['http://10.0.0.1/cb', 'plain http is allowed only for localhost and loopback addresses'],
    ['http://128.0.0.1/cb', 'plain http is allowed only for localhost and loopback addresses'],
    [
      'http://localhost.evil.example/cb',
      'plain http is allowed only for localhost and loopback addresses',
    ],
    ['ftp://client.example/cb', 'a redirect URI must use http or https'],
    ['javascript:alert(1)', 'a redirect URI must use http or https'],
    ['com.example.app:/callback', 'a redirect URI must use http or https'],
    ['/callback', 'a redirect URI must be an absolute URL'],
    ['https://client.example/cb#frag', 'a redirect URI must not contain a fragment'],
    ['https://user:pw@client.example/cb', 'a redirect URI must not carry user information'],
    ['https://user@client.example/cb', 'a redirect URI must not carry user information'],
    ['https://:pw@client.example/cb', 'a redirect URI must not carry user information'],
    ['http://[::2]/cb', 'plain http is allowed only for localhost and loopback addresses'],
    ['http://[2001:db8::1]/cb', 'plain http is allowed only for localhost and loopback addresses'],
    // IPv4-mapped loopback is not ::1: refused like any other IPv6 address over plain http.
    [
      'http://[::ffff:127.0.0.1]/cb',
      'plain http is allowed only for localhost and loopback addresses',
    ],
    ['https://client.example/c b', 'a redirect URI must not contain spaces or control characters'],
    // WHATWG URL would silently drop the tab and newline and percent-encode DEL and NUL.
    ['https://client.example/c\tb', 'a redirect URI must not contain spaces or control characters'],
    ['https://client.example/c\nb', 'a redirect URI must not contain spaces or control characters'],
    [
      'https://client.example/c\x7fb',
      'a redirect URI must not contain spaces or control characters',
    ],
    [
      'https://client.example/c\x00b',
      'a redirect URI must not contain spaces or control characters',
    ],
    ['', 'a redirect URI must be 1 to 2000 characters'],
    [`https://client.example/${'a'.repeat(2000)}`, 'a redirect URI must be 1 to 2000 characters'],
    [
      `https://client.example/${'a'.repeat(2001 - 'https://client.example/'.length)}`,
      'a redirect URI must be 1 to 2000 characters',
    ],
  ])('refuses %s', (uri, problem) => {
    expect(redirectUriProblem(uri)).toBe(problem);
  });
});

describe('scopes', () => {
  it('defaults to mcp:devices when nothing is asked', () => {
    expect(parseScopes(undefined)).toEqual({ scopes: ['mcp:devices'] });
    expect(parseScopes('')).toEqual({ scopes: ['mcp:devices'] });
    expect(parseScopes([])).toEqual({ scopes: ['mcp:devices'] });
  });

  it('accepts a space-delimited string or an array, without duplicates, in catalogue order', () => {
    expect(parseScopes('mcp:logs  mcp:devices mcp:logs')).toEqual({
      scopes: ['mcp:devices', 'mcp:logs'],
    });
    expect(parseScopes(['mcp:capture', 'mcp:alerts'])).toEqual({
      scopes: ['mcp:alerts', 'mcp:capture'],
    });
  });

  it('names the first unknown scope', () => {
    expect(parseScopes('mcp:devices admin')).toEqual({ invalid: 'admin' });
    expect(parseScopes(['MCP:DEVICES'])).toEqual({ invalid: 'MCP:DEVICES' });
  });
});

describe('user codes (RFC 8628 §6.1)', () => {
  it('draws 8 characters from the 20 consonants', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode();
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      seen.add(code);
    }
    expect(seen.size).toBe(200);
    expect(USER_CODE_ALPHABET).toHaveLength(20);
    // 8 characters of 20: 34.5 bits.
    expect(8 * Math.log2(20)).toBeGreaterThan(34.5);
  });

  it('normalizes what a user types: case, dashes and spaces are ignored', () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode(' BCDF GHJK ')).toBe('BCDFGHJK');
  });

  it('refuses codes of another length or with characters outside the alphabet', () => {
    expect(normalizeUserCode('BCDFGHJ')).toBeNull();
    expect(normalizeUserCode('BCDFGHJKL')).toBeNull();
    expect(normalizeUserCode('ABCDEFGH')).toBeNull();
    expect(normalizeUserCode('BCDFGHJ1')).toBeNull();
    expect(normalizeUserCode('')).toBeNull();
  });
});

describe('client names', () => {
  it('accepts printable ASCII up to 100 characters', () => {
    expect(clientNameProblem('Claude Desktop (work laptop) #2')).toBeNull();
    expect(clientNameProblem('x'.repeat(100))).toBeNull();
  });
  it('refuses blank, long and non-ASCII names', () => {
    expect(clientNameProblem('   ')).toBe('client_name must not be empty.');
    expect(clientNameProblem('x'.repeat(101))).toBe(
      'client_name must not be longer than 100 characters.',
    );
    expect(clientNameProblem('naïve')).toBe('client_name must be printable ASCII.');
    expect(clientNameProblem('tab\there')).toBe('client_name must be printable ASCII.');
  });
});

describe('PKCE (RFC 7636, S256 only)', () => {
  const verifier = crypto.randomBytes(32).toString('base64url');

  it('matches the RFC 7636 appendix B example', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('accepts the verifier whose SHA-256 is the challenge, and nothing else', () => {
    const challenge = s256(verifier);
    expect(isCodeChallenge(challenge)).toBe(true);
    expect(pkceMatches(verifier, challenge)).toBe(true);
    expect(pkceMatches(`${verifier}x`, challenge)).toBe(false);
    // `plain` would send the verifier itself as the challenge: it never matches.
    expect(pkceMatches(verifier, verifier)).toBe(false);
  });

  it('refuses verifiers outside 43 to 128 unreserved characters', () => {
    expect(isCodeVerifier('a'.repeat(42))).toBe(false);
    expect(isCodeVerifier('a'.repeat(129))).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(40)}-._~`)).toBe(true);
    expect(pkceMatches('short', s256('short'))).toBe(false);
  });

  it('refuses challenges that S256 cannot produce', () => {
    expect(isCodeChallenge('abc')).toBe(false);
    expect(isCodeChallenge(`${'a'.repeat(42)}=`)).toBe(false);
    expect(isCodeChallenge('a'.repeat(44))).toBe(false);
  });

  it('answers false, without throwing, for a challenge of another length', () => {
    // timingSafeEqual throws on buffers of different lengths: the length check comes first.
    expect(pkceMatches(verifier, 'short')).toBe(false);
    expect(pkceMatches(verifier, `${s256(verifier)}x`)).toBe(false);
    expect(pkceMatches(verifier, '')).toBe(false);
  });
});

describe('secrets and digests', () => {
  it('sha256 is the raw SHA-256 digest of the UTF-8 text (FIPS 180-2 known answers)', () => {
    expect(sha256('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(sha256('').toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(sha256('é')).toEqual(
      crypto.createHash('sha256').update(Buffer.from('c3a9', 'hex')).digest(),
    );
  });

  it('randomSecret draws base64url text of the requested bytes (32 by default: 43 characters)', () => {
    const a = randomSecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(randomSecret(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(randomSecret()).not.toBe(a);
  });

  it('equalSecrets accepts the secret whose digest is stored and nothing else, never throwing', () => {
    const stored = sha256('s3cret');
    expect(equalSecrets('s3cret', stored)).toBe(true);
    expect(equalSecrets('s3cret ', stored)).toBe(false);
    expect(equalSecrets('S3cret', stored)).toBe(false);
    // A stored value of another length (not a SHA-256 digest): false, not a timingSafeEqual throw.
    expect(equalSecrets('s3cret', stored.subarray(0, 16))).toBe(false);
    expect(equalSecrets('s3cret', Buffer.alloc(0))).toBe(false);
  });
});

describe('the sign-in page return target (no open redirect)', () => {
  it.each([
    ['/auth/device', '/auth/device'],
    ['/auth/device?user_code=BCDFGHJK', '/auth/device?user_code=BCDFGHJK'],
    [
      '/auth/authorize?response_type=code&client_id=x',
      '/auth/authorize?response_type=code&client_id=x',
    ],
    // `//` inside the query is only text; a 3000-character target is still kept.
    ['/auth/authorize?next=//', '/auth/authorize?next=//'],
    [
      `/auth/device?${'x'.repeat(3000 - '/auth/device?'.length)}`,
      `/auth/device?${'x'.repeat(3000 - '/auth/device?'.length)}`,
    ],
  ])('keeps %s', (value, expected) => {
    expect(safeReturnTarget(value)).toBe(expected);
  });

  it('the default is the device page', () => {
    expect(DEFAULT_RETURN).toBe('/auth/device');
  });

  it.each([
    undefined,
    'https://evil.example/auth/device',
    '//evil.example/auth/device',
    '/\\evil.example/auth/device',
    '\\\\evil.example',
    '/auth/../api/me',
    '/auth/%2e%2e/api/me',
    '/api/me',
    '/auth/token',
    '/auth/signin',
    'javascript:alert(1)',
    '/auth/device\r\nSet-Cookie: x=1',
    'auth/device',
    `/auth/device?${'x'.repeat(3000)}`,
    `/auth/device?${'x'.repeat(3001 - '/auth/device?'.length)}`,
    // Each of these would resolve to an allowed page if the text checks before parsing were
    // skipped (the URL parser alone does not refuse them): the checks themselves are what refuse.
    'auth/authorize?x=1',
    '//appliance.invalid/auth/authorize?x=1',
    '/auth\\authorize?x=1',
    '/auth/author\tize?x=1',
    '/auth/authorize?x=\x01',
  ])('replaces %s with the device page', (value) => {
    expect(safeReturnTarget(value)).toBe('/auth/device');
  });
});

describe('redirects to the client', () => {
  it('keeps the redirect URI query and appends the parameters, encoded', () => {
    expect(
      withParameters('https://client.example/cb?tenant=a', {
        code: 'x y',
        state: 's&t',
        iss: undefined,
      }),
    ).toBe('https://client.example/cb?tenant=a&code=x+y&state=s%26t');
  });
});

describe('HTML escaping of the pages', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const name = `<script>alert("x")</script> & 'y' \`z\``;
    const out = escaped`<p title="${name}">${name}</p>`.text;
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;</p>',
    );
    expect(escapeHtml('"><img src=x onerror=alert(1)>')).toBe(
      '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
  });

  it('inserts fragments built by the tag as markup, and lists item by item', () => {
    const items = ['<a>', 'b'].map((s) => escaped`<li>${s}</li>`);
    expect(escaped`<ul>${items}</ul>`.text).toBe('<ul><li>&lt;a&gt;</li><li>b</li></ul>');
    expect(escaped`${new Markup('<b>ok</b>')}${null}${undefined}${false}${0}`.text).toBe(
      '<b>ok</b>0',
    );
  });
});
