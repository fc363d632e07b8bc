import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { findDeepLink, parseDeepLink } from './deep-links.js';
import { loadWindowState, saveWindowState } from './window-state.js';

describe('parseDeepLink', () => {
  it('reads a device link', () => {
    expect(parseDeepLink('appliance-console://device/c-0123456789ab/42')).toEqual({
      connectionId: 'c-0123456789ab',
      route: '/devices/42',
    });
    expect(parseDeepLink('appliance-console://device/embedded/1/')).toEqual({
      connectionId: 'embedded',
      route: '/devices/1',
    });
  });

  it.each([
    'appliance-console://device/embedded/0',
    'appliance-console://device/embedded/1/extra',
    'appliance-console://device/embedded/abc',
    'appliance-console://device/../etc/1',
    'appliance-console://device/C-0123456789AB/1',
    'appliance-console://device/embedded/1?x=1',
    'appliance-console://user@device/embedded/1',
    'appliance-console://settings/embedded/1',
    'https://device/embedded/1',
    'javascript:alert(1)',
  ])('ignores %s', (url) => {
    expect(parseDeepLink(url)).toBeUndefined();
  });

  it('finds the link among command-line arguments', () => {
    expect(
      findDeepLink([
        '/opt/app/appliance-console',
        '--no-sandbox',
        'appliance-console://device/embedded/7',
      ]),
    ).toEqual({ connectionId: 'embedded', route: '/devices/7' });
    expect(findDeepLink(['/opt/app/appliance-console', '.'])).toBeUndefined();
  });
});

describe('window state', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'window-state-')), 'state.json');
  const display = { x: 0, y: 0, width: 1920, height: 1080 };

  it('keeps bounds across starts and drops a position that is off every display', () => {
    saveWindowState(file, { x: 100, y: 80, width: 1200, height: 800, maximized: true });
    expect(loadWindowState(file, [display])).toEqual({
      x: 100,
      y: 80,
      width: 1200,
      height: 800,
      maximized: true,
    });
    saveWindowState(file, { x: 3000, y: 80, width: 1200, height: 800, maximized: false });
    expect(loadWindowState(file, [display])).toEqual({
      width: 1200,
      height: 800,
      maximized: false,
    });
  });

  it('ignores a missing or damaged file', () => {
    fs.writeFileSync(file, '{"width": -5');
    expect(loadWindowState(file, [display])).toBeUndefined();
    fs.writeFileSync(file, '{"width": 5, "height": 5}');
    expect(loadWindowState(file, [display])).toBeUndefined();
    expect(loadWindowState(`${file}.absent`, [display])).toBeUndefined();
  });
});
