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
    const answer = socketUpgraderHost(socketPath).ask(request, 200);
    await expect(answer).rejects.toThrow('did not answer within 200 ms');
    await expect(answer).rejects.not.toBeInstanceOf(HelperUnreachable);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('turns answers outside the protocol into failed answers, and silence into unreachable', async () => {
    for (const [answer, message] of [
      ['not json\n', 'not JSON'],
      ['{"ok":false,"code":"boom","message":"x"}\n', 'unknown shape'],
    ] as const) {
      const socketPath = await listen((socket) => socket.end(answer));
      const got = await socketUpgraderHost(socketPath).ask(request, 2000);
      expect(got).toMatchObject({ ok: false, code: 'failed' });
      expect(got.ok === false && got.message).toContain(message);
    }
    const silent = await listen((socket) => socket.end(''));
    await expect(socketUpgraderHost(silent).ask(request, 2000)).rejects.toBeInstanceOf(
      HelperUnreachable,
    );
  });
});
