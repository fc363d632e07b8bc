// @ts-check
/**
 * A producer in a second worker thread, for storage-writer.test.ts: a StorageWriterClient built
 * on the port StorageWriter.connect() returned (workerData.port), driven by the test's messages:
 *   {type:'write', statement, rows} -> {type:'wrote', seqs}
 *   {type:'group', ops}             -> {type:'group', result}
 *   {type:'flush'}                  -> {type:'flushed', stats, notices}   (notices since the last flush)
 *   {type:'close'}                  -> {type:'closed', stats}
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StorageWriterClient } from '../storage-writer.client.mjs';

const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const client = new StorageWriterClient(workerData.port);
/** @type {import('../storage-writer.client.mjs').CommitNotice[]} */
const notices = [];
client.onCommit((notice) => notices.push(notice));

parent.on('message', async (/** @type {any} */ msg) => {
  switch (msg.type) {
    case 'write':
      parent.postMessage({
        type: 'wrote',
        seqs: msg.rows.map((/** @type {any[]} */ row) => client.write(msg.statement, row)),
      });
      break;
    case 'group':
      parent.postMessage({ type: 'group', result: await client.group(msg.ops) });
      break;
    case 'flush':
      await client.flush();
      parent.postMessage({ type: 'flushed', stats: client.stats(), notices: notices.splice(0) });
      break;
    case 'close':
      await client.close();
      parent.postMessage({ type: 'closed', stats: client.stats() });
      parent.close();
      break;
  }
});
