/**
 * The one typed contract between the Electron main process and the console renderer.
 *
 * Pure TypeScript: imported by main/ (which implements the channels), by the preload (which
 * exposes them as `window.consoleBridge`) and by the renderer (which calls them). IPC carries
 * operating-system features only; appliance data always goes over HTTP.
 */

/** Every channel is named `console:<namespace>:<action>`; the preload rejects anything else. */
export type ConsoleChannel = `console:${string}:${string}`;

export const CONSOLE_CHANNEL_PREFIX = 'console:';

export const CONSOLE_CHANNELS = {
  appGetBootstrap: 'console:app:get-bootstrap',
} as const satisfies Record<string, ConsoleChannel>;

/** What crosses the boundary when a handler fails: a message for the user, never a stack. */
export interface SerializedError {
  message: string;
}

export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: SerializedError };

/** Read once by the renderer at start: where the embedded appliance listens, and our version. */
export interface ConsoleBootstrap {
  coreBaseUrl: string;
  version: string;
}

export interface ConsoleBridge {
  getBootstrap(): Promise<IpcResult<ConsoleBootstrap>>;
}

export function isConsoleChannel(channel: string): channel is ConsoleChannel {
  return /^console:[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/.test(channel);
}
