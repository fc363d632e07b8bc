/**
 * The spec's response families for failures, named once. Each route declares which family its
 * validation failures and its other failures use (RouteErrors); one error handler renders them.
 * Handlers never hand-build failure bodies: they throw ApiFailure.
 */

export type Family =
  /** HTTP 200 `{status: false, hasError: true, message}` (login, users, settings, older endpoints). */
  | 'legacy'
  /** `{status: false, message}` with the failure's HTTP status (MFA, ensureWebSession, tools). */
  | 'statusMessage'
  /** `{error: <text>}` with the failure's HTTP status (tokens, trackers, alerts, captures). */
  | 'error'
  /** `{errors: {<field>: [<text>]}}`, HTTP 400 by default (newer CRUD validation). */
  | 'errors'
  /** `{message}` with the failure's HTTP status. */
  | 'message'
  /** `{message, errors}`, HTTP 422 by default (framework validation: login, registration). */
  | 'messageErrors'
  /** `{error: <oauth code>, error_description}` (/auth/*, /api/oauth/*). */
  | 'oauth'
  /** `{status: <HTTP status>, message}`, or `{status: <HTTP status>, errors}` for field errors (device inventory). */
  | 'statusCode'
  /** The legacy body `{status: false, hasError: true, message}` with the failure's real HTTP status (not found, 422 batches). */
  | 'legacyStatus'
  /** `{status: false, hasError: true, message: {<field>: [<text>]}}`, HTTP 422 by default (updatePendingDeviceField). */
  | 'legacyFields'
  /** `{status: false, errors: {<field>: [<text>]}}`, HTTP 400 by default, or `{status: false, message}` (device tags). */
  | 'falseErrors'
  /** `{status: false, hasError: true, message: 'Validation failed', errors}` (422), or the legacy body with the failure's status (data maintenance). */
  | 'legacyValidation'
  /** `{status: 'error', reason?, message}` with the failure's HTTP status (captures). */
  | 'statusError';

export interface RouteErrors {
  /** Family for schema validation failures (bad body, query or params). */
  validation: Family;
  /** HTTP status for validation failures where the family's default is not the spec's. */
  validationStatus?: number;
  /** Family for ApiFailure and unexpected errors. */
  failure: Family;
  /** Status and message for a caller that lacks the route's permission (default 401, legacy). */
  denial?: { status: 401 | 403; family?: Family; message?: string };
  /** Status and message for a request without a valid credential (default 401, legacy). */
  unauthenticated?: { status: number; family?: Family; message?: string };
  /** The spec's text for an unexpected failure of this route (for example 'Failed to create token'). */
  internal?: string;
  /**
   * HTTP status of every ToolFailure on this route, where the spec answers all of them alike
   * (the tools' HTTP 200 `{status: false, message}`); without it a ToolFailure has its own.
   */
  toolFailureStatus?: number;
}

export type FieldErrors = Record<string, string[]>;

/** An expected failure: rendered in the route's family, never logged as a bug. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly fields: FieldErrors | undefined;
  readonly oauthCode: string | undefined;
  readonly family: Family | undefined;
  /** A machine-readable reason (`too-many`, `still-active` ...) for families that carry one. */
  readonly reason: string | undefined;
  constructor(
    status: number,
    message: string,
    options: { fields?: FieldErrors; oauthCode?: string; family?: Family; reason?: string } = {},
  ) {
    super(message);
    this.status = status;
    this.fields = options.fields;
    this.oauthCode = options.oauthCode;
    this.family = options.family;
    this.reason = options.reason;
  }
}

export const failure = (
  status: number,
  message: string,
  options?: ConstructorParameters<typeof ApiFailure>[2],
) => new ApiFailure(status, message, options);

export const oauthFailure = (status: number, code: string, description: string) =>
  new ApiFailure(status, description, { oauthCode: code, family: 'oauth' });

/** Legacy families answer HTTP 200 except for these protocol-level statuses. */
const PROTOCOL_STATUSES = new Set([401, 413, 415, 429]);

const DEFAULT_VALIDATION_STATUS: Record<Family, number> = {
  legacy: 200,
  statusMessage: 422,
  error: 422,
  errors: 400,
  message: 422,
  messageErrors: 422,
  oauth: 400,
  statusCode: 422,
  legacyStatus: 422,
  legacyFields: 422,
  falseErrors: 400,
  legacyValidation: 422,
  statusError: 422,
};

export interface Rendered {
  status: number;
  body: Record<string, unknown>;
}

export function render(
  family: Family,
  status: number,
  message: string,
  fields?: FieldErrors,
  oauthCode?: string,
  reason?: string,
): Rendered {
  switch (family) {
    case 'legacy':
      return {
        status: PROTOCOL_STATUSES.has(status) ? status : 200,
        body: { status: false, hasError: true, message },
      };
    case 'statusMessage':
      return { status, body: { status: false, message } };
    case 'error':
      return { status, body: { error: message } };
    case 'errors':
      return { status, body: fields ? { errors: fields } : { error: message } };
    case 'message':
      return { status, body: { message } };
    case 'messageErrors':
      return { status, body: fields ? { message, errors: fields } : { message } };
    case 'oauth':
      return {
        status,
        body: { error: oauthCode ?? oauthCodeFor(status), error_description: message },
      };
    case 'statusCode':
      return { status, body: fields ? { status, errors: fields } : { status, message } };
    case 'legacyStatus':
      return { status, body: { status: false, hasError: true, message } };
    case 'legacyFields':
      return {
        status,
        body: { status: false, hasError: true, message: fields ?? { body: [message] } },
      };
    case 'legacyValidation':
      return {
        status,
        body: fields
          ? { status: false, hasError: true, message: VALIDATION_FAILED, errors: fields }
          : { status: false, hasError: true, message },
      };
    case 'statusError':
      return {
        status,
        body: reason ? { status: 'error', reason, message } : { status: 'error', message },
      };
    case 'falseErrors':
      return {
        status,
        body: fields ? { status: false, errors: fields } : { status: false, message },
      };
  }
}

function oauthCodeFor(status: number): string {
  if (status === 401) return 'invalid_client';
  if (status === 403) return 'access_denied';
  if (status === 429 || status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

export function validationStatus(errors: RouteErrors): number {
  return errors.validationStatus ?? DEFAULT_VALIDATION_STATUS[errors.validation];
}

/** Used by routes outside /api that declare nothing (static files, 404s). */
export const DEFAULT_ERRORS: RouteErrors = { validation: 'messageErrors', failure: 'message' };

/** The message of the legacyValidation family's field errors (spec part 3, getTablePartitions). */
export const VALIDATION_FAILED = 'Validation failed';
export const UNAUTHENTICATED_MESSAGE = 'Unauthenticated.';
export const DENIED_MESSAGE = 'You do not have permission to perform this action.';
