/**
 * 405 Method Not Allowed for the API's paths (RFC 9110 §15.5.6): a request whose path matches a
 * declared route but whose method none declares answers 405 `{status: false, hasError: true,
 * message}` with an `Allow` header that lists the path's methods; a path no route declares stays
 * 404. Only the guarded families (route-config's declared routes: /api, /auth, /.well-known,
 * /openapi.json, /metrics) take part; the console's page fallback is not a method list.
 *
 * Invariant: the answer is given in the not-found context's onRequest hook, before Fastify reads
 * a body, so a method with a body (QUERY, whose parser demands a Content-Type) can never turn an
 * unsupported method or an unknown path into a 400 or 422. The lookup runs only on requests that
 * matched no route (or that the console's fallback hands back), never on the hot path.
 */
import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Fastify's default router limits, so that a path matches here exactly when it does there. */
export interface RouterLimits {
  maxParamLength: number;
}

export interface AllowedMethods {
  /** The methods of the declared routes that match `path`, HEAD included with GET; sorted. */
  of(path: string): string[];
}

type Method = FindMyWay.HTTPMethod;

/**
 * A lookup over the declared routes (a live list), built when a not-found request first needs it
 * and rebuilt only when routes were added since.
 */
export function allowedMethods(
  routes: readonly { method: string; url: string }[],
  limits: RouterLimits,
): AllowedMethods {
  let router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | null = null;
  let methods: string[] = [];
  let builtFrom = -1;
  const build = () => {
    builtFrom = routes.length;
    const r = FindMyWay({ maxParamLength: limits.maxParamLength });
    const seen = new Set<string>();
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      r.on(route.method as Method, route.url, () => undefined);
    }
    methods = [...new Set(routes.map((route) => route.method))];
    return r;
  };
  return {
    of(path) {
      if (router === null || builtFrom !== routes.length) router = build();
      const found = new Set<string>();
      for (const method of methods)
        if (router.find(method as Method, path) !== null) found.add(method);
      if (found.has('GET')) found.add('HEAD');
      return [...found].sort();
    },
  };
}

export function methodNotAllowedMessage(method: string, allow: readonly string[]): string {
  return `The ${method} method is not supported for this route. Supported methods: ${allow.join(', ')}.`;
}

/** Answers 405 with Allow when the path has other methods; false when it has none (a 404). */
export function answerMethodNotAllowed(
  lookup: AllowedMethods,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean {
  const path = request.url.split('?')[0] ?? '/';
  const allow = lookup.of(path);
  if (allow.length === 0 || allow.includes(request.method)) return false;
  reply
    .code(405)
    .header('allow', allow.join(', '))
    .type('application/json; charset=utf-8')
    .send({
      status: false,
      hasError: true,
      message: methodNotAllowedMessage(request.method, allow),
    });
  return true;
}

/**
 * Installs the early answer: a request that matched no route is answered 405 (the path has other
 * methods) or 404 (it has none) before its body is read.
 */
export function installMethodNotAllowed(
  app: FastifyInstance,
  lookup: AllowedMethods,
  notFound: (request: FastifyRequest, reply: FastifyReply) => void,
): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    if (!answerMethodNotAllowed(lookup, request, reply)) notFound(request, reply);
  });
}
