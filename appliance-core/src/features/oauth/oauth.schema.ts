/**
 * TypeBox shapes of the OAuth endpoints (spec part 1 > OAuth device-code flow, OAuth
 * authorization-code flow with PKCE, Token management, OAuth client approval) and the
 * discovery documents (RFC 8414, RFC 9728).
 *
 * Request bodies of the token-style endpoints are deliberately loose (every field an optional
 * string): the OAuth RFCs name the error for each missing or wrong field (`invalid_request`,
 * `invalid_grant`, ...), so the service checks them and answers the exact code.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MediaBody } from '../../platform/http/schemas.js';

/** Bounds every free-form field so that no request carries megabytes of text into a lookup. */
const Text = (description?: string) =>
  Type.Optional(Type.String({ maxLength: 4096, ...(description ? { description } : {}) }));

export const GRANT_TYPE_DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
export const CLIENT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const AUTH_METHODS = ['none', 'client_secret_post'] as const;
export const PRINTABLE_ASCII = '^[\\x20-\\x7E]+$';

// --- device-code flow --------------------------------------------------------------------

export const DeviceAuthorizeBody = Type.Object({
  client_name: Text(
    'Printable ASCII, at most 100 characters; names the token "MCP Client: <client_name>"',
  ),
  client_id: Text(
    'RFC 8628 clients send client_id; it names the client when client_name is absent',
  ),
  scopes: Type.Optional(
    Type.Union(
      [
        Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 }),
        Type.String({ maxLength: 64 }),
      ],
      {
        description: 'Scopes from the eight (default [mcp:devices])',
      },
    ),
  ),
  scope: Text('RFC 8628 form: space-delimited scopes (used when scopes is absent)'),
});
export type DeviceAuthorizeBody = Static<typeof DeviceAuthorizeBody>;

export const DeviceAuthorization = Type.Object({
  device_code: Type.String(),
  user_code: Type.String({ description: '8 characters from BCDFGHJKLMNPQRSTVWXZ' }),
  verification_uri: Type.String(),
  verification_uri_complete: Type.String(),
  expires_in: Type.Integer({ description: 'seconds (600)' }),
  interval: Type.Integer({ description: 'seconds between polls (5)' }),
});

export const DeviceTokenBody = Type.Object({
  device_code: Text(),
  grant_type: Text(`Optional; when present it must be ${GRANT_TYPE_DEVICE_CODE}`),
  client_id: Text(),
});
export type DeviceTokenBody = Static<typeof DeviceTokenBody>;

// --- token endpoint, refresh, revocation, introspection ---------------------------------

export const TokenBody = Type.Object({
  grant_type: Text(`authorization_code, refresh_token or ${GRANT_TYPE_DEVICE_CODE}`),
  code: Text(),
  redirect_uri: Text(),
  client_id: Text(),
  code_verifier: Text(),
  client_secret: Text('confidential clients (client_secret_post)'),
  refresh_token: Text(),
  scope: Text('refresh grant: a narrower space-delimited scope'),
  device_code: Text(),
});
export type TokenBody = Static<typeof TokenBody>;

export const RefreshBody = Type.Object({
  refresh_token: Text(),
  grant_type: Text('Optional; when present it must be refresh_token'),
  client_id: Text(),
  client_secret: Text(),
  scope: Text(),
});
export type RefreshBody = Static<typeof RefreshBody>;

export const RevokeBody = Type.Object({
  token: Text(),
  token_type_hint: Text('access_token or refresh_token'),
  client_id: Text(),
  client_secret: Text(),
});
export type RevokeBody = Static<typeof RevokeBody>;

export const IntrospectBody = Type.Object({
  token: Text(),
  token_type_hint: Text('access_token or refresh_token'),
});
export type IntrospectBody = Static<typeof IntrospectBody>;

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String()),
  scope: Type.String({ description: 'space-delimited' }),
});
export type TokenResponse = Static<typeof TokenResponse>;

export const ActiveIntrospection = Type.Object({
  active: Type.Literal(true),
  client_id: Type.Union([Type.String(), Type.Null()]),
  username: Type.String(),
  sub: Type.Integer({ description: 'user id' }),
  scope: Type.String(),
  exp: Type.Integer({ description: 'Unix seconds' }),
});
export const InactiveIntrospection = Type.Object({ active: Type.Literal(false) });
export const Introspection = Type.Union([ActiveIntrospection, InactiveIntrospection]);
export type Introspection = Static<typeof Introspection>;

export const Revoked = Type.Object(
  {},
  { description: 'RFC 7009: an empty object, also for unknown tokens' },
);

// --- client registration and approval ---------------------------------------------------

export const RegisterBody = Type.Object({
  client_name: Type.String({ minLength: 1, maxLength: 100, pattern: PRINTABLE_ASCII }),
  redirect_uris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 10 })),
  grant_types: Type.Optional(
    Type.Array(Type.Union(CLIENT_GRANT_TYPES.map((g) => Type.Literal(g))), {
      minItems: 1,
      maxItems: 2,
    }),
  ),
  response_types: Type.Optional(Type.Array(Type.Literal('code'), { minItems: 1, maxItems: 1 })),
  token_endpoint_auth_method: Type.Optional(Type.Union(AUTH_METHODS.map((m) => Type.Literal(m)))),
});
export type RegisterBody = Static<typeof RegisterBody>;

export const RegisteredClient = Type.Object({
  client_id: Type.String(),
  client_name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  grant_types: Type.Array(Type.String()),
  response_types: Type.Array(Type.String()),
  token_endpoint_auth_method: Type.String(),
  client_secret: Type.Optional(
    Type.String({ description: 'confidential clients only; shown once' }),
  ),
  client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: never' })),
});
export type RegisteredClient = Static<typeof RegisteredClient>;

export const PendingClient = Type.Object({
  client_id: Type.String(),
  client_name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  grant_types: Type.Array(Type.String()),
  token_endpoint_auth_method: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 with offset' }),
  expires_at: Type.String({
    description:
      'ISO 8601 with offset: 7 days after created_at, when an unapproved client is purged',
  }),
});
export const PendingClients = Type.Object({ clients: Type.Array(PendingClient) });
export const ClientIdParams = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 64 }),
});
export const ApprovedClient = Type.Object({
  client_id: Type.String(),
  approved_at: Type.String({ description: 'ISO 8601 with offset' }),
  approved_by_user_id: Type.Union([Type.Integer(), Type.Null()]),
});
export const DeletedClient = Type.Object({ deleted: Type.Literal(true) });

// --- discovery ---------------------------------------------------------------------------

export const AuthorizationServerMetadata = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  registration_endpoint: Type.String(),
  device_authorization_endpoint: Type.String(),
  introspection_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  response_modes_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  authorization_response_iss_parameter_supported: Type.Boolean(),
  service_documentation: Type.String(),
});

export const ProtectedResourceMetadata = Type.Object({
  resource: Type.String(),
  authorization_servers: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  bearer_methods_supported: Type.Array(Type.String()),
  resource_name: Type.String(),
  resource_documentation: Type.String(),
});

// --- browser forms -----------------------------------------------------------------------

const Field = Type.Optional(Type.String({ maxLength: 4096 }));

export const SignInQuery = Type.Object({ redirect: Field });
export const SignInForm = Type.Object({
  username: Field,
  password: Field,
  totp: Field,
  ticket: Field,
  redirect: Field,
  csrf: Field,
});
export type SignInForm = Static<typeof SignInForm>;

export const DeviceQuery = Type.Object({ user_code: Field });
export const DeviceForm = Type.Object({ user_code: Field, deny: Field, csrf: Field });
export type DeviceForm = Static<typeof DeviceForm>;

export const AuthorizeQuery = Type.Object({
  response_type: Field,
  client_id: Field,
  redirect_uri: Field,
  code_challenge: Field,
  code_challenge_method: Field,
  scope: Field,
  state: Field,
});
export type AuthorizeQuery = Static<typeof AuthorizeQuery>;

export const AuthorizeForm = Type.Object({
  client_id: Field,
  redirect_uri: Field,
  code_challenge: Field,
  code_challenge_method: Field,
  scope: Field,
  state: Field,
  deny: Field,
  approve: Field,
  csrf: Field,
});
export type AuthorizeForm = Static<typeof AuthorizeForm>;

/** Response map entries of the HTML pages and assets, for /openapi.json. */
export const HtmlPage = (description: string) => MediaBody('text/html', description);
export const Redirect = (description: string) => Type.Unsafe<null>({ description, type: 'null' });
