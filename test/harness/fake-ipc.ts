/**
 * ipcMain as the handlers see it: a registry of channel handlers, and IPC events as Electron
 * builds them for a frame (`senderFrame.url`, `senderFrame.parent` null for the top frame).
 */
import type { IpcInvokeHandler } from '../../main/ipc/wrap-result.js';

export function eventFrom(url: string, parent: object | null = null) {
  return { senderFrame: { url, parent }, sender: {} };
}

export const consoleEvent = eventFrom('app://console/devices');

export function fakeIpcMain() {
  const handlers = new Map<string, IpcInvokeHandler>();
  return {
    handlers,
    handle(channel: string, handler: IpcInvokeHandler) {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, handler);
    },
    get(channel: string): IpcInvokeHandler {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`no handler for ${channel}`);
      return handler;
    },
  };
}
