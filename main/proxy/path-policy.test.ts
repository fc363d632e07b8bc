import { describe, expect, it } from 'vitest';

import { checkForwardPath } from './path-policy.js';

describe('checkForwardPath', () => {
  it.each([
    '/api/me',
    '/api/devices',
    '/api/device/12/stats',
    '/api/SSEgetPingInfo/127.0.0.1',
    '/api/tokens',
    '/api/oauth/clients/pending',
    '/api/oauth/clients/abc/approve',
    '/api/loginHistory',
    '/api/logins',
    '/api/oauth/tokens',
    '/api/ensureWebSession',
    '/openapi.json',
  ])('forwards %s', (path) => {
    expect(checkForwardPath(path)).toEqual({ allowed: true });
  });

  it.each([
    '/api/login',
    '/api/login/',
    '/API/LOGIN',
    '/api//login',
    '//api/login',
    '/api/%6Cogin',
    '/api/%6c%6F%67%69%6E',
    '/api/login;jsessionid=1',
    '/api/login.json',
    '/api/logout',
    '/api/oauth/device/authorize',
    '/api/oauth/device/token',
    '/api/oauth/device/token/',
    '/api/oauth/token/refresh',
    '/api/oauth/token/introspect',
    '/api/oauth/token/revoke',
    '/api/oauth/Token/Refresh',
    '/api/oauth%2Ftoken/refresh',
    '/auth/token',
    '/auth/device',
    '/auth/authorize',
    '/AUTH/token',
    '/.well-known/oauth-authorization-server',
    '/',
    '/index.html',
    '/api',
    '/api/%zz',
    '/api/%2e%2e/auth/token',
    '/api/..%2fauth/token',
    '/api/a\\b',
  ])('refuses %s', (path) => {
    expect(checkForwardPath(path).allowed).toBe(false);
  });

  it('says why', () => {
    expect(checkForwardPath('/api/login')).toEqual({
      allowed: false,
      reason: 'sign-in goes through the desktop app (IPC), not the proxy',
    });
    expect(checkForwardPath('/auth/device')).toEqual({
      allowed: false,
      reason: '/auth/* pages open in the system browser',
    });
  });
});
