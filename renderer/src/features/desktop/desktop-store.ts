/**
 * What the desktop window knows from the main process: the bootstrap (token storage), the saved
 * connections, the embedded appliance's status, and a proxy refusal worth a screen of its own (a
 * changed certificate). UI state fed by IPC events; appliance data stays in react-query.
 */
import { create } from 'zustand';

import type {
  ConnectionSummary,
  ConsoleBootstrap,
  CoreStatus,
} from '../../../../electron/contract/bridge.js';
import type { ProxyProblem } from '../../lib/desktop-transport.js';

export interface DesktopState {
  bootstrap: ConsoleBootstrap | null;
  connections: ConnectionSummary[];
  core: CoreStatus | null;
  /** A changed certificate on a connection: refused until the user re-pins. */
  certificateProblem: ProxyProblem | null;
  /** A route to open (deep links), taken by the shell's navigator. */
  pendingRoute: string | null;
  set(partial: Partial<Omit<DesktopState, 'set'>>): void;
}

export const useDesktop = create<DesktopState>()((set) => ({
  bootstrap: null,
  connections: [],
  core: null,
  certificateProblem: null,
  pendingRoute: null,
  set: (partial) => set(partial),
}));
