/**
 * The upgrader's helper client against real Unix sockets in a temp directory: an answer, nobody
 * listening (unreachable: this host lacks the mechanism), a listener that never answers (bounded
 * by the timeout), and answers outside the protocol.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HelperUnreachable, socketUpgraderHost } from './upgrader.runtime.js';

let dir: string;
let servers: net.Server[];
let sockets: net.Socket[];
const request = { v: 1, op: 'upgrader.status', args: {} } as const;

const listen = async (onConnection: (socket: net.Socket) => void) => {
  const socketPath = path.join(dir, `s${servers.length}.sock`);
  const server = net.createServer((socket) => {
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return socketPath;
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrader-runtime-'));
  servers = [];
  sockets = [];
});
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('socketUpgraderHost', () => {
  it('sends one JSON line and returns the answer line', async () => {
    let received = '';
    const socketPath = await listen((socket) =>
      socket.on('data', (d) => {
        received += d.toString();
        socket.end('{"ok":true,"output":{"codename":"trixie"}}\n');
      }),
    );
    expect(await socketUpgraderHost(socketPath).ask(request, 2000)).toEqual({
      ok: true,
      output: { codename: 'trixie' },
    });
    expect(received).toBe(`${JSON.stringify(request)}\n`);
  });

  it('reports a missing socket as unreachable', async () => {
    await expect(
      socketUpgraderHost(path.join(dir, 'absent.sock')).ask(request, 2000),
    ).rejects.toBeInstanceOf(HelperUnreachable);
  });

  it('gives up after the timeout on a helper that never answers', async () => {
    const socketPath = await listen(() => undefined);
    const t0 = Date.now();
    await expect(socketUpgraderHost(socketPath).ask(request, 200)).rejects.toThrow(
      'the root helper did not answer in time',
    );
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('refuses answers outside the protocol', async () => {
    for (const [answer, message] of [
      ['not json\n', 'not JSON'],
      ['{"ok":false,"code":"boom","message":"x"}\n', 'outside its protocol'],
      ['', 'closed without answering'],
    ] as const) {
      const socketPath = await listen((socket) => socket.end(answer));
      await expect(socketUpgraderHost(socketPath).ask(request, 2000)).rejects.toThrow(message);
    }
  });
});
