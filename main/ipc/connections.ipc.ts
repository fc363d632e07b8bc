/** The `console:connections:*` channels: saved appliances, trust on first use, re-pinning. */
import { CONSOLE_CHANNELS, type ConnectionSummary } from '../../electron/contract/bridge.js';
import type { SessionManager } from '../auth/session-manager.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import type { SavedConnection } from '../connections/connection-store.js';
import { applianceUrl, connectionId, fingerprint } from './fields.js';
import { handle, type IpcContext } from './register.js';
import { optional, parseInput, text } from './validate.js';
import { expectNoArguments } from './wrap-result.js';

export interface ConnectionsIpcDependencies {
  registry: ConnectionRegistry;
  sessions: SessionManager;
}

export function registerConnectionsIpc(
  context: IpcContext,
  deps: ConnectionsIpcDependencies,
): void {
  const C = CONSOLE_CHANNELS;
  const authOf = (id: string) => deps.sessions.status(id);
  const summary = (connection: SavedConnection): ConnectionSummary =>
    deps.registry.summaryOf(connection, authOf);

  handle(context, C.connectionsList, (args) => {
    expectNoArguments(args);
    return deps.registry.summaries(authOf);
  });

  handle(context, C.connectionsProbe, (args) => {
    const input = parseInput(args, { url: applianceUrl });
    return deps.registry.probe(input.url);
  });

  handle(context, C.connectionsAdd, async (args) => {
    const input = parseInput(args, {
      url: applianceUrl,
      name: optional(text({ max: 100 })),
      acceptSha256: fingerprint,
    });
    return summary(await deps.registry.add(input));
  });

  handle(context, C.connectionsEdit, async (args) => {
    const input = parseInput(args, {
      id: connectionId,
      name: optional(text({ max: 100 })),
      url: optional(applianceUrl),
      acceptSha256: optional(fingerprint),
    });
    const { connection, originChanged } = await deps.registry.edit(input);
    // Another appliance: the tokens of the old one mean nothing there.
    if (originChanged) deps.sessions.forget(connection.id, 'moved to another URL');
    return summary(connection);
  });

  handle(context, C.connectionsRemove, async (args) => {
    const input = parseInput(args, { id: connectionId });
    if (deps.registry.get(input.id)?.kind === 'remote') await deps.sessions.signOut(input.id);
    deps.registry.remove(input.id);
    deps.sessions.forget(input.id, 'connection removed');
    return null;
  });

  handle(context, C.connectionsRepin, async (args) => {
    const input = parseInput(args, { id: connectionId, acceptSha256: fingerprint });
    return summary(await deps.registry.repin(input));
  });
}
