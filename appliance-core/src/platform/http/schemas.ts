/**
 * TypeBox shapes of the failure families, and the helper that adds them to a route's response
 * map so that /openapi.json documents every status a route can answer and serialization never
 * mangles a failure body (a legacy route's HTTP 200 answers either its success or the failure).
 */
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { Family, RouteErrors } from './envelopes.js';

export const LegacyFailureBody = Type.Object(
  { status: Type.Literal(false), hasError: Type.Literal(true), message: Type.String() },
  { $id: 'LegacyFailure', description: 'HTTP 200 failure of the legacy family' },
);
export const StatusMessageBody = Type.Object({
  status: Type.Literal(false),
  message: Type.String(),
});
export const ErrorBody = Type.Object({ error: Type.String() });
export const FieldErrorsMap = Type.Record(Type.String(), Type.Array(Type.String()));
export const ErrorsBody = Type.Object({ errors: FieldErrorsMap });
export const MessageBody = Type.Object({ message: Type.String() });
export const MessageErrorsBody = Type.Object({
  message: Type.String(),
  errors: Type.Optional(FieldErrorsMap),
});
export const OAuthErrorBody = Type.Object({
  error: Type.String(),
  error_description: Type.String(),
});
export const StatusCodeBody = Type.Object({
  status: Type.Integer(),
  message: Type.Optional(Type.String()),
  errors: Type.Optional(FieldErrorsMap),
});
export const LegacyStatusBody = Type.Object({
  status: Type.Literal(false),
  hasError: Type.Literal(true),
  message: Type.String(),
});
export const LegacyFieldsBody = Type.Object({
  status: Type.Literal(false),
  hasError: Type.Literal(true),
  message: FieldErrorsMap,
});
export const FalseErrorsBody = Type.Object({
  status: Type.Literal(false),
  errors: Type.Optional(FieldErrorsMap),
  message: Type.Optional(Type.String()),
});
export const LegacyValidationBody = Type.Object({
  status: Type.Literal(false),
  hasError: Type.Literal(true),
  message: Type.String(),
  errors: Type.Optional(FieldErrorsMap),
});

export const StatusErrorBody = Type.Object({
  status: Type.Literal('error'),
  reason: Type.Optional(Type.String()),
  message: Type.String(),
});

const FAMILY_BODY: Record<Family, TSchema> = {
  legacy: LegacyFailureBody,
  statusMessage: StatusMessageBody,
  error: ErrorBody,
  errors: Type.Union([ErrorsBody, ErrorBody]),
  message: MessageBody,
  messageErrors: MessageErrorsBody,
  oauth: OAuthErrorBody,
  statusCode: StatusCodeBody,
  legacyStatus: LegacyStatusBody,
  legacyFields: LegacyFieldsBody,
  falseErrors: FalseErrorsBody,
  legacyValidation: LegacyValidationBody,
  statusError: StatusErrorBody,
};

export function familyBody(family: Family): TSchema {
  return FAMILY_BODY[family];
}

/** An answer in another media type than JSON (a page, an asset, an event stream). */
export function MediaBody(
  mediaType: string,
  description: string,
  schema: TSchema = Type.String(),
): TUnsafe<string> {
  return Type.Unsafe<string>({ description, content: { [mediaType]: { schema } } });
}

/** An answer that is one of several media types (a page, or a JSON error), each with its schema. */
export function MediaBodies(description: string, bodies: Record<string, TSchema>): TSchema {
  const content = Object.fromEntries(
    Object.entries(bodies).map(([mediaType, schema]) => [mediaType, { schema }]),
  );
  return Type.Unsafe({ description, content });
}

/** One kind of server-sent event a stream sends: its `event:` name (none: `message`) and data. */
export interface StreamEvent {
  /** The `event:` field; absent for the default (unnamed) event. */
  event?: string;
  description: string;
  /** The JSON carried on the event's `data:` line. */
  data: TSchema;
}

/**
 * The 200 answer of an event stream: `text/event-stream`, its frames described in words and
 * each kind of event given a schema. OpenAPI 3.1 has no keyword for the items of a stream, so
 * they are published as `x-itemSchema`, in the shape OpenAPI 3.2's `itemSchema` gives
 * `text/event-stream` (one object per event: `event`, and `data` as JSON text with its
 * `contentSchema`); a later move to 3.2 is a rename.
 */
export function EventStreamBody(frames: string, events: readonly StreamEvent[]): TSchema {
  const items = events.map((e) => ({
    type: 'object',
    description: e.description,
    properties: {
      ...(e.event === undefined
        ? {}
        : { event: { const: e.event, description: 'the event: line' } }),
      data: {
        type: 'string',
        description: 'the data: line, JSON',
        contentMediaType: 'application/json',
        contentSchema: e.data,
      },
    },
    required: e.event === undefined ? ['data'] : ['event', 'data'],
  }));
  return Type.Unsafe<string>({
    description: frames,
    content: {
      'text/event-stream': {
        schema: Type.String({ description: 'server-sent events, one JSON object per data: line' }),
        'x-itemSchema': { oneOf: items },
      },
    },
  });
}

/**
 * A schema whose published copy also states `rules` (JSON Schema keywords such as `format` or
 * `enum`) that the handler enforces and the validator must not (see DOCUMENT_ONLY_KEYWORD in
 * openapi-document.ts): the document tells clients the rule, the answers stay the handler's.
 */
export function documented<T extends TSchema>(schema: T, rules: Record<string, unknown>): T {
  return { ...schema, documentAs: rules };
}

/** An IPv4 or IPv6 address, as the document states it. */
export const IP_ADDRESS_RULE = {
  anyOf: [
    { type: 'string', format: 'ipv4' },
    { type: 'string', format: 'ipv6' },
  ],
};

/** A legacy success body and the legacy failure, both answered with HTTP 200. */
export function legacy200(success: TSchema): TSchema {
  return Type.Union([success, LegacyFailureBody]);
}

/** A schema's JSON with its keys sorted, so that two equal schemas compare equal. */
function canonical(schema: unknown): string {
  return JSON.stringify(schema, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );
}

/** Whether `schema` is `body` (or an equal schema), or a union with it among its members. */
function admits(schema: TSchema, body: TSchema): boolean {
  if (schema === body || canonical(schema) === canonical(body)) return true;
  const members = (schema as { anyOf?: TSchema[] }).anyOf;
  return members !== undefined && members.some((member) => admits(member, body));
}

/**
 * The HTTP 200 entry of a route whose families answer failures with HTTP 200 (the legacy family,
 * the tools' validation and tool failures): its success and those failure bodies, so that the
 * serializer accepts both (a success-only schema turned every such failure into a 500) and the
 * document says so. A media-typed success (an event stream) gets an application/json entry.
 */
function with200Failures(own: TSchema | undefined, failures: TSchema[]): TSchema {
  const unique = [...new Set(failures)];
  const failureBody = (): TSchema =>
    unique.length === 1 ? (unique[0] as TSchema) : Type.Union(unique);
  if (own === undefined) return failureBody();
  const content = (own as { content?: Record<string, { schema: TSchema }> }).content;
  if (content !== undefined) {
    const json = content['application/json'];
    const missing = unique.filter((body) => json === undefined || !admits(json.schema, body));
    if (missing.length === 0) return own;
    const schema = json === undefined ? failureBody() : Type.Union([json.schema, ...missing]);
    return { ...own, content: { ...content, 'application/json': { schema } } };
  }
  const missing = unique.filter((body) => !admits(own, body));
  return missing.length === 0 ? own : Type.Union([own, ...missing]);
}

/**
 * The response map of a route: its own statuses plus the ones the platform may answer
 * (validation, denial, media type, rate limit, internal error) in the route's families.
 */
export function responses(
  errors: RouteErrors,
  own: Record<number, TSchema>,
  options: { authenticated?: boolean; rateLimited?: boolean } = {},
) {
  const map: Record<number, TSchema> = { ...own };
  const add = (status: number, schema: TSchema) => {
    if (!(status in map)) map[status] = schema;
  };
  const validationStatus =
    errors.validationStatus ??
    { legacy: 200, errors: 400, oauth: 400, falseErrors: 400 }[errors.validation as string] ??
    422;
  const at200: TSchema[] = [];
  if (validationStatus === 200) at200.push(familyBody(errors.validation));
  else add(validationStatus, familyBody(errors.validation));
  if (errors.failure === 'legacy' || errors.toolFailureStatus === 200)
    at200.push(familyBody(errors.failure));
  if (at200.length > 0) map[200] = with200Failures(map[200], at200);
  if (options.authenticated !== false) {
    add(
      errors.unauthenticated?.status ?? 401,
      familyBody(errors.unauthenticated?.family ?? 'legacy'),
    );
    if (errors.denial) add(errors.denial.status, familyBody(errors.denial.family ?? 'legacy'));
  }
  add(415, familyBody(errors.failure === 'legacy' ? 'legacy' : errors.failure));
  if (options.rateLimited) add(429, familyBody(errors.failure));
  if (errors.failure !== 'legacy') add(500, familyBody(errors.failure));
  return map;
}

/**
 * A row id in a path: a positive integer a JS number holds exactly. With it every parameter has a
 * bound its schema checks (the router's own length limit is lifted, see http-server.ts).
 */
export const IdParam = () => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
