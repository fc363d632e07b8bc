/**
 * The one error handler. Invariant: a failure body is always in the family the route declared,
 * never carries a stack trace, an internal message or a secret; unexpected errors are logged
 * with their context and answered with the route's declared internal message.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiFailure,
  DEFAULT_ERRORS,
  render,
  validationStatus,
  type RouteErrors,
} from './envelopes.js';
import { ToolFailure } from '../process/tool-failure.js';
import { answerMethodNotAllowed, type AllowedMethods } from './allowed-methods.js';
import { MAX_JSON_DEPTH } from './input-limits.js';
import { fieldErrorsFrom } from './validation.js';

function errorsOf(request: FastifyRequest): RouteErrors {
  return request.routeOptions.config?.errors ?? DEFAULT_ERRORS;
}

function send(reply: FastifyReply, rendered: { status: number; body: Record<string, unknown> }) {
  return reply.code(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
}

/** Client errors Fastify raises before validation (bad JSON, poisoned prototypes, size, media type). */
const CLIENT_ERROR_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Media Type.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'The request body length is invalid.',
  FST_ERR_CTP_EMPTY_JSON_BODY:
    'The request body must not be empty when Content-Type is application/json.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is too large.',
  FST_ERR_CTP_INVALID_TYPE: 'The Content-Type header is invalid.',
  ERR_JSON_TOO_DEEP: `The request body nests more than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
};

/**
 * The message of a failure meant for the caller (an ApiFailure or a ToolFailure), or null for
 * an unexpected error, whose message is never shown. Event streams report failures with it.
 */
export function callerMessage(err: unknown): string | null {
  return err instanceof ApiFailure || err instanceof ToolFailure ? err.message : null;
}

/** A tool failure in the route's family, with the route's status for tool failures or its own. */
function renderToolFailure(errors: RouteErrors, err: ToolFailure) {
  return render(err.family ?? errors.failure, errors.toolFailureStatus ?? err.status, err.message);
}

export function renderFailure(request: FastifyRequest, err: ApiFailure) {
  const errors = errorsOf(request);
  return render(
    err.family ?? errors.failure,
    err.status,
    err.message,
    err.fields,
    err.oauthCode,
    err.reason,
  );
}

/** 404 in the API's legacy body under /api/, `{message}` elsewhere. */
export function notFound(request: FastifyRequest, reply: FastifyReply): void {
  reply
    .code(404)
    .send(
      request.url.startsWith('/api/')
        ? { status: false, hasError: true, message: 'Not Found' }
        : { message: 'Not Found' },
    );
}

/**
 * The error handler, and the not-found handler: a path that other methods serve answers 405 with
 * Allow (reached here when a fallback route hands the request back with callNotFound), else 404.
 */
export function installErrorHandler(app: FastifyInstance, methods?: AllowedMethods): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const errors = errorsOf(request);
    if (err instanceof ApiFailure) return send(reply, renderFailure(request, err));
    if (err instanceof ToolFailure) return send(reply, renderToolFailure(errors, err));
    if (err.validation) {
      const { fields, first } = fieldErrorsFrom(err.validation);
      const status = validationStatus(errors);
      return send(reply, render(errors.validation, status, first, fields));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const message =
        CLIENT_ERROR_MESSAGES[err.code] ??
        (err.code === 'ERR_PROTO_POISONING'
          ? 'The request body contains a forbidden property name.'
          : err.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
            ? 'The request body is not valid JSON.'
            : 'The request could not be processed.');
      if (status === 413 || status === 415)
        return send(reply, render(errors.failure, status, message));
      return send(
        reply,
        render(errors.validation, validationStatus(errors), message, { body: [message] }),
      );
    }
    request.log.error(
      { err, method: request.method, url: request.routeOptions.url },
      'unexpected failure',
    );
    return send(reply, render(errors.failure, 500, errors.internal ?? 'Server Error'));
  });

  app.setNotFoundHandler((request, reply) => {
    if (!methods || !answerMethodNotAllowed(methods, request, reply)) notFound(request, reply);
  });
}
