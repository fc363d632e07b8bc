/**
 * The one options factory for the console window: isolated, sandboxed, web security on, no Node
 * anywhere (main frame, subframes, workers), no <webview>. Pure (types only from electron), so
 * the exact options are unit-tested.
 */
import type { BrowserWindowConstructorOptions } from 'electron';

import type { WindowBounds } from './window-state.js';

export function consoleWindowOptions(
  preloadPath: string,
  bounds?: WindowBounds,
): BrowserWindowConstructorOptions {
  return {
    width: bounds?.width ?? 1280,
    height: bounds?.height ?? 800,
    ...(bounds?.x !== undefined && bounds.y !== undefined ? { x: bounds.x, y: bounds.y } : {}),
    minWidth: 800,
    minHeight: 600,
    show: false,
    title: 'Appliance Console',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      webSecurity: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      nodeIntegrationInWorker: false,
      webviewTag: false,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    },
  };
}
