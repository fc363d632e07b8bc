/**
 * Encryption at rest for stored secrets (SNMP communities, bind passwords, TOTP secrets):
 * AES-256-GCM under a 32-byte key kept in the data dir with mode 0600.
 * Sealed form: `v1:<base64url(iv | tag | ciphertext)>`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes');
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1:')) throw new Error('unknown sealed-secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** Reads the key file, creating it (0600) on first start. */
export function loadOrCreateKey(file: string): Buffer {
  if (fs.existsSync(file)) {
    const key = fs.readFileSync(file);
    if (key.length !== 32)
      throw new Error(`secret key ${file} is damaged (expected 32 bytes, found ${key.length})`);
    return key;
  }
  const key = crypto.randomBytes(32);
  fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
  return key;
}
