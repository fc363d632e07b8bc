/**
 * Sandboxed preload: exposes exactly one object, `window.consoleBridge`, shaped by the contract.
 * The renderer never sees ipcRenderer itself.
 */
import { contextBridge, ipcRenderer } from 'electron';

import {
  CONSOLE_CHANNELS,
  type ConsoleBootstrap,
  type ConsoleBridge,
  type ConsoleChannel,
  type IpcResult,
} from '../contract/bridge.js';

/** Only the contract's channels are ever invoked: a bridge method built on a wrong channel fails closed. */
const allowedChannels: ReadonlySet<string> = new Set(Object.values(CONSOLE_CHANNELS));

function invoke<T>(channel: ConsoleChannel): Promise<IpcResult<T>> {
  if (!allowedChannels.has(channel)) {
    return Promise.resolve({ ok: false, error: { message: `unknown channel ${channel}` } });
  }
  return ipcRenderer.invoke(channel) as Promise<IpcResult<T>>;
}

const consoleBridge = {
  getBootstrap: () => invoke<ConsoleBootstrap>(CONSOLE_CHANNELS.appGetBootstrap),
} satisfies ConsoleBridge;

contextBridge.exposeInMainWorld('consoleBridge', consoleBridge);
