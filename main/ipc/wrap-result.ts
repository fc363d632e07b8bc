/**
 * Every ipcMain.handle goes through wrapResult:
 * - the event is first given to the sender check: only the console window's top frame, loaded
 *   from the console's origin, is answered (a subframe or a page elsewhere gets a refusal, and
 *   the handler never runs);
 * - the renderer receives `{ok: true, value}` or `{ok: false, error}` and never a rejected
 *   promise, a stack trace or an internal message: only UserFacingError messages pass, anything
 *   else is logged and answered with a generic message.
 */
import {
  CONSOLE_ORIGIN,
  type IpcResult,
  type SerializedError,
} from '../../electron/contract/bridge.js';
import { UserFacingError } from '../errors.js';
import { consoleOriginOf } from '../windows/navigation-policy.js';

/** An error whose message is meant for the user (bad input, core unavailable ...). */
export class IpcPublicError extends UserFacingError {
  override name = 'IpcPublicError';
}

export type IpcLogger = (message: string, error?: unknown) => void;

export type IpcInvokeHandler = (event: unknown, ...args: unknown[]) => Promise<unknown>;

/** The part of Electron's ipcMain that handlers are registered with (a fake in tests). */
export interface IpcHandlerRegistry {
  handle(channel: string, handler: IpcInvokeHandler): void;
}

/** Decides whether an IPC event comes from the console (see isConsoleSender). */
export type SenderCheck = (event: unknown) => boolean;

/**
 * The console window's own top frame, on the console's origin. Electron's IpcMainInvokeEvent
 * carries `senderFrame` (null once the frame navigated away or was destroyed).
 */
export const isConsoleSender: SenderCheck = (event) => {
  const frame = (event as { senderFrame?: { url?: unknown; parent?: unknown } | null } | null)
    ?.senderFrame;
  if (!frame || frame.parent !== null || typeof frame.url !== 'string') return false;
  return consoleOriginOf(frame.url) === CONSOLE_ORIGIN;
};

export const REFUSED_SENDER_MESSAGE = 'refused: this request did not come from the console window';

export function toSerializedError(error: unknown): SerializedError {
  if (error instanceof UserFacingError) return { message: error.message };
  return { message: 'internal error in the desktop app (details are in its log)' };
}

/** Wraps a handler for ipcMain.handle; the handler receives its arguments and the event. */
export function wrapResult<T>(
  channel: string,
  handler: (args: readonly unknown[], event: unknown) => Promise<T> | T,
  log: IpcLogger,
  isTrustedSender: SenderCheck = isConsoleSender,
): (event: unknown, ...args: unknown[]) => Promise<IpcResult<T>> {
  return async function handleWithResult(event, ...args) {
    if (!isTrustedSender(event)) {
      log(`ipc ${channel}: refused a call from outside the console window`);
      return { ok: false, error: { message: REFUSED_SENDER_MESSAGE } };
    }
    try {
      return { ok: true, value: await handler(args, event) };
    } catch (error) {
      if (!(error instanceof UserFacingError)) log(`ipc ${channel} failed`, error);
      return { ok: false, error: toSerializedError(error) };
    }
  };
}

export function expectNoArguments(args: readonly unknown[]): void {
  if (args.length > 0) {
    throw new IpcPublicError(`expected no arguments, received ${args.length}`);
  }
}
