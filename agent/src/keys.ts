/**
 * Keys and encodings of the agent protocol (docs/agent-protocol.md §1): base64url, SHA-256, the
 * agent's own Ed25519 key (created at first start, mode 0600), and public keys carried as the raw
 * 32 bytes (the JWK `x` value).
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function b64u(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** Decodes base64url without padding; null when the text is not canonical base64url. */
export function fromB64u(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

export function sha256hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function sha256(bytes: Uint8Array | string): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** An Ed25519 public key from its b64u raw form; null when it is not 32 bytes. */
export function publicKeyFromB64u(x: string): KeyObject | null {
  const raw = fromB64u(x);
  if (!raw || raw.length !== 32) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  } catch {
    return null;
  }
}

export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

/** `server_id`: the first 32 hex characters of sha256hex(raw appliance public key). */
export function serverIdOf(publicKeyB64u: string): string | null {
  const raw = fromB64u(publicKeyB64u);
  if (!raw || raw.length !== 32) return null;
  return sha256hex(raw).slice(0, 32);
}

export function ed25519Sign(privateKey: KeyObject, data: Uint8Array | string): Buffer {
  return sign(null, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, privateKey);
}

export function ed25519Verify(
  publicKey: KeyObject,
  data: Uint8Array | string,
  signature: Uint8Array,
): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(
      null,
      typeof data === 'string' ? Buffer.from(data, 'utf8') : data,
      publicKey,
      signature,
    );
  } catch {
    return false;
  }
}

export interface AgentKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** b64u raw public key, as sent in X-Agent-Key and the adopt-reply. */
  publicB64u: string;
}

/** Loads `agent-key.pem` from the state dir, creating it (mode 0600) at first start. */
export function loadOrCreateAgentKey(stateDir: string): AgentKey {
  const file = path.join(stateDir, 'agent-key.pem');
  let privateKey: KeyObject;
  if (existsSync(file)) {
    privateKey = createPrivateKey(readFileSync(file));
  } else {
    privateKey = generateKeyPairSync('ed25519').privateKey;
    writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicB64u: b64u(rawPublicKey(publicKey)) };
}
