/**
 * The one API client. Every request goes through request(): the transport (transport.ts) decides
 * where it goes, the session adds the bearer (browser only), and every failure, HTTP 200
 * `hasError` bodies included, comes back as one ApiError (api-error.ts).
 *
 * 401 (spec part 1, Authentication 9): it means a missing permission or a dead token. The client
 * confirms with GET /api/me: a 200 means the token lives and the caller lacks a permission (the
 * error carries the appliance's {status, hasError, message} text and the session stays); any other
 * answer ends the session and sends the person to sign-in, remembering the page they were on.
 */
import { ApiError, failureOf } from './api-error.js';
import { useSession } from './session.js';
import { getTransport } from './transport.js';
import type { paths } from './api-types.js';

export { ApiError } from './api-error.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | null | undefined>;
  signal?: AbortSignal;
  /** Skip the 401 confirmation (sign-in and the /api/me check itself). */
  anonymous?: boolean;
}

/**
 * The JSON body of an operation's success answer (200, else 201), from the generated types. HTTP
 * 200 failure bodies (`status: false`, `hasError: true`) are removed: request() throws them.
 */
type Failure = { hasError: true } | { status: false } | { status: 'timeout' };
type JsonOf<R> = R extends { content: { 'application/json': infer J } }
  ? Exclude<J, Failure>
  : unknown;
type SuccessOf<Op> = Op extends { responses: infer R }
  ? R extends { 200: infer A }
    ? JsonOf<A>
    : R extends { 201: infer B }
      ? JsonOf<B>
      : unknown
  : unknown;
/** `ApiResult<'/api/devices', 'get'>`: what a successful call of that operation returns. */
export type ApiResult<P extends keyof paths, M extends keyof paths[P]> = SuccessOf<paths[P][M]>;
/** The request body of an operation. */
export type ApiBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export function buildUrl(path: string, query?: RequestOptions['query']): string {
  const base = getTransport().base;
  if (!query) return `${base}${path}`;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== null) params.set(key, String(value));
  const qs = params.toString();
  return `${base}${path}${qs ? `?${qs}` : ''}`;
}

export function authHeaders(): Record<string, string> {
  const transport = getTransport();
  const token = useSession.getState().token;
  return !transport.holdsToken && token ? { authorization: `Bearer ${token}` } : {};
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

let meCheck: Promise<boolean> | null = null;

/** Does the current token still work? One check at a time, however many 401s arrive. */
function tokenStillValid(): Promise<boolean> {
  meCheck ??= (async () => {
    try {
      const response = await getTransport().fetch(buildUrl('/api/me'), {
        method: 'GET',
        headers: { accept: 'application/json', ...authHeaders() },
      });
      return response.status === 200;
    } catch {
      // No answer is not proof of a dead token: keep the session.
      return true;
    }
  })().finally(() => {
    // Every 401 that arrived while the check ran shares its answer; later ones check again.
    meCheck = null;
  });
  return meCheck;
}

function currentLocation(): string {
  const loc = globalThis.location;
  return loc ? `${loc.pathname}${loc.search}${loc.hash}` : '/';
}

/** Turns a 401 into 'denied' (token alive) or 'unauthenticated' (session ended). */
export async function classifyUnauthorized(error: ApiError): Promise<ApiError> {
  if (await tokenStillValid())
    return new ApiError('denied', 401, error.message, error.body, error.fields);
  if (useSession.getState().token) useSession.getState().expire(currentLocation());
  return new ApiError(
    'unauthenticated',
    401,
    'Your session has ended. Sign in again.',
    error.body,
    null,
  );
}

export async function request<T = unknown>(
  method: Method,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...authHeaders() };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await getTransport().fetch(buildUrl(path, options.query), {
      method,
      headers,
      body,
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('network', 0, 'The appliance did not answer. Check the connection.');
  }
  const parsed = await readBody(response);
  const failure = failureOf(response.status, parsed);
  if (!failure) return parsed as T;
  if (response.status === 401 && !options.anonymous && useSession.getState().token)
    throw await classifyUnauthorized(failure);
  throw failure;
}

export const api = {
  get: <T = unknown>(path: string, options?: RequestOptions) => request<T>('GET', path, options),
  post: <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('POST', path, { ...options, body }),
  put: <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('PUT', path, { ...options, body }),
  delete: <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('DELETE', path, { ...options, body }),
};
