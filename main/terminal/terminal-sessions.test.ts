/**
 * Terminal sessions over a real MessageChannel (worker_threads ports stand in for Electron's
 * MessagePortMain): a real local shell in node-pty, and an appliance terminal socket bridged to a
 * real WSS server whose certificate is pinned.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { MessageChannel } from 'node:worker_threads';

import { spawn as spawnPty } from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';

import { createDesktopStack, type DesktopStack } from '../../test/harness/desktop-stack.js';
import { makeSelfSigned, type TestCertificate } from '../../test/harness/tls-certs.js';
import type { TerminalPort } from './terminal-port.js';
import { TerminalSessions } from './terminal-sessions.js';

function channel() {
  const { port1, port2 } = new MessageChannel();
  const main: TerminalPort = {
    postMessage: (message) => port1.postMessage(message),
    onMessage: (listener) => port1.on('message', listener),
    onClose: (listener) => port1.on('close', listener),
    start: () => port1.start(),
    close: () => port1.close(),
  };
  const received: unknown[] = [];
  port2.on('message', (message) => received.push(message));
  let closed = false;
  port2.on('close', () => {
    closed = true;
  });
  return { main, renderer: port2, received, isClosed: () => closed };
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const outputOf = (received: unknown[]) =>
  received
    .filter(
      (m): m is { type: 'output'; data: string } => (m as { type?: string }).type === 'output',
    )
    .map((m) => m.data)
    .join('');

let desktop: DesktopStack;
const logged: string[] = [];

beforeAll(() => {
  desktop = createDesktopStack();
});

afterAll(async () => {
  await desktop.close();
});

function sessions(max = 8) {
  return new TerminalSessions({
    spawnPty,
    connections: desktop.registry,
    log: (message) => logged.push(message),
    shell: { file: '/bin/sh', args: [] },
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ELECTRON_RUN_AS_NODE: '1' },
    maxSessions: max,
  });
}

describe('local terminal (node-pty)', () => {
  it('runs a shell: input, output, resize, exit', async () => {
    const terminals = sessions();
    const { main, renderer, received, isClosed } = channel();
    const opened = terminals.openLocal(main, { cols: 80, rows: 24 });
    expect(opened).toEqual({ sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/), kind: 'pty' });

    renderer.postMessage({ type: 'input', data: 'echo hello-$((6*7))\r' });
    await waitFor(() => outputOf(received).includes('hello-42'));
    renderer.postMessage({ type: 'resize', cols: 100, rows: 30 });
    renderer.postMessage({
      type: 'input',
      data: 'stty size; echo ${ELECTRON_RUN_AS_NODE:-unset}\r',
    });
    await waitFor(() => outputOf(received).includes('30 100'));
    await waitFor(() => outputOf(received).includes('unset'));
    renderer.postMessage({ type: 'input', data: 'exit 3\r' });
    await waitFor(() => received.some((m) => (m as { type: string }).type === 'exit'));
    expect(received.at(-1)).toEqual({ type: 'exit', exitCode: 3, signal: null });
    await waitFor(isClosed);
    expect(terminals.count).toBe(0);
  });

  it('drops malformed messages, ends the shell when the console closes the port, and limits sessions', async () => {
    const terminals = sessions(1);
    const first = channel();
    terminals.openLocal(first.main, { cols: 80, rows: 24 });
    const before = logged.length;
    for (const bad of [
      'echo raw string',
      { type: 'input', data: 42 },
      { type: 'resize', cols: 0, rows: 24 },
      { type: 'resize', cols: 80.5, rows: 24 },
      { type: 'exec', data: 'x' },
    ]) {
      first.renderer.postMessage(bad);
    }
    await waitFor(() => logged.length >= before + 5);
    expect(logged.slice(before).every((m) => m.includes('malformed'))).toBe(true);

    expect(() => terminals.openLocal(channel().main, { cols: 80, rows: 24 })).toThrow(
      /too many terminals/,
    );
    first.renderer.postMessage({ type: 'close' });
    await waitFor(() => terminals.count === 0);
    terminals.openLocal(channel().main, { cols: 80, rows: 24 });
    terminals.closeAll();
    expect(terminals.count).toBe(0);
  });
});

describe('appliance terminal socket', () => {
  let certificate: TestCertificate;
  let server: https.Server;
  let wss: WebSocketServer;
  let origin: string;
  let connectionId: string;
  const upgrades: Array<{
    url: string;
    origin: string | undefined;
    authorization: string | undefined;
  }> = [];

  beforeAll(async () => {
    certificate = await makeSelfSigned();
    server = https.createServer({ cert: certificate.cert, key: certificate.key });
    wss = new WebSocketServer({ server });
    wss.on('connection', (socket, request) => {
      upgrades.push({
        url: request.url ?? '',
        origin: request.headers.origin,
        authorization: request.headers.authorization,
      });
      if (!request.url?.includes('ticket=good')) {
        socket.close(4401, 'bad ticket');
        return;
      }
      socket.send('welcome');
      socket.on('message', (data, isBinary) => {
        if (isBinary) socket.send(Buffer.concat([Buffer.from([0xff]), data as Buffer]));
        else socket.send(`echo:${(data as Buffer).toString('utf8')}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const saved = await desktop.registry.add({ url: origin, acceptSha256: certificate.sha256 });
    connectionId = saved.id;
  });

  afterAll(async () => {
    wss.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('bridges frames both ways, without Origin or bearer, over the pinned certificate', async () => {
    const terminals = sessions();
    const { main, renderer, received, isClosed } = channel();
    const opened = await terminals.openAppliance(main, {
      connectionId,
      path: '/api/terminal/socket?ticket=good',
    });
    expect(opened.kind).toBe('socket');
    await waitFor(() => received.length >= 2);
    expect(received.slice(0, 2)).toEqual([{ type: 'open' }, { type: 'message', data: 'welcome' }]);
    expect(upgrades.at(-1)).toEqual({
      url: '/api/terminal/socket?ticket=good',
      origin: undefined,
      authorization: undefined,
    });

    renderer.postMessage({ type: 'send', data: 'ls -l\r' });
    const bytes = new Uint8Array([1, 2, 3]).buffer;
    renderer.postMessage({ type: 'send', data: bytes });
    await waitFor(() => received.length >= 4);
    expect(received[2]).toEqual({ type: 'message', data: 'echo:ls -l\r' });
    const binary = received[3] as { type: string; data: ArrayBuffer };
    expect([...new Uint8Array(binary.data)]).toEqual([0xff, 1, 2, 3]);

    renderer.postMessage({ type: 'close', code: 1000 });
    await waitFor(isClosed);
    expect(terminals.count).toBe(0);
  });

  it('passes the appliance closing the socket to the console', async () => {
    const terminals = sessions();
    const { main, received, isClosed } = channel();
    await terminals.openAppliance(main, { connectionId, path: '/api/terminal/socket?ticket=bad' });
    await waitFor(isClosed);
    expect(received).toContainEqual({ type: 'closed', code: 4401, reason: 'bad ticket' });
  });

  it('refuses a changed certificate, paths outside /api/ and unknown connections', async () => {
    const terminals = sessions();
    const other = await makeSelfSigned();
    desktop.store.update(connectionId, { pinnedSha256: other.sha256 });
    try {
      const before = upgrades.length;
      await expect(
        terminals.openAppliance(channel().main, {
          connectionId,
          path: '/api/terminal/socket?ticket=good',
        }),
      ).rejects.toThrow(/certificate changed/);
      expect(upgrades.length).toBe(before);
    } finally {
      desktop.store.update(connectionId, { pinnedSha256: certificate.sha256 });
    }
    await expect(
      terminals.openAppliance(channel().main, { connectionId, path: '/auth/device' }),
    ).rejects.toThrow(/under \/api\//);
    await expect(
      terminals.openAppliance(channel().main, { connectionId, path: '/api/login' }),
    ).rejects.toThrow(/under \/api\//);
    await expect(
      terminals.openAppliance(channel().main, { connectionId: 'c-000000000000', path: '/api/x' }),
    ).rejects.toThrow(/no such connection/);
  });
});
