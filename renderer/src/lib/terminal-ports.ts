/**
 * Where terminal MessagePorts arrive in the desktop window. The preload cannot pass a port
 * through contextBridge, so it posts each one to the page's own window, tagged with the session
 * id that `terminal.openLocal` / `terminal.openAppliance` answered (TerminalPortMessage). Main
 * usually delivers the port before the call's answer arrives, so the inbox listens from start and
 * matches the two by session id, whichever comes first.
 *
 * Only messages from this window itself (the preload's postMessage), to this origin, of the
 * contract's type, carrying exactly one port are taken: a frame or another page cannot slip a
 * port in. Unclaimed ports are kept for a short while, at most a few, then closed.
 */
import { CONSOLE_EVENTS, type TerminalPortMessage } from '../../../electron/contract/bridge.js';

const KEEP_UNCLAIMED_MS = 30_000;
const MAX_UNCLAIMED = 16;

interface Waiter {
  resolve(port: MessagePort): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class TerminalPortInbox {
  private readonly unclaimed = new Map<
    string,
    { port: MessagePort; timer: ReturnType<typeof setTimeout> }
  >();
  private readonly waiters = new Map<string, Waiter>();
  private readonly listener = (event: MessageEvent) => this.receive(event);

  constructor(private readonly target: Window = window) {
    target.addEventListener('message', this.listener);
  }

  dispose(): void {
    this.target.removeEventListener('message', this.listener);
    for (const { port, timer } of this.unclaimed.values()) {
      clearTimeout(timer);
      port.close();
    }
    this.unclaimed.clear();
  }

  /** The port of a session main opened; rejects when it does not come within `timeoutMs`. */
  take(sessionId: string, timeoutMs = 10_000): Promise<MessagePort> {
    const waiting = this.unclaimed.get(sessionId);
    if (waiting) {
      clearTimeout(waiting.timer);
      this.unclaimed.delete(sessionId);
      return Promise.resolve(waiting.port);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(sessionId);
        reject(new Error('the terminal channel did not arrive from the desktop app'));
      }, timeoutMs);
      this.waiters.set(sessionId, { resolve, reject, timer });
    });
  }

  private receive(event: MessageEvent): void {
    if (event.source !== this.target || event.origin !== this.target.location.origin) return;
    const data = event.data as Partial<TerminalPortMessage> | null;
    if (!data || typeof data !== 'object' || data.type !== CONSOLE_EVENTS.terminalPort) return;
    const port = event.ports[0];
    if (typeof data.sessionId !== 'string' || event.ports.length !== 1 || !port) return;
    const waiter = this.waiters.get(data.sessionId);
    if (waiter) {
      clearTimeout(waiter.timer);
      this.waiters.delete(data.sessionId);
      waiter.resolve(port);
      return;
    }
    if (this.unclaimed.size >= MAX_UNCLAIMED || this.unclaimed.has(data.sessionId)) {
      port.close();
      return;
    }
    const sessionId = data.sessionId;
    const timer = setTimeout(() => {
      this.unclaimed.delete(sessionId);
      port.close();
    }, KEEP_UNCLAIMED_MS);
    this.unclaimed.set(sessionId, { port, timer });
  }
}

let inbox: TerminalPortInbox | null = null;

/** The window's inbox, listening from the first call (the desktop start calls it early). */
export function terminalPortInbox(): TerminalPortInbox {
  inbox ??= new TerminalPortInbox();
  return inbox;
}
