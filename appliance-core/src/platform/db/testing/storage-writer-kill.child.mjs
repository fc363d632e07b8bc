// @ts-check
/**
 * A child process running the storage writer's worker with one lane, for storage-writer.test.ts:
 *   node storage-writer-kill.child.mjs <database file> <rows>
 * posts one atomic group (marker 1, <rows> bulk rows, marker 2), prints `posted`, and prints the
 * group's outcome if it gets one. The test kills it with SIGKILL while the group is running.
 * Plain JavaScript: it runs under plain Node (the TypeScript front of the writer is not needed).
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { Lane } from '../storage-writer.client.mjs';

const [file, rows] = process.argv.slice(2);
const statements = [
  { id: 0, name: 'test.marker', sql: 'INSERT INTO marker (n) VALUES (?)' },
  {
    id: 1,
    name: 'test.fill',
    sql: "INSERT INTO bulk (n, pad) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x, 'padding padding padding padding' FROM c",
  },
];
const { port1, port2 } = new MessageChannel();
new Worker(new URL('../storage-writer.worker.mjs', import.meta.url), {
  workerData: {
    file,
    cacheSizeKb: 512,
    maxBatch: 100,
    counters: new BigInt64Array(new SharedArrayBuffer(8)),
    statements,
    lanes: [{ id: 1, name: 'kill', port: port1 }],
  },
  transferList: [port1],
});
const ids = new Map(statements.map((s) => [s.name, s.id]));
const noop = () => {};
const lane = new Lane(
  'kill',
  { maxQueued: 1000, flushMs: 1, postEvery: 1000 },
  {
    resolve: (name) => ids.get(name),
    wake: noop,
    failed: noop,
    dropped: noop,
    lost: noop,
    listenerError: noop,
  },
);
lane.attach(port2);
void lane
  .group([
    { statement: 'test.marker', params: [1] },
    { statement: 'test.fill', params: [Number(rows)] },
    { statement: 'test.marker', params: [2] },
  ])
  .then((result) => process.stdout.write(`group ${JSON.stringify(result)}\n`));
lane.post();
process.stdout.write('posted\n');
