/**
 * The desktop bridge exposed by the preload as `window.consoleBridge`. It exists only inside the
 * Electron window; in a browser (the console served by an appliance) it is absent and the console
 * works over HTTP alone.
 */
import type { ConsoleBridge } from '../../../electron/contract/bridge.js';

declare global {
  interface Window {
    consoleBridge?: ConsoleBridge;
  }
}

export function getConsoleBridge(): ConsoleBridge | undefined {
  return typeof window === 'undefined' ? undefined : window.consoleBridge;
}

export function isDesktop(): boolean {
  return getConsoleBridge() !== undefined;
}
