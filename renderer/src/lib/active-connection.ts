/**
 * Which appliance the desktop window shows (`null` in a browser: the page's own origin). UI
 * state only; the connection list and sign-in state come from the main process.
 */
import { create } from 'zustand';

export interface ActiveConnectionState {
  connectionId: string | null;
  setConnectionId(connectionId: string | null): void;
}

export const useActiveConnection = create<ActiveConnectionState>()((set) => ({
  connectionId: null,
  setConnectionId: (connectionId) => set({ connectionId }),
}));

/** The cache scope of the active connection (lib/query-client.ts queryClientFor). */
export function cacheScope(connectionId: string | null): string {
  return connectionId ?? 'browser';
}
