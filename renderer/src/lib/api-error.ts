/**
 * One error type for every failure the API can answer. The spec's envelopes are not uniform
 * (part 1, General conventions 5): HTTP 4xx/5xx with `{error}`, `{errors}`, `{message, errors}`,
 * `{status, message}` or `{error, error_description}`, and HTTP 200 bodies carrying
 * `{status: false, hasError: true, message}` or `{status: 'timeout', message}`. failureOf() turns
 * each into one message, so a page shows the API's own words and never a blank.
 */
export type ApiErrorKind =
  /** 401 answered while /api/me still accepts the token: a missing permission. */
  | 'denied'
  /** The token is dead (expired, revoked, signed out elsewhere). */
  | 'unauthenticated'
  /** An HTTP 4xx/5xx failure envelope. */
  | 'http'
  /** An HTTP 200 body that says it failed. */
  | 'envelope'
  /** No answer (network down, appliance restarting). */
  | 'network';

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    readonly status: number,
    message: string,
    readonly body: unknown = null,
    readonly fields: Record<string, string[]> | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = firstText(item);
      if (text) return text;
    }
    return null;
  }
  if (isRecord(value)) {
    for (const item of Object.values(value)) {
      const text = firstText(item);
      if (text) return text;
    }
  }
  return null;
}

function fieldsOf(body: Record<string, unknown>): Record<string, string[]> | null {
  const errors = body.errors ?? (isRecord(body.message) ? body.message : undefined);
  if (!isRecord(errors)) return null;
  const fields: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(errors)) {
    const list = (Array.isArray(value) ? value : [value]).filter(
      (v): v is string => typeof v === 'string',
    );
    if (list.length) fields[key] = list;
  }
  return Object.keys(fields).length ? fields : null;
}

/** The message a failure body carries, in the order the envelopes put it. */
export function messageOf(body: unknown, fallback: string): string {
  if (typeof body === 'string') return body.trim() !== '' ? body.slice(0, 500) : fallback;
  if (!isRecord(body)) return fallback;
  if (typeof body.message === 'string' && body.message !== '') return body.message;
  if (typeof body.error_description === 'string' && body.error_description !== '')
    return body.error_description;
  if (typeof body.error === 'string' && body.error !== '') return body.error;
  return firstText(body.errors) ?? firstText(body.message) ?? fallback;
}

/**
 * The failure an answer carries, or null when it succeeded. HTTP 200 bodies fail when they say
 * `hasError: true`, `status: false` or `status: 'timeout'`.
 */
export function failureOf(status: number, body: unknown): ApiError | null {
  if (status >= 400) {
    return new ApiError(
      'http',
      status,
      messageOf(body, `The appliance answered HTTP ${status}.`),
      body,
      isRecord(body) ? fieldsOf(body) : null,
    );
  }
  if (!isRecord(body)) return null;
  if (body.hasError === true || body.status === false || body.status === 'timeout') {
    const fallback = body.status === 'timeout' ? 'The operation timed out.' : 'The request failed.';
    return new ApiError('envelope', status, messageOf(body, fallback), body, fieldsOf(body));
  }
  return null;
}
