import fs from 'node:fs';
import { expect, it } from 'vitest';
import { SETTINGS } from '../../appliance-core/src/platform/config/config.js';

/** The README's table rows as trimmed cells (Prettier pads Markdown table columns). */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

it('documents every configuration setting in the README table', () => {
  const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = tableRows(readme);
  for (const setting of SETTINGS) {
    expect(
      rows.some((cells) => cells[0] === `\`${setting.env}\`` && cells[1] === `\`${setting.flag}\``),
      setting.env,
    ).toBe(true);
  }
  expect(readme).toContain('npm ci && npm start');
  expect(readme).toContain('npm test');
});
