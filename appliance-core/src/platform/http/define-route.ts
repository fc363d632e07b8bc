/**
 * One declaration per route: method, the spec's path, access rule, error shape, schemas and
 * handler. `defineRoute` fills the route `config` (what the route-declaration guard checks) and
 * the response map (the route's own statuses plus every status the platform may answer in the
 * route's families, so /openapi.json documents them and serialization never mangles a failure)
 * from that one declaration: the pair cannot drift apart, and a route cannot forget a status.
 *
 * The handler is typed from the declaration's TypeBox schemas (params, querystring, body,
 * response) through Fastify's TypeBox type provider, as `app.get(url, {schema}, handler)` is.
 *
 * Two kinds of route answer outside the platform's JSON families, and say so in the declaration:
 * - a route with its own `errorHandler` (the HTML pages of /auth/*) renders every failure itself,
 *   so its response map is exactly the statuses it declares;
 * - an event stream (`defineEventStream`) has sent its status line before its work can fail, so a
 *   failure is reported inside the stream (`event: error`), through one helper for every stream.
 *
 * A public route is documented without a security requirement (`security: []`), a page of the
 * browser session with the session cookie (`security: [{session: []}]`), others with the bearer.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyError,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
  onRequestHookHandler,
  preValidationHookHandler,
} from 'fastify';
import type { RateLimitOptions } from '@fastify/rate-limit';
import type { RouteErrors } from './envelopes.js';
import { callerMessage } from './error-handler.js';
import type { App } from './http-server.js';
import type { Access } from './identity.js';
import { EventStreamBody, responses, type StreamEvent } from './schemas.js';
import { openEventStream, type EventStream } from './sse.js';

/** Named error shapes that many routes share (a route may still declare its own RouteErrors). */
export const ERROR_PRESETS = {
  /** HTTP 200 `{status: false, hasError: true, message}` for validation and failures. */
  legacy: { validation: 'legacy', failure: 'legacy' },
  /** 400 `{errors: {field: [text]}}` for validation, `{error}` with the status for failures. */
  errors: { validation: 'errors', failure: 'error' },
  /** `{error}` with the status for validation (422) and failures. */
  error: { validation: 'error', failure: 'error' },
  /** `{status: <HTTP status>, message}` (device inventory). */
  statusCode: { validation: 'statusCode', failure: 'statusCode' },
  /** `{message}` with the failure's status. */
  message: { validation: 'message', failure: 'message' },
  /** On-box tools: HTTP 200 `{status: false, message}` for every failure of the tool. */
  tool: {
    validation: 'statusMessage',
    validationStatus: 200,
    failure: 'statusMessage',
    toolFailureStatus: 200,
  },
  /** `{status: false, message}` with the failure's HTTP status. */
  statusMessage: { validation: 'statusMessage', failure: 'statusMessage' },
  /** `{error: <oauth code>, error_description}`. */
  oauth: { validation: 'oauth', failure: 'oauth' },
  /** `{message, errors}` for validation (422), `{message}` for failures (dashboards). */
  messageErrors: { validation: 'messageErrors', failure: 'messageErrors' },
  /** The legacy body with the failure's real HTTP status (422 batches, not found). */
  legacyStatus: { validation: 'legacyStatus', failure: 'legacyStatus' },
  /** `{status: false, hasError: true, message: {<field>: [text]}}`, 422 (pending-device fields). */
  legacyFields: { validation: 'legacyFields', failure: 'legacyFields' },
  /** `{status: false, errors}` for validation (400), `{status: false, message}` for failures (device tags). */
  falseErrors: { validation: 'falseErrors', failure: 'falseErrors' },
  /** 422 `{status: false, hasError: true, message: 'Validation failed', errors}`, the legacy body with the status for failures (data maintenance). */
  legacyValidation: { validation: 'legacyValidation', failure: 'legacyValidation' },
} as const satisfies Record<string, RouteErrors>;

export type ErrorPreset = keyof typeof ERROR_PRESETS;

export function routeErrors(errors: RouteErrors | ErrorPreset): RouteErrors {
  return typeof errors === 'string' ? ERROR_PRESETS[errors] : errors;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Responses = Record<number, TSchema>;

/** What the type provider sees: only the parts a route declares. */
interface SchemaOf<P, Q, B, H, R> {
  params: P;
  querystring: Q;
  body: B;
  headers: H;
  response: R;
}

export type DeclaredHandler<P, Q, B, H, R> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  SchemaOf<P, Q, B, H, R>,
  TypeBoxTypeProvider,
  FastifyBaseLogger
>;

export interface RouteDeclaration<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  H extends TSchema | undefined,
  R extends Responses,
> {
  method: Method;
  /** The spec's exact path, in Fastify's `:param` form. */
  url: string;
  access: Access;
  /** The error families of the route: a preset's name or its own RouteErrors. */
  errors: RouteErrors | ErrorPreset;
  /** OpenAPI grouping and text. */
  tags: readonly string[];
  summary: string;
  description?: string;
  /** Stable OpenAPI operation id (the console's generated client uses it). */
  operationId?: string;
  params?: P;
  querystring?: Q;
  body?: B;
  headers?: H;
  /** The route's own statuses and bodies; the platform's failure statuses are added. */
  response: R;
  /** A rate limit where the spec sets one (adds 429 to the response map). */
  rateLimit?: RateLimitOptions;
  /**
   * An onRequest hook that admits the request or refuses it with 429 (a run limit, such as the
   * tool-run slots): it runs after the platform's auth check and the route's own onRequest hooks,
   * and 429 in the route's failure family joins the response map, as for `rateLimit`.
   */
  admission?: onRequestHookHandler;
  /** Media types accepted for a request body (default: application/json). */
  accepts?: readonly string[];
  /** Request-body media types for the OpenAPI document (Fastify's `consumes`). */
  consumes?: readonly string[];
  /** Response media types for the OpenAPI document (Fastify's `produces`). */
  produces?: readonly string[];
  /** Route-level onRequest hooks (after the platform's auth check and media-type gate). */
  onRequest?: onRequestHookHandler | onRequestHookHandler[];
  /** Route-level preValidation hooks (e.g. an absent form body read as an empty one). */
  preValidation?: preValidationHookHandler | preValidationHookHandler[];
  /**
   * The route renders its own failures (an HTML page): the platform's failure statuses are not
   * added to its response map, which holds exactly the statuses it declares.
   */
  errorHandler?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;
  /** Leave the route out of /openapi.json. */
  hide?: boolean;
  /** The route takes no body and never reads one (see security-headers.ts, ignoreBody). */
  ignoresBody?: true;
  /** Body size limit in bytes where the default does not fit. */
  bodyLimit?: number;
  handler: DeclaredHandler<P, Q, B, H, R>;
}

/** Registers one route from its declaration (see the module header). */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  H extends TSchema | undefined = undefined,
  R extends Responses = Responses,
>(app: App, declaration: RouteDeclaration<P, Q, B, H, R>): void {
  const d = declaration;
  const errors = routeErrors(d.errors);
  const isPublic = d.access?.kind === 'public';
  const schema: Record<string, unknown> = {
    tags: [...d.tags],
    summary: d.summary,
    response:
      d.errorHandler !== undefined
        ? { ...d.response }
        : responses(errors, d.response, {
            authenticated: !isPublic,
            rateLimited: d.rateLimit !== undefined || d.admission !== undefined,
          }),
  };
  if (isPublic) schema.security = [];
  // The /auth/* pages authenticate with the browser session cookie, not a bearer token.
  if (d.access?.kind === 'browser-session') schema.security = [{ session: [] }];
  if (d.description !== undefined) schema.description = d.description;
  if (d.operationId !== undefined) schema.operationId = d.operationId;
  if (d.params !== undefined) schema.params = d.params;
  if (d.querystring !== undefined) schema.querystring = d.querystring;
  if (d.body !== undefined) schema.body = d.body;
  if (d.headers !== undefined) schema.headers = d.headers;
  if (d.consumes !== undefined) schema.consumes = [...d.consumes];
  if (d.produces !== undefined) schema.produces = [...d.produces];
  if (d.hide) schema.hide = true;
  const config: Record<string, unknown> = { access: d.access, errors };
  if (d.rateLimit !== undefined) config.rateLimit = d.rateLimit;
  if (d.admission !== undefined) config.admission = true;
  const onRequest = [
    ...(d.onRequest === undefined ? [] : [d.onRequest].flat()),
    ...(d.admission === undefined ? [] : [d.admission]),
  ];
  if (d.accepts !== undefined) config.accepts = d.accepts;
  if (d.ignoresBody) config.ignoresBody = true;
  app.route({
    method: d.method,
    url: d.url,
    config,
    schema,
    ...(onRequest.length > 0 ? { onRequest } : {}),
    ...(d.preValidation !== undefined ? { preValidation: d.preValidation } : {}),
    ...(d.errorHandler !== undefined ? { errorHandler: d.errorHandler } : {}),
    ...(d.bodyLimit !== undefined ? { bodyLimit: d.bodyLimit } : {}),
    handler: d.handler as RouteHandlerMethod,
  });
}

type DeclaredRequest<P, Q> = Parameters<
  DeclaredHandler<P, Q, undefined, undefined, { 200: TSchema }>
>[0];

export interface EventStreamDeclaration<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
> extends Omit<
  RouteDeclaration<P, Q, undefined, undefined, Responses>,
  'body' | 'headers' | 'response' | 'handler' | 'errorHandler' | 'accepts' | 'consumes'
> {
  /** What the frames carry: the description of the 200 answer in /openapi.json. */
  frames: string;
  /**
   * Each kind of event the work sends, with its data schema (documented in /openapi.json; the
   * platform adds `error` and `last`).
   */
  events: readonly StreamEvent[];
  /** The route's other statuses (answered before the stream opens). */
  response?: Responses;
  /** A frame sent last, after success and failure alike (for example `event: stream-complete`). */
  last?: { event: string; data: unknown };
  /** Sends the frames. A failure it throws is reported inside the stream (see runEventStream). */
  stream: (request: DeclaredRequest<P, Q>, stream: EventStream) => Promise<void>;
}

/**
 * Registers a server-sent-events route (spec part 1, General conventions 9): the stream opens at
 * once with HTTP 200, the declaration's `stream` sends the frames, and runEventStream reports a
 * failure and ends the stream. Failures before the stream opens (access, validation) are
 * answered in the route's families as on any route.
 */
export function defineEventStream<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
>(app: App, declaration: EventStreamDeclaration<P, Q>): void {
  const { frames, events, last, stream: work, response, ...route } = declaration;
  const internal = routeErrors(route.errors).internal;
  const documented: StreamEvent[] = [
    ...events,
    {
      event: 'error',
      description: 'The work failed: why; the stream then ends',
      data: Type.Object({ message: Type.String() }),
    },
  ];
  if (last)
    documented.push({
      event: last.event,
      description: 'Sent last, after success and failure alike; the stream then ends',
      data: Type.Unsafe({ const: last.data }),
    });
  defineRoute<P, Q>(app, {
    ...route,
    response: { ...response, 200: EventStreamBody(frames, documented) },
    handler: async (request, reply) => {
      const stream = openEventStream(reply);
      void runEventStream(stream, () => work(request as DeclaredRequest<P, Q>, stream), {
        last,
        internal,
        log: request.log,
      });
      return reply;
    },
  });
}

/**
 * Runs the work of an open event stream. The status line is sent, so a failure is reported
 * inside the stream: `event: error` with data `{message}`, the failure's own message when it is
 * meant for the caller, else the route's internal message (and the error is logged). Then
 * `last`, when given, and the end of the stream, whatever happened.
 */
export async function runEventStream(
  stream: EventStream,
  work: () => Promise<void>,
  options: {
    last?: { event: string; data: unknown } | undefined;
    internal?: string | undefined;
    log?: FastifyBaseLogger;
  } = {},
): Promise<void> {
  try {
    await work();
  } catch (err) {
    let message = callerMessage(err);
    if (message === null) {
      options.log?.error({ err }, 'unexpected failure in an event stream');
      message = options.internal ?? 'Server Error';
    }
    stream.send({ message }, 'error');
  } finally {
    if (options.last) stream.send(options.last.data, options.last.event);
    stream.close();
  }
}

/** The static type of a declared schema, or undefined when the route declares none. */
export type StaticOf<S extends TSchema | undefined> = S extends TSchema ? Static<S> : undefined;
