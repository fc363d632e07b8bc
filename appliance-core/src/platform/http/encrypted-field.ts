/**
 * Encrypted fields (spec part 1, conventions 7): stored secrets are never returned; reads show
 * the sentinel; writes keep the stored secret for the sentinel, an empty value or an omitted
 * field, and replace it for new plaintext.
 */
import type { SecretBox } from '../security/secret-box.js';

export const ENCRYPTED_SENTINEL = Object.freeze({ __encrypted__: true as const });
export type EncryptedSentinel = typeof ENCRYPTED_SENTINEL;

export function isSentinel(value: unknown): value is EncryptedSentinel {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>).__encrypted__ === true
  );
}

/** What a read shows for a stored secret: the sentinel when one is stored, null otherwise. */
export function maskSecret(stored: string | null | undefined): EncryptedSentinel | null {
  return stored ? ENCRYPTED_SENTINEL : null;
}

/** The sealed value to store after a write that sent `incoming` (undefined = omitted). */
export function nextSealedSecret(
  box: SecretBox,
  stored: string | null,
  incoming: unknown,
): string | null {
  if (incoming === undefined || incoming === null || incoming === '' || isSentinel(incoming))
    return stored;
  if (typeof incoming !== 'string') throw new TypeError('a secret must be a string');
  return box.seal(incoming);
}

/** The plaintext to use for an action (e.g. a test probe): sent plaintext, else the stored secret. */
export function resolveSecret(
  box: SecretBox,
  stored: string | null,
  incoming: unknown,
): string | null {
  if (typeof incoming === 'string' && incoming !== '') return incoming;
  return stored ? box.open(stored) : null;
}
