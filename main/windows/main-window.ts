/** The console window, locked down: isolated, sandboxed, no Node, no popups, no navigation. */
import { pathToFileURL } from 'node:url';

import { BrowserWindow, shell } from 'electron';

import { isAllowedExternalUrl, isAllowedNavigation } from './navigation-policy.js';

export interface MainWindowOptions {
  preloadPath: string;
  /** The renderer's index.html (packaged) or its development server URL. */
  renderer: { file: string } | { url: string };
  onLoadFailed(entryUrl: string, error: unknown): void;
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const mainWindow = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 800,
    minHeight: 600,
    show: false,
    title: 'Appliance console',
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });

  const entryUrl =
    'url' in options.renderer ? options.renderer.url : pathToFileURL(options.renderer.file).href;

  mainWindow.webContents.session.setPermissionRequestHandler((_contents, _permission, callback) =>
    callback(false),
  );
  mainWindow.webContents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternalUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  mainWindow.webContents.on('will-navigate', (event, url) => {
    if (!isAllowedNavigation(url, entryUrl)) event.preventDefault();
  });
  mainWindow.webContents.on('will-redirect', (event, url) => {
    if (!isAllowedNavigation(url, entryUrl)) event.preventDefault();
  });
  mainWindow.webContents.on('will-attach-webview', (event) => event.preventDefault());
  mainWindow.once('ready-to-show', () => mainWindow.show());

  mainWindow.loadURL(entryUrl).catch((error: unknown) => options.onLoadFailed(entryUrl, error));
  return mainWindow;
}
