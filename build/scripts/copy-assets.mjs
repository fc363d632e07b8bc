// Copies non-TypeScript assets of appliance-core (SQL migrations) next to the compiled code.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pairs = [['appliance-core/src/platform/db/migrations', 'appliance-core/dist/platform/db/migrations']];
for (const [from, to] of pairs) {
  fs.rmSync(path.join(root, to), { recursive: true, force: true });
  fs.cpSync(path.join(root, from), path.join(root, to), { recursive: true });
}
