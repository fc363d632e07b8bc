/**
 * A terminal session's MessagePort (desktop app) seen as the TerminalSocket the terminal view
 * already drives, so components/terminal knows nothing about where its bytes travel.
 *
 * Two session kinds of the typed contract (electron/contract/bridge.ts):
 * - `socket`: the appliance's terminal WebSocket, opened by the main process with the pinned
 *   certificate; frames pass through verbatim (`send` / `message`, `open` first, `closed` last);
 * - `pty`: the local shell (node-pty in main). The view's JSON frames (`{"type":"input"}`,
 *   `{"type":"resize"}`) become PtyClientMessage objects; `output` is shown, `exit` closes.
 *
 * The socket can be handed out before its port arrives (readyState 0, CONNECTING): the port is
 * attached later, or the opening fails with a message for the terminal's status line.
 */
import {
  TERMINAL_LIMITS,
  type PtyClientMessage,
  type PtyServerMessage,
  type SocketClientMessage,
  type SocketServerMessage,
} from '../../../electron/contract/bridge.js';
import type { TerminalSocket } from './transport.js';

export type PortSessionKind = 'socket' | 'pty';

/** The part of a MessagePort this module uses (a browser MessagePort, or a test's). */
export interface PortLike {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent) => void) | null;
  start(): void;
  close(): void;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

export interface PortSocket extends TerminalSocket {
  /** Binds the session's port once main delivered it. */
  attach(port: PortLike, kind: PortSessionKind): void;
  /** The session could not be opened: report it as a failed, closed socket. */
  fail(message: string): void;
}

export function createPortSocket(): PortSocket {
  let port: PortLike | null = null;
  let kind: PortSessionKind = 'socket';
  let state = CONNECTING;

  const closeEvent = (code: number, reason: string) =>
    ({ type: 'close', code, reason, wasClean: code === 1000 }) as unknown as CloseEvent;

  const finish = (code: number, reason: string) => {
    if (state === CLOSED) return;
    state = CLOSED;
    try {
      port?.close();
    } catch {
      // already closed
    }
    socket.onclose?.(closeEvent(code, reason));
  };

  const opened = () => {
    if (state !== CONNECTING) return;
    state = OPEN;
    socket.onopen?.({ type: 'open' } as Event);
  };

  const deliver = (data: string | ArrayBuffer) =>
    socket.onmessage?.({ type: 'message', data } as MessageEvent);

  const onSocketMessage = (message: SocketServerMessage) => {
    if (message.type === 'open') opened();
    else if (message.type === 'message') deliver(message.data);
    else if (message.type === 'closed') finish(message.code, message.reason);
  };

  const onPtyMessage = (message: PtyServerMessage) => {
    if (message.type === 'output') deliver(message.data);
    else if (message.type === 'exit')
      finish(
        1000,
        message.exitCode === null
          ? `the shell ended (signal ${message.signal ?? '?'})`
          : `the shell exited with code ${message.exitCode}`,
      );
  };

  const socket: PortSocket = {
    binaryType: 'arraybuffer',
    get readyState() {
      return state;
    },
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
    attach(next, nextKind) {
      if (state === CLOSED) {
        // The view went away before main answered: end the session main opened.
        next.postMessage(
          nextKind === 'pty'
            ? ({ type: 'close' } satisfies PtyClientMessage)
            : ({ type: 'close', code: 1000 } satisfies SocketClientMessage),
        );
        next.close();
        return;
      }
      port = next;
      kind = nextKind;
      next.onmessage = (event: MessageEvent) => {
        const data: unknown = event.data;
        if (
          !data ||
          typeof data !== 'object' ||
          typeof (data as { type?: unknown }).type !== 'string'
        )
          return;
        if (kind === 'pty') onPtyMessage(data as PtyServerMessage);
        else onSocketMessage(data as SocketServerMessage);
      };
      next.start();
      // A shell is there as soon as main answered; a socket says `open` itself.
      if (kind === 'pty') opened();
    },
    fail(message) {
      if (state === CLOSED) return;
      socket.onerror?.({ type: 'error', message } as unknown as Event);
      finish(1011, message);
    },
    send(data) {
      if (state !== OPEN || !port) return;
      if (kind === 'socket') {
        if (typeof data === 'string') port.postMessage({ type: 'send', data });
        else if (data instanceof ArrayBuffer) port.postMessage({ type: 'send', data });
        return;
      }
      const message = typeof data === 'string' ? ptyMessageOf(data) : null;
      if (message) port.postMessage(message);
    },
    close(code = 1000, reason = '') {
      if (state === CLOSED) return;
      if (port) {
        port.postMessage(
          kind === 'pty'
            ? ({ type: 'close' } satisfies PtyClientMessage)
            : ({ type: 'close', code, reason } satisfies SocketClientMessage),
        );
      }
      finish(code, reason);
    },
  };
  return socket;
}

/** The view's JSON frame as a pty message, or null for anything the contract does not carry. */
export function ptyMessageOf(frame: string): PtyClientMessage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(frame);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const message = parsed as Record<string, unknown>;
  if (message.type === 'input' && typeof message.data === 'string') {
    if (new TextEncoder().encode(message.data).byteLength > TERMINAL_LIMITS.maxFrameBytes)
      return null;
    return { type: 'input', data: message.data };
  }
  if (message.type === 'resize') {
    const { cols, rows } = message;
    if (
      typeof cols === 'number' &&
      typeof rows === 'number' &&
      Number.isInteger(cols) &&
      Number.isInteger(rows) &&
      cols >= TERMINAL_LIMITS.minCols &&
      cols <= TERMINAL_LIMITS.maxCols &&
      rows >= TERMINAL_LIMITS.minRows &&
      rows <= TERMINAL_LIMITS.maxRows
    )
      return { type: 'resize', cols, rows };
  }
  return null;
}
