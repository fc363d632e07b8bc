/**
 * The preload with Electron's renderer-side modules replaced by recording stand-ins (the Electron
 * binary cannot run here): what it exposes, which channel each method invokes, what listeners
 * receive, and how a terminal's MessagePort reaches the page.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';

import { CONSOLE_CHANNELS, CONSOLE_EVENTS, type ConsoleBridge } from '../contract/bridge.js';

type Listener = (event: { ports: unknown[]; sender: unknown }, payload: unknown) => void;

const recorded = vi.hoisted(() => ({
  exposed: new Map<string, unknown>(),
  invoked: [] as unknown[][],
  listeners: new Map<string, Set<(...args: unknown[]) => void>>(),
  posted: [] as unknown[][],
}));

vi.mock('electron', () => ({
  contextBridge: {
    exposeInMainWorld: (key: string, value: unknown) => recorded.exposed.set(key, value),
  },
  ipcRenderer: {
    invoke: (...args: unknown[]) => {
      recorded.invoked.push(args);
      return Promise.resolve({ ok: true, value: null });
    },
    on: (channel: string, listener: (...args: unknown[]) => void) => {
      if (!recorded.listeners.has(channel)) recorded.listeners.set(channel, new Set());
      recorded.listeners.get(channel)!.add(listener);
    },
    removeListener: (channel: string, listener: (...args: unknown[]) => void) => {
      recorded.listeners.get(channel)?.delete(listener);
    },
  },
}));

let bridge: ConsoleBridge;

function emit(channel: string, event: Parameters<Listener>[0], payload: unknown) {
  for (const listener of recorded.listeners.get(channel) ?? []) listener(event, payload);
}

beforeAll(async () => {
  (globalThis as Record<string, unknown>).window = {
    location: { origin: 'app://console' },
    postMessage: (...args: unknown[]) => recorded.posted.push(args),
  };
  await import('./index.js');
  bridge = recorded.exposed.get('consoleBridge') as ConsoleBridge;
});

describe('the preload', () => {
  it('exposes one object, consoleBridge, and nothing of ipcRenderer', () => {
    expect([...recorded.exposed.keys()]).toEqual(['consoleBridge']);
    expect(Object.keys(bridge).sort()).toEqual(
      ['auth', 'connections', 'core', 'events', 'getBootstrap', 'shell', 'terminal'].sort(),
    );
    expect(JSON.stringify(Object.keys(bridge))).not.toMatch(/ipc|invoke|send/i);
  });

  it('invokes exactly the contract channel of each method, with its one input', async () => {
    const calls: Array<[() => Promise<unknown>, unknown[]]> = [
      [() => bridge.getBootstrap(), [CONSOLE_CHANNELS.appGetBootstrap]],
      [() => bridge.connections.list(), [CONSOLE_CHANNELS.connectionsList]],
      [
        () => bridge.connections.probe({ url: 'x' }),
        [CONSOLE_CHANNELS.connectionsProbe, { url: 'x' }],
      ],
      [
        () => bridge.connections.add({ url: 'x', acceptSha256: 'y' }),
        [CONSOLE_CHANNELS.connectionsAdd, { url: 'x', acceptSha256: 'y' }],
      ],
      [() => bridge.connections.edit({ id: 'c' }), [CONSOLE_CHANNELS.connectionsEdit, { id: 'c' }]],
      [
        () => bridge.connections.remove({ id: 'c' }),
        [CONSOLE_CHANNELS.connectionsRemove, { id: 'c' }],
      ],
      [
        () => bridge.connections.repin({ id: 'c', acceptSha256: 'y' }),
        [CONSOLE_CHANNELS.connectionsRepin, { id: 'c', acceptSha256: 'y' }],
      ],
      [() => bridge.auth.status({ id: 'c' }), [CONSOLE_CHANNELS.authStatus, { id: 'c' }]],
      [
        () => bridge.auth.signIn({ connectionId: 'c', username: 'u', password: 'p' }),
        [CONSOLE_CHANNELS.authSignIn, { connectionId: 'c', username: 'u', password: 'p' }],
      ],
      [
        () => bridge.auth.startDeviceFlow({ connectionId: 'c' }),
        [CONSOLE_CHANNELS.authDeviceStart, { connectionId: 'c' }],
      ],
      [
        () => bridge.auth.waitDeviceFlow({ flowId: 'f' }),
        [CONSOLE_CHANNELS.authDeviceWait, { flowId: 'f' }],
      ],
      [
        () => bridge.auth.cancelDeviceFlow({ flowId: 'f' }),
        [CONSOLE_CHANNELS.authDeviceCancel, { flowId: 'f' }],
      ],
      [() => bridge.auth.signOut({ id: 'c' }), [CONSOLE_CHANNELS.authSignOut, { id: 'c' }]],
      [() => bridge.core.status(), [CONSOLE_CHANNELS.coreStatus]],
      [() => bridge.core.restart(), [CONSOLE_CHANNELS.coreRestart]],
      [
        () => bridge.core.setCollectors({ enabled: true, bindAddress: '127.0.0.1' }),
        [CONSOLE_CHANNELS.coreSetCollectors, { enabled: true, bindAddress: '127.0.0.1' }],
      ],
      [
        () => bridge.terminal.openLocal({ cols: 80, rows: 24 }),
        [CONSOLE_CHANNELS.terminalOpenLocal, { cols: 80, rows: 24 }],
      ],
      [
        () => bridge.terminal.openAppliance({ connectionId: 'c', path: '/api/t' }),
        [CONSOLE_CHANNELS.terminalOpenAppliance, { connectionId: 'c', path: '/api/t' }],
      ],
      [
        () => bridge.shell.openExternal({ url: 'https://a' }),
        [CONSOLE_CHANNELS.shellOpenExternal, { url: 'https://a' }],
      ],
    ];
    expect(calls).toHaveLength(Object.keys(CONSOLE_CHANNELS).length);
    for (const [call, expected] of calls) {
      recorded.invoked.length = 0;
      await expect(call()).resolves.toEqual({ ok: true, value: null });
      expect(recorded.invoked).toEqual([expected]);
    }
  });

  it('passes event payloads only (never the IPC event) and unsubscribes', () => {
    const seen: unknown[][] = [];
    const off = bridge.events.onCoreChanged((...args) => seen.push(args));
    const secretEvent = { ports: [], sender: { send: () => undefined } };
    emit(CONSOLE_EVENTS.coreChanged, secretEvent, { state: 'ready' });
    expect(seen).toEqual([[{ state: 'ready' }]]);
    off();
    emit(CONSOLE_EVENTS.coreChanged, secretEvent, { state: 'failed' });
    expect(seen).toHaveLength(1);
    const got: unknown[] = [];
    const stops = [
      bridge.events.onConnectionsChanged((payload) => got.push(payload)),
      bridge.events.onAuthChanged((payload) => got.push(payload)),
      bridge.events.onDeepLink((payload) => got.push(payload)),
    ];
    emit(CONSOLE_EVENTS.connectionsChanged, secretEvent, 'connections');
    emit(CONSOLE_EVENTS.authChanged, secretEvent, 'auth');
    emit(CONSOLE_EVENTS.deepLink, secretEvent, 'link');
    for (const stop of stops) stop();
    emit(CONSOLE_EVENTS.deepLink, secretEvent, 'after');
    expect(got).toEqual(['connections', 'auth', 'link']);
  });

  it('hands a terminal port to the page on its own origin, with the session id', () => {
    const port = { postMessage: () => undefined };
    emit(CONSOLE_EVENTS.terminalPort, { ports: [port], sender: {} }, { sessionId: 's-1' });
    expect(recorded.posted).toEqual([
      [{ type: CONSOLE_EVENTS.terminalPort, sessionId: 's-1' }, 'app://console', [port]],
    ]);
    emit(CONSOLE_EVENTS.terminalPort, { ports: [], sender: {} }, { sessionId: 's-2' });
    emit(CONSOLE_EVENTS.terminalPort, { ports: [port], sender: {} }, { sessionId: 42 });
    expect(recorded.posted).toHaveLength(1);
  });
});
