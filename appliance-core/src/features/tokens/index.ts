export { TokenService, type MintedToken } from './tokens.service.js';
export {
  endSession,
  endSessionsOfToken,
  findToken,
  prepareBearerLookup,
  prepareSessionLookup,
  revokeLoginTokensNamed,
  revokeToken,
  revokeTokensByIds,
  sessionCsrfSecret,
  type TokenRow,
} from './tokens.repository.js';
export {
  OAUTH_NAME_PREFIX,
  RESERVED_PREFIXES,
  SCOPES,
  ScopeSchema,
  type Scope,
} from './tokens.schema.js';
export { tokensRoutes } from './tokens.routes.js';
