/**
 * Least privilege for a `users` holder without `sa` (issue 11; the spec lets `users` do more).
 * Pure decisions, no I/O: the routes read the rows and apply the outcome.
 *
 * Invariant: nothing a non-`sa` caller does through the user routes leaves any account able to
 * do something the caller cannot, or leaves the caller able to act as such an account:
 * - they add only permissions they hold; permissions they lack keep their state on the target
 *   (the body's `permissions` replaces the set, so the change is computed, never taken whole);
 * - they do not change the password, email, username or active flag of (nor delete) an account
 *   that holds a permission they lack: taking it over would be an escalation;
 * - a tag-restricted caller leaves every account they create or edit restricted to a non-empty
 *   subset of their own tags (an unrestricted account sees every device).
 * `sa` itself stays for `sa` callers only (the older rules in users.routes.ts).
 */

export const GRANT_ONLY_HELD = 'You can grant only permissions you hold yourself';
export const CREDENTIALS_NEED_EVERY_PERMISSION =
  'Only a user who holds every permission of this account can change its password, email, username or active flag.';
export const DELETE_NEEDS_EVERY_PERMISSION =
  'Only a user who holds every permission of this account can delete it.';
export const TAGS_WITHIN_OWN =
  'You can restrict an account only to tags you are restricted to yourself (at least one)';

/** What a non-`sa` caller is: the permissions they hold, and their tag restriction (null: none). */
export interface Caller {
  permissions: ReadonlySet<string>;
  tagSlugs: readonly string[] | null;
}

/**
 * The target's new local permission set when a non-`sa` caller sends `wanted`: the wanted ones
 * the caller holds, plus the ones the target holds locally that the caller lacks (unchanged).
 * A wanted permission that the caller lacks and the target does not hold is refused.
 */
export function permissionChange(
  caller: Caller,
  wanted: readonly string[],
  targetLocal: readonly string[],
): { permissions: string[] } | { problem: string } {
  const added = wanted.filter((p) => !caller.permissions.has(p) && !targetLocal.includes(p));
  if (added.length > 0) return { problem: `${GRANT_ONLY_HELD}: ${added.join(', ')}.` };
  const kept = targetLocal.filter((p) => !caller.permissions.has(p));
  const given = wanted.filter((p) => caller.permissions.has(p));
  return { permissions: [...new Set([...given, ...kept])] };
}

/** The permissions of the target that the caller lacks (empty: the caller may take it over). */
export function permissionsBeyond(caller: Caller, targetPermissions: readonly string[]): string[] {
  return targetPermissions.filter((p) => !caller.permissions.has(p));
}

/**
 * The tags an account keeps after a tag-restricted caller's edit: `requested` (null: the body
 * left tags alone, so the target's current ones) must be a non-empty subset of the caller's.
 * A caller without a tag restriction may set any tags (or none).
 */
export function tagsProblem(caller: Caller, resulting: readonly string[]): string | null {
  if (caller.tagSlugs === null) return null;
  const own = caller.tagSlugs;
  if (resulting.length === 0 || resulting.some((t) => !own.includes(t)))
    return `${TAGS_WITHIN_OWN}: ${own.join(', ')}.`;
  return null;
}
