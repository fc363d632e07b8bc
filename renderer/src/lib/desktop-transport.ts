/**
 * The desktop window's transport (lib/transport.ts): every API call of the active connection goes
 * to `/appliances/<connectionId>/...` under the console's own origin (`app://console`), where the
 * main process's proxy (main/proxy/appliance-proxy.ts) forwards it to the embedded or remote
 * appliance with the bearer only main holds and the connection's pinned certificate, streaming
 * the answer back (event streams frame by frame). The base is a path, so the same code runs under
 * `app://console` and under a test's http://127.0.0.1 origin that plays main's proxy.
 *
 * The renderer holds no token here (`holdsToken`): the request carries no Authorization header and
 * no cookie. Answers the proxy itself made carry PROXY_ERROR_HEADER; they are reported to
 * `onProxyError` (a changed certificate opens the re-pin screen) and otherwise handled like any
 * `{error}` answer by the API client.
 *
 * Terminals: the appliance's WebSocket is opened by main (`terminal.openAppliance`) and reaches
 * the page as a MessagePort (lib/terminal-ports.ts, lib/port-socket.ts).
 */
import {
  APPLIANCE_PATH_PREFIX,
  CONNECTION_ID_PATTERN,
  PROXY_ERROR_HEADER,
  type ConsoleBridge,
  type OpenLocalTerminalInput,
  type ProxyErrorBody,
  type ProxyErrorCode,
} from '../../../electron/contract/bridge.js';
import { createPortSocket, type PortSocket } from './port-socket.js';
import { terminalPortInbox, type TerminalPortInbox } from './terminal-ports.js';
import type { Transport } from './transport.js';

export interface ProxyProblem {
  connectionId: string;
  code: ProxyErrorCode;
  message: string;
  pinnedSha256?: string;
  presentedSha256?: string;
}

export interface DesktopTransportOptions {
  bridge: ConsoleBridge;
  connectionId: string;
  onProxyError?(problem: ProxyProblem): void;
  ports?: TerminalPortInbox;
}

export interface DesktopTransport extends Transport {
  readonly connectionId: string;
  /** A shell on this computer (node-pty in main), beside the appliance's terminal. */
  openLocalTerminal(size: OpenLocalTerminalInput): PortSocket;
}

export function isDesktopTransport(transport: Transport): transport is DesktopTransport {
  return 'openLocalTerminal' in transport && 'connectionId' in transport;
}

/** The path every API call of a connection is sent under. */
export function connectionBasePath(connectionId: string): string {
  if (!CONNECTION_ID_PATTERN.test(connectionId)) throw new Error('not a connection id');
  return `${APPLIANCE_PATH_PREFIX}${connectionId}`;
}

export function desktopTransport(options: DesktopTransportOptions): DesktopTransport {
  const { bridge, connectionId } = options;
  const base = connectionBasePath(connectionId);
  const ports = () => options.ports ?? terminalPortInbox();

  async function reportProxyError(response: Response): Promise<void> {
    const code = response.headers.get(PROXY_ERROR_HEADER);
    if (!code || !options.onProxyError) return;
    let body: Partial<ProxyErrorBody> = {};
    try {
      body = (await response.clone().json()) as ProxyErrorBody;
    } catch {
      // the header alone says what happened
    }
    options.onProxyError({
      connectionId,
      code: code as ProxyErrorCode,
      message: typeof body.error === 'string' ? body.error : code,
      ...(body.proxy?.pinnedSha256 ? { pinnedSha256: body.proxy.pinnedSha256 } : {}),
      ...(body.proxy?.presentedSha256 ? { presentedSha256: body.proxy.presentedSha256 } : {}),
    });
  }

  function bridged(
    open: () => Promise<
      { ok: true; value: { sessionId: string } } | { ok: false; error: { message: string } }
    >,
    kind: 'socket' | 'pty',
  ): PortSocket {
    const socket = createPortSocket();
    void open()
      .then(async (result) => {
        if (!result.ok) return socket.fail(result.error.message);
        const port = await ports().take(result.value.sessionId);
        socket.attach(port, kind);
      })
      .catch((error: unknown) =>
        socket.fail(error instanceof Error ? error.message : String(error)),
      );
    return socket;
  }

  return {
    base,
    holdsToken: true,
    connectionId,
    async fetch(url, init) {
      // Same origin, no credentials: main adds the bearer; cookies are never involved.
      const response = await fetch(url, { ...init, credentials: 'omit' });
      if (response.headers.has(PROXY_ERROR_HEADER)) await reportProxyError(response);
      return response;
    },
    openSocket(path) {
      return bridged(() => bridge.terminal.openAppliance({ connectionId, path }), 'socket');
    },
    openLocalTerminal(size) {
      return bridged(() => bridge.terminal.openLocal(size), 'pty');
    },
  };
}
