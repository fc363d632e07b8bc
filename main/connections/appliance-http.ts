/**
 * HTTPS requests from the main process to an appliance, always through the connection's
 * PinnedAgent (the certificate is decided on before a byte is written). Two shapes: a streamed
 * response for the proxy, and a small JSON exchange for sign-in, refresh and `/api/me`.
 */
import type { Agent, IncomingMessage } from 'node:http';
import https from 'node:https';

export interface UpstreamRequest {
  origin: string;
  agent: Agent;
  method: string;
  /** Path and query, starting with `/`. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  signal?: AbortSignal;
  /** Until the response headers arrive (event streams may then stay open for as long as they like). */
  headersTimeoutMs?: number;
}

/** Resolves with the response once its headers arrived; the body is the caller's to read. */
export function sendUpstream(request: UpstreamRequest): Promise<IncomingMessage> {
  const url = new URL(request.path, request.origin);
  return new Promise((resolve, reject) => {
    const outgoing = https.request(url, {
      method: request.method,
      agent: request.agent,
      headers: {
        ...request.headers,
        ...(request.body ? { 'content-length': String(request.body.length) } : {}),
      },
      ...(request.signal ? { signal: request.signal } : {}),
    });
    const timer = setTimeout(() => {
      outgoing.destroy(new Error(`no answer from ${request.origin} within the time limit`));
    }, request.headersTimeoutMs ?? 180_000);
    outgoing.once('response', (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    outgoing.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    outgoing.end(request.body);
  });
}

export interface JsonExchange {
  status: number;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const JSON_LIMIT_BYTES = 1024 * 1024;

/** Sends a JSON (or form) body and reads a JSON answer of at most 1 MiB within 30 s. */
export async function exchangeJson(
  request: Omit<UpstreamRequest, 'body' | 'headers'> & {
    headers?: Record<string, string>;
    json?: unknown;
    form?: Record<string, string>;
  },
): Promise<JsonExchange> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'accept-encoding': 'identity',
    ...request.headers,
  };
  let body: Buffer | undefined;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = Buffer.from(JSON.stringify(request.json));
  } else if (request.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = Buffer.from(new URLSearchParams(request.form).toString());
  }
  const abort = AbortSignal.timeout(30_000);
  const signal = request.signal ? AbortSignal.any([request.signal, abort]) : abort;
  const response = await sendUpstream({
    ...request,
    headers,
    signal,
    headersTimeoutMs: 30_000,
    ...(body ? { body } : {}),
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > JSON_LIMIT_BYTES) {
      response.destroy();
      throw new Error(`the answer of ${request.path} is larger than 1 MiB`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { status: response.statusCode ?? 0, headers: response.headers, body: parsed };
}
