/**
 * The `console:auth:*` channels: sign-in (password and TOTP, or the device flow) and sign-out.
 * Answers say how it went, never what the tokens are.
 */
import { CONSOLE_CHANNELS } from '../../electron/contract/bridge.js';
import type { SessionManager } from '../auth/session-manager.js';
import { connectionId, flowId } from './fields.js';
import { handle, type IpcContext } from './register.js';
import { optional, parseInput, text } from './validate.js';

export function registerAuthIpc(context: IpcContext, sessions: SessionManager): void {
  const C = CONSOLE_CHANNELS;

  handle(context, C.authStatus, (args) => {
    const input = parseInput(args, { id: connectionId });
    return sessions.status(input.id);
  });

  handle(context, C.authSignIn, (args) => {
    const input = parseInput(args, {
      connectionId,
      username: text({ min: 1, max: 255 }),
      password: text({ min: 1, max: 1024 }),
      totp: optional(
        text({ min: 6, max: 10, pattern: /^[0-9]+$/, what: 'the digits of a TOTP code' }),
      ),
    });
    return sessions.signInWithPassword(input);
  });

  handle(context, C.authDeviceStart, (args) => {
    const input = parseInput(args, { connectionId });
    return sessions.startDeviceFlow(input.connectionId);
  });

  handle(context, C.authDeviceWait, (args) => {
    const input = parseInput(args, { flowId });
    return sessions.waitDeviceFlow(input.flowId);
  });

  handle(context, C.authDeviceCancel, (args) => {
    const input = parseInput(args, { flowId });
    sessions.cancelDeviceFlow(input.flowId);
    return null;
  });

  handle(context, C.authSignOut, async (args) => {
    const input = parseInput(args, { id: connectionId });
    await sessions.signOut(input.id);
    return null;
  });
}
