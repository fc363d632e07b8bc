import fs from 'node:fs';
import { expect, it } from 'vitest';
import { SETTINGS } from '../../appliance-core/src/platform/config/config.js';

it('documents every configuration setting in the README table', () => {
  const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  for (const setting of SETTINGS) {
    expect(readme, setting.env).toContain(`| \`${setting.env}\` | \`${setting.flag}\` |`);
  }
  expect(readme).toContain('npm ci && npm start');
  expect(readme).toContain('npm test');
});
