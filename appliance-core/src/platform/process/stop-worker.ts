/**
 * Ends a receiver's worker thread the way the collectors do: ask it to stop (it flushes what it
 * holds and answers `{type: 'stopped'}`), terminate it when it has not ended within `timeoutMs`,
 * and always terminate it at the end (an answered stop still leaves the thread to be reaped).
 */
import type { Worker } from 'node:worker_threads';

export async function stopWorker(worker: Worker, timeoutMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (msg: { type: string }) => {
      if (msg.type === 'stopped') resolve();
    });
    worker.once('exit', () => resolve());
  });
  worker.postMessage({ type: 'stop' });
  const timer = setTimeout(() => void worker.terminate(), timeoutMs);
  await stopped;
  clearTimeout(timer);
  await worker.terminate();
}
