/**
 * Sign-in state of this tab. The login token lives in memory and in sessionStorage: a reload
 * keeps the session, closing the tab ends it, and another tab signs in on its own.
 *
 * browser_id = `spa:<uuid per tab>:<fp>`: the appliance keeps one live login token per
 * browser_id, so each tab has its own uuid (kept in sessionStorage for reloads) and two tabs never
 * revoke each other's token. fp is a short digest of stable traits of this browser.
 */
import { create } from 'zustand';

export interface SessionUser {
  id: number;
  email: string;
  name: string;
}

export interface SessionState {
  token: string | null;
  user: SessionUser | null;
  /** Set when the token died: the sign-in page explains it and returns here afterwards. */
  expiredAt: string | null;
  signIn: (token: string, user: SessionUser) => void;
  /**
   * Desktop app: main holds the connection's tokens, so `token` holds a marker
   * (desktopSessionMarker), never a credential, and nothing is written to sessionStorage.
   */
  signInDesktop: (connectionId: string, user: SessionUser | null) => void;
  /** The token is dead: forget it, remember where the person was. */
  expire: (returnTo: string) => void;
  signOut: () => void;
}

const STORAGE_KEY = 'console.session';
const TAB_KEY = 'console.tab';

function storage(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

function load(): Pick<SessionState, 'token' | 'user'> {
  const raw = storage()?.getItem(STORAGE_KEY);
  if (!raw) return { token: null, user: null };
  try {
    const parsed = JSON.parse(raw) as { token?: unknown; user?: SessionUser };
    return typeof parsed.token === 'string'
      ? { token: parsed.token, user: parsed.user ?? null }
      : { token: null, user: null };
  } catch {
    return { token: null, user: null };
  }
}

function save(token: string | null, user: SessionUser | null): void {
  const s = storage();
  if (!s) return;
  if (token) s.setItem(STORAGE_KEY, JSON.stringify({ token, user }));
  else s.removeItem(STORAGE_KEY);
}

export const useSession = create<SessionState>()((set) => ({
  ...load(),
  expiredAt: null,
  signIn(token, user) {
    save(token, user);
    set({ token, user, expiredAt: null });
  },
  signInDesktop(connectionId, user) {
    set({ token: desktopSessionMarker(connectionId), user, expiredAt: null });
  },
  expire(returnTo) {
    save(null, null);
    set({ token: null, user: null, expiredAt: returnTo });
  },
  signOut() {
    save(null, null);
    set({ token: null, user: null, expiredAt: null });
  },
}));

/** What `token` holds in the desktop app while main holds a sign-in for the connection. */
export function desktopSessionMarker(connectionId: string): string {
  return `desktop-session:${connectionId}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** A short digest of stable traits of this browser (not a tracking id: it never leaves the appliance). */
export function browserFingerprint(): string {
  const nav = globalThis.navigator;
  const traits = [
    nav?.userAgent ?? '',
    nav?.language ?? '',
    Intl.DateTimeFormat().resolvedOptions().timeZone ?? '',
    String(globalThis.screen?.colorDepth ?? ''),
  ];
  return fnv1a(traits.join('|'));
}

/** The uuid of this tab, created once and kept across reloads of the tab. */
export function tabId(): string {
  const s = storage();
  const existing = s?.getItem(TAB_KEY);
  if (existing && /^[0-9a-f-]{36}$/.test(existing)) return existing;
  const id = crypto.randomUUID();
  s?.setItem(TAB_KEY, id);
  return id;
}

export function browserId(): string {
  return `spa:${tabId()}:${browserFingerprint()}`;
}
