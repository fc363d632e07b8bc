/**
 * TOTP (RFC 6238) through otpauth. A code is accepted at most once: the caller stores the
 * step of the last accepted code and a code of that step or an earlier one is refused.
 */
import { Secret, TOTP } from 'otpauth';

const PERIOD = 30;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpUri(secret: string, issuer: string, label: string): string {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), period: PERIOD }).toString();
}

/**
 * Returns the step of the matching code (within one step of clock drift), or null when the
 * code is wrong or was already used (step <= lastStep).
 */
export function verifyTotp(
  secret: string,
  code: string,
  lastStep: number,
  now: number,
): number | null {
  const clean = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(clean)) return null;
  const totp = new TOTP({ secret: Secret.fromBase32(secret), period: PERIOD });
  const delta = totp.validate({ token: clean, timestamp: now, window: 1 });
  if (delta === null) return null;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  return step > lastStep ? step : null;
}

export function totpCodeAt(secret: string, timestamp: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), period: PERIOD }).generate({ timestamp });
}
