/**
 * Password hashing with scrypt at OWASP strength. The parameters travel with each hash
 * (`scrypt$N$r$p$salt$hash`), so they can be raised later and old hashes still verify.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  password: crypto.BinaryLike,
  salt: crypto.BinaryLike,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** OWASP Password Storage Cheat Sheet: scrypt N=2^17, r=8, p=1. */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

function maxmem(params: ScryptParams): number {
  return 128 * params.N * params.r * 2;
}

export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT,
): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, {
    ...params,
    maxmem: maxmem(params),
  });
  return [
    'scrypt',
    params.N,
    params.r,
    params.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

const MIN_KEY_BYTES = 16;

/** Parses a stored hash; null when it is not one this module could have written. */
function parseHash(
  stored: string,
): { params: ScryptParams; salt: Buffer; expected: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const isPowerOfTwo = Number.isInteger(N) && N >= 2 && N <= 2 ** 24 && (N & (N - 1)) === 0;
  if (
    !isPowerOfTwo ||
    !Number.isInteger(r) ||
    r < 1 ||
    r > 64 ||
    !Number.isInteger(p) ||
    p < 1 ||
    p > 16
  )
    return null;
  const salt = Buffer.from(parts[4] as string, 'base64url');
  const expected = Buffer.from(parts[5] as string, 'base64url');
  if (salt.length < 8 || expected.length < MIN_KEY_BYTES) return null;
  return { params: { N, r, p }, salt, expected };
}

/** Never throws: a malformed stored hash simply does not verify. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const parsed = parseHash(stored);
  if (!parsed) return false;
  try {
    const key = await scrypt(password.normalize('NFKC'), parsed.salt, parsed.expected.length, {
      ...parsed.params,
      maxmem: maxmem(parsed.params),
    });
    return crypto.timingSafeEqual(key, parsed.expected);
  } catch {
    return false;
  }
}

/** True when a hash was made with weaker parameters than the current default. */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_SCRYPT): boolean {
  const [, N, r, p] = stored.split('$');
  return Number(N) < params.N || Number(r) < params.r || Number(p) < params.p;
}

/** A hash of a random password: verifying against it costs the same as a real one. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  return dummyHash;
}

/** Spec part 1, Authentication 8: at least 8 characters with a lowercase letter, an uppercase letter and a digit. */
export function passwordPolicyProblem(password: string): string | null {
  if (password.length < 8) return 'The password field must be at least 8 characters.';
  if (!/[a-z]/.test(password) || !/[A-Z]/.test(password)) {
    return 'The password field must contain at least one uppercase and one lowercase letter.';
  }
  if (!/\d/.test(password)) return 'The password field must contain at least one number.';
  return null;
}
