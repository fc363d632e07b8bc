/**
 * Electron main entry: lifecycle only. One instance; the window opens when Electron is ready;
 * closing the last window quits (except on macOS). The embedded appliance runs in a utility
 * process under the core supervisor; the renderer learns its URL through console:app:get-bootstrap.
 */
import { app, BrowserWindow, dialog, ipcMain, utilityProcess } from 'electron';

import { embeddedCoreEnv, resolveAppPaths } from './config/paths.js';
import { CoreSupervisor, type CoreSupervisorEvent } from './core/core-supervisor.js';
import { registerAppIpc } from './ipc/app.ipc.js';
import { createMainWindow } from './windows/main-window.js';

function log(message: string, error?: unknown): void {
  if (error === undefined) console.log(`console: ${message}`);
  else console.error(`console: ${message}`, error);
}

function reportCoreEvent(event: CoreSupervisorEvent): void {
  switch (event.type) {
    case 'ready':
      log(`appliance core ready at ${event.url}`);
      break;
    case 'exit':
      log(`appliance core exited with code ${event.code}`);
      break;
    case 'restarting':
      log(`restarting the appliance core in ${event.delayMs} ms: ${event.reason}`);
      break;
    case 'failed':
      log('appliance core given up', event.error);
      dialog.showErrorBox('Appliance core stopped', event.error.message);
      break;
  }
}

function run(): void {
  const paths = resolveAppPaths(app.getAppPath());
  let mainWindow: BrowserWindow | undefined;

  const core = new CoreSupervisor({
    modulePath: paths.coreEntry,
    fork: (modulePath, args, options) => utilityProcess.fork(modulePath, args, options),
    forkOptions: {
      env: embeddedCoreEnv(process.env, app.getPath('userData')),
      serviceName: 'Appliance core',
      stdio: 'inherit',
    },
    onEvent: reportCoreEvent,
  });

  const openWindow = (): void => {
    mainWindow = createMainWindow({
      preloadPath: paths.preload,
      renderer: { file: paths.rendererIndex },
      onLoadFailed: (entryUrl, error) => log(`could not load ${entryUrl}`, error),
    });
    mainWindow.on('closed', () => {
      mainWindow = undefined;
    });
  };

  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) openWindow();
  });

  // Let the core flush its buffers (it exits within 5 s of SIGTERM) before the app goes away.
  app.on('will-quit', (event) => {
    if (core.state === 'stopped') return;
    event.preventDefault();
    void core.stop().finally(() => app.quit());
  });

  app
    .whenReady()
    .then(() => {
      registerAppIpc(ipcMain, {
        coreBaseUrl: () => core.whenReady(),
        version: app.getVersion(),
        log,
      });
      // A core that never becomes ready is reported through onEvent ('failed').
      core.start().catch((_error: unknown) => undefined);
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
