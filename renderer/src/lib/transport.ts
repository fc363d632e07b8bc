/**
 * How the console reaches an appliance. One module, so the desktop app only plugs in.
 *
 * In a browser (the console served by an appliance) the transport is the page's own origin and
 * the renderer adds the bearer token itself. In the desktop app (issue 13) the renderer runs on a
 * privileged custom scheme and calls a per-connection base under that origin; the main process
 * forwards each request to the embedded or remote appliance with the bearer from safeStorage, so
 * there the transport `holdsToken` and the renderer never sees a token. Call setTransport() once,
 * before the first request.
 */
export interface Transport {
  /** Prefix for API paths: '' for the page's own origin, or the desktop's per-connection base. */
  readonly base: string;
  /** True when the transport authenticates requests itself (desktop): the renderer adds no bearer. */
  readonly holdsToken: boolean;
  fetch(url: string, init: RequestInit): Promise<Response>;
  /**
   * Opens the terminal socket for a ticket path (`/api/terminal/socket?ticket=…`). The browser
   * opens a WebSocket to its own origin; the desktop bridges one from main over a MessagePort.
   */
  openSocket(path: string): TerminalSocket;
}

/** The part of a WebSocket the terminal uses (a MessagePort bridge can provide the same). */
export interface TerminalSocket {
  binaryType?: BinaryType;
  readonly readyState: number;
  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
}

export function browserTransport(origin: string = globalThis.location?.origin ?? ''): Transport {
  return {
    base: '',
    holdsToken: false,
    fetch: (url, init) => fetch(url, { ...init, credentials: 'same-origin' }),
    openSocket(path) {
      const wsOrigin = origin.replace(/^http/, 'ws');
      return new WebSocket(`${wsOrigin}${path}`);
    },
  };
}

let current: Transport | null = null;

export function setTransport(transport: Transport): void {
  current = transport;
}

export function getTransport(): Transport {
  current ??= browserTransport();
  return current;
}
