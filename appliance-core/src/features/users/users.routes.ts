import { Type, type TSchema } from '@sinclair/typebox';
import { actorOf, audited, recordAudit, refusalsAudited } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, authenticated, isSuperAdmin, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { legacy200, StatusMessageBody } from '../../platform/http/schemas.js';
import { hashPassword, passwordPolicyProblem } from '../../platform/security/password.js';
import { newTotpSecret, verifyTotp } from '../../platform/security/totp.js';
import type { TokenService } from '../tokens/index.js';
import {
  deleteUser,
  deviceTagsBySlug,
  disableTotp,
  emailTaken,
  enableStagedTotp,
  holdsSuperAdmin as holdsSuperAdminIn,
  findUserById,
  insertUser,
  listPermissions,
  listUsers,
  permissionsBySlug,
  permissionSlugsFrom,
  permissionSlugsOf,
  replacePermissions,
  replaceTags,
  stageTotpSecret,
  SUPER_ADMIN_USER_ID,
  tagSlugsFrom,
  tagsOf,
  updateUser,
  usernameTaken,
  type UserChanges,
  type UserRow,
} from './users.repository.js';
import {
  ConfirmMfaBody,
  CreateUserBody,
  DeleteFailure,
  LegacyCreated,
  MfaGenerated,
  MfaResult,
  MfaUserBody,
  PermissionsList,
  SaveUserBody,
  UserIdBody,
  UsersList,
  type UserRecord,
} from './users.schema.js';
import {
  CREDENTIALS_NEED_EVERY_PERMISSION,
  DELETE_NEEDS_EVERY_PERMISSION,
  permissionChange,
  permissionsBeyond,
  tagsProblem,
  type Caller,
} from './user-admin.access.js';
import { identityKey, normalizeUsername, usernameProblem } from './username.rules.js';

const TAGS = ['users'];
/** The older user-administration endpoints: permission `users`, HTTP 200 legacy failures. */
const USERS_LEGACY = { access: allOf('users'), errors: 'legacy', tags: TAGS } as const;

export interface UsersDeps {
  tokens: TokenService;
}

export async function usersRoutes(app: App, ctx: CoreContext, deps: UsersDeps): Promise<void> {
  const { db, clock, secrets } = ctx;

  const toRecord = (row: UserRow): UserRecord => ({
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    username: row.username,
    active: row.active === 1,
    totp: row.totp_secret !== null,
    auth_source: row.auth_source,
    permissions: permissionSlugsOf(db, row.id),
    tags: tagsOf(db, row.id).map((t) => t.slug),
  });

  const isRefusal = (err: unknown): err is ApiFailure => err instanceof ApiFailure;
  /** Refusals of an identity change are audited (outcome failure) with the caller and target. */
  const guarded = <T>(
    request: Parameters<typeof actorOf>[0],
    action: string,
    target: { type: string; id?: number; label?: string },
    handler: () => Promise<T>,
  ) =>
    refusalsAudited(
      db,
      () => clock.now(),
      actorOf(request),
      { action, target },
      isRefusal,
      handler,
    );
  const userTarget = (user: { id: number; username: string }) => ({
    type: 'user',
    id: user.id,
    label: user.username,
  });

  const holdsSuperAdmin = (userId: number) => holdsSuperAdminIn(db, userId);
  /** A non-`sa` caller as the least-privilege rules see them (user-admin.access.ts). */
  const callerOf = (identity: Identity): Caller => ({
    permissions: identity.permissions,
    tagSlugs: identity.tagIds === null ? null : identity.tagSlugs,
  });

  // spec: part1 > Users, MFA, permissions > getUsers
  defineRoute(app, {
    method: 'GET',
    url: '/api/getUsers',
    access: authenticated,
    errors: 'legacy',
    tags: TAGS,
    summary: 'List users (all for users/sa holders, otherwise only yourself)',
    response: { 200: legacy200(UsersList) },
    handler: async (request) => {
      const identity = identityOf(request);
      const all = isSuperAdmin(identity) || identity.permissions.has('users');
      const rows = listUsers(db, all ? undefined : identity.user.id);
      return {
        status: 201 as const,
        hasError: false as const,
        users: rows.map(toRecord),
        self_only: !all,
        caller_id: identity.user.id,
      };
    },
  });

  // spec: part1 > Users, MFA, permissions > createUser
  defineRoute(app, {
    method: 'POST',
    url: '/api/createUser',
    ...USERS_LEGACY,
    summary: 'Create a local user (active)',
    body: CreateUserBody,
    response: { 200: legacy200(LegacyCreated) },
    handler: (request) =>
      guarded(request, 'user.create', { type: 'user', label: request.body.username }, async () => {
        const body = request.body;
        const caller = identityOf(request);
        const username = normalizeUsername(body.username);
        if (emailTaken(db, body.email)) throw failure(200, 'The email has already been taken.');
        const nameProblem = usernameProblem(username);
        if (nameProblem) throw failure(200, nameProblem);
        if (usernameTaken(db, username)) throw failure(200, 'The username has already been taken.');
        const policy = passwordPolicyProblem(body.password);
        if (policy) throw failure(200, policy);
        const passwordHash = await hashPassword(body.password);
        // A tag-restricted caller's accounts are restricted to the caller's tags (never none).
        const tagIds =
          !isSuperAdmin(caller) && caller.tagIds !== null ? [...caller.tagIds] : undefined;
        const now = clock.now();
        db.transaction(() => {
          // Re-checked inside the transaction: the hash above yields the event loop.
          if (emailTaken(db, body.email)) throw failure(200, 'The email has already been taken.');
          if (usernameTaken(db, username))
            throw failure(200, 'The username has already been taken.');
          const id = insertUser(
            db,
            {
              first_name: body.first_name,
              last_name: body.last_name,
              email: body.email,
              username,
              password_hash: passwordHash,
            },
            now,
          );
          if (tagIds) replaceTags(db, id, tagIds, 'local');
          recordAudit(db, now, actorOf(request), {
            action: 'user.create',
            outcome: 'success',
            target: userTarget({ id, username }),
            detail: { email: body.email, ...(tagIds ? { tags: caller.tagSlugs } : {}) },
          });
        })();
        return { status: 201 as const };
      }),
  });

  // spec: part1 > Users, MFA, permissions > saveUser
  defineRoute(app, {
    method: 'POST',
    url: '/api/saveUser',
    ...USERS_LEGACY,
    summary: 'Update a user (only present fields change)',
    body: SaveUserBody,
    response: { 200: legacy200(LegacyCreated) },
    handler: (request) =>
      guarded(request, 'user.update', { type: 'user', id: request.body.user }, async () => {
        const body = request.body;
        const caller = identityOf(request);
        const user = findUserById(db, body.user);
        if (!user) throw failure(200, 'User not found');
        // A `users` holder without sa must not take over an sa account (password, email, active, sa itself).
        if (!isSuperAdmin(caller) && holdsSuperAdmin(user.id))
          throw failure(200, 'Only a super-admin can modify a super-admin account.');
        // The username changes only when a different one is sent: the console sends the whole
        // form back, and a name from before the username rules must survive an unrelated edit.
        const username =
          body.username === undefined || body.username === user.username
            ? undefined
            : normalizeUsername(body.username);
        const renaming = username !== undefined && username !== user.username;
        if (user.id === SUPER_ADMIN_USER_ID) {
          if (renaming && identityKey(username) !== identityKey(user.username)) {
            throw failure(200, 'The username of the super-admin account cannot be changed.');
          }
          if (body.active === false)
            throw failure(200, 'The super-admin account cannot be deactivated.');
          if (body.permissions && !body.permissions.includes('sa'))
            throw failure(200, 'The super-admin account must keep the sa permission.');
        }
        const leastPrivilege = !isSuperAdmin(caller) ? callerOf(caller) : null;
        if (leastPrivilege) {
          const takesOver =
            body.password !== undefined ||
            (body.email !== undefined && body.email !== user.email) ||
            renaming ||
            (body.active !== undefined && (body.active ? 1 : 0) !== user.active);
          if (
            takesOver &&
            permissionsBeyond(leastPrivilege, permissionSlugsOf(db, user.id)).length > 0
          )
            throw failure(200, CREDENTIALS_NEED_EVERY_PERMISSION);
        }
        if (body.email !== undefined && emailTaken(db, body.email, user.id))
          throw failure(200, 'The email has already been taken.');
        if (renaming) {
          const nameProblem = usernameProblem(username);
          if (nameProblem) throw failure(200, nameProblem);
          if (usernameTaken(db, username, user.id))
            throw failure(200, 'The username has already been taken.');
        }
        let passwordHash: string | undefined;
        if (body.password !== undefined) {
          if (user.auth_source === 'ldap')
            throw failure(200, 'The password of a directory (LDAP) user cannot be changed here.');
          const policy = passwordPolicyProblem(body.password);
          if (policy) throw failure(200, policy);
          passwordHash = await hashPassword(body.password);
        }
        let permissionIds: number[] | undefined;
        if (body.permissions) {
          let wanted = [...new Set(body.permissions)];
          const known = permissionsBySlug(db, wanted);
          const unknown = wanted.filter((slug) => !known.some((p) => p.slug === slug));
          if (unknown.length > 0) throw failure(200, `Unknown permission: ${unknown.join(', ')}`);
          if (!isSuperAdmin(caller) && wanted.includes('sa'))
            throw failure(200, 'Only a super-admin can grant the sa permission.');
          if (leastPrivilege) {
            const change = permissionChange(
              leastPrivilege,
              wanted,
              permissionSlugsFrom(db, user.id, 'local'),
            );
            if ('problem' in change) throw failure(200, change.problem);
            wanted = change.permissions;
          }
          permissionIds = permissionsBySlug(db, wanted).map((p) => p.id);
        }
        let tagIds: number[] | undefined;
        if (body.tags !== undefined) {
          const slugs = [...new Set((body.tags ?? []).map((t) => t.value))];
          const found = deviceTagsBySlug(db, slugs);
          const unknown = slugs.filter((slug) => !found.some((t) => t.slug === slug));
          if (unknown.length > 0) throw failure(200, `Unknown tag: ${unknown.join(', ')}`);
          tagIds = found.map((t) => t.id);
        }
        if (leastPrivilege) {
          // The account's tags after this edit (the directory's included) stay within the caller's.
          const local =
            body.tags !== undefined
              ? (body.tags ?? []).map((t) => t.value)
              : tagSlugsFrom(db, user.id, 'local');
          const problem = tagsProblem(leastPrivilege, [
            ...new Set([...local, ...tagSlugsFrom(db, user.id, 'ldap')]),
          ]);
          if (problem) throw failure(200, problem);
        }
        const changes: UserChanges = {};
        if (body.first_name !== undefined) changes.first_name = body.first_name;
        if (body.last_name !== undefined) changes.last_name = body.last_name;
        if (body.email !== undefined) changes.email = body.email;
        if (renaming && user.id !== SUPER_ADMIN_USER_ID) changes.username = username;
        if (body.active !== undefined && user.id !== SUPER_ADMIN_USER_ID)
          changes.active = body.active ? 1 : 0;
        if (passwordHash !== undefined) changes.password_hash = passwordHash;
        const now = clock.now();
        const permissionsBefore = permissionSlugsOf(db, user.id);
        const tagsBefore = tagsOf(db, user.id).map((t) => t.slug);
        db.transaction(() => {
          if (changes.email !== undefined && emailTaken(db, changes.email, user.id))
            throw failure(200, 'The email has already been taken.');
          if (changes.username !== undefined && usernameTaken(db, changes.username, user.id))
            throw failure(200, 'The username has already been taken.');
          updateUser(db, user.id, changes, now);
          if (permissionIds) replacePermissions(db, user.id, permissionIds, 'local');
          if (tagIds) replaceTags(db, user.id, tagIds, 'local');
          const permissionsAfter = permissionSlugsOf(db, user.id);
          const tagsAfter = tagsOf(db, user.id).map((t) => t.slug);
          const added = (before: string[], after: string[]) =>
            after.filter((x) => !before.includes(x));
          recordAudit(db, now, actorOf(request), {
            action: 'user.update',
            outcome: 'success',
            target: userTarget({ id: user.id, username: changes.username ?? user.username }),
            detail: {
              fields: Object.keys(changes).map((k) => (k === 'password_hash' ? 'password' : k)),
              permissions_added: added(permissionsBefore, permissionsAfter),
              permissions_removed: added(permissionsAfter, permissionsBefore),
              tags_added: added(tagsBefore, tagsAfter),
              tags_removed: added(tagsAfter, tagsBefore),
            },
          });
        })();
        if (changes.active === 0) deps.tokens.revokeEverything(user.id, caller.user.id);
        return { status: 201 as const };
      }),
  });

  // spec: part1 > Users, MFA, permissions > deleteUser
  const deleteErrors: RouteErrors = {
    validation: 'statusMessage',
    validationStatus: 200,
    failure: 'statusMessage',
  };
  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteUser',
    access: allOf('users'),
    errors: deleteErrors,
    tags: TAGS,
    summary: 'Delete a user and their tokens',
    body: UserIdBody,
    response: { 200: Type.Union([LegacyCreated, DeleteFailure]) },
    handler: (request) =>
      guarded(request, 'user.delete', { type: 'user', id: request.body.user }, async () => {
        const target = request.body.user;
        if (target === SUPER_ADMIN_USER_ID)
          throw failure(200, 'The super-admin account cannot be deleted.');
        const caller = identityOf(request);
        if (target === caller.user.id) throw failure(200, 'You cannot delete your own account.');
        if (!isSuperAdmin(caller) && holdsSuperAdmin(target))
          throw failure(200, 'Only a super-admin can delete a super-admin account.');
        if (
          !isSuperAdmin(caller) &&
          permissionsBeyond(callerOf(caller), permissionSlugsOf(db, target)).length > 0
        )
          throw failure(200, DELETE_NEEDS_EVERY_PERMISSION);
        const victim = findUserById(db, target);
        const deleted = audited(
          db,
          clock.now(),
          actorOf(request),
          () => deleteUser(db, target),
          (ok) =>
            ok && victim
              ? { action: 'user.delete', outcome: 'success', target: userTarget(victim) }
              : null,
        );
        if (!deleted) throw failure(200, 'User not found');
        return { status: 201 as const };
      }),
  });

  // spec: part1 > Users, MFA, permissions > generateMfa, confirmMfa, disableMfa
  const MFA = {
    access: allOf('users'),
    errors: {
      validation: 'statusMessage',
      validationStatus: 400,
      failure: 'statusMessage',
      internal: 'MFA could not be updated',
    },
    tags: TAGS,
  } as const;
  const mfaResponses = <T extends TSchema>(ok: T) => ({
    200: ok,
    400: StatusMessageBody,
    403: StatusMessageBody,
    404: StatusMessageBody,
    500: StatusMessageBody,
  });
  const mfaTarget = (caller: Identity, userId: number): UserRow => {
    if (userId !== caller.user.id && !isSuperAdmin(caller))
      throw failure(403, 'Not authorized to modify this user');
    const user = findUserById(db, userId);
    if (!user) throw failure(404, 'User not found');
    return user;
  };

  defineRoute(app, {
    method: 'POST',
    url: '/api/generateMfa',
    ...MFA,
    summary: 'Stage a new TOTP secret (MFA stays as it is until confirmed)',
    body: MfaUserBody,
    response: mfaResponses(MfaGenerated),
    handler: async (request) => {
      const user = mfaTarget(identityOf(request), request.body.userId);
      const secret = newTotpSecret();
      stageTotpSecret(db, user.id, secrets.seal(secret), clock.now());
      return {
        status: true as const,
        message:
          'MFA secret generated: confirm it with a code from your authenticator to enable MFA.',
        mfaKey: secret,
        hostname: ctx.hostname(),
        username: user.username,
        pending: true as const,
      };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/confirmMfa',
    ...MFA,
    summary: 'Enable MFA with a code from the staged secret',
    body: ConfirmMfaBody,
    response: mfaResponses(MfaResult),
    handler: async (request) => {
      const user = mfaTarget(identityOf(request), request.body.userId);
      const code = request.body.code.trim();
      if (code === '') throw failure(400, 'The code field is required.');
      if (!user.totp_pending_secret)
        throw failure(400, 'No MFA secret is staged: generate one first.');
      const step = verifyTotp(secrets.open(user.totp_pending_secret), code, 0, clock.now());
      if (step === null) throw failure(400, 'The code does not match the staged secret.');
      audited(
        db,
        clock.now(),
        actorOf(request),
        () => enableStagedTotp(db, user.id, step, clock.now()),
        {
          action: 'user.mfa_enable',
          outcome: 'success',
          target: userTarget(user),
        },
      );
      return { status: true as const, message: 'MFA enabled: the next sign-in asks for a code.' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/disableMfa',
    ...MFA,
    summary: 'Disable MFA and clear its secret',
    body: MfaUserBody,
    response: mfaResponses(MfaResult),
    handler: async (request) => {
      const user = mfaTarget(identityOf(request), request.body.userId);
      audited(db, clock.now(), actorOf(request), () => disableTotp(db, user.id, clock.now()), {
        action: 'user.mfa_disable',
        outcome: 'success',
        target: userTarget(user),
      });
      return { status: true as const, message: 'MFA disabled.' };
    },
  });

  // spec: part1 > Users, MFA, permissions > getPermissions
  defineRoute(app, {
    method: 'GET',
    url: '/api/getPermissions',
    access: authenticated,
    errors: 'legacy',
    tags: TAGS,
    summary: 'The permission catalogue',
    response: { 200: legacy200(PermissionsList) },
    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      permissions: listPermissions(db),
    }),
  });
}
