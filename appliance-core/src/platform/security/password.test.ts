/**
 * Password hashing (scrypt, parameters carried in the hash) and the local password policy
 * (spec part 1, Authentication 8). One hash at the default strength (~0.4 s) is shared; the other
 * cases use cheap parameters, which verifyPassword reads back from the stored string.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCRYPT,
  dummyPasswordHash,
  hashPassword,
  needsRehash,
  passwordPolicyProblem,
  verifyPassword,
  type ScryptParams,
} from './password.js';

const CHEAP: ScryptParams = { N: 1024, r: 8, p: 1 };
const B64URL = '[A-Za-z0-9_-]';

describe('hashPassword / verifyPassword', () => {
  let strong: string;
  beforeAll(async () => {
    strong = await hashPassword('Correct-Horse-1');
  });

  it('uses scrypt N=2^17, r=8, p=1 by default and stores the parameters, a 16-byte salt and a 32-byte key in the hash', () => {
    expect(DEFAULT_SCRYPT).toEqual({ N: 131072, r: 8, p: 1 });
    expect(strong.startsWith('scrypt$131072$8$1$')).toBe(true);
    expect(strong).toMatch(new RegExp(`^scrypt\\$131072\\$8\\$1\\$${B64URL}{22}\\$${B64URL}{43}$`));
  });

  it('stores the scrypt key of the NFKC password under the stored salt (known answer from node:crypto)', async () => {
    const check = (hash: string, password: string) => {
      const [, N, r, p, salt, key] = hash.split('$') as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const expected = crypto.scryptSync(
        password.normalize('NFKC'),
        Buffer.from(salt, 'base64url'),
        32,
        {
          N: Number(N),
          r: Number(r),
          p: Number(p),
          maxmem: 256 * Number(N) * Number(r),
        },
      );
      expect(Buffer.from(key, 'base64url').equals(expected)).toBe(true);
    };
    check(strong, 'Correct-Horse-1');
    check(await hashPassword('ﬁre-Ｓｔａｒ-9', CHEAP), 'ﬁre-Ｓｔａｒ-9');
  });

  it('verifies the right password and refuses a wrong one (round trip at the default strength)', async () => {
    expect(await verifyPassword('Correct-Horse-1', strong)).toBe(true);
    expect(await verifyPassword('Correct-Horse-2', strong)).toBe(false);
    expect(await verifyPassword('correct-horse-1', strong)).toBe(false);
    expect(await verifyPassword('', strong)).toBe(false);
  });

  it('salts every hash: the same password never hashes to the same string', async () => {
    const a = await hashPassword('Same-Passw0rd', CHEAP);
    const b = await hashPassword('Same-Passw0rd', CHEAP);
    expect(a).not.toBe(b);
    expect(await verifyPassword('Same-Passw0rd', a)).toBe(true);
    expect(await verifyPassword('Same-Passw0rd', b)).toBe(true);
  });

  it('verifies with the parameters stored in the hash, not the current default', async () => {
    const cheap = await hashPassword('Old-Passw0rd', CHEAP);
    expect(cheap.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPassword('Old-Passw0rd', cheap)).toBe(true);
    expect(await verifyPassword('Old-Passw0rd!', cheap)).toBe(false);
  });

  it('normalizes to NFKC before hashing (composed and decomposed forms are the same password)', async () => {
    const hash = await hashPassword('Caf\u00e9-Passw0rd', CHEAP);
    expect(await verifyPassword('Cafe\u0301-Passw0rd', hash)).toBe(true);
  });

  it('refuses a missing hash (null or empty): accounts without a local password never sign in with one', async () => {
    expect(await verifyPassword('anything', null)).toBe(false);
    expect(await verifyPassword('', null)).toBe(false);
    expect(await verifyPassword('anything', '')).toBe(false);
  });

  it('refuses hashes of another scheme or with the wrong number of parts', async () => {
    const good = await hashPassword('Passw0rd-x', CHEAP);
    const parts = good.split('$');
    for (const stored of [
      'garbage',
      'scrypt',
      `bcrypt$${parts.slice(1).join('$')}`,
      parts.slice(0, 5).join('$'),
      `${good}$extra`,
      '$2b$10$abcdefghijklmnopqrstuv',
    ]) {
      expect(await verifyPassword('Passw0rd-x', stored), stored).toBe(false);
    }
  });

  it('answers false (never throws) for a malformed scrypt hash with unusable parameters', async () => {
    const salt = 'AAAAAAAAAAAAAAAAAAAAAA';
    const key = 'B'.repeat(43);
    for (const stored of [
      `scrypt$abc$8$1$${salt}$${key}`,
      `scrypt$3$8$1$${salt}$${key}`,
      `scrypt$1024$0$1$${salt}$${key}`,
      `scrypt$$$$$`,
      // Well-formed, but scrypt itself refuses it (N = 2 needs more memory than the limit given).
      `scrypt$2$8$1$${salt}$${key}`,
    ]) {
      await expect(verifyPassword('Passw0rd-x', stored), stored).resolves.toBe(false);
    }
  });

  it('never accepts an arbitrary password against a hash whose key part is empty or truncated', async () => {
    const good = await hashPassword('Passw0rd-x', CHEAP);
    const [scheme, N, r, p, salt] = good.split('$');
    for (const key of ['', 'B']) {
      const stored = [scheme, N, r, p, salt, key].join('$');
      expect(await verifyPassword('any password at all', stored), stored).toBe(false);
    }
  });
});

describe('verifyPassword: the parameter bounds of a stored hash', () => {
  /** A hash with the right key for `password`, built with node:crypto directly (no bounds). */
  const forged = (
    password: string,
    N: number,
    r: number,
    p: number,
    saltBytes = 16,
    keyBytes = 32,
  ): string => {
    const salt = crypto.randomBytes(saltBytes);
    const key = crypto.scryptSync(password.normalize('NFKC'), salt, keyBytes, {
      N,
      r,
      p,
      maxmem: 256 * N * r + 1_048_576,
    });
    return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
  };

  it('verifies hashes at the edges it accepts: r 1 and 64, p 1 and 16, an 8-byte salt, a 16-byte key', async () => {
    for (const [N, r, p, salt, key] of [
      [16, 1, 1, 16, 32],
      [16, 64, 1, 16, 32],
      [1024, 8, 16, 16, 32],
      [16, 8, 1, 8, 32],
      [16, 8, 1, 16, 16],
    ] as const) {
      const stored = forged('Passw0rd-x', N, r, p, salt, key);
      expect(await verifyPassword('Passw0rd-x', stored), stored).toBe(true);
      expect(await verifyPassword('Passw0rd-y', stored), stored).toBe(false);
    }
  });

  it('refuses, even with the right key, r above 64, p above 16, a salt under 8 bytes or a key under 16', async () => {
    for (const [N, r, p, salt, key] of [
      [16, 65, 1, 16, 32],
      [1024, 8, 17, 16, 32],
      [16, 8, 1, 7, 32],
      [16, 8, 1, 16, 15],
    ] as const) {
      const stored = forged('Passw0rd-x', N, r, p, salt, key);
      expect(await verifyPassword('Passw0rd-x', stored), stored).toBe(false);
    }
  });

  it('refuses N that is not a power of two from 2 to 2^24, and non-integer r or p', async () => {
    const salt = crypto.randomBytes(16).toString('base64url');
    const key = crypto.randomBytes(32).toString('base64url');
    for (const stored of [
      `scrypt$1$8$1$${salt}$${key}`,
      `scrypt$0$8$1$${salt}$${key}`,
      `scrypt$-16$8$1$${salt}$${key}`,
      `scrypt$24$8$1$${salt}$${key}`,
      `scrypt$16.5$8$1$${salt}$${key}`,
      `scrypt$33554432$1$1$${salt}$${key}`,
      `scrypt$16$1.5$1$${salt}$${key}`,
      `scrypt$16$8$1.5$${salt}$${key}`,
      `scrypt$16$8$0$${salt}$${key}`,
    ]) {
      expect(await verifyPassword('Passw0rd-x', stored), stored).toBe(false);
    }
  });
});

describe('dummyPasswordHash (verified against for unknown users, so they cost the same)', () => {
  it('is one hash at the default strength, made once, that no guess verifies against', async () => {
    const first = dummyPasswordHash();
    expect(dummyPasswordHash()).toBe(first);
    const hash = await first;
    expect(hash).toMatch(new RegExp(`^scrypt\\$131072\\$8\\$1\\$${B64URL}{22}\\$${B64URL}{43}$`));
    expect(await verifyPassword('', hash)).toBe(false);
  });
});

describe('needsRehash', () => {
  it('is false for a hash made at the current default', async () => {
    expect(needsRehash(`scrypt$131072$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}`)).toBe(false);
  });

  it('is true when any stored parameter is below the default', () => {
    expect(needsRehash(`scrypt$1024$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}`)).toBe(true);
    expect(needsRehash(`scrypt$131072$4$1$${'A'.repeat(22)}$${'B'.repeat(43)}`)).toBe(true);
    expect(needsRehash('scrypt$131072$8$1$x$y', { N: 131072, r: 8, p: 2 })).toBe(true);
  });

  it('is false for a hash stronger than the default, and compares against the parameters given', async () => {
    expect(needsRehash('scrypt$262144$8$1$x$y')).toBe(false);
    const cheap = await hashPassword('Passw0rd-x', CHEAP);
    expect(needsRehash(cheap, CHEAP)).toBe(false);
    expect(needsRehash(cheap)).toBe(true);
  });
});

describe('passwordPolicyProblem (at least 8 characters, a lowercase letter, an uppercase letter and a digit)', () => {
  it('accepts a password meeting every rule, from exactly 8 characters', () => {
    expect(passwordPolicyProblem('Abcdefg1')).toBeNull();
    expect(passwordPolicyProblem('Correct-Horse-Battery-9')).toBeNull();
    expect(passwordPolicyProblem('1aB45678')).toBeNull();
  });

  it('refuses fewer than 8 characters', () => {
    expect(passwordPolicyProblem('Abcdef1')).toBe(
      'The password field must be at least 8 characters.',
    );
    expect(passwordPolicyProblem('')).toBe('The password field must be at least 8 characters.');
  });

  it('refuses a password without a lowercase letter', () => {
    expect(passwordPolicyProblem('ABCDEFG1')).toBe(
      'The password field must contain at least one uppercase and one lowercase letter.',
    );
  });

  it('refuses a password without an uppercase letter', () => {
    expect(passwordPolicyProblem('abcdefg1')).toBe(
      'The password field must contain at least one uppercase and one lowercase letter.',
    );
  });

  it('refuses a password without a digit', () => {
    expect(passwordPolicyProblem('Abcdefgh')).toBe(
      'The password field must contain at least one number.',
    );
    expect(passwordPolicyProblem('Abcdefgh-!')).toBe(
      'The password field must contain at least one number.',
    );
  });

  it('reports the length rule first when several rules fail', () => {
    expect(passwordPolicyProblem('abc')).toBe('The password field must be at least 8 characters.');
  });
});
