/**
 * Starts the console in the desktop window (main.tsx calls it when the preload's bridge is there,
 * before the first render): the transport of the active connection, its sign-in state, and the
 * main process's events. In a browser none of this runs and the console keeps its own origin.
 */
import {
  EMBEDDED_CONNECTION_ID,
  type ConnectionSummary,
  type ConsoleBridge,
  type IpcResult,
} from '../../../../electron/contract/bridge.js';
import { cacheScope, useActiveConnection } from '../../lib/active-connection.js';
import { getConsoleBridge } from '../../lib/bridge.js';
import { connectionBasePath, desktopTransport } from '../../lib/desktop-transport.js';
import { dropQueryClient, queryClientFor } from '../../lib/query-client.js';
import { desktopSessionMarker, useSession } from '../../lib/session.js';
import { terminalPortInbox } from '../../lib/terminal-ports.js';
import { setTransport } from '../../lib/transport.js';
import { useDesktop } from './desktop-store.js';

const LAST_CONNECTION_KEY = 'console.desktop.connection';

export function bridgeOrThrow(): ConsoleBridge {
  const bridge = getConsoleBridge();
  if (!bridge) throw new Error('the desktop bridge is not there');
  return bridge;
}

/** The value of an IPC answer, or an Error carrying main's message. */
export async function unwrap<T>(call: Promise<IpcResult<T>>): Promise<T> {
  const result = await call;
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function rememberConnection(connectionId: string): void {
  try {
    localStorage.setItem(LAST_CONNECTION_KEY, connectionId);
  } catch {
    // storage off: start on the embedded appliance next time
  }
}

function lastConnection(): string | null {
  try {
    return localStorage.getItem(LAST_CONNECTION_KEY);
  } catch {
    return null;
  }
}

/** Makes `connectionId` the window's appliance: its transport, its cache, its sign-in state. */
export async function activateConnection(connectionId: string): Promise<void> {
  const bridge = bridgeOrThrow();
  setTransport(
    desktopTransport({
      bridge,
      connectionId,
      onProxyError(problem) {
        if (problem.code === 'certificate-changed')
          useDesktop.getState().set({ certificateProblem: problem });
      },
    }),
  );
  useActiveConnection.getState().setConnectionId(connectionId);
  const problem = useDesktop.getState().certificateProblem;
  if (problem && problem.connectionId !== connectionId)
    useDesktop.getState().set({ certificateProblem: null });
  rememberConnection(connectionId);
  let signedIn = false;
  try {
    signedIn = (await unwrap(bridge.auth.status({ id: connectionId }))).signedIn;
  } catch {
    signedIn = false;
  }
  // Main signs in to its own appliance on demand (its kept password), and may hold a refresh
  // token for a remote one: one authenticated request tells.
  if (!signedIn) signedIn = await answersMe(connectionId);
  if (useActiveConnection.getState().connectionId !== connectionId) return;
  if (signedIn) useSession.getState().signInDesktop(connectionId, null);
  else useSession.getState().signOut();
}

async function answersMe(connectionId: string): Promise<boolean> {
  try {
    const response = await fetch(`${connectionBasePath(connectionId)}/api/me`, {
      headers: { accept: 'application/json' },
      credentials: 'omit',
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

function onConnections(connections: ConnectionSummary[]): void {
  const before = useDesktop.getState().connections;
  useDesktop.getState().set({ connections });
  for (const gone of before.filter((c) => !connections.some((n) => n.id === c.id)))
    dropQueryClient(cacheScope(gone.id));
  const active = useActiveConnection.getState().connectionId;
  if (active && !connections.some((c) => c.id === active))
    void activateConnection(EMBEDDED_CONNECTION_ID);
}

export async function startDesktop(bridge: ConsoleBridge): Promise<void> {
  terminalPortInbox();
  const [bootstrap, connections, core] = await Promise.all([
    unwrap(bridge.getBootstrap()),
    unwrap(bridge.connections.list()),
    unwrap(bridge.core.status()).catch(() => null),
  ]);
  useDesktop.getState().set({ bootstrap, connections, core });

  bridge.events.onConnectionsChanged(onConnections);
  bridge.events.onCoreChanged((status) => useDesktop.getState().set({ core: status }));
  bridge.events.onAuthChanged((status) => {
    if (status.connectionId !== useActiveConnection.getState().connectionId) return;
    const session = useSession.getState();
    if (status.signedIn) {
      if (session.token !== desktopSessionMarker(status.connectionId))
        session.signInDesktop(status.connectionId, null);
    } else if (session.token) {
      const loc = globalThis.location;
      session.expire(`${loc.pathname}${loc.search}`);
    }
  });
  bridge.events.onDeepLink((link) => {
    if (
      !connections.some((c) => c.id === link.connectionId) &&
      !useDesktop.getState().connections.some((c) => c.id === link.connectionId)
    )
      return;
    void activateConnection(link.connectionId).then(() =>
      useDesktop.getState().set({ pendingRoute: link.route.startsWith('/') ? link.route : '/' }),
    );
  });

  const last = lastConnection();
  const first = connections.some((c) => c.id === last) ? last! : EMBEDDED_CONNECTION_ID;
  await activateConnection(first);
}

/** Switching from the window: the other appliance's cache and session; the page starts over. */
export async function switchConnection(connectionId: string): Promise<void> {
  await activateConnection(connectionId);
  // A cache left from an earlier visit is kept; only queries that failed are asked again.
  void queryClientFor(cacheScope(connectionId)).refetchQueries({ type: 'active', stale: true });
}

/** Signs the active connection out in the main process (which revokes its tokens). */
export async function signOutDesktop(): Promise<void> {
  const connectionId = useActiveConnection.getState().connectionId;
  if (connectionId) await unwrap(bridgeOrThrow().auth.signOut({ id: connectionId }));
}
