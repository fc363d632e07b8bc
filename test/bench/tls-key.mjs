/**
 * The appliance's TLS private key for the bench servers that reuse its identity: the key is
 * stored sealed (tls/key.sealed, AES-256-GCM under secret.key, the format of
 * platform/security/secret-box.ts), so it is opened here in memory, never written out.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function openTlsKey(dataDir) {
  const key = fs.readFileSync(path.join(dataDir, 'secret.key'));
  const sealed = fs.readFileSync(path.join(dataDir, 'tls', 'key.sealed'), 'utf8').trim();
  if (!sealed.startsWith('v1:')) throw new Error('unknown sealed-key format');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
