import { describe, expect, it } from 'vitest';

import { consoleWindowOptions } from './window-options.js';
import { isPermissionCheckGranted, isPermissionRequestGranted } from './permission-policy.js';

describe('consoleWindowOptions', () => {
  it('locks the window down exactly', () => {
    const options = consoleWindowOptions('/app/electron/dist/preload.cjs');
    expect(options.webPreferences).toEqual({
      preload: '/app/electron/dist/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      webSecurity: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      nodeIntegrationInWorker: false,
      webviewTag: false,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    });
    expect(options.show).toBe(false);
  });

  it('takes the saved bounds', () => {
    const options = consoleWindowOptions('/p.cjs', { x: 10, y: 20, width: 1000, height: 700 });
    expect(options).toMatchObject({ x: 10, y: 20, width: 1000, height: 700 });
    expect(consoleWindowOptions('/p.cjs', { width: 900, height: 650 })).not.toHaveProperty('x');
  });
});

describe('permissions', () => {
  it.each([
    'media',
    'geolocation',
    'notifications',
    'openExternal',
    'clipboard-read',
    'clipboard-sanitized-write',
    'fullscreen',
    'pointerLock',
    'hid',
    'serial',
    'usb',
  ])('denies the request for %s', (permission) => {
    expect(isPermissionRequestGranted(permission)).toBe(false);
  });

  it('grants only the console its clipboard writes on a check', () => {
    expect(isPermissionCheckGranted('clipboard-sanitized-write', 'app://console')).toBe(true);
    expect(isPermissionCheckGranted('clipboard-sanitized-write', 'https://attacker.test')).toBe(
      false,
    );
    expect(isPermissionCheckGranted('clipboard-sanitized-write', 'null')).toBe(false);
    expect(isPermissionCheckGranted('media', 'app://console')).toBe(false);
    expect(isPermissionCheckGranted('clipboard-read', 'app://console')).toBe(false);
  });
});
