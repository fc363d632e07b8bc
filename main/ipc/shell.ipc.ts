/** `console:shell:open-external`: the system browser, for saved connections' origins only. */
import { CONSOLE_CHANNELS } from '../../electron/contract/bridge.js';
import { isAllowedExternalUrl } from '../windows/navigation-policy.js';
import { handle, type IpcContext } from './register.js';
import { parseInput, text } from './validate.js';
import { IpcPublicError } from './wrap-result.js';

export interface ShellIpcDependencies {
  allowedOrigins(): string[];
  openExternal(url: string): Promise<void>;
}

export function registerShellIpc(context: IpcContext, deps: ShellIpcDependencies): void {
  handle(context, CONSOLE_CHANNELS.shellOpenExternal, async (args) => {
    const input = parseInput(args, { url: text({ min: 9, max: 4096 }) });
    if (!isAllowedExternalUrl(input.url, deps.allowedOrigins())) {
      throw new IpcPublicError('only https pages of a saved appliance open in the browser');
    }
    await deps.openExternal(input.url);
    return null;
  });
}
