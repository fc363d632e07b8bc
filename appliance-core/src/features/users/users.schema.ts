import { Type, type Static } from '@sinclair/typebox';

export const UserRecord = Type.Object({
  id: Type.Integer(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  username: Type.String(),
  active: Type.Boolean(),
  totp: Type.Boolean({ description: 'true when MFA is enabled' }),
  auth_source: Type.Union([Type.Literal('local'), Type.Literal('ldap')]),
  permissions: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
});
export type UserRecord = Static<typeof UserRecord>;

export const UsersList = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  users: Type.Array(UserRecord),
  self_only: Type.Boolean(),
  caller_id: Type.Integer(),
});

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Email = Type.String({ minLength: 1, maxLength: 255, format: 'email' });
const Password = Type.String({ minLength: 1, maxLength: 1024 });

export const CreateUserBody = Type.Object({
  first_name: Name,
  last_name: Name,
  email: Email,
  username: Name,
  password: Password,
});
export type CreateUserBody = Static<typeof CreateUserBody>;

export const SaveUserBody = Type.Object({
  user: Type.Integer({ minimum: 1 }),
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  email: Type.Optional(Email),
  username: Type.Optional(Name),
  active: Type.Optional(Type.Boolean()),
  tags: Type.Optional(
    Type.Union([
      Type.Array(Type.Object({ value: Type.String({ minLength: 1, maxLength: 255 }) }), {
        maxItems: 1000,
      }),
      Type.Null(),
    ]),
  ),
  password: Type.Optional(Password),
  permissions: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 }),
  ),
});
export type SaveUserBody = Static<typeof SaveUserBody>;

export const UserIdBody = Type.Object({ user: Type.Integer({ minimum: 1 }) });
export const MfaUserBody = Type.Object({ userId: Type.Integer({ minimum: 1 }) });
export const ConfirmMfaBody = Type.Object({
  userId: Type.Integer({ minimum: 1 }),
  code: Type.String({ minLength: 1, maxLength: 16 }),
});

export const LegacyCreated = Type.Object({ status: Type.Literal(201) });
export const DeleteFailure = Type.Object({ status: Type.Literal(false), message: Type.String() });

export const MfaGenerated = Type.Object({
  status: Type.Literal(true),
  message: Type.String(),
  mfaKey: Type.String({ description: 'Base32 TOTP secret to enter in an authenticator app' }),
  hostname: Type.String(),
  username: Type.String(),
  pending: Type.Literal(true),
});
export const MfaResult = Type.Object({ status: Type.Literal(true), message: Type.String() });

export const PermissionsList = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  permissions: Type.Array(
    Type.Object({ id: Type.Integer(), slug: Type.String(), name: Type.String() }),
  ),
});
