/**
 * Every ipcMain.handle goes through wrapResult: the renderer receives `{ok: true, value}` or
 * `{ok: false, error}` and never a rejected promise, a stack trace or an internal message.
 */
import type { IpcResult, SerializedError } from '../../electron/contract/bridge.js';

/** An error whose message is meant for the user (bad input, core unavailable ...). */
export class IpcPublicError extends Error {
  override name = 'IpcPublicError';
}

export type IpcLogger = (message: string, error: unknown) => void;

export type IpcInvokeHandler = (event: unknown, ...args: unknown[]) => Promise<unknown>;

/** The part of Electron's ipcMain that handlers are registered with (a fake in tests). */
export interface IpcHandlerRegistry {
  handle(channel: string, handler: IpcInvokeHandler): void;
}

export function toSerializedError(error: unknown): SerializedError {
  if (error instanceof IpcPublicError) return { message: error.message };
  return { message: 'internal error in the desktop app (details are in its log)' };
}

/**
 * Wraps a handler for ipcMain.handle. The first argument Electron passes (the event) is dropped:
 * handlers decide from their validated arguments only.
 */
export function wrapResult<T>(
  channel: string,
  handler: (args: readonly unknown[]) => Promise<T> | T,
  log: IpcLogger,
): (event: unknown, ...args: unknown[]) => Promise<IpcResult<T>> {
  return async function handleWithResult(_event, ...args) {
    try {
      return { ok: true, value: await handler(args) };
    } catch (error) {
      if (!(error instanceof IpcPublicError)) log(`ipc ${channel} failed`, error);
      return { ok: false, error: toSerializedError(error) };
    }
  };
}

export function expectNoArguments(args: readonly unknown[]): void {
  if (args.length > 0) {
    throw new IpcPublicError(`expected no arguments, received ${args.length}`);
  }
}
