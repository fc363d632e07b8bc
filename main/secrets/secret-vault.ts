/**
 * Secrets of the desktop app (tokens, the embedded appliance's password) kept with Electron's
 * safeStorage: each secret is one file of ciphertext (mode 0600) under `<userData>/secrets/`,
 * never plaintext on disk and never in the renderer's storage.
 *
 * When safeStorage cannot protect them (encryption unavailable, or on Linux the `basic_text`
 * backend, which "encrypts" with a hard-coded key when no keyring is running), the vault keeps
 * secrets in memory only: they are lost when the app quits, and the window says so. Callers that
 * must survive a restart anyway (the embedded appliance's own password) decide for themselves
 * where else to keep them (see embedded-credentials.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { SafeStorage } from 'electron';

import type { TokenStorage } from '../../electron/contract/bridge.js';

/** The part of Electron's safeStorage the vault uses (a fake in tests). */
export type SafeStorageLike = Pick<
  SafeStorage,
  'isEncryptionAvailable' | 'encryptString' | 'decryptString'
> &
  Partial<Pick<SafeStorage, 'getSelectedStorageBackend'>>;

export interface SecretVaultOptions {
  safeStorage: SafeStorageLike;
  /** `<userData>/secrets`. */
  directory: string;
  platform: NodeJS.Platform;
  log(message: string, error?: unknown): void;
}

/** Names are fixed by callers (`token.c-0123456789ab`, `embedded-admin-password`): no paths. */
const SECRET_NAME = /^[a-z][a-z0-9.-]{0,80}$/;

export class SecretVault {
  readonly storage: TokenStorage;
  /** Shown in the window when secrets cannot be persisted; null when they are. */
  readonly warning: string | null;
  private readonly memory = new Map<string, string>();

  constructor(private readonly options: SecretVaultOptions) {
    const backend =
      options.platform === 'linux' ? options.safeStorage.getSelectedStorageBackend?.() : undefined;
    if (!options.safeStorage.isEncryptionAvailable()) {
      this.storage = 'memory-only';
      this.warning =
        'The operating system offers no protected storage for secrets: sign-ins to remote appliances are kept in memory only and must be repeated after each start.';
    } else if (backend === 'basic_text') {
      this.storage = 'memory-only';
      this.warning =
        'No keyring (GNOME Keyring, KWallet) is running, so secrets cannot be stored encrypted: sign-ins to remote appliances are kept in memory only and must be repeated after each start.';
    } else {
      this.storage = 'os-keychain';
      this.warning = null;
    }
    if (this.warning) options.log(`secret storage: ${this.warning}`);
  }

  get persistent(): boolean {
    return this.storage === 'os-keychain';
  }

  get(name: string): string | undefined {
    checkName(name);
    if (!this.persistent) return this.memory.get(name);
    let ciphertext: Buffer;
    try {
      ciphertext = fs.readFileSync(this.fileOf(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return this.options.safeStorage.decryptString(ciphertext);
    } catch (error) {
      // A keyring that was reset cannot decrypt old secrets: forget them rather than fail forever.
      this.options.log(`secret ${name} could not be decrypted and is dropped`, error);
      this.delete(name);
      return undefined;
    }
  }

  set(name: string, value: string): void {
    checkName(name);
    if (!this.persistent) {
      this.memory.set(name, value);
      return;
    }
    const file = this.fileOf(name);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, this.options.safeStorage.encryptString(value), { mode: 0o600 });
    fs.renameSync(temporary, file);
  }

  delete(name: string): void {
    checkName(name);
    this.memory.delete(name);
    if (this.persistent) fs.rmSync(this.fileOf(name), { force: true });
  }

  private fileOf(name: string): string {
    return path.join(this.options.directory, `${name}.bin`);
  }
}

function checkName(name: string): void {
  if (!SECRET_NAME.test(name)) throw new Error(`invalid secret name ${JSON.stringify(name)}`);
}
