import { Type } from '@sinclair/typebox';

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 255, description: 'Username or email address' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  totp: Type.Optional(
    Type.String({
      maxLength: 16,
      description: 'TOTP code, sent on the second call after "TOTP Required"',
    }),
  ),
  browser_id: Type.Optional(
    Type.String({
      maxLength: 255,
      pattern: '^spa:[0-9a-fA-F-]{36}:[A-Za-z0-9._~-]{1,128}$',
      description: 'spa:<uuid>:<fingerprint>; names the token (one live token per browser)',
    }),
  ),
});

export const LoginSuccess = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  user: Type.Object({ id: Type.Integer(), email: Type.String(), name: Type.String() }),
  access_token: Type.String(),
});

export const LogoutResult = Type.Object({ message: Type.String() });
export const WebSessionResult = Type.Object({ status: Type.Literal(true) });
export const Information = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Object({
    hostname: Type.String(),
    sessionId: Type.Boolean({
      description: 'true when the request carries a live browser session',
    }),
  }),
});

export const Me = Type.Object({
  id: Type.Integer(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  username: Type.String(),
  active: Type.Boolean(),
  auth_source: Type.Union([Type.Literal('local'), Type.Literal('ldap')]),
  created_at: Type.String({ description: 'ISO 8601' }),
  updated_at: Type.String({ description: 'ISO 8601' }),
});
