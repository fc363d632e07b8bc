/**
 * A fake root helper for tests: a real Unix socket server in a temporary directory that speaks
 * the helper's protocol (one JSON line in, one JSON line out), records every request and answers
 * with what the test's `answer` function returns. It changes nothing on the host.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RootHelperRequest, RootHelperResponse } from '../root-helper.protocol.js';

export interface FakeRootHelper {
  socketPath: string;
  /** Requests in arrival order, as parsed; `raw` keeps each line as received. */
  requests: RootHelperRequest[];
  raw: string[];
  answer: (request: RootHelperRequest) => RootHelperResponse | 'hang' | 'close' | string;
  close(): Promise<void>;
}

export async function startFakeRootHelper(): Promise<FakeRootHelper> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'root-helper-'));
  const socketPath = path.join(dir, 'helper.sock');
  const sockets = new Set<net.Socket>();
  const fake: FakeRootHelper = {
    socketPath,
    requests: [],
    raw: [],
    answer: () => ({ ok: true }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const newline = buffer.indexOf('\n');
      if (newline === -1) return;
      const line = buffer.slice(0, newline);
      fake.raw.push(line);
      const request = JSON.parse(line) as RootHelperRequest;
      fake.requests.push(request);
      const answer = fake.answer(request);
      if (answer === 'hang') return;
      if (answer === 'close') socket.end();
      else if (typeof answer === 'string') socket.end(answer);
      else socket.end(`${JSON.stringify(answer)}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return fake;
}
