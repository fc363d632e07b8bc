/**
 * Bearer tokens: 32 random bytes, base64url, behind a short prefix that tells what minted it.
 * Only SHA-256 digests are stored or compared; the plaintext exists once, in a response.
 */
import crypto from 'node:crypto';

export function mintToken(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  // crypto.hash is the one-shot form (no Hash object per call): this runs on every request.
  return crypto.hash('sha256', token, 'buffer');
}
