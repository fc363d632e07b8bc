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

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...params, maxmem: maxmem(params) });
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const params = { N: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) };
  const salt = Buffer.from(parts[4] as string, 'base64url');
  const expected = Buffer.from(parts[5] as string, 'base64url');
  const key = await scrypt(password.normalize('NFKC'), salt, expected.length, { ...params, maxmem: maxmem(params) });
  return crypto.timingSafeEqual(key, expected);
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
