/** The `console:core:*` channels: the embedded appliance's state, restart, collectors. */
import { CONSOLE_CHANNELS, type CoreStatus } from '../../electron/contract/bridge.js';
import type { EmbeddedAppliance } from '../core/embedded-appliance.js';
import { handle, type IpcContext } from './register.js';
import { boolean, parseInput, text } from './validate.js';
import { expectNoArguments } from './wrap-result.js';

export function registerCoreIpc(context: IpcContext, embedded: EmbeddedAppliance): void {
  const C = CONSOLE_CHANNELS;

  handle(context, C.coreStatus, (args) => {
    expectNoArguments(args);
    return embedded.status();
  });

  // A start that fails is reported in the status (failure and log tail), not as an IPC error.
  const settle = async (starting: Promise<unknown>): Promise<CoreStatus> => {
    await starting.catch((error: unknown) =>
      context.log('embedded appliance did not start', error),
    );
    return embedded.status();
  };

  handle(context, C.coreRestart, (args) => {
    expectNoArguments(args);
    return settle(embedded.restart());
  });

  handle(context, C.coreSetCollectors, (args) => {
    const input = parseInput(args, {
      enabled: boolean,
      bindAddress: text({ min: 2, max: 45, pattern: /^[0-9a-fA-F.:]+$/, what: 'an IP address' }),
    });
    // A bad address is the user's to see; nothing restarts then.
    embedded.checkCollectorSettings(input);
    return settle(embedded.setCollectors(input));
  });
}
