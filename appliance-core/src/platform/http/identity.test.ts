/**
 * The permission gate (`permits`): what each declared access rule lets through, for identities
 * with and without the slugs, and `sa` (the super-admin permission) bypassing every rule. The
 * auth hook applies it per route (auth-hook.test.ts); here it is tested on its own, every branch.
 */
import { describe, expect, it } from 'vitest';
import {
  allOf,
  anyOf,
  authenticated,
  isSuperAdmin,
  permits,
  publicAccess,
  SUPER_ADMIN,
  type Access,
  type Identity,
} from './identity.js';

function identity(...permissions: string[]): Identity {
  return {
    user: {
      id: 7,
      username: 'alice',
      email: 'alice@example.test',
      first_name: 'Alice',
      last_name: 'Doe',
      auth_source: 'local',
      created_at: 0,
      updated_at: 0,
    },
    tokenId: 1,
    sessionId: null,
    scopes: [],
    permissions: new Set(permissions),
    tagIds: null,
    tagSlugs: [],
  };
}

const nobody = identity();
const superAdmin = identity('sa');

describe('the access rules and their constructors', () => {
  it('builds the declared shapes', () => {
    expect(publicAccess).toEqual({ kind: 'public' });
    expect(authenticated).toEqual({ kind: 'authenticated' });
    expect(allOf('a', 'b')).toEqual({ kind: 'permission', allOf: ['a', 'b'] });
    expect(anyOf('a', 'b')).toEqual({ kind: 'permission', anyOf: ['a', 'b'] });
    expect(SUPER_ADMIN).toBe('sa');
  });

  it('isSuperAdmin is the `sa` permission, nothing else', () => {
    expect(isSuperAdmin(superAdmin)).toBe(true);
    expect(isSuperAdmin(identity('devices.view', 'users.manage'))).toBe(false);
    expect(isSuperAdmin(identity('SA'))).toBe(false);
    expect(isSuperAdmin(nobody)).toBe(false);
  });
});

describe('permits (the permission gate)', () => {
  it('lets any identity through public, authenticated and token-or-signature rules', () => {
    for (const access of [
      publicAccess,
      authenticated,
      { kind: 'token-or-signature' } as const,
    ] satisfies Access[])
      expect(permits(nobody, access)).toBe(true);
  });

  it('all-of: every slug is needed', () => {
    const access = allOf('devices.view', 'devices.edit');
    expect(permits(identity('devices.view', 'devices.edit'), access)).toBe(true);
    expect(permits(identity('devices.view', 'devices.edit', 'other'), access)).toBe(true);
    expect(permits(identity('devices.view'), access)).toBe(false);
    expect(permits(identity('devices.edit'), access)).toBe(false);
    expect(permits(nobody, access)).toBe(false);
  });

  it('any-of: one slug is enough, none is refused', () => {
    const access = anyOf('devices.view', 'devices.edit');
    expect(permits(identity('devices.edit'), access)).toBe(true);
    expect(permits(identity('devices.view'), access)).toBe(true);
    expect(permits(identity('other'), access)).toBe(false);
    expect(permits(nobody, access)).toBe(false);
  });

  it('all-of and any-of together: both must hold', () => {
    const access: Access = { kind: 'permission', allOf: ['a'], anyOf: ['b', 'c'] };
    expect(permits(identity('a', 'c'), access)).toBe(true);
    expect(permits(identity('a'), access)).toBe(false);
    expect(permits(identity('b', 'c'), access)).toBe(false);
  });

  it('a permission rule with empty (or no) lists asks for nothing beyond a caller', () => {
    expect(permits(nobody, { kind: 'permission' })).toBe(true);
    expect(permits(nobody, { kind: 'permission', allOf: [] })).toBe(true);
    expect(permits(nobody, { kind: 'permission', anyOf: [] })).toBe(true);
    expect(permits(nobody, { kind: 'permission', allOf: [], anyOf: [] })).toBe(true);
    // An empty any-of does not waive the all-of.
    expect(permits(nobody, { kind: 'permission', allOf: ['a'], anyOf: [] })).toBe(false);
    expect(permits(identity('a'), { kind: 'permission', allOf: ['a'], anyOf: [] })).toBe(true);
  });

  it('browser-session: any-of when listed, otherwise any signed-in user', () => {
    expect(permits(nobody, { kind: 'browser-session' })).toBe(true);
    expect(permits(nobody, { kind: 'browser-session', anyOf: [] })).toBe(true);
    expect(permits(nobody, { kind: 'browser-session', anyOf: ['a', 'b'] })).toBe(false);
    expect(permits(identity('c'), { kind: 'browser-session', anyOf: ['a', 'b'] })).toBe(false);
    expect(permits(identity('b'), { kind: 'browser-session', anyOf: ['a', 'b'] })).toBe(true);
  });

  it('`sa` passes every rule without holding the slugs', () => {
    for (const access of [
      allOf('devices.view', 'devices.edit'),
      anyOf('devices.view'),
      { kind: 'permission', allOf: ['a'], anyOf: ['b'] },
      { kind: 'browser-session', anyOf: ['a'] },
    ] satisfies Access[])
      expect(permits(superAdmin, access)).toBe(true);
    // The slug named `sa` only: not a prefix, not a different case.
    expect(permits(identity('sa2'), allOf('a'))).toBe(false);
    expect(permits(identity('SA'), anyOf('a'))).toBe(false);
  });

  it('refuses a rule of a kind it does not know, even to `sa` (fails closed)', () => {
    const unknown = { kind: 'signed-url', anyOf: [] } as unknown as Access;
    expect(permits(identity('devices.view'), unknown)).toBe(false);
    expect(permits(superAdmin, unknown)).toBe(false);
    expect(permits(nobody, { kind: 'permission' })).toBe(true);
  });
});
