import { Type, type Static } from '@sinclair/typebox';
import { IdParam } from '../../platform/http/schemas.js';

/** The eight token scopes (spec part 1, Token record). */
export const SCOPES = [
  'mcp:devices',
  'mcp:alerts',
  'mcp:logs',
  'mcp:reports',
  'mcp:system',
  'mcp:tools',
  'mcp:vne',
  'mcp:capture',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Names reserved for tokens the appliance mints itself. */
export const RESERVED_PREFIXES = ['spa:', 'MCP Client: '] as const;
export const OAUTH_NAME_PREFIX = 'MCP Client: ';

export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)));

export const TokenRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  origin: Type.Union([Type.Literal('pat'), Type.Literal('oauth')]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  revoked: Type.Boolean(),
  expires_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  last_used_at: Type.Union([Type.String(), Type.Null()], {
    description: 'YYYY-MM-DD HH:MM:SS (UTC), null when never used',
  }),
});
export type TokenRecord = Static<typeof TokenRecord>;

export const TokenList = Type.Object({ tokens: Type.Array(TokenRecord) });

export const CreateTokenBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, default: 365 })),
  scopes: Type.Optional(Type.Array(ScopeSchema, { maxItems: 8 })),
});
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const CreatedToken = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  access_token: Type.String({ description: 'The plaintext token; shown only in this response' }),
  expires_at: Type.String({ description: 'ISO 8601 with offset' }),
  created_at: Type.String({ description: 'ISO 8601 with offset' }),
});

export const TokenIdParams = Type.Object({ id: IdParam() });
export const UserTokenParams = Type.Object({
  userId: IdParam(),
  id: IdParam(),
});
export const UserIdParams = Type.Object({ userId: IdParam() });
export const Revoked = Type.Object({ revoked: Type.Literal(true) });
export const RevokedCount = Type.Object({ revoked: Type.Integer(), user_id: Type.Integer() });
