/**
 * Electron main entry: lifecycle and wiring only; the logic lives in plain modules that take the
 * Electron APIs they use as parameters (tested in Node).
 *
 * One instance. The console is served from the privileged `app://console` scheme; its
 * `/appliances/<id>/` paths are proxied to the embedded appliance (a utility process) or a saved
 * remote one, with tokens and pinned certificates that only this process holds. Quitting stops
 * the embedded appliance cleanly and ends every terminal.
 */
import os from 'node:os';
import path from 'node:path';

import {
  app,
  BrowserWindow,
  ipcMain,
  MessageChannelMain,
  protocol,
  safeStorage,
  session,
  shell,
  utilityProcess,
  type WebContents,
} from 'electron';
import { spawn as spawnPty } from 'node-pty';

import {
  CONSOLE_EVENTS,
  CONSOLE_ORIGIN,
  CONSOLE_SCHEME,
  DEEP_LINK_SCHEME,
  EMBEDDED_CONNECTION_ID,
  type ConsoleBootstrap,
  type DeepLink,
} from '../electron/contract/bridge.js';
import { SessionManager } from './auth/session-manager.js';
import { resolveAppPaths } from './config/paths.js';
import { systemTrustStore } from './connections/certificate-pinning.js';
import { ConnectionRegistry } from './connections/connection-registry.js';
import { ConnectionStore } from './connections/connection-store.js';
import { EmbeddedAppliance } from './core/embedded-appliance.js';
import { registerAppIpc } from './ipc/app.ipc.js';
import { registerAuthIpc } from './ipc/auth.ipc.js';
import { registerConnectionsIpc } from './ipc/connections.ipc.js';
import { registerCoreIpc } from './ipc/core.ipc.js';
import type { IpcContext } from './ipc/register.js';
import { registerShellIpc } from './ipc/shell.ipc.js';
import { registerTerminalIpc } from './ipc/terminal.ipc.js';
import { CONSOLE_PAGE_POLICY } from './protocol/console-csp.js';
import {
  CONSOLE_SCHEME_REGISTRATION,
  createConsoleProtocolHandler,
} from './protocol/console-protocol.js';
import { createApplianceProxy } from './proxy/appliance-proxy.js';
import { SecretVault } from './secrets/secret-vault.js';
import { TokenStore } from './secrets/token-store.js';
import { fromMessagePortMain } from './terminal/terminal-port.js';
import { TerminalSessions } from './terminal/terminal-sessions.js';
import { findDeepLink, parseDeepLink } from './windows/deep-links.js';
import { createMainWindow } from './windows/main-window.js';
import { installApplicationMenu } from './windows/menu.js';
import {
  isPermissionCheckGranted,
  isPermissionRequestGranted,
} from './windows/permission-policy.js';

function log(message: string, error?: unknown): void {
  if (error === undefined) console.log(`console: ${message}`);
  else console.error(`console: ${message}`, error);
}

// Before ready: every renderer sandboxed; the console's scheme is a standard, secure origin with
// fetch and streaming.
app.enableSandbox();
protocol.registerSchemesAsPrivileged([CONSOLE_SCHEME_REGISTRATION]);

function run(): void {
  let mainWindow: BrowserWindow | undefined;
  let pendingDeepLink: DeepLink | undefined = findDeepLink(process.argv);

  const send = (channel: string, payload: unknown): void => {
    if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(channel, payload);
  };
  const deliverDeepLink = (link: DeepLink | undefined): void => {
    if (!link) return;
    if (mainWindow && !mainWindow.webContents.isLoading()) send(CONSOLE_EVENTS.deepLink, link);
    else pendingDeepLink = link;
  };

  app.on('second-instance', (_event, argv) => {
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore();
      mainWindow.focus();
    }
    deliverDeepLink(findDeepLink(argv));
  });
  app.on('open-url', (event, url) => {
    event.preventDefault();
    deliverDeepLink(parseDeepLink(url));
  });
  app.setAsDefaultProtocolClient(DEEP_LINK_SCHEME);

  app
    .whenReady()
    .then(() => {
      const paths = resolveAppPaths(app.getAppPath());
      const userData = app.getPath('userData');
      const vault = new SecretVault({
        safeStorage,
        directory: path.join(userData, 'secrets'),
        platform: process.platform,
        log,
      });
      const store = new ConnectionStore(path.join(userData, 'connections.json'));
      const registry = new ConnectionRegistry({ store, trustStore: systemTrustStore, log });
      const sessions = new SessionManager({
        connections: registry,
        tokens: new TokenStore(vault),
        log,
        deviceClientName: `Appliance Console on ${os
          .hostname()
          .replace(/[^\x20-\x7e]/g, '')
          .slice(0, 60)}`,
        onAuthChanged: (status) => send(CONSOLE_EVENTS.authChanged, status),
      });
      const connectionSummaries = () => registry.summaries((id) => sessions.status(id));
      store.onChange(() => send(CONSOLE_EVENTS.connectionsChanged, connectionSummaries()));

      const embedded = new EmbeddedAppliance({
        modulePath: paths.coreEntry,
        fork: (modulePath, args, options) =>
          utilityProcess.fork(modulePath, args, {
            env: options.env,
            stdio: options.stdio ?? 'pipe',
            serviceName: options.serviceName ?? 'Appliance core',
          }),
        userDataDir: userData,
        baseEnv: process.env,
        vault,
        connections: registry,
        sessions,
        log,
        onStatus: (status) => send(CONSOLE_EVENTS.coreChanged, status),
      });

      const proxy = createApplianceProxy({
        connections: registry,
        sessions,
        log,
        whenAvailable: (id) =>
          id === EMBEDDED_CONNECTION_ID ? embedded.whenReady() : Promise.resolve(),
      });
      protocol.handle(
        CONSOLE_SCHEME,
        createConsoleProtocolHandler({
          rendererRoot: paths.rendererRoot,
          ...CONSOLE_PAGE_POLICY,
          proxy,
        }),
      );

      session.defaultSession.setPermissionRequestHandler((_contents, permission, callback) =>
        callback(isPermissionRequestGranted(permission)),
      );
      session.defaultSession.setPermissionCheckHandler((_contents, permission, origin) =>
        isPermissionCheckGranted(permission, origin),
      );

      const terminals = new TerminalSessions({ spawnPty, connections: registry, log });
      const context: IpcContext = { ipc: ipcMain, log };
      const bootstrap = (): ConsoleBootstrap => ({
        version: app.getVersion(),
        consoleOrigin: CONSOLE_ORIGIN,
        embeddedConnectionId: EMBEDDED_CONNECTION_ID,
        platform:
          process.platform === 'linux' ||
          process.platform === 'darwin' ||
          process.platform === 'win32'
            ? process.platform
            : 'other',
        tokenStorage: vault.storage,
        storageWarning: vault.warning,
      });
      registerAppIpc(context, { bootstrap });
      registerConnectionsIpc(context, { registry, sessions });
      registerAuthIpc(context, sessions);
      registerCoreIpc(context, embedded);
      registerTerminalIpc(context, {
        sessions: terminals,
        openChannel: (event) => {
          const sender = (event as { sender: WebContents }).sender;
          const { port1, port2 } = new MessageChannelMain();
          return {
            port: fromMessagePortMain(port1),
            deliver: (sessionId) =>
              sender.postMessage(CONSOLE_EVENTS.terminalPort, { sessionId }, [port2]),
          };
        },
      });
      registerShellIpc(context, {
        allowedOrigins: () => store.list().map((connection) => connection.origin),
        openExternal: (url) => shell.openExternal(url),
      });

      installApplicationMenu(
        {
          restartEmbeddedAppliance: () =>
            void embedded.restart().catch((error: unknown) => log('restart failed', error)),
        },
        process.platform === 'darwin',
      );

      const openWindow = (): void => {
        mainWindow = createMainWindow({
          preloadPath: paths.preload,
          stateFile: path.join(userData, 'window-state.json'),
          allowedExternalOrigins: () => store.list().map((connection) => connection.origin),
          log,
        });
        mainWindow.webContents.once('did-finish-load', () => {
          const link = pendingDeepLink;
          pendingDeepLink = undefined;
          if (link) send(CONSOLE_EVENTS.deepLink, link);
        });
        mainWindow.on('closed', () => {
          mainWindow = undefined;
        });
      };

      app.on('window-all-closed', () => {
        if (process.platform !== 'darwin') app.quit();
      });
      app.on('activate', () => {
        if (BrowserWindow.getAllWindows().length === 0) openWindow();
      });
      // Let the core flush its buffers (it exits within 5 s of SIGTERM) before the app goes away.
      let stopping = false;
      app.on('will-quit', (event) => {
        if (stopping) return;
        stopping = true;
        event.preventDefault();
        terminals.closeAll();
        registry.close();
        void embedded.stop().finally(() => app.quit());
      });

      // A core that never becomes ready is reported in its status (failure and log tail). Once it
      // is ready, sign in at once so that the console's first request finds a token.
      embedded
        .start()
        .then(() => sessions.accessToken(EMBEDDED_CONNECTION_ID))
        .catch((error: unknown) => log('embedded appliance did not start', error));
      openWindow();
    })
    .catch((error: unknown) => {
      log('desktop app failed to start', error);
      app.exit(1);
    });
}

if (app.requestSingleInstanceLock()) {
  run();
} else {
  app.quit();
}
