import { describe, expect, it } from 'vitest';

import {
  CONSOLE_CHANNELS,
  CONSOLE_EVENTS,
  isConsoleChannel,
  type ConsoleBootstrap,
} from '../../electron/contract/bridge.js';
import { registerAppIpc } from './app.ipc.js';
import { registerShellIpc } from './shell.ipc.js';
import { consoleEvent, eventFrom, fakeIpcMain } from '../../test/harness/fake-ipc.js';
import { isConsoleSender, REFUSED_SENDER_MESSAGE, wrapResult } from './wrap-result.js';

const bootstrap: ConsoleBootstrap = {
  version: '1.2.3',
  consoleOrigin: 'app://console',
  embeddedConnectionId: 'embedded',
  platform: 'linux',
  tokenStorage: 'memory-only',
  storageWarning: 'No keyring is running',
};

describe('console:app:get-bootstrap', () => {
  it('answers the bootstrap to the console window', async () => {
    const ipc = fakeIpcMain();
    registerAppIpc({ ipc, log: () => undefined }, { bootstrap: () => bootstrap });
    await expect(ipc.get(CONSOLE_CHANNELS.appGetBootstrap)(consoleEvent)).resolves.toEqual({
      ok: true,
      value: bootstrap,
    });
  });

  it('rejects unexpected arguments', async () => {
    const ipc = fakeIpcMain();
    registerAppIpc({ ipc, log: () => undefined }, { bootstrap: () => bootstrap });
    await expect(ipc.get(CONSOLE_CHANNELS.appGetBootstrap)(consoleEvent, 'extra')).resolves.toEqual(
      {
        ok: false,
        error: { message: 'expected no arguments, received 1' },
      },
    );
  });
});

describe('isConsoleSender', () => {
  it('accepts the console top frame only', () => {
    expect(isConsoleSender(eventFrom('app://console/'))).toBe(true);
    expect(isConsoleSender(eventFrom('app://console/x', { url: 'app://console/' }))).toBe(false);
    for (const url of [
      'https://appliance.example.com/auth/device',
      'app://console.attacker.test/',
      'file:///etc/passwd',
      'data:text/html,x',
      'about:blank',
    ]) {
      expect(isConsoleSender(eventFrom(url))).toBe(false);
    }
    expect(isConsoleSender({ senderFrame: null })).toBe(false);
    expect(isConsoleSender({})).toBe(false);
    expect(isConsoleSender(null)).toBe(false);
  });
});

describe('wrapResult', () => {
  it('refuses a foreign sender before the handler runs', async () => {
    let ran = false;
    const logged: string[] = [];
    const handler = wrapResult(
      'console:test:run',
      () => {
        ran = true;
        return 'secret';
      },
      (message) => logged.push(message),
    );
    await expect(handler(eventFrom('https://attacker.test/'))).resolves.toEqual({
      ok: false,
      error: { message: REFUSED_SENDER_MESSAGE },
    });
    await expect(handler(eventFrom('app://console/', {}))).resolves.toMatchObject({ ok: false });
    expect(ran).toBe(false);
    expect(logged).toHaveLength(2);
    await expect(handler(consoleEvent)).resolves.toEqual({ ok: true, value: 'secret' });
  });

  it('hides unexpected errors from the renderer and logs them', async () => {
    const logged: unknown[] = [];
    const handler = wrapResult(
      'console:test:boom',
      () => {
        throw new Error('SQLITE_CORRUPT at /home/user/secret/path');
      },
      (_message, error) => logged.push(error),
    );
    const result = await handler(consoleEvent);
    expect(result).toEqual({
      ok: false,
      error: { message: 'internal error in the desktop app (details are in its log)' },
    });
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(logged).toHaveLength(1);
  });
});

describe('console:shell:open-external', () => {
  function setup() {
    const ipc = fakeIpcMain();
    const opened: string[] = [];
    registerShellIpc(
      { ipc, log: () => undefined },
      {
        allowedOrigins: () => ['https://appliance.example.com'],
        openExternal: (url) => {
          opened.push(url);
          return Promise.resolve();
        },
      },
    );
    return { handler: ipc.get(CONSOLE_CHANNELS.shellOpenExternal), opened };
  }

  it('opens pages of saved connections only', async () => {
    const { handler, opened } = setup();
    const url = 'https://appliance.example.com/auth/device?user_code=BCDFGHJK';
    await expect(handler(consoleEvent, { url })).resolves.toEqual({ ok: true, value: null });
    for (const bad of [
      'https://appliance.example.com.attacker.test/auth/device',
      'http://appliance.example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
    ]) {
      await expect(handler(consoleEvent, { url: bad })).resolves.toEqual({
        ok: false,
        error: { message: 'only https pages of a saved appliance open in the browser' },
      });
    }
    await expect(handler(eventFrom('https://attacker.test/'), { url })).resolves.toMatchObject({
      ok: false,
    });
    expect(opened).toEqual([url]);
  });
});

describe('channel names', () => {
  it('follow console:<namespace>:<action> and are unique', () => {
    const all = [...Object.values(CONSOLE_CHANNELS), ...Object.values(CONSOLE_EVENTS)];
    for (const channel of all) expect(isConsoleChannel(channel)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
    expect(isConsoleChannel('console:app')).toBe(false);
    expect(isConsoleChannel('other:app:get')).toBe(false);
  });
});
