import { describe, expect, it } from 'vitest';

import { CONSOLE_CHANNELS, isConsoleChannel } from '../../electron/contract/bridge.js';
import { registerAppIpc } from './app.ipc.js';
import { type IpcInvokeHandler, wrapResult } from './wrap-result.js';

function fakeIpcMain() {
  const handlers = new Map<string, IpcInvokeHandler>();
  return {
    handlers,
    handle(channel: string, handler: IpcInvokeHandler) {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, handler);
    },
  };
}

function register(coreBaseUrl: () => Promise<string>) {
  const ipc = fakeIpcMain();
  const logged: string[] = [];
  registerAppIpc(ipc, { coreBaseUrl, version: '1.2.3', log: (message) => logged.push(message) });
  const handler = ipc.handlers.get(CONSOLE_CHANNELS.appGetBootstrap);
  if (!handler) throw new Error('bootstrap handler not registered');
  return { handler, logged };
}

describe('console:app:get-bootstrap', () => {
  it('answers the core URL and the app version', async () => {
    const { handler } = register(() => Promise.resolve('https://127.0.0.1:40123'));
    await expect(handler({})).resolves.toEqual({
      ok: true,
      value: { coreBaseUrl: 'https://127.0.0.1:40123', version: '1.2.3' },
    });
  });

  it('answers the reason when the core is unavailable', async () => {
    const { handler, logged } = register(() =>
      Promise.reject(new Error('the appliance core failed 7 times within 600 s')),
    );
    await expect(handler({})).resolves.toEqual({
      ok: false,
      error: { message: 'the appliance core failed 7 times within 600 s' },
    });
    expect(logged).toEqual(['embedded appliance core unavailable']);
  });

  it('rejects unexpected arguments', async () => {
    const { handler } = register(() => Promise.resolve('https://127.0.0.1:1'));
    await expect(handler({}, 'extra')).resolves.toEqual({
      ok: false,
      error: { message: 'expected no arguments, received 1' },
    });
  });
});

describe('wrapResult', () => {
  it('hides unexpected errors from the renderer and logs them', async () => {
    const logged: unknown[] = [];
    const handler = wrapResult(
      'console:test:boom',
      () => {
        throw new Error('SQLITE_CORRUPT at /home/user/secret/path');
      },
      (_message, error) => logged.push(error),
    );
    const result = await handler({});
    expect(result).toEqual({
      ok: false,
      error: { message: 'internal error in the desktop app (details are in its log)' },
    });
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(logged).toHaveLength(1);
  });
});

describe('channel names', () => {
  it('follow console:<namespace>:<action>', () => {
    for (const channel of Object.values(CONSOLE_CHANNELS)) {
      expect(isConsoleChannel(channel)).toBe(true);
    }
    expect(isConsoleChannel('console:app')).toBe(false);
    expect(isConsoleChannel('other:app:get')).toBe(false);
  });
});
