/**
 * The OpenAPI `operationId` of a route, derived from its method and path by one rule, so that it
 * is stable (the console's generated client and any other client key on it) and never written by
 * hand:
 *
 * 1. A path that is one of the spec's named endpoints, `/api/<name>` with a camelCase name
 *    (an uppercase letter inside it) and at most path parameters after it, is that name:
 *    `POST /api/saveUser` → `saveUser`, `POST /api/getPingInfo/{pingTarget}` → `getPingInfo`,
 *    `GET /api/SSEgetPingInfo/{pingTarget}` → `SSEgetPingInfo`.
 * 2. Any other path is the lowercase method followed by its segments in PascalCase (the leading
 *    `/api` dropped; words split at `-`, `_` and `.`), a parameter written `By<Name>`:
 *    `GET /api/tokens` → `getTokens`, `DELETE /api/tokens/{id}` → `deleteTokensById`,
 *    `POST /api/oauth/clients/{clientId}/approve` → `postOauthClientsByClientIdApprove`,
 *    `GET /auth/device` → `getAuthDevice`, `GET /.well-known/oauth-protected-resource` →
 *    `getWellKnownOauthProtectedResource`.
 *
 * The contract test checks that the ids are unique; a route may still name its own
 * (`operationId` in its declaration) where the rule would collide.
 */

const PARAM = /^:([A-Za-z0-9_]+)$|^\{([A-Za-z0-9_]+)\}$/;
const NAMED_ENDPOINT = /^[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/;

function pascal(word: string): string {
  return word
    .split(/[-_.]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter(Boolean);
  if (segments[0] === 'api') segments.shift();
  const [first, ...rest] = segments;
  if (
    first !== undefined &&
    NAMED_ENDPOINT.test(first) &&
    rest.every((segment) => PARAM.test(segment))
  )
    return first;
  const words = segments.map((segment) => {
    const param = PARAM.exec(segment);
    return param ? `By${pascal((param[1] ?? param[2]) as string)}` : pascal(segment);
  });
  return method.toLowerCase() + words.join('');
}
