/**
 * Sandboxed preload: exposes exactly one object, `window.consoleBridge`, shaped by the contract.
 * The renderer never sees ipcRenderer itself: every method invokes one fixed channel of the
 * contract, and every listener subscribes to one fixed event, passing on its payload only (never
 * the IpcRendererEvent, whose `sender` would reach ipcRenderer).
 *
 * Bundled into one CommonJS file (electron/dist/preload.cjs): a sandboxed preload cannot load
 * modules other than `electron`.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';

import {
  CONSOLE_CHANNELS,
  consoleBridgeOver,
  CONSOLE_EVENTS,
  type ConsoleChannel,
  type IpcResult,
  type TerminalPortMessage,
  type Unsubscribe,
} from '../contract/bridge.js';

/** The page's window as this isolated world sees it (the preload is compiled without the DOM library). */
declare const window: {
  location: { origin: string };
  postMessage(message: unknown, targetOrigin: string, transfer: unknown[]): void;
};

/** Only the contract's channels are ever invoked: a bridge method built on a wrong channel fails closed. */
const allowedChannels: ReadonlySet<string> = new Set(Object.values(CONSOLE_CHANNELS));
const allowedEvents: ReadonlySet<string> = new Set(Object.values(CONSOLE_EVENTS));

function invoke<T>(channel: ConsoleChannel, input?: unknown): Promise<IpcResult<T>> {
  if (!allowedChannels.has(channel)) {
    return Promise.resolve({ ok: false, error: { message: `unknown channel ${channel}` } });
  }
  const call =
    input === undefined ? ipcRenderer.invoke(channel) : ipcRenderer.invoke(channel, input);
  return call as Promise<IpcResult<T>>;
}

function subscribe<T>(channel: ConsoleChannel, listener: (payload: T) => void): Unsubscribe {
  if (!allowedEvents.has(channel)) return () => undefined;
  const forward = (_event: IpcRendererEvent, payload: T) => listener(payload);
  ipcRenderer.on(channel, forward);
  return () => {
    ipcRenderer.removeListener(channel, forward);
  };
}

// A MessagePort cannot cross contextBridge: the page receives it as a window message, posted to
// its own origin only, carrying the session id that terminal.open* answered.
ipcRenderer.on(CONSOLE_EVENTS.terminalPort, (event, payload: { sessionId?: unknown }) => {
  if (typeof payload?.sessionId !== 'string' || event.ports.length !== 1) return;
  const message: TerminalPortMessage = {
    type: CONSOLE_EVENTS.terminalPort,
    sessionId: payload.sessionId,
  };
  window.postMessage(message, window.location.origin, [...(event.ports as unknown[])]);
});

const consoleBridge = consoleBridgeOver(invoke, subscribe);

contextBridge.exposeInMainWorld('consoleBridge', consoleBridge);
