/**
 * The UDP datagram of docs/agent-protocol.md §4: magic `NMAG`, version 1, kind, big-endian payload
 * length, UTF-8 JSON payload, then the authenticator (64-byte Ed25519 signature for kinds 1 and 4,
 * 32-byte HMAC-SHA256 for kinds 2, 3 and 5) over header and payload. At most 1,200 bytes.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

import { ed25519Sign, ed25519Verify } from './keys.js';

export const MAX_DATAGRAM = 1200;
const MAGIC = Buffer.from('NMAG', 'ascii');

export const Kind = {
  request: 1,
  adoptHello: 2,
  adoptReply: 3,
  bundlePush: 4,
  bundleAck: 5,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export function authLength(kind: number): number | null {
  if (kind === Kind.request || kind === Kind.bundlePush) return 64;
  if (kind === Kind.adoptHello || kind === Kind.adoptReply || kind === Kind.bundleAck) return 32;
  return null;
}

export interface Datagram {
  kind: Kind;
  /** Header and payload: the bytes the authenticator covers. */
  covered: Buffer;
  payload: unknown;
  authenticator: Buffer;
}

/** Parses the frame; null for any other length, magic, version or kind, or a payload that is not JSON. */
export function parseDatagram(bytes: Buffer): Datagram | null {
  if (bytes.length < 8 || bytes.length > MAX_DATAGRAM) return null;
  if (!bytes.subarray(0, 4).equals(MAGIC) || bytes[4] !== 1) return null;
  const kind = bytes[5] ?? 0;
  const auth = authLength(kind);
  if (auth === null) return null;
  const n = bytes.readUInt16BE(6);
  if (bytes.length !== 8 + n + auth) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)),
    );
  } catch {
    return null;
  }
  return {
    kind: kind as Kind,
    covered: bytes.subarray(0, 8 + n),
    payload,
    authenticator: bytes.subarray(8 + n),
  };
}

function frame(kind: Kind, payload: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(payload), 'utf8');
  const header = Buffer.alloc(8);
  MAGIC.copy(header, 0);
  header[4] = 1;
  header[5] = kind;
  header.writeUInt16BE(json.length, 6);
  return Buffer.concat([header, json]);
}

export function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

export function encodeSigned(kind: Kind, payload: unknown, privateKey: KeyObject): Buffer {
  const covered = frame(kind, payload);
  const out = Buffer.concat([covered, ed25519Sign(privateKey, covered)]);
  if (out.length > MAX_DATAGRAM) throw new Error('datagram over 1,200 bytes');
  return out;
}

export function encodeHmac(kind: Kind, payload: unknown, key: Buffer): Buffer {
  const covered = frame(kind, payload);
  const out = Buffer.concat([covered, hmac(key, covered)]);
  if (out.length > MAX_DATAGRAM) throw new Error('datagram over 1,200 bytes');
  return out;
}

export function verifySigned(datagram: Datagram, publicKey: KeyObject): boolean {
  return ed25519Verify(publicKey, datagram.covered, datagram.authenticator);
}

export function verifyHmac(datagram: Datagram, key: Buffer): boolean {
  const expected = hmac(key, datagram.covered);
  return (
    expected.length === datagram.authenticator.length &&
    timingSafeEqual(expected, datagram.authenticator)
  );
}
