/**
 * Every IPC channel: a foreign sender is refused and malformed input is rejected before any
 * main-process object is touched; then the connections channels end to end against a real TLS
 * server (trust on first use through IPC).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CONSOLE_CHANNELS } from '../../electron/contract/bridge.js';
import { createDesktopStack, type DesktopStack } from '../../test/harness/desktop-stack.js';
import { consoleEvent, eventFrom, fakeIpcMain } from '../../test/harness/fake-ipc.js';
import { makeSelfSigned, type TestCertificate } from '../../test/harness/tls-certs.js';
import { startTlsServer, type TestTlsServer } from '../../test/harness/tls-server.js';
import type { SessionManager } from '../auth/session-manager.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import type { EmbeddedAppliance } from '../core/embedded-appliance.js';
import type { TerminalSessions } from '../terminal/terminal-sessions.js';
import { registerAppIpc } from './app.ipc.js';
import { registerAuthIpc } from './auth.ipc.js';
import { registerConnectionsIpc } from './connections.ipc.js';
import { registerCoreIpc } from './core.ipc.js';
import type { IpcContext } from './register.js';
import { registerShellIpc } from './shell.ipc.js';
import { registerTerminalIpc } from './terminal.ipc.js';
import { REFUSED_SENDER_MESSAGE } from './wrap-result.js';

/** An object that fails the test when anything reaches it. */
function untouchable<T>(name: string): T {
  return new Proxy(
    {},
    {
      get(_target, property) {
        throw new Error(`${name}.${String(property)} was reached`);
      },
    },
  ) as T;
}

function registerAll(context: IpcContext) {
  registerAppIpc(context, { bootstrap: untouchable('bootstrap') });
  registerConnectionsIpc(context, {
    registry: untouchable<ConnectionRegistry>('registry'),
    sessions: untouchable<SessionManager>('sessions'),
  });
  registerAuthIpc(context, untouchable<SessionManager>('sessions'));
  registerCoreIpc(context, untouchable<EmbeddedAppliance>('embedded'));
  registerTerminalIpc(context, {
    sessions: untouchable<TerminalSessions>('terminals'),
    openChannel: untouchable('openChannel'),
  });
  registerShellIpc(context, untouchable('shell'));
}

const VALID_INPUT: Record<string, unknown> = {
  [CONSOLE_CHANNELS.connectionsProbe]: { url: 'https://a.example.com' },
  [CONSOLE_CHANNELS.connectionsAdd]: {
    url: 'https://a.example.com',
    acceptSha256: 'AA:'.repeat(31) + 'AA',
  },
  [CONSOLE_CHANNELS.connectionsEdit]: { id: 'c-0123456789ab', name: 'x' },
  [CONSOLE_CHANNELS.connectionsRemove]: { id: 'c-0123456789ab' },
  [CONSOLE_CHANNELS.connectionsRepin]: {
    id: 'c-0123456789ab',
    acceptSha256: 'AA:'.repeat(31) + 'AA',
  },
  [CONSOLE_CHANNELS.authStatus]: { id: 'embedded' },
  [CONSOLE_CHANNELS.authSignIn]: { connectionId: 'embedded', username: 'admin', password: 'x' },
  [CONSOLE_CHANNELS.authDeviceStart]: { connectionId: 'embedded' },
  [CONSOLE_CHANNELS.authDeviceWait]: { flowId: '00000000-0000-4000-8000-000000000000' },
  [CONSOLE_CHANNELS.authDeviceCancel]: { flowId: '00000000-0000-4000-8000-000000000000' },
  [CONSOLE_CHANNELS.authSignOut]: { id: 'embedded' },
  [CONSOLE_CHANNELS.coreSetCollectors]: { enabled: true, bindAddress: '127.0.0.1' },
  [CONSOLE_CHANNELS.terminalOpenLocal]: { cols: 80, rows: 24 },
  [CONSOLE_CHANNELS.terminalOpenAppliance]: { connectionId: 'embedded', path: '/api/terminal' },
  [CONSOLE_CHANNELS.shellOpenExternal]: { url: 'https://a.example.com/auth/device' },
};

/** Inputs each channel must refuse (besides the generic ones every channel refuses). */
const MALFORMED: Record<string, unknown[]> = {
  [CONSOLE_CHANNELS.connectionsProbe]: [{ url: 'x'.repeat(3000) }, { url: 5 }],
  [CONSOLE_CHANNELS.connectionsAdd]: [
    { url: 'https://a.example.com', acceptSha256: 'AA' },
    { url: 'https://a.example.com', acceptSha256: 'AA:'.repeat(31) + 'AA', pinned: true },
  ],
  [CONSOLE_CHANNELS.connectionsEdit]: [
    { id: '../../etc', name: 'x' },
    { id: 'embedded', name: 'x'.repeat(101) },
  ],
  [CONSOLE_CHANNELS.connectionsRemove]: [{ id: 'C-0123456789AB' }],
  [CONSOLE_CHANNELS.connectionsRepin]: [{ id: 'c-0123456789ab' }],
  [CONSOLE_CHANNELS.authStatus]: [{ id: '' }],
  [CONSOLE_CHANNELS.authSignIn]: [
    { connectionId: 'embedded', username: '', password: 'x' },
    { connectionId: 'embedded', username: 'admin', password: 'x', totp: '12ab56' },
    { connectionId: 'embedded', username: 'admin', password: 'x', browser_id: 'spa:x:y' },
  ],
  [CONSOLE_CHANNELS.authDeviceStart]: [{ connectionId: 'https://a.example.com' }],
  [CONSOLE_CHANNELS.authDeviceWait]: [{ flowId: 'not-a-flow' }],
  [CONSOLE_CHANNELS.authDeviceCancel]: [{ flowId: 1 }],
  [CONSOLE_CHANNELS.authSignOut]: [{ id: null }],
  [CONSOLE_CHANNELS.coreSetCollectors]: [
    { enabled: 'yes', bindAddress: '127.0.0.1' },
    { enabled: true, bindAddress: 'eth0; rm -rf /' },
  ],
  [CONSOLE_CHANNELS.terminalOpenLocal]: [
    { cols: 0, rows: 24 },
    { cols: 80, rows: 24.5 },
    { cols: 80 },
  ],
  [CONSOLE_CHANNELS.terminalOpenAppliance]: [
    { connectionId: 'embedded', path: 'wss://attacker.test/' },
    { connectionId: 'embedded', path: '/api/a b' },
  ],
  [CONSOLE_CHANNELS.shellOpenExternal]: [{ url: '' }, { url: ['https://a'] }],
};

describe('every IPC channel', () => {
  const ipc = fakeIpcMain();
  const logged: string[] = [];
  registerAll({ ipc, log: (message) => logged.push(message) });

  it('has a handler', () => {
    expect([...ipc.handlers.keys()].sort()).toEqual(Object.values(CONSOLE_CHANNELS).sort());
  });

  it.each(Object.values(CONSOLE_CHANNELS))('%s refuses a foreign sender', async (channel) => {
    const input = VALID_INPUT[channel];
    const args = input === undefined ? [] : [input];
    for (const event of [
      eventFrom('https://appliance.example.com/auth/device'),
      eventFrom('app://console/', { url: 'app://console/' }),
      eventFrom('file:///tmp/x.html'),
      { senderFrame: null },
    ]) {
      await expect(ipc.get(channel)(event, ...args)).resolves.toEqual({
        ok: false,
        error: { message: REFUSED_SENDER_MESSAGE },
      });
    }
  });

  it.each(Object.values(CONSOLE_CHANNELS))('%s rejects malformed input', async (channel) => {
    const generic =
      VALID_INPUT[channel] === undefined
        ? [['unexpected']]
        : [
            [],
            [null],
            ['text'],
            [[VALID_INPUT[channel]]],
            [VALID_INPUT[channel], 'extra'],
            [{ ...(VALID_INPUT[channel] as object), extra: 1 }],
          ];
    const specific = (MALFORMED[channel] ?? []).map((input) => [input]);
    for (const args of [...generic, ...specific]) {
      const result = (await ipc.get(channel)(consoleEvent, ...args)) as {
        ok: boolean;
        error?: { message: string };
      };
      expect(result.ok, `${channel} ${JSON.stringify(args)}`).toBe(false);
      expect(result.error?.message).not.toMatch(/was reached|internal error/);
    }
  });
});

describe('connections over IPC', () => {
  let desktop: DesktopStack;
  let certificate: TestCertificate;
  let server: TestTlsServer;
  const ipc = fakeIpcMain();

  beforeAll(async () => {
    desktop = createDesktopStack();
    certificate = await makeSelfSigned();
    server = await startTlsServer(certificate);
    const context = { ipc, log: () => undefined };
    registerConnectionsIpc(context, { registry: desktop.registry, sessions: desktop.sessions });
    registerAuthIpc(context, desktop.sessions);
  });

  afterAll(async () => {
    await desktop.close();
    await server.close();
  });

  it('probes, adds after acceptance, lists, renames and removes', async () => {
    const probe = await ipc.get(CONSOLE_CHANNELS.connectionsProbe)(consoleEvent, {
      url: server.origin,
    });
    expect(probe).toMatchObject({
      ok: true,
      value: { status: 'new', certificate: { sha256: certificate.sha256, trustedByOs: false } },
    });
    const added = (await ipc.get(CONSOLE_CHANNELS.connectionsAdd)(consoleEvent, {
      url: server.origin,
      name: 'Lab',
      acceptSha256: certificate.sha256.toLowerCase(),
    })) as { ok: true; value: { id: string; baseUrl: string } };
    expect(added).toMatchObject({
      ok: true,
      value: {
        kind: 'remote',
        name: 'Lab',
        origin: server.origin,
        pinnedSha256: certificate.sha256,
        signedIn: false,
        signInMethod: null,
      },
    });
    const id = added.value.id;
    expect(added.value.baseUrl).toBe(`app://console/appliances/${id}`);
    await expect(
      ipc.get(CONSOLE_CHANNELS.connectionsAdd)(consoleEvent, {
        url: server.origin,
        acceptSha256: certificate.sha256,
      }),
    ).resolves.toEqual({
      ok: false,
      error: { message: `${server.origin} is already saved as "Lab"` },
    });
    await expect(
      ipc.get(CONSOLE_CHANNELS.connectionsEdit)(consoleEvent, { id, name: 'Lab 2' }),
    ).resolves.toMatchObject({
      ok: true,
      value: { name: 'Lab 2' },
    });
    await expect(ipc.get(CONSOLE_CHANNELS.authStatus)(consoleEvent, { id })).resolves.toEqual({
      ok: true,
      value: { connectionId: id, signedIn: false, method: null },
    });
    await expect(
      ipc.get(CONSOLE_CHANNELS.connectionsRemove)(consoleEvent, { id }),
    ).resolves.toEqual({
      ok: true,
      value: null,
    });
    await expect(ipc.get(CONSOLE_CHANNELS.connectionsList)(consoleEvent)).resolves.toEqual({
      ok: true,
      value: [],
    });
  });

  it('answers an unreachable appliance with a message, not an internal error', async () => {
    const result = await ipc.get(CONSOLE_CHANNELS.connectionsProbe)(consoleEvent, {
      url: 'https://127.0.0.1:1',
    });
    expect(result).toEqual({
      ok: false,
      error: { message: 'https://127.0.0.1:1 could not be reached over TLS: connection refused' },
    });
  });
});
