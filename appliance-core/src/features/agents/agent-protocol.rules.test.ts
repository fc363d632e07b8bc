/**
 * The protocol's pure rules (docs/agent-protocol.md): the datagram layout and its
 * authenticators, the HTTP signing string, the nonce memory and the download signature.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  adoptionHmacKey,
  decodeDatagram,
  downloadSignature,
  downloadSignatureValid,
  encodeDatagram,
  KIND,
  NonceMemory,
  rawPublicKey,
  serverIdOf,
  signHttpRequest,
  verifyHttpSignature,
} from './agent-protocol.rules.js';

const pair = crypto.generateKeyPairSync('ed25519');
const other = crypto.generateKeyPairSync('ed25519');

describe('datagrams', () => {
  it('lays out magic, version, kind, length, payload and a 64-byte signature; verifies only under the signing key', () => {
    const d = encodeDatagram(
      KIND.request,
      { op: 'processes' },
      { kind: 'ed25519', privateKey: pair.privateKey },
    );
    expect(d.subarray(0, 4).toString('ascii')).toBe('NMAG');
    expect([d[4], d[5]]).toEqual([1, 1]);
    const n = d.readUInt16BE(6);
    expect(d.length).toBe(8 + n + 64);
    expect(decodeDatagram(d, { publicKey: pair.publicKey })).toEqual({
      kind: 1,
      payload: { op: 'processes' },
    });
    expect(decodeDatagram(d, { publicKey: other.publicKey })).toBeNull();
    for (let i = 0; i < d.length; i += 7) {
      const flipped = Buffer.from(d);
      flipped[i] = (flipped[i] as number) ^ 1;
      expect(decodeDatagram(flipped, { publicKey: pair.publicKey }), `byte ${i}`).toBeNull();
    }
    expect(
      decodeDatagram(Buffer.concat([d, Buffer.from([0])]), { publicKey: pair.publicKey }),
    ).toBeNull();
    expect(decodeDatagram(d.subarray(0, d.length - 1), { publicKey: pair.publicKey })).toBeNull();
  });

  it('authenticates the adoption kinds with HMAC-SHA256 of sha256(adoption key)', () => {
    const key = adoptionHmacKey('adopt-key-0123456789');
    expect(key).toEqual(crypto.createHash('sha256').update('adopt-key-0123456789').digest());
    const d = encodeDatagram(KIND.adoptHello, { nonce: 'n' }, { kind: 'hmac', key });
    expect(d.length).toBe(8 + d.readUInt16BE(6) + 32);
    expect(decodeDatagram(d, { hmacKey: key })?.payload).toEqual({ nonce: 'n' });
    expect(decodeDatagram(d, { hmacKey: adoptionHmacKey('another-key-0123') })).toBeNull();
    // A signed kind is never accepted with an HMAC, nor an HMAC kind with a signature.
    expect(decodeDatagram(d, { publicKey: pair.publicKey })).toBeNull();
  });

  it('refuses to build a datagram over 1,200 bytes', () => {
    expect(() =>
      encodeDatagram(
        KIND.request,
        { x: 'y'.repeat(1200) },
        { kind: 'ed25519', privateKey: pair.privateKey },
      ),
    ).toThrow(/1,200/);
  });
});

describe('HTTP signatures', () => {
  const key = rawPublicKey(pair.publicKey);
  const headersOf = (h: Record<string, string>) => ({
    key: h['x-agent-key'],
    timestamp: h['x-agent-timestamp'],
    nonce: h['x-agent-nonce'],
    signature: h['x-agent-signature'],
  });

  it('verifies the path, the time window and the exact body', () => {
    const now = Date.now();
    const h = signHttpRequest(pair.privateKey, key, '/api/agent/checkin', '{"a":1}', now);
    expect(verifyHttpSignature(headersOf(h), '/api/agent/checkin', '{"a":1}', now)).toBe(key);
    expect(verifyHttpSignature(headersOf(h), '/api/agent/checkin', '{"a":2}', now)).toBeNull();
    expect(verifyHttpSignature(headersOf(h), '/api/agent/enroll', '{"a":1}', now)).toBeNull();
    expect(
      verifyHttpSignature(headersOf(h), '/api/agent/checkin', '{"a":1}', now + 120_001),
    ).toBeNull();
    expect(verifyHttpSignature(headersOf(h), '/api/agent/checkin', '{"a":1}', now + 119_000)).toBe(
      key,
    );
    expect(
      verifyHttpSignature({ ...headersOf(h), nonce: 'AAAA' }, '/api/agent/checkin', '{"a":1}', now),
    ).toBeNull();
    expect(
      verifyHttpSignature(
        { ...headersOf(h), key: rawPublicKey(other.publicKey) },
        '/api/agent/checkin',
        '{"a":1}',
        now,
      ),
    ).toBeNull();
  });

  it('remembers nonces for 10 minutes', () => {
    const m = new NonceMemory(600_000, 3);
    expect(m.remember('a', 0)).toBe(true);
    expect(m.remember('a', 599_999)).toBe(false);
    expect(m.remember('a', 600_000)).toBe(true);
  });
});

describe('server id and download signature', () => {
  it('server_id is the first 32 hex of sha256(raw public key)', () => {
    const x = rawPublicKey(pair.publicKey);
    expect(serverIdOf(x)).toBe(
      crypto.createHash('sha256').update(Buffer.from(x, 'base64url')).digest('hex').slice(0, 32),
    );
  });

  it('signs arch and expiry; refuses another arch, an expired or tampered signature', () => {
    const secret = crypto.randomBytes(32);
    const exp = 10_000;
    const sig = downloadSignature(secret, 'amd64', exp);
    expect(downloadSignatureValid(secret, 'amd64', String(exp), sig, 9_999)).toBe(true);
    expect(downloadSignatureValid(secret, 'amd64', String(exp), sig, 10_000)).toBe(false);
    expect(downloadSignatureValid(secret, 'arm64', String(exp), sig, 0)).toBe(false);
    expect(downloadSignatureValid(secret, 'amd64', String(exp + 1), sig, 0)).toBe(false);
    expect(downloadSignatureValid(crypto.randomBytes(32), 'amd64', String(exp), sig, 0)).toBe(
      false,
    );
    expect(downloadSignatureValid(secret, 'amd64', String(exp), `${sig}x`, 0)).toBe(false);
  });
});
