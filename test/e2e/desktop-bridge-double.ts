/**
 * The test double of the desktop app's preload (electron/preload/index.ts), for the console in
 * Chromium: `window.consoleBridge` built by the contract's own `consoleBridgeOver` (the mapping
 * the preload ships), each method invoking the contract's one channel, only those channels, and each listener bound to one
 * event. Where the preload calls ipcRenderer, the double calls a function the test exposes on the
 * page (`__consoleBridgeInvoke`), behind which the test runs the real main-process IPC handlers
 * (desktop-host.ts). Terminal ports reach the page as the preload delivers them: a MessagePort
 * posted to the page's own window, tagged with the session id; the port's other end is relayed to
 * the test's Node side (there is no Electron to carry it).
 *
 * Bundled by esbuild into one script for page.addInitScript (installBridgeDouble(window)).
 */
import {
  CONSOLE_CHANNELS,
  consoleBridgeOver,
  CONSOLE_EVENTS,
  type ConsoleBridge,
  type ConsoleChannel,
  type IpcResult,
  type TerminalPortMessage,
  type Unsubscribe,
} from '../../electron/contract/bridge.js';

/** A page MessagePort, as far as the double uses it. */
export interface PagePort {
  postMessage(message: unknown): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

/** What the page's window offers the double (bindings exposed by the test, DOM parts used). */
export interface DoubleWindow {
  MessageChannel: new () => { port1: PagePort; port2: PagePort };
  __consoleBridgeInvoke(channel: string, input: unknown): Promise<IpcResult<unknown>>;
  __consoleBridgeRelay(channelId: string, data: unknown): Promise<void>;
  __bridgeDouble?: BridgeDoubleControl;
  consoleBridge?: ConsoleBridge;
  location: { origin: string };
  postMessage(message: unknown, targetOrigin: string, transfer: PagePort[]): void;
}

/** What the test's Node side drives through page.evaluate. */
export interface BridgeDoubleControl {
  emit(channel: string, payload: unknown): void;
  /** Creates a session's channel: one end relayed to Node, the other posted to the page. */
  deliverPort(channelId: string, sessionId: string): void;
  postToPort(channelId: string, message: unknown): void;
  closePort(channelId: string): void;
  /** Every channel the page invoked, in order. */
  calls: string[];
}

export function installBridgeDouble(win: DoubleWindow): void {
  const allowedChannels: ReadonlySet<string> = new Set(Object.values(CONSOLE_CHANNELS));
  const allowedEvents: ReadonlySet<string> = new Set(Object.values(CONSOLE_EVENTS));
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const ports = new Map<string, PagePort>();
  const calls: string[] = [];

  function invoke<T>(channel: ConsoleChannel, input?: unknown): Promise<IpcResult<T>> {
    if (!allowedChannels.has(channel)) {
      return Promise.resolve({ ok: false, error: { message: `unknown channel ${channel}` } });
    }
    calls.push(channel);
    return win.__consoleBridgeInvoke(channel, input ?? null) as Promise<IpcResult<T>>;
  }

  function subscribe<T>(channel: ConsoleChannel, listener: (payload: T) => void): Unsubscribe {
    if (!allowedEvents.has(channel)) return () => undefined;
    const forward = (payload: unknown) => listener(payload as T);
    const set = listeners.get(channel) ?? new Set();
    set.add(forward);
    listeners.set(channel, set);
    return () => {
      set.delete(forward);
    };
  }

  const consoleBridge = consoleBridgeOver(invoke, subscribe);

  win.__bridgeDouble = {
    calls,
    emit(channel, payload) {
      for (const listener of listeners.get(channel) ?? []) listener(payload);
    },
    deliverPort(channelId, sessionId) {
      const { port1, port2 } = new win.MessageChannel();
      port1.onmessage = (event) => void win.__consoleBridgeRelay(channelId, event.data);
      ports.set(channelId, port1);
      const message: TerminalPortMessage = { type: CONSOLE_EVENTS.terminalPort, sessionId };
      win.postMessage(message, win.location.origin, [port2]);
    },
    postToPort(channelId, message) {
      ports.get(channelId)?.postMessage(message);
    },
    closePort(channelId) {
      ports.get(channelId)?.close();
      ports.delete(channelId);
    },
  };
  // contextBridge.exposeInMainWorld makes the object read-only for the page; so does the double.
  Object.defineProperty(win, 'consoleBridge', {
    value: Object.freeze(consoleBridge),
    writable: false,
    configurable: false,
  });
}
