/**
 * Stand-ins for the few Electron APIs whose binary cannot run here, faithful to what the code
 * relies on: safeStorage really encrypts (AES-256-GCM with a per-instance key, so ciphertext never
 * contains the plaintext and another instance cannot decrypt it), and reports the Linux backend it
 * is told to (`basic_text` when no keyring runs).
 */
import crypto from 'node:crypto';

import type { SafeStorageLike } from '../../main/secrets/secret-vault.js';

type Backend = 'basic_text' | 'gnome_libsecret' | 'kwallet' | 'kwallet5' | 'kwallet6' | 'unknown';

export class FakeSafeStorage implements SafeStorageLike {
  private readonly key = crypto.randomBytes(32);
  encryptCalls = 0;

  constructor(
    private readonly backend: Backend = 'gnome_libsecret',
    private readonly available = true,
  ) {}

  isEncryptionAvailable(): boolean {
    return this.available;
  }

  getSelectedStorageBackend(): Backend {
    return this.backend;
  }

  encryptString(plainText: string): Buffer {
    if (!this.available) throw new Error('Encryption is not available.');
    this.encryptCalls++;
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plainText, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from('v10'), iv, cipher.getAuthTag(), body]);
  }

  decryptString(encrypted: Buffer): string {
    if (!this.available) throw new Error('Decryption is not available.');
    if (encrypted.subarray(0, 3).toString() !== 'v10')
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      );
    const iv = encrypted.subarray(3, 15);
    const tag = encrypted.subarray(15, 31);
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(encrypted.subarray(31)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      );
    }
  }
}
