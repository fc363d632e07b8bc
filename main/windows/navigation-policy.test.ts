import { describe, expect, it } from 'vitest';

import {
  consoleOriginOf,
  isAllowedExternalUrl,
  isAllowedNavigation,
  windowOpenDecision,
} from './navigation-policy.js';

const saved = ['https://appliance.example.com', 'https://10.0.0.5:8443'];

describe('isAllowedNavigation', () => {
  it.each([
    'app://console/',
    'app://console/devices/12',
    'app://console/appliances/embedded/api/me?x=1#top',
  ])('keeps the window on the console origin: %s', (url) => {
    expect(isAllowedNavigation(url)).toBe(true);
  });

  it.each([
    'app://console.attacker.test/',
    'app://console@attacker.test/',
    'app://user:pass@console/',
    'app://console:8080/',
    'app://CONSOLE.attacker/',
    'app://other/',
    'https://appliance.example.com/',
    'https://appliance.example.com.attacker.test/',
    'http://localhost:5173/',
    'file:///etc/passwd',
    'file:///opt/console/resources/app.asar/renderer/dist/index.html',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'blob:app://console/3f0c',
    'about:blank',
    'chrome://settings',
    'devtools://devtools/bundled/inspector.html',
    'not a url',
    '',
  ])('refuses %s', (url) => {
    expect(isAllowedNavigation(url)).toBe(false);
  });

  it('does not take the opaque origin "null" for the console', () => {
    expect(new URL('data:text/html,x').origin).toBe('null');
    expect(new URL('app://console/').origin).toBe('null');
    expect(consoleOriginOf('data:text/html,x')).toBeUndefined();
    expect(consoleOriginOf('app://console/x')).toBe('app://console');
  });
});

describe('isAllowedExternalUrl', () => {
  it.each([
    'https://appliance.example.com/auth/device?user_code=BCDFGHJK',
    'https://APPLIANCE.example.com:443/auth/device',
    'https://10.0.0.5:8443/auth/device',
  ])('opens https pages of saved connections: %s', (url) => {
    expect(isAllowedExternalUrl(url, saved)).toBe(true);
  });

  it.each([
    'https://appliance.example.com.attacker.test/auth/device',
    'https://attacker.test/?https://appliance.example.com',
    'https://appliance.example.com@attacker.test/',
    'https://user@appliance.example.com/',
    'http://appliance.example.com/auth/device',
    'https://10.0.0.5/auth/device',
    'https://10.0.0.5:8444/auth/device',
    'https://example.com/docs',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'app://console/',
    'smb://appliance.example.com/share',
    'not a url',
  ])('refuses %s', (url) => {
    expect(isAllowedExternalUrl(url, saved)).toBe(false);
  });

  it('refuses everything when nothing is saved', () => {
    expect(isAllowedExternalUrl('https://appliance.example.com/', [])).toBe(false);
  });
});

describe('windowOpenDecision', () => {
  it('always denies the new window, and hands only allowlisted URLs to the system browser', () => {
    expect(windowOpenDecision('https://appliance.example.com/auth/device', saved)).toEqual({
      action: 'deny',
      openExternally: true,
    });
    for (const url of [
      'https://appliance.example.com.attacker.test/',
      'app://console/devices',
      'javascript:alert(1)',
      'file:///etc/passwd',
    ]) {
      expect(windowOpenDecision(url, saved)).toEqual({ action: 'deny', openExternally: false });
    }
  });
});
