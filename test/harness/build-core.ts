/**
 * Builds appliance-core, so process-level tests start the same `appliance-core/dist/server.js`
 * that `npm start` runs. Called by the tests that need it (not globally: unit and HTTP-level
 * tests run from the TypeScript sources).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function buildCore(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const result = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'appliance-core'],
    { cwd: root, encoding: 'utf8' },
  );
  if (result.status !== 0)
    throw new Error(`building appliance-core failed:\n${result.stdout}${result.stderr}`);
  const copy = spawnSync(process.execPath, [path.join(root, 'build/scripts/copy-assets.mjs')], {
    cwd: root,
    encoding: 'utf8',
  });
  if (copy.status !== 0) throw new Error(`copying appliance-core assets failed:\n${copy.stderr}`);
}
