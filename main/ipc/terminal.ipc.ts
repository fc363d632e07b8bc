/**
 * The `console:terminal:*` channels. Each call answers `{sessionId, kind}`; the session's
 * MessagePort travels separately (CONSOLE_EVENTS.terminalPort, handed to the page by the
 * preload), so the renderer matches the two by sessionId, whichever arrives first.
 */
import { CONSOLE_CHANNELS, TERMINAL_LIMITS } from '../../electron/contract/bridge.js';
import type { TerminalPort } from '../terminal/terminal-port.js';
import type { TerminalSessions } from '../terminal/terminal-sessions.js';
import { connectionId } from './fields.js';
import { handle, type IpcContext } from './register.js';
import { integer, parseInput, text } from './validate.js';

export interface TerminalChannel {
  /** The main-process end of a new MessageChannel. */
  port: TerminalPort;
  /** Sends the other end to the frame that asked, tagged with the session id. */
  deliver(sessionId: string): void;
}

export interface TerminalIpcDependencies {
  sessions: TerminalSessions;
  openChannel(event: unknown): TerminalChannel;
}

export function registerTerminalIpc(context: IpcContext, deps: TerminalIpcDependencies): void {
  const C = CONSOLE_CHANNELS;

  handle(context, C.terminalOpenLocal, (args, event) => {
    const input = parseInput(args, {
      cols: integer(TERMINAL_LIMITS.minCols, TERMINAL_LIMITS.maxCols),
      rows: integer(TERMINAL_LIMITS.minRows, TERMINAL_LIMITS.maxRows),
    });
    const channel = deps.openChannel(event);
    const opened = deps.sessions.openLocal(channel.port, input);
    channel.deliver(opened.sessionId);
    return opened;
  });

  handle(context, C.terminalOpenAppliance, async (args, event) => {
    const input = parseInput(args, {
      connectionId,
      path: text({
        min: 6,
        max: 2048,
        pattern: /^\/api\/[\x21-\x7e]*$/,
        what: 'a path under /api/',
      }),
    });
    const channel = deps.openChannel(event);
    const opened = await deps.sessions.openAppliance(channel.port, input);
    channel.deliver(opened.sessionId);
    return opened;
  });
}
