// Copies non-TypeScript assets of appliance-core (SQL migrations, the storage writer's worker and
// its producer client, plain JavaScript files run as they are) next to the compiled code.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pairs = [
  ['appliance-core/src/platform/db/migrations', 'appliance-core/dist/platform/db/migrations'],
  [
    'appliance-core/src/platform/db/storage-writer.worker.mjs',
    'appliance-core/dist/platform/db/storage-writer.worker.mjs',
  ],
  [
    'appliance-core/src/platform/db/storage-writer.client.mjs',
    'appliance-core/dist/platform/db/storage-writer.client.mjs',
  ],
  // The syslog receiver's and parse thread's workers and the parser they import (features/logs).
  [
    'appliance-core/src/features/logs/syslog-receiver.engine.mjs',
    'appliance-core/dist/features/logs/syslog-receiver.engine.mjs',
  ],
  [
    'appliance-core/src/features/logs/syslog-parser.engine.mjs',
    'appliance-core/dist/features/logs/syslog-parser.engine.mjs',
  ],
  [
    'appliance-core/src/features/logs/syslog-message.rules.mjs',
    'appliance-core/dist/features/logs/syslog-message.rules.mjs',
  ],
  // The flow collector's worker thread and the decoder it imports (features/flows).
  [
    'appliance-core/src/features/flows/flow-receiver.engine.mjs',
    'appliance-core/dist/features/flows/flow-receiver.engine.mjs',
  ],
  [
    'appliance-core/src/features/flows/flow-packet.rules.mjs',
    'appliance-core/dist/features/flows/flow-packet.rules.mjs',
  ],
];
for (const [from, to] of pairs) {
  fs.rmSync(path.join(root, to), { recursive: true, force: true });
  fs.cpSync(path.join(root, from), path.join(root, to), { recursive: true });
}
