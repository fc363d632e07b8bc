/**
 * Token minting and hashing: the format of a minted token (prefix, 32 random bytes in base64url)
 * and SHA-256 digests checked against known answers (FIPS 180-2 test vectors), so that a changed
 * algorithm or encoding fails here and not only through a whole appliance.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken, mintToken } from './tokens.js';

describe('mintToken', () => {
  it('is the prefix, an underscore and 32 random bytes in base64url (43 characters)', () => {
    const token = mintToken('pat');
    expect(token).toMatch(/^pat_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    expect(Buffer.from(token.slice(4), 'base64url').toString('base64url')).toBe(token.slice(4));
  });

  it('never repeats itself', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => mintToken('x')));
    expect(tokens.size).toBe(1000);
  });
});

describe('hashToken', () => {
  it('is the SHA-256 digest of the token, as 32 raw bytes (known answers)', () => {
    const abc = hashToken('abc');
    expect(Buffer.isBuffer(abc)).toBe(true);
    expect(abc.toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hashToken('').toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('hashes the UTF-8 text of the whole token', () => {
    const token = mintToken('apo');
    expect(hashToken(token)).toEqual(crypto.createHash('sha256').update(token, 'utf8').digest());
    expect(hashToken('pässwörd')).toEqual(
      crypto.createHash('sha256').update(Buffer.from('pässwörd', 'utf8')).digest(),
    );
  });
});
