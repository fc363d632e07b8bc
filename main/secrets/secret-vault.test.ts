import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { FakeSafeStorage } from '../../test/harness/fake-electron.js';
import { SecretVault } from './secret-vault.js';
import { TokenStore } from './token-store.js';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'vault-'));
}

function vaultWith(
  safeStorage: FakeSafeStorage,
  directory = tempDir(),
  platform: NodeJS.Platform = 'linux',
) {
  const logged: string[] = [];
  const vault = new SecretVault({ safeStorage, directory, platform, log: (m) => logged.push(m) });
  return { vault, directory, logged };
}

const ACCESS = 'ey-access-token-0123456789abcdef';
const REFRESH = 'rt-refresh-token-fedcba9876543210';

describe('SecretVault over safeStorage', () => {
  it('keeps secrets as ciphertext files (0600), never plaintext', () => {
    const { vault, directory } = vaultWith(new FakeSafeStorage('gnome_libsecret'));
    expect(vault.storage).toBe('os-keychain');
    expect(vault.warning).toBeNull();
    const tokens = new TokenStore(vault);
    tokens.set('c-0123456789ab', {
      kind: 'oauth',
      accessToken: ACCESS,
      refreshToken: REFRESH,
      expiresAt: 1_000,
      scope: 'mcp:devices',
    });
    const files = fs.readdirSync(directory);
    expect(files).toEqual(['token.c-0123456789ab.bin']);
    const file = path.join(directory, files[0] as string);
    const bytes = fs.readFileSync(file);
    expect(bytes.includes(ACCESS)).toBe(false);
    expect(bytes.includes(REFRESH)).toBe(false);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(tokens.get('c-0123456789ab')).toMatchObject({
      accessToken: ACCESS,
      refreshToken: REFRESH,
    });
    tokens.delete('c-0123456789ab');
    expect(tokens.get('c-0123456789ab')).toBeUndefined();
    expect(fs.readdirSync(directory)).toEqual([]);
  });

  it('survives a restart with the same keyring, and drops what it can no longer decrypt', () => {
    const safeStorage = new FakeSafeStorage('kwallet6');
    const { vault, directory } = vaultWith(safeStorage);
    vault.set('embedded-admin-password', 'Aa1-secret');
    expect(vaultWith(safeStorage, directory).vault.get('embedded-admin-password')).toBe(
      'Aa1-secret',
    );

    // A reset keyring (another key) cannot decrypt: the secret is forgotten, not an error forever.
    const { vault: other, logged } = vaultWith(new FakeSafeStorage('kwallet6'), directory);
    expect(other.get('embedded-admin-password')).toBeUndefined();
    expect(logged.join('\n')).toMatch(/could not be decrypted/);
    expect(fs.readdirSync(directory)).toEqual([]);
  });

  it('with the basic_text backend, warns and keeps secrets in memory only', () => {
    const safeStorage = new FakeSafeStorage('basic_text');
    const { vault, directory, logged } = vaultWith(safeStorage);
    expect(vault.storage).toBe('memory-only');
    expect(vault.warning).toMatch(/No keyring/);
    expect(logged).toHaveLength(1);
    vault.set('token.c-0123456789ab', ACCESS);
    expect(vault.get('token.c-0123456789ab')).toBe(ACCESS);
    expect(fs.readdirSync(directory)).toEqual([]);
    expect(safeStorage.encryptCalls).toBe(0);
    // The next start knows nothing.
    expect(vaultWith(safeStorage, directory).vault.get('token.c-0123456789ab')).toBeUndefined();
  });

  it('basic_text matters on Linux only; no encryption at all is memory-only everywhere', () => {
    expect(vaultWith(new FakeSafeStorage('basic_text'), tempDir(), 'darwin').vault.storage).toBe(
      'os-keychain',
    );
    const { vault } = vaultWith(new FakeSafeStorage('unknown', false), tempDir(), 'win32');
    expect(vault.storage).toBe('memory-only');
    expect(vault.warning).toMatch(/no protected storage/);
  });

  it('refuses names that could be paths', () => {
    const { vault } = vaultWith(new FakeSafeStorage());
    for (const name of ['../x', 'a/b', '', 'A', 'x'.repeat(100)]) {
      expect(() => vault.set(name, 'v')).toThrow(/invalid secret name/);
    }
  });
});
