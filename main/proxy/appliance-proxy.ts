/**
 * The main-process HTTP proxy between the console window and its appliances: a plain function
 * from a Fetch Request (what Electron's protocol.handle passes for
 * `app://console/appliances/<connectionId>/<path>`) to a Fetch Response.
 *
 * It forwards `<path>` to the connection's appliance through the connection's PinnedAgent (the
 * pinned certificate is enforced before any byte is written), with the bearer that only the
 * main process holds, and streams the answer back chunk by chunk as it arrives (event streams
 * frame by frame). What the renderer receives is the appliance's status, body and headers minus
 * cookies and hop-by-hop headers; the token is never in it.
 *
 * Refused before anything is sent: an unknown connection (404), sign-in, sign-out and OAuth token
 * endpoints and anything outside the API (403, path-policy.ts), a connection without a sign-in
 * (401). A 401 from the appliance is retried once, with a refreshed token, only when the session
 * manager finds the session itself over (`GET /api/me` also 401); request bodies are buffered (up
 * to a limit) so that the retry can resend them.
 */
import type { IncomingMessage } from 'node:http';

import {
  APPLIANCE_PATH_PREFIX,
  CONNECTION_ID_PATTERN,
  PROXY_ERROR_HEADER,
  type ProxyErrorBody,
  type ProxyErrorCode,
} from '../../electron/contract/bridge.js';
import type { SessionManager } from '../auth/session-manager.js';
import { sendUpstream } from '../connections/appliance-http.js';
import { CertificateChangedError } from '../connections/certificate-pinning.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import { checkForwardPath } from './path-policy.js';

export interface ApplianceProxyOptions {
  connections: ConnectionRegistry;
  sessions: SessionManager;
  log(message: string, error?: unknown): void;
  /** Resolves when the connection can take requests (the embedded appliance may be starting). */
  whenAvailable?(connectionId: string): Promise<void>;
  maxRequestBodyBytes?: number;
}

export type ApplianceProxy = (request: Request) => Promise<Response>;

/** Request headers the renderer may set; everything else (cookies, authorization ...) is dropped. */
const FORWARDED_REQUEST_HEADERS = [
  'accept',
  'accept-language',
  'cache-control',
  'content-type',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'last-event-id',
  'pragma',
  'range',
];

/** Response headers never passed to the renderer. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'set-cookie',
  'set-cookie2',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'alt-svc',
  'strict-transport-security',
]);

const DEFAULT_MAX_BODY = 32 * 1024 * 1024;

export function createApplianceProxy(options: ApplianceProxyOptions): ApplianceProxy {
  const maxBody = options.maxRequestBodyBytes ?? DEFAULT_MAX_BODY;

  return async function proxy(request) {
    const target = parseTarget(request.url);
    if (!target) {
      return failure(404, 'unknown-connection', 'no such appliance connection');
    }
    const connectionId = target.connectionId;
    if (!options.connections.get(connectionId)) {
      return failure(404, 'unknown-connection', 'no such appliance connection', { connectionId });
    }
    const verdict = checkForwardPath(target.pathname);
    if (!verdict.allowed) {
      return failure(403, 'path-refused', verdict.reason, { connectionId });
    }

    let body: Buffer | undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const read = await readBody(request, maxBody);
      if (read === 'too-large') {
        return failure(
          413,
          'request-too-large',
          `request bodies above ${maxBody} bytes are not forwarded`,
          { connectionId },
        );
      }
      body = read;
    }

    try {
      await options.whenAvailable?.(connectionId);
    } catch (error) {
      return failure(503, 'appliance-not-ready', messageOf(error), { connectionId });
    }

    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }

    try {
      let token = await options.sessions.accessToken(connectionId);
      if (token === undefined) {
        return failure(401, 'not-signed-in', 'sign in to this appliance first', { connectionId });
      }
      let upstream = await send(token);
      if (upstream.statusCode === 401) {
        const retryWith = await options.sessions.recoverFromUnauthorized(connectionId, token);
        if (retryWith !== undefined) {
          upstream.resume();
          token = retryWith;
          upstream = await send(token);
        }
      }
      return toResponse(upstream, request.method);
    } catch (error) {
      if (error instanceof CertificateChangedError) {
        return failure(502, 'certificate-changed', error.message, {
          connectionId,
          ...(error.pinnedSha256 ? { pinnedSha256: error.pinnedSha256 } : {}),
          presentedSha256: error.presentedSha256,
        });
      }
      options.log(`proxy: ${request.method} ${target.pathname} on ${connectionId} failed`, error);
      return failure(
        502,
        'appliance-unreachable',
        `the appliance could not be reached: ${messageOf(error)}`,
        {
          connectionId,
        },
      );
    }

    function send(token: string): Promise<IncomingMessage> {
      const connection = options.connections.get(connectionId);
      if (!connection) throw new Error('the connection was removed');
      return sendUpstream({
        origin: connection.origin,
        agent: options.connections.agentFor(connection),
        method: request.method,
        path: target!.pathname + target!.search,
        headers: { ...headers, authorization: `Bearer ${token}` },
        ...(body ? { body } : {}),
        signal: request.signal,
      });
    }
  };
}

interface ProxyTarget {
  connectionId: string;
  pathname: string;
  search: string;
}

/** `app://console/appliances/<id>/<path>?<query>` -> `{id, '/<path>', '?<query>'}`. */
export function parseTarget(requestUrl: string): ProxyTarget | undefined {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return undefined;
  }
  if (!url.pathname.startsWith(APPLIANCE_PATH_PREFIX)) return undefined;
  const rest = url.pathname.slice(APPLIANCE_PATH_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  const connectionId = rest.slice(0, slash);
  if (!CONNECTION_ID_PATTERN.test(connectionId)) return undefined;
  return { connectionId, pathname: rest.slice(slash), search: url.search };
}

async function readBody(request: Request, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) return 'too-large';
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader: ReadableStreamDefaultReader<Uint8Array> = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return 'too-large';
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function toResponse(upstream: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const status = upstream.statusCode ?? 502;
  if (method === 'HEAD' || status === 204 || status === 205 || status === 304) {
    upstream.resume();
    return new Response(null, { status, headers });
  }
  return new Response(streamOf(upstream), { status, headers });
}

/** The upstream body as a web stream: each chunk is passed on as it arrives, with backpressure. */
function streamOf(upstream: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: Error) => {
        if (finished) return;
        finished = true;
        controller.error(error);
      };
      upstream.on('data', (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) upstream.pause();
      });
      upstream.once('end', () => {
        if (finished) return;
        finished = true;
        controller.close();
      });
      upstream.once('error', fail);
      upstream.once('close', () => {
        if (!upstream.complete) fail(new Error('the appliance closed the answer early'));
      });
    },
    pull() {
      upstream.resume();
    },
    cancel() {
      finished = true;
      upstream.destroy();
    },
  });
}

function failure(
  status: number,
  code: ProxyErrorCode,
  message: string,
  extra: Omit<ProxyErrorBody['proxy'], 'code'> = {},
): Response {
  const body: ProxyErrorBody = { error: message, proxy: { code, ...extra } };
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      [PROXY_ERROR_HEADER]: code,
    },
  });
}

function messageOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'ETIMEDOUT') return 'timed out';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  return error instanceof Error ? error.message : String(error);
}
