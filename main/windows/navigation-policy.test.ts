import { describe, expect, it } from 'vitest';

import { isAllowedExternalUrl, isAllowedNavigation } from './navigation-policy.js';

describe('isAllowedNavigation', () => {
  const fileEntry = 'file:///opt/console/resources/app.asar/renderer/dist/index.html';

  it('keeps a file:// window on its own page', () => {
    expect(isAllowedNavigation(`${fileEntry}#/devices`, fileEntry)).toBe(true);
    expect(isAllowedNavigation('file:///etc/passwd', fileEntry)).toBe(false);
    expect(isAllowedNavigation('https://example.com/', fileEntry)).toBe(false);
  });

  it('keeps a served window on its origin', () => {
    const served = 'http://localhost:5173/';
    expect(isAllowedNavigation('http://localhost:5173/devices', served)).toBe(true);
    expect(isAllowedNavigation('http://localhost:5174/', served)).toBe(false);
    expect(isAllowedNavigation('not a url', served)).toBe(false);
  });
});

describe('isAllowedExternalUrl', () => {
  it('opens https links only', () => {
    expect(isAllowedExternalUrl('https://example.com/docs')).toBe(true);
    expect(isAllowedExternalUrl('http://example.com/')).toBe(false);
    expect(isAllowedExternalUrl('file:///etc/passwd')).toBe(false);
    expect(isAllowedExternalUrl('javascript:alert(1)')).toBe(false);
  });
});
