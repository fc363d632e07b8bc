/**
 * Builds the Fastify instance every feature registers on: HTTPS (TLS 1.2+), strict body
 * parsing, the auth hook, the error handler, rate limits, security headers and OpenAPI.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import secureJson from 'secure-json-parse';
import { AjvCompiler } from '@fastify/ajv-compiler';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type RawServerDefault,
} from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Clock } from '../time/time.js';
import type { Logger } from 'pino';
import { installAuthHook } from './auth-hook.js';
import { allowedMethods, installMethodNotAllowed } from './allowed-methods.js';
import { installErrorHandler, notFound } from './error-handler.js';
import {
  componentName,
  DOCUMENT_ONLY_KEYWORD,
  publishedDocument,
  SECURITY_SCHEMES,
  SERVERS,
  VALIDATOR_ONLY_KEYWORDS,
} from './openapi-document.js';
import type { IdentityResolver } from './identity.js';
import { jsonDepth, MAX_JSON_DEPTH, requireFiniteNumbers } from './input-limits.js';
import { installRateLimits } from './rate-limit.js';
import { installRequestMetrics } from './request-metrics.js';
import type { HttpMetrics } from '../metrics/metrics.js';
import { enforceRouteDeclarations } from './route-config.js';
import { installContentTypeGate, installSecurityHeaders } from './security-headers.js';

export interface HttpServerOptions {
  logger: Logger;
  tls: { key: string; cert: string } | null;
  trustedProxies: readonly string[];
  resolver: IdentityResolver;
  version: string;
  /** APPLIANCE_PUBLIC_ORIGIN: wins over the Host header in WWW-Authenticate. */
  publicOrigin?: string | undefined;
  /** Counts requests by route for /metrics (absent in tests of the HTTP layer alone). */
  metrics?: HttpMetrics;
  /** Times rate-limit windows (the appliance's clock; the system clock when absent). */
  clock?: Clock;
}

/**
 * The server every feature registers on. At run time it is an HTTPS server (plain HTTP only in
 * HTTP-layer tests); both hand Fastify node:http requests and responses, which is what the
 * default raw-server type describes.
 */
export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

interface AjvServerOptions {
  customOptions: Record<string, unknown>;
  plugins: unknown[];
}
type ValidatorFor = (route: {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}) => unknown;

/**
 * Request bodies are validated without coercion ("5" is not an integer), but path parameters
 * and query strings are text by nature: they are coerced to their schema's types.
 */
function buildValidator(externalSchemas: unknown, ajv: AjvServerOptions): ValidatorFor {
  const pool = AjvCompiler() as unknown as (
    schemas: unknown,
    options: AjvServerOptions,
  ) => ValidatorFor;
  const strict = pool(externalSchemas, ajv);
  const coercing = pool(externalSchemas, {
    ...ajv,
    customOptions: { ...ajv.customOptions, coerceTypes: 'array' },
  });
  return (route) =>
    requireFiniteNumbers(
      (route.httpPart === 'body' ? strict(route) : coercing(route)) as Parameters<
        typeof requireFiniteNumbers
      >[0],
    );
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Compiles every route's validators and serializers now (they are compiled on first use);
     * returns how many, and the failures. The contract test calls it so a broken schema fails a
     * test rather than a first request.
     */
    compileAllSchemas(): { compiled: number; failures: string[] };
  }
}

type Compiled = ((data: unknown) => unknown) & { errors?: unknown };
type CompilerFor = (route: {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
}) => Compiled;

/**
 * Schemas are compiled on first use, not at start: the appliance declares some 260 routes with a
 * serializer per status code, and compiling them all at boot grew the heap by ~20 MB of which idle
 * appliances use a handful (measured: idle RSS 150 -> 125-132 MB). The first request to a route
 * pays its compilation (milliseconds) once. `pending` lets compileAllSchemas() force them.
 */
function lazily(
  factory: (externalSchemas: unknown, options: never) => CompilerFor,
  pending: Set<() => void>,
): (externalSchemas: unknown, options: never) => CompilerFor {
  return (externalSchemas, serverOptions) => {
    const compilerFor = factory(externalSchemas, serverOptions);
    return (route) => {
      let compiled: Compiled | null = null;
      const compile = () => {
        compiled ??= compilerFor(route);
        pending.delete(compile);
        return compiled;
      };
      pending.add(compile);
      // Fastify reads a validator's `errors` from the function it called: copy them across.
      const run: Compiled = (data) => {
        const fn = compiled ?? compile();
        const result = fn(data);
        run.errors = fn.errors;
        return result;
      };
      return run;
    };
  };
}

/** Fastify's own serializer compiler (fast-json-stringify), the version Fastify depends on. */
function fastifySerializerSelector(): (externalSchemas: unknown, options: never) => CompilerFor {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as {
    SerializerSelector: () => (externalSchemas: unknown, options: never) => CompilerFor;
  };
  return SerializerSelector();
}

/**
 * Fastify's router answers 414 (FST_ERR_MAX_PARAM_LENGTH, before authentication) for a path
 * parameter longer than its `maxParamLength` (default 100). The limit is set above any URL Node's
 * HTTP parser accepts (16 KiB of headers), so every parameter reaches its route, after the auth
 * check, and its schema's maxLength decides (the contract test checks every parameter has one).
 */
export const MAX_PARAM_LENGTH = 65_536;

export async function createHttpServer(options: HttpServerOptions): Promise<App> {
  const pendingCompilations = new Set<() => void>();
  const app = Fastify({
    loggerInstance: options.logger as unknown as FastifyBaseLogger,
    // Per-request lines are off: errors are logged by the error handler with their context.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger (a pino child with redaction costs ~2 µs a request); the
    // error handler logs method and route with every failure instead.
    childLoggerFactory: (logger) => logger,
    ...(options.tls
      ? { https: { key: options.tls.key, cert: options.tls.cert, minVersion: 'TLSv1.2' as const } }
      : {}),
    // X-Forwarded-* are ignored unless the operator names the proxies to trust.
    trustProxy: options.trustedProxies.length > 0 ? [...options.trustedProxies] : false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    bodyLimit: 1_048_576,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    return503OnClosing: true,
    forceCloseConnections: true,
    // `errorMessage` on a schema replaces the generated message (see validation.ts).
    ajv: {
      customOptions: {
        allErrors: false,
        verbose: true,
        coerceTypes: false,
        removeAdditional: 'all',
        useDefaults: true,
        allowUnionTypes: true,
        keywords: [...VALIDATOR_ONLY_KEYWORDS, DOCUMENT_ONLY_KEYWORD],
      },
    },
    schemaController: {
      compilersFactory: {
        buildValidator: lazily(buildValidator as never, pendingCompilations) as never,
        buildSerializer: lazily(fastifySerializerSelector(), pendingCompilations) as never,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.decorate('compileAllSchemas', () => {
    let compiled = 0;
    const failures: string[] = [];
    for (const compile of [...pendingCompilations]) {
      try {
        compile();
        compiled++;
      } catch (err) {
        pendingCompilations.delete(compile);
        failures.push((err as Error).message);
      }
    }
    return { compiled, failures };
  });
  app.removeContentTypeParser('text/plain');
  // JSON with prototype-poisoning protection; an empty body (clients that always send the
  // header) counts as no body rather than a parse error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (jsonDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      const error = Object.assign(new Error(`JSON nested more than ${MAX_JSON_DEPTH} levels`), {
        statusCode: 400,
        code: 'ERR_JSON_TOO_DEEP',
      });
      return done(error, undefined);
    }
    try {
      done(null, secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' }));
    } catch (err) {
      const poisoned = /forbidden (prototype|constructor) property/.test((err as Error).message);
      const error = Object.assign(
        new Error(poisoned ? 'forbidden prototype property' : 'invalid JSON'),
        {
          statusCode: 400,
          code: poisoned ? 'ERR_PROTO_POISONING' : 'FST_ERR_CTP_INVALID_JSON_BODY',
        },
      );
      done(error, undefined);
    }
  });
  enforceRouteDeclarations(app);
  if (options.metrics) installRequestMetrics(app, options.metrics);
  const methods = allowedMethods(app.declaredRoutes, { maxParamLength: MAX_PARAM_LENGTH });
  installErrorHandler(app, methods);
  // First hook of all: a request refused by a later hook still carries these headers.
  installSecurityHeaders(app);
  installMethodNotAllowed(app, methods, notFound);
  await app.register(cookie);
  await app.register(formbody);
  await installRateLimits(app, options.clock);
  // Both are route-level hooks that prepend themselves: installed in this order, a request meets
  // the auth check first, then the content-type gate, then the route's own hooks (rate limits).
  installContentTypeGate(app);
  installAuthHook(app, options.resolver, options.publicOrigin);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Network monitoring appliance API',
        version: options.version,
        description:
          'REST API of the appliance. Every /api route except the public ones takes `Authorization: Bearer <token>`; the /auth/* pages use the browser session cookie. Operation ids follow one rule (docs/architecture.md, "OpenAPI").',
      },
      servers: SERVERS,
      components: { securitySchemes: SECURITY_SCHEMES },
      security: [{ bearer: [] }],
    },
    hideUntagged: false,
    refResolver: { buildLocalReference: componentName },
    transformObject: (({ openapiObject }: { openapiObject: unknown }) =>
      publishedDocument(openapiObject)) as never,
  });
  return app;
}
