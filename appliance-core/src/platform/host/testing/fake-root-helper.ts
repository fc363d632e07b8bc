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

export type FakeAction = { raw: string } | { hang: true } | { close: true };

export interface FakeRootHelper {
  socketPath: string;
  /** Requests in arrival order, as parsed; `raw` keeps each line as received. */
  requests: RootHelperRequest[];
  raw: string[];
  /** An answer, `{raw}` to send text as it is, `{hang: true}` to never answer, `{close: true}` to hang up. */
  answer: (request: RootHelperRequest) => RootHelperResponse | FakeAction;
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
      if ('hang' in answer) return;
      if ('close' in answer) socket.end();
      else if ('raw' in answer) socket.end(answer.raw);
      else socket.end(`${JSON.stringify(answer)}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return fake;
}
