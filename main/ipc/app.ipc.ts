/** The `console:app:*` channels: what the renderer needs to know about the desktop app. */
import { CONSOLE_CHANNELS, type ConsoleBootstrap } from '../../electron/contract/bridge.js';
import {
  expectNoArguments,
  IpcPublicError,
  type IpcHandlerRegistry,
  type IpcLogger,
  wrapResult,
} from './wrap-result.js';

export interface AppIpcDependencies {
  /** Resolves with the embedded core's base URL once ready; rejects with a reason for the user. */
  coreBaseUrl(): Promise<string>;
  version: string;
  log: IpcLogger;
}

export function registerAppIpc(ipc: IpcHandlerRegistry, deps: AppIpcDependencies): void {
  const channel = CONSOLE_CHANNELS.appGetBootstrap;
  ipc.handle(
    channel,
    wrapResult(
      channel,
      async function getBootstrap(args): Promise<ConsoleBootstrap> {
        expectNoArguments(args);
        let coreBaseUrl: string;
        try {
          coreBaseUrl = await deps.coreBaseUrl();
        } catch (error) {
          deps.log('embedded appliance core unavailable', error);
          throw new IpcPublicError(
            error instanceof Error ? error.message : 'the appliance core is not available',
          );
        }
        return { coreBaseUrl, version: deps.version };
      },
      deps.log,
    ),
  );
}
