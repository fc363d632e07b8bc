/**
 * The agent protocol's pure rules (docs/agent-protocol.md, version 1): encodings, the signing
 * strings, the datagram layout, the signed download URL, and the field rules of the spec. No I/O:
 * the keys are handed in.
 */
import crypto, { type KeyObject } from 'node:crypto';

export const b64u = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** Decodes base64url without padding; null when the text is not exactly that. */
export function fromB64u(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

export const sha256hex = (bytes: Uint8Array | string): string =>
  crypto.createHash('sha256').update(bytes).digest('hex');

/** The Ed25519 public key of a raw 32-byte key in b64u (the JWK `x`), or null. */
export function publicKeyOf(x: string): KeyObject | null {
  const raw = fromB64u(x);
  if (!raw || raw.length !== 32) return null;
  try {
    return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  } catch {
    return null;
  }
}

/** The raw 32 bytes of an Ed25519 public key, in b64u. */
export function rawPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  return jwk.x as string;
}

/** `server_id`: the first 32 hex characters of sha256(raw appliance public key). */
export function serverIdOf(publicKeyB64u: string): string {
  return sha256hex(fromB64u(publicKeyB64u) ?? Buffer.alloc(0)).slice(0, 32);
}

// --- §3: signed HTTPS requests from the agent -------------------------------------------------

export const HTTP_SIGNATURE_WINDOW_MS = 120_000;
export const NONCE_MEMORY_MS = 10 * 60_000;
export const NONCE_MEMORY_MAX = 100_000;

export function httpSigningString(
  path: string,
  timestamp: string,
  nonce: string,
  body: Uint8Array | string,
): string {
  return ['NETMON-AGENT-HTTP-1', 'POST', path, timestamp, nonce, sha256hex(body)].join('\n');
}

export interface SignedHeaders {
  key: string;
  timestamp: string;
  nonce: string;
  signature: string;
}

/**
 * Steps 1 to 3 of §3: headers well formed, timestamp within ±120 s, signature valid under the
 * key. Returns the agent's key (b64u) or null. Steps 4 (nonce) and 5 (registered key) are the
 * caller's: they need state.
 */
export function verifyHttpSignature(
  headers: Partial<SignedHeaders>,
  path: string,
  body: Uint8Array | string,
  now: number,
): string | null {
  const { key, timestamp, nonce, signature } = headers;
  if (!key || !timestamp || !nonce || !signature) return null;
  const publicKey = publicKeyOf(key);
  const nonceBytes = fromB64u(nonce);
  const sig = fromB64u(signature);
  if (!publicKey || nonceBytes?.length !== 16 || sig?.length !== 64) return null;
  if (!/^\d{1,16}$/.test(timestamp)) return null;
  if (Math.abs(Number(timestamp) - now) > HTTP_SIGNATURE_WINDOW_MS) return null;
  const text = httpSigningString(path, timestamp, nonce, body);
  return crypto.verify(null, Buffer.from(text), publicKey, sig) ? key : null;
}

/** Signs a request as an agent does (the tests' agents and the reference agent use the same rule). */
export function signHttpRequest(
  privateKey: KeyObject,
  publicKeyB64u: string,
  path: string,
  body: string,
  now: number,
): Record<string, string> {
  const timestamp = String(now);
  const nonce = b64u(crypto.randomBytes(16));
  const signature = crypto.sign(
    null,
    Buffer.from(httpSigningString(path, timestamp, nonce, body)),
    privateKey,
  );
  return {
    'x-agent-key': publicKeyB64u,
    'x-agent-timestamp': timestamp,
    'x-agent-nonce': nonce,
    'x-agent-signature': b64u(signature),
  };
}

/** Remembers nonces for 10 minutes, at most 100,000 (the oldest go first). */
export class NonceMemory {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly ttlMs = NONCE_MEMORY_MS,
    private readonly max = NONCE_MEMORY_MAX,
  ) {}

  /** True when the nonce is new (and remembers it); false for a replay. */
  remember(nonce: string, now: number): boolean {
    const at = this.seen.get(nonce);
    if (at !== undefined && at + this.ttlMs > now) return false;
    if (this.seen.size >= this.max) {
      for (const [n, t] of this.seen) {
        if (t + this.ttlMs > now && this.seen.size < this.max) break;
        this.seen.delete(n);
      }
    }
    this.seen.set(nonce, now);
    return true;
  }
}

// --- §4: datagrams --------------------------------------------------------------------------

export const MAGIC = Buffer.from('NMAG', 'ascii');
export const DATAGRAM_MAX = 1200;
export const KIND = {
  request: 1,
  adoptHello: 2,
  adoptReply: 3,
  bundlePush: 4,
  bundleAck: 5,
} as const;
const SIGNED_KINDS = new Set<number>([KIND.request, KIND.bundlePush]);

export type Authenticator =
  { kind: 'ed25519'; privateKey: KeyObject } | { kind: 'hmac'; key: Buffer };

/** Builds one datagram; throws when it would exceed 1,200 bytes. */
export function encodeDatagram(kind: number, payload: unknown, auth: Authenticator): Buffer {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const header = Buffer.alloc(8);
  MAGIC.copy(header, 0);
  header[4] = 1;
  header[5] = kind;
  header.writeUInt16BE(body.length, 6);
  const signed = Buffer.concat([header, body]);
  const tag =
    auth.kind === 'ed25519'
      ? crypto.sign(null, signed, auth.privateKey)
      : crypto.createHmac('sha256', auth.key).update(signed).digest();
  const datagram = Buffer.concat([signed, tag]);
  if (datagram.length > DATAGRAM_MAX) throw new Error('datagram larger than 1,200 bytes');
  return datagram;
}

/**
 * Reads a datagram: layout, magic, version, kind and authenticator. Returns the kind and payload,
 * or null for anything else (dropped without an answer).
 */
export function decodeDatagram(
  datagram: Buffer,
  verify: { publicKey?: KeyObject; hmacKey?: Buffer },
): { kind: number; payload: Record<string, unknown> } | null {
  if (datagram.length < 8 || datagram.length > DATAGRAM_MAX) return null;
  if (!datagram.subarray(0, 4).equals(MAGIC) || datagram[4] !== 1) return null;
  const kind = datagram[5] as number;
  if (kind < 1 || kind > 5) return null;
  const n = datagram.readUInt16BE(6);
  const tagLength = SIGNED_KINDS.has(kind) ? 64 : 32;
  if (datagram.length !== 8 + n + tagLength) return null;
  const signed = datagram.subarray(0, 8 + n);
  const tag = datagram.subarray(8 + n);
  if (SIGNED_KINDS.has(kind)) {
    if (!verify.publicKey || !crypto.verify(null, signed, verify.publicKey, tag)) return null;
  } else {
    if (!verify.hmacKey) return null;
    const expected = crypto.createHmac('sha256', verify.hmacKey).update(signed).digest();
    if (!crypto.timingSafeEqual(expected, tag)) return null;
  }
  try {
    const payload = JSON.parse(datagram.subarray(8, 8 + n).toString('utf8')) as unknown;
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
    return { kind, payload: payload as Record<string, unknown> };
  } catch {
    return null;
  }
}

/** The HMAC key of the adoption exchange: sha256(adoption key). */
export const adoptionHmacKey = (adoptionKey: string): Buffer =>
  crypto.createHash('sha256').update(adoptionKey, 'utf8').digest();

// --- §7: signed download URLs ----------------------------------------------------------------

export const DOWNLOAD_URL_TTL_MS = 60 * 60_000;

export function downloadSignature(secret: Buffer, arch: string, expires: number | string): string {
  return b64u(
    crypto.createHmac('sha256', secret).update(`NETMON-AGENT-DL-1\n${arch}\n${expires}`).digest(),
  );
}

/** True when `sig` is the signature of (arch, expires) and `expires` is in the future. */
export function downloadSignatureValid(
  secret: Buffer,
  arch: string,
  expires: string | undefined,
  sig: string | undefined,
  now: number,
): boolean {
  if (!expires || !sig || !/^\d{1,16}$/.test(expires) || Number(expires) <= now) return false;
  const given = fromB64u(sig);
  const expected = Buffer.from(downloadSignature(secret, arch, expires), 'base64url');
  return (
    given !== null && given.length === expected.length && crypto.timingSafeEqual(given, expected)
  );
}

// --- the spec's field rules ------------------------------------------------------------------

export const AGENT_UUID = '^[A-Za-z0-9_:-]{8,64}$';
/** Printable ASCII without angle brackets. */
export const HOSTNAME = '^[\\x20-\\x3B\\x3D\\x3F-\\x7E]{1,255}$';
export const ADOPTION_KEY = '^[A-Za-z0-9_-]{10,64}$';
export const ARCHES = ['amd64', 'arm64'] as const;
export type Arch = (typeof ARCHES)[number];
