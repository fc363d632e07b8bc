/**
 * Builds appliance-core once before the suite, so process-level tests start the same
 * `appliance-core/dist/server.js` that `npm start` runs.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'appliance-core'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building appliance-core failed');
  const copy = spawnSync(process.execPath, [path.join(root, 'build/scripts/copy-assets.mjs')], { cwd: root, stdio: 'inherit' });
  if (copy.status !== 0) throw new Error('copying appliance-core assets failed');
}
