/**
 * The console window, locked down (window-options.ts): it shows app://console only; every other
 * navigation, redirect or frame navigation is refused; window.open is always denied (an https
 * link to a saved appliance's origin opens in the system browser instead); <webview> cannot
 * attach. Size and position are kept across starts.
 */
import { BrowserWindow, screen, shell } from 'electron';

import { CONSOLE_ORIGIN } from '../../electron/contract/bridge.js';
import { isAllowedNavigation, windowOpenDecision } from './navigation-policy.js';
import { consoleWindowOptions } from './window-options.js';
import { loadWindowState, saveWindowState } from './window-state.js';

export interface MainWindowOptions {
  preloadPath: string;
  stateFile: string;
  /** Origins of saved connections (their /auth pages may open in the system browser). */
  allowedExternalOrigins(): string[];
  log(message: string, error?: unknown): void;
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const workAreas = screen.getAllDisplays().map((display) => display.workArea);
  const state = loadWindowState(options.stateFile, workAreas);
  const mainWindow = new BrowserWindow(consoleWindowOptions(options.preloadPath, state));
  if (state?.maximized) mainWindow.maximize();

  const contents = mainWindow.webContents;
  contents.setWindowOpenHandler(({ url }) => {
    const decision = windowOpenDecision(url, options.allowedExternalOrigins());
    if (decision.openExternally) {
      shell
        .openExternal(url)
        .catch((error: unknown) => options.log(`could not open ${url}`, error));
    }
    return { action: decision.action };
  });
  contents.on('will-navigate', (event, url) => {
    if (!isAllowedNavigation(url)) event.preventDefault();
  });
  contents.on('will-frame-navigate', (event) => {
    if (!isAllowedNavigation(event.url)) event.preventDefault();
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAllowedNavigation(url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  mainWindow.once('ready-to-show', () => mainWindow.show());
  mainWindow.on('close', () => {
    try {
      saveWindowState(options.stateFile, {
        ...mainWindow.getNormalBounds(),
        maximized: mainWindow.isMaximized(),
      });
    } catch (error) {
      options.log('could not save the window state', error);
    }
  });

  const entryUrl = `${CONSOLE_ORIGIN}/`;
  mainWindow
    .loadURL(entryUrl)
    .catch((error: unknown) => options.log(`could not load ${entryUrl}`, error));
  return mainWindow;
}
