/**
 * The desktop app's main-process logic wired as main/index.ts wires it, minus Electron: the
 * embedded appliance runs as a real `appliance-core/dist/server.js` child (forked with an IPC
 * channel, as utilityProcess.fork does in the app), safeStorage is the faithful fake, and the
 * proxy is called with Fetch Requests as protocol.handle would call it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  EMBEDDED_CONNECTION_ID,
  type AuthStatus,
  type CoreStatus,
} from '../../electron/contract/bridge.js';
import { SessionManager, type SessionClock } from '../../main/auth/session-manager.js';
import type { TrustStore } from '../../main/connections/certificate-pinning.js';
import { ConnectionRegistry } from '../../main/connections/connection-registry.js';
import { ConnectionStore } from '../../main/connections/connection-store.js';
import type { ForkCore } from '../../main/core/core-supervisor.js';
import {
  EmbeddedAppliance,
  type EmbeddedApplianceOptions,
} from '../../main/core/embedded-appliance.js';
import { forkNodeChild } from '../../main/core/node-child.js';
import { createApplianceProxy, type ApplianceProxy } from '../../main/proxy/appliance-proxy.js';
import { SecretVault } from '../../main/secrets/secret-vault.js';
import { TokenStore } from '../../main/secrets/token-store.js';
import { FakeSafeStorage } from './fake-electron.js';
import { SERVER } from './process.js';

export interface DesktopStack {
  userData: string;
  safeStorage: FakeSafeStorage;
  vault: SecretVault;
  tokens: TokenStore;
  store: ConnectionStore;
  registry: ConnectionRegistry;
  sessions: SessionManager;
  embedded: EmbeddedAppliance;
  proxy: ApplianceProxy;
  /** A request as the console window sends it (`app://console/appliances/<id>/<path>`). */
  fetch(connectionId: string, path: string, init?: RequestInit): Promise<Response>;
  logged: string[];
  statuses: CoreStatus[];
  authChanges: AuthStatus[];
  forkedEnvs: Array<Record<string, string | undefined>>;
  close(): Promise<void>;
}

export function tempUserData(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'desktop-userdata-'));
}

export function createDesktopStack(
  options: {
    userData?: string;
    safeStorage?: FakeSafeStorage;
    trustStore?: TrustStore;
    clock?: SessionClock;
    refreshSkewMs?: number;
    embedded?: Partial<EmbeddedApplianceOptions>;
    fork?: ForkCore;
  } = {},
): DesktopStack {
  const userData = options.userData ?? tempUserData();
  const safeStorage = options.safeStorage ?? new FakeSafeStorage();
  const logged: string[] = [];
  const log = (message: string, error?: unknown) =>
    logged.push(
      error === undefined
        ? message
        : `${message}: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
    );
  const statuses: CoreStatus[] = [];
  const authChanges: AuthStatus[] = [];
  const forkedEnvs: Array<Record<string, string | undefined>> = [];
  const vault = new SecretVault({
    safeStorage,
    directory: path.join(userData, 'secrets'),
    platform: 'linux',
    log,
  });
  const tokens = new TokenStore(vault);
  const store = new ConnectionStore(path.join(userData, 'connections.json'));
  const registry = new ConnectionRegistry({
    store,
    trustStore: options.trustStore ?? (() => []),
    log,
  });
  const sessions = new SessionManager({
    connections: registry,
    tokens,
    log,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.refreshSkewMs !== undefined ? { refreshSkewMs: options.refreshSkewMs } : {}),
    onAuthChanged: (status) => authChanges.push(status),
  });
  const fork = options.fork ?? forkNodeChild;
  const embedded = new EmbeddedAppliance({
    modulePath: SERVER,
    fork: (modulePath, args, forkOptions) => {
      forkedEnvs.push({ ...forkOptions.env });
      return fork(modulePath, args, forkOptions);
    },
    userDataDir: userData,
    baseEnv: { PATH: process.env.PATH, HOME: process.env.HOME },
    vault,
    connections: registry,
    sessions,
    log,
    logLevel: 'warn',
    onStatus: (status) => statuses.push(status),
    ...options.embedded,
  });
  const proxy = createApplianceProxy({
    connections: registry,
    sessions,
    log,
    whenAvailable: (id) =>
      id === EMBEDDED_CONNECTION_ID ? embedded.whenReady(30_000) : Promise.resolve(),
  });
  return {
    userData,
    safeStorage,
    vault,
    tokens,
    store,
    registry,
    sessions,
    embedded,
    proxy,
    fetch: (connectionId, urlPath, init) =>
      proxy(new Request(`app://console/appliances/${connectionId}${urlPath}`, init)),
    logged,
    statuses,
    authChanges,
    forkedEnvs,
    async close() {
      await embedded.stop();
      registry.close();
    },
  };
}

/** Reads a whole proxied answer as text, with its headers, for assertions. */
export async function readAll(
  response: Response,
): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return { status: response.status, headers, text: await response.text() };
}
