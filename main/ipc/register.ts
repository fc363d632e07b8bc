/** Registers one channel's handler through wrapResult (sender check, result envelope). */
import {
  type IpcHandlerRegistry,
  type IpcLogger,
  isConsoleSender,
  type SenderCheck,
  wrapResult,
} from './wrap-result.js';

export interface IpcContext {
  ipc: IpcHandlerRegistry;
  log: IpcLogger;
  /** isConsoleSender unless a test says otherwise. */
  isTrustedSender?: SenderCheck;
}

export function handle<T>(
  context: IpcContext,
  channel: string,
  handler: (args: readonly unknown[], event: unknown) => Promise<T> | T,
): void {
  context.ipc.handle(
    channel,
    wrapResult(channel, handler, context.log, context.isTrustedSender ?? isConsoleSender),
  );
}
