/**
 * The tokens of each connection, kept in the secret vault (safeStorage, or memory only without a
 * keyring). Two kinds: a login token (`POST /api/login`, no refresh; its lifetime is the
 * appliance's setting, not told to clients) and an OAuth grant from the device flow (access token
 * for 3600 s and a rotating refresh token). Only the main process reads them.
 */
import type { SecretVault } from './secret-vault.js';

export type ConnectionTokens =
  | { kind: 'login'; accessToken: string }
  | {
      kind: 'oauth';
      accessToken: string;
      refreshToken: string;
      /** Epoch milliseconds by the main process's clock. */
      expiresAt: number;
      scope: string;
    };

export class TokenStore {
  constructor(private readonly vault: SecretVault) {}

  get(connectionId: string): ConnectionTokens | undefined {
    const text = this.vault.get(nameOf(connectionId));
    if (text === undefined) return undefined;
    const parsed = parseTokens(text);
    if (!parsed) this.vault.delete(nameOf(connectionId));
    return parsed;
  }

  set(connectionId: string, tokens: ConnectionTokens): void {
    this.vault.set(nameOf(connectionId), JSON.stringify(tokens));
  }

  delete(connectionId: string): void {
    this.vault.delete(nameOf(connectionId));
  }
}

function nameOf(connectionId: string): string {
  return `token.${connectionId}`;
}

function parseTokens(text: string): ConnectionTokens | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.accessToken !== 'string' || record.accessToken === '') return undefined;
  if (record.kind === 'login') return { kind: 'login', accessToken: record.accessToken };
  if (
    record.kind === 'oauth' &&
    typeof record.refreshToken === 'string' &&
    typeof record.expiresAt === 'number' &&
    typeof record.scope === 'string'
  ) {
    return {
      kind: 'oauth',
      accessToken: record.accessToken,
      refreshToken: record.refreshToken,
      expiresAt: record.expiresAt,
      scope: record.scope,
    };
  }
  return undefined;
}
