/**
 * How /openapi.json is published (OpenAPI 3.1, generated from the route declarations by
 * @fastify/swagger): what the document says beyond the routes (servers, security schemes), and
 * what it leaves out of them.
 *
 * Invariant: the document carries only OpenAPI and JSON Schema keywords. The validator's own
 * keywords (`errorMessage`, which replaces AJV's message with the spec's text) stay on the
 * compiled schemas and are stripped from the published copy, so that an independent validator,
 * a client generator or a fuzzer reads the same rules the server enforces and nothing else.
 * `test/contract/openapi.test.ts` runs Redocly's recommended rules on the served document.
 */
import { SESSION_COOKIE } from './auth-hook.js';

/** Keywords only the appliance's AJV understands (registered in http-server.ts). */
export const VALIDATOR_ONLY_KEYWORDS = ['errorMessage'] as const;

/**
 * The reverse: `documentAs` holds JSON Schema keywords that a handler enforces (an IP address
 * checked and canonicalised in the service, a profile looked up in the database) but the
 * validator must not, because the handler's answer differs from a schema failure (several field
 * errors at once, trimmed input, the spec's own text). AJV ignores it (registered as a keyword
 * without a rule); the published copy merges its keywords into the schema, so the document states
 * the rule the server enforces. `documented()` in schemas.ts writes it.
 */
export const DOCUMENT_ONLY_KEYWORD = 'documentAs';

export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An access token (POST /api/login, POST /api/tokens, or the OAuth flows) as `Authorization: Bearer <token>`.',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      'The browser session of the /auth/* pages (set by POST /auth/signin or POST /api/ensureWebSession; HttpOnly, Secure, SameSite=Lax).',
  },
} as const;

/**
 * The document's server: the appliance itself, at the origin the document was fetched from
 * (a relative URL, so the document is right behind any host name, port or proxy).
 */
export const SERVERS = [
  { url: '/', description: 'This appliance (the origin /openapi.json was fetched from)' },
];

/** Maps that hold names, not keywords: their keys are never stripped. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'schemas',
  'paths',
  'responses',
  'content',
  'headers',
  'securitySchemes',
  'examples',
]);

/** A copy of the document without validator-only keywords (see the module header). */
export function publishedDocument<T>(document: T): T {
  const strip = (value: unknown, inNameMap: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => strip(item, false));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      if (!inNameMap && (VALIDATOR_ONLY_KEYWORDS as readonly string[]).includes(key)) continue;
      if (!inNameMap && key === DOCUMENT_ONLY_KEYWORD) continue;
      out[key] = strip(child, !inNameMap && NAME_MAPS.has(key));
    }
    const documentAs = (value as Record<string, unknown>)[DOCUMENT_ONLY_KEYWORD];
    if (!inNameMap && documentAs !== null && typeof documentAs === 'object')
      Object.assign(out, strip(documentAs, false));
    return out;
  };
  return strip(document, false) as T;
}

/**
 * Names a shared schema in `components.schemas` by its `$id` (`LegacyFailure`), not by its
 * position (`def-0`), so that clients generated from the document keep stable names.
 */
export function componentName(
  json: { $id?: unknown },
  _baseUri: unknown,
  _fragment: unknown,
  i: number,
): string {
  return typeof json.$id === 'string' ? json.$id : `def-${i}`;
}
