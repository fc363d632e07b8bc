/**
 * TOTP (RFC 6238, SHA-1, 6 digits, 30-second steps): one step of drift either way, and a code is
 * usable once (the caller keeps the step of the last accepted code).
 */
import { describe, expect, it } from 'vitest';
import { newTotpSecret, totpCodeAt, totpUri, verifyTotp } from './totp.js';

const STEP_MS = 30_000;
/** RFC 6238 appendix B: the SHA-1 seed "12345678901234567890" in base32. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** A fixed instant in the middle of a step, so no test straddles a step boundary. */
const NOW = 1_700_000_010_000;
const STEP = Math.floor(NOW / STEP_MS);

/** A six-digit code that matches none of the steps around `at` (and so must be refused). */
function wrongCode(secret: string, at: number): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, at + d * STEP_MS)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}

describe('totpCodeAt (RFC 6238 known answers, last 6 digits)', () => {
  it.each([
    [59_000, '287082'],
    [1_111_111_109_000, '081804'],
    [1_234_567_890_000, '005924'],
    [2_000_000_000_000, '279037'],
  ])('at %i ms gives %s', (timestamp, code) => {
    expect(totpCodeAt(RFC_SECRET, timestamp)).toBe(code);
  });
});

describe('newTotpSecret / totpUri', () => {
  it('makes a fresh 160-bit base32 secret each time', () => {
    const a = newTotpSecret();
    const b = newTotpSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(b).toMatch(/^[A-Z2-7]{32}$/);
    expect(a).not.toBe(b);
  });

  it('builds an otpauth:// provisioning URI carrying the issuer, label and secret', () => {
    const uri = totpUri(RFC_SECRET, 'appliance', 'admin');
    expect(uri.startsWith('otpauth://totp/')).toBe(true);
    expect(uri).toContain(`secret=${RFC_SECRET}`);
    expect(uri).toContain('issuer=appliance');
    expect(uri).toContain('period=30');
  });
});

describe('verifyTotp', () => {
  const secret = newTotpSecret();

  it('accepts the current code and returns its step', () => {
    expect(verifyTotp(secret, totpCodeAt(secret, NOW), 0, NOW)).toBe(STEP);
    expect(verifyTotp(RFC_SECRET, '287082', 0, 59_000)).toBe(1);
  });

  it('accepts the code of any instant inside the current step', () => {
    const start = STEP * STEP_MS;
    expect(verifyTotp(secret, totpCodeAt(secret, start), 0, start + STEP_MS - 1)).toBe(STEP);
    expect(verifyTotp(secret, totpCodeAt(secret, start + STEP_MS - 1), 0, start)).toBe(STEP);
  });

  it('accepts one step of clock drift either way and returns the step of the code', () => {
    expect(verifyTotp(secret, totpCodeAt(secret, NOW - STEP_MS), 0, NOW)).toBe(STEP - 1);
    expect(verifyTotp(secret, totpCodeAt(secret, NOW + STEP_MS), 0, NOW)).toBe(STEP + 1);
  });

  it('refuses a code two steps away', () => {
    const early = totpCodeAt(secret, NOW - 2 * STEP_MS);
    const late = totpCodeAt(secret, NOW + 2 * STEP_MS);
    const near = [-1, 0, 1].map((d) => totpCodeAt(secret, NOW + d * STEP_MS));
    if (!near.includes(early)) expect(verifyTotp(secret, early, 0, NOW)).toBeNull();
    if (!near.includes(late)) expect(verifyTotp(secret, late, 0, NOW)).toBeNull();
  });

  it('refuses a wrong code', () => {
    expect(verifyTotp(secret, wrongCode(secret, NOW), 0, NOW)).toBeNull();
  });

  it('refuses a code of another secret', () => {
    const other = newTotpSecret();
    const code = totpCodeAt(other, NOW);
    const near = [-1, 0, 1].map((d) => totpCodeAt(secret, NOW + d * STEP_MS));
    if (!near.includes(code)) expect(verifyTotp(secret, code, 0, NOW)).toBeNull();
  });

  it('refuses a replay: a code whose step is at or before the last accepted step', () => {
    const code = totpCodeAt(secret, NOW);
    expect(verifyTotp(secret, code, STEP - 1, NOW)).toBe(STEP);
    expect(verifyTotp(secret, code, STEP, NOW)).toBeNull();
    expect(verifyTotp(secret, code, STEP + 1, NOW)).toBeNull();
    // An older (drifted) code after a newer one was accepted is a replay too.
    expect(verifyTotp(secret, totpCodeAt(secret, NOW - STEP_MS), STEP, NOW)).toBeNull();
    // The next step's code is still good after the current one was used.
    expect(verifyTotp(secret, totpCodeAt(secret, NOW + STEP_MS), STEP, NOW)).toBe(STEP + 1);
  });

  it.each([
    [''],
    ['12345'],
    ['1234567'],
    ['abcdef'],
    ['12345a'],
    ['-12345'],
    ['12.345'],
    ['１２３４５６'],
  ])('refuses the non-6-digit input %j', (input) => {
    expect(verifyTotp(secret, input, 0, NOW)).toBeNull();
  });

  it('refuses the right code with an extra digit, or cut short', () => {
    const code = totpCodeAt(secret, NOW);
    expect(verifyTotp(secret, `${code}0`, 0, NOW)).toBeNull();
    expect(verifyTotp(secret, code.slice(0, 5), 0, NOW)).toBeNull();
  });

  it('ignores whitespace around and inside the code (as typed from an authenticator: "123 456")', () => {
    const code = totpCodeAt(secret, NOW);
    expect(verifyTotp(secret, ` ${code.slice(0, 3)} ${code.slice(3)} `, 0, NOW)).toBe(STEP);
  });
});
