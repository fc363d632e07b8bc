import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../security/secret-box.js';
import {
  ENCRYPTED_SENTINEL,
  isSentinel,
  maskSecret,
  nextSealedSecret,
  resolveSecret,
} from './encrypted-field.js';

describe('encrypted fields', () => {
  const box = new SecretBox(crypto.randomBytes(32));
  const stored = box.seal('old-secret');

  it('masks a stored secret with the sentinel and shows null when none is stored', () => {
    expect(maskSecret(stored)).toEqual({ __encrypted__: true });
    expect(maskSecret(null)).toBeNull();
    expect(JSON.stringify(maskSecret(stored))).not.toContain('old');
  });

  it('keeps the stored secret for the sentinel, an empty value or an omitted field', () => {
    expect(nextSealedSecret(box, stored, ENCRYPTED_SENTINEL)).toBe(stored);
    expect(nextSealedSecret(box, stored, { __encrypted__: true })).toBe(stored);
    expect(nextSealedSecret(box, stored, '')).toBe(stored);
    expect(nextSealedSecret(box, stored, undefined)).toBe(stored);
    expect(nextSealedSecret(box, stored, null)).toBe(stored);
  });

  it('replaces it on new plaintext', () => {
    const next = nextSealedSecret(box, stored, 'new-secret');
    expect(next).not.toBe(stored);
    expect(box.open(next as string)).toBe('new-secret');
    expect(() => nextSealedSecret(box, stored, 42)).toThrow(TypeError);
  });

  it('resolves the plaintext to use for an action', () => {
    expect(resolveSecret(box, stored, ENCRYPTED_SENTINEL)).toBe('old-secret');
    expect(resolveSecret(box, stored, '')).toBe('old-secret');
    expect(resolveSecret(box, stored, 'typed')).toBe('typed');
    expect(resolveSecret(box, null, undefined)).toBeNull();
    expect(isSentinel({ __encrypted__: false })).toBe(false);
  });
});
