/** The `console:app:*` channels: what the renderer needs to know about the desktop app. */
import { CONSOLE_CHANNELS, type ConsoleBootstrap } from '../../electron/contract/bridge.js';
import { handle, type IpcContext } from './register.js';
import { expectNoArguments } from './wrap-result.js';

export interface AppIpcDependencies {
  bootstrap(): ConsoleBootstrap;
}

export function registerAppIpc(context: IpcContext, deps: AppIpcDependencies): void {
  handle(context, CONSOLE_CHANNELS.appGetBootstrap, (args) => {
    expectNoArguments(args);
    return deps.bootstrap();
  });
}
