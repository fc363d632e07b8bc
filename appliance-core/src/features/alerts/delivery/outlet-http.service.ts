/**
 * One HTTP(S) request to an outlet (webhook, Slack, Teams, Discord), under the outlet policy.
 *
 * Invariants:
 * - The URL is judged first (outlet-url.rules.ts); a name is resolved once, inside the lookup
 *   the socket itself uses, and every address of the answer is judged there (guardLookup): the
 *   connection goes to an address that was checked; a resolver that answers differently later
 *   (DNS rebinding) changes nothing already checked and is judged again on the next connection.
 * - No redirect is followed: a 3xx is a failure naming the status (a redirect to a loopback or
 *   metadata address would otherwise bypass the check).
 * - The answer's body is read up to 4 KiB and only its first line may reach an error message,
 *   with every header value sent cut out of it (a receiver that echoes the authorization header
 *   does not put it in the ledger).
 * - Through an HTTP proxy (the alert-delivery daemon's `proxy_url` and `proxy_password`): an
 *   http URL is sent to the proxy in absolute form, an https URL through a CONNECT tunnel (TLS
 *   end to end with the outlet); both carry `Proxy-Authorization: Basic` when a password or a
 *   user name (the proxy URL's) is set. The outlet URL is still judged first; its name is then
 *   resolved by the proxy, not here. The proxy itself is the administrator's (`sa`) setting and
 *   is not judged by the outlet policy. The password never reaches an error message.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import tls from 'node:tls';
import { guardLookup } from '../../../platform/net/outbound.js';
import { checkOutletUrl, type OutletPolicy } from './outlet-url.rules.js';

export interface OutletRequest {
  url: string;
  method: 'POST' | 'PUT' | 'PATCH';
  headers: Record<string, string>;
  body: string;
}

export interface OutletHttpOptions {
  policy: OutletPolicy;
  timeoutMs: number;
  /** Name resolution (default: the system resolver); tests inject a stub. */
  lookup?: LookupFunction;
  /** Send through this HTTP proxy (the alert-delivery daemon's variables). */
  proxy?: OutletProxy | null;
}

/** An HTTP proxy: `http(s)://[user@]host[:port]`, and its password (secret). */
export interface OutletProxy {
  url: string;
  password?: string;
}

interface ProxyTarget {
  secure: boolean;
  host: string;
  port: number;
  /** `Proxy-Authorization` value, when a user name or password is set. */
  authorization: string | null;
}

/** The proxy to connect to, or null when its URL does not parse as http(s). */
export function proxyTargetOf(proxy: OutletProxy): ProxyTarget | null {
  let parsed: URL;
  try {
    parsed = new URL(proxy.url);
  } catch {
    return null;
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '')
    return null;
  const secure = parsed.protocol === 'https:';
  const user = decodeURIComponent(parsed.username);
  const password = proxy.password ?? '';
  return {
    secure,
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : secure ? 443 : 80,
    authorization:
      user || password
        ? `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`
        : null,
  };
}

export interface OutletResponse {
  ok: boolean;
  /** HTTP status, null when no answer came. */
  status: number | null;
  /** Why it failed (never a header value). */
  error?: string;
  /** Worth another attempt: a timeout, a network failure, a 5xx or a 429. */
  retryable: boolean;
  /** Retry-After of a 429 or 503, in ms. */
  retryAfterMs?: number;
}

const MAX_BODY = 4096;
const PROXY_AUTH_FAILED = 'The proxy refused the credentials (HTTP 407)';

/** A proxy that did not open the CONNECT tunnel (407: the credentials). */
function tunnelRefused(status: number): OutletResponse {
  return status === 407
    ? { ok: false, status, error: PROXY_AUTH_FAILED, retryable: false }
    : {
        ok: false,
        status: null,
        error: `The proxy refused the tunnel (HTTP ${status})`,
        retryable: status >= 500,
      };
}

function networkError(err: NodeJS.ErrnoException): { error: string; retryable: boolean } {
  const code = err.code ?? '';
  if (code === 'ERR_ADDRESS_REFUSED') return { error: `Refused: ${err.message}`, retryable: false };
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME')
    return { error: `DNS lookup failed (${code})`, retryable: true };
  if (code) return { error: `Request failed: ${code}`, retryable: true };
  return { error: `Request failed: ${err.message.split('\n')[0]}`, retryable: true };
}

/** The text with every header value sent (the authorization header among them) cut out. */
function scrubbed(text: string, headers: Record<string, string>): string {
  let out = text;
  for (const value of Object.values(headers)) {
    if (value.length < 4) continue;
    out = out.split(value).join('[redacted]');
    // "Bearer <token>": an echo of the token alone is cut out too.
    const token = value.split(' ').pop() as string;
    if (token.length >= 8) out = out.split(token).join('[redacted]');
  }
  return out;
}

function retryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function sendOutletRequest(
  request: OutletRequest,
  options: OutletHttpOptions,
): Promise<OutletResponse> {
  const check = checkOutletUrl(request.url, options.policy);
  if (!check.ok)
    return Promise.resolve({ ok: false, status: null, error: check.reason, retryable: false });
  const target = new URL(request.url);
  const secure = target.protocol === 'https:';
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const proxy = options.proxy ? proxyTargetOf(options.proxy) : null;
  if (options.proxy && !proxy)
    return Promise.resolve({
      ok: false,
      status: null,
      error: 'The proxy URL is not valid',
      retryable: false,
    });
  const port = target.port ? Number(target.port) : secure ? 443 : 80;
  // Values cut out of any error text: the headers sent, and the proxy's credentials.
  const sent: Record<string, string> = { ...request.headers };
  if (proxy?.authorization) sent['proxy-authorization'] = proxy.authorization;
  if (options.proxy?.password) sent['proxy-password'] = options.proxy.password;
  return new Promise((resolve) => {
    let settled = false;
    let req: http.ClientRequest | null = null;
    let tunnel: Socket | null = null;
    const finish = (result: OutletResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req?.destroy();
      tunnel?.destroy();
      resolve(result);
    };
    const body = Buffer.from(request.body, 'utf8');
    const headers: Record<string, string> = {
      'user-agent': 'appliance-alerts',
      'content-type': 'application/json',
      ...request.headers,
      'content-length': String(body.length),
    };
    const onResponse = (response: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size >= MAX_BODY) return;
        chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', (err) =>
        finish({ ok: false, status: response.statusCode ?? null, ...networkError(err) }),
      );
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return finish({ ok: true, status, retryable: false });
        if (status === 407 && proxy && !secure)
          return finish({ ok: false, status, error: PROXY_AUTH_FAILED, retryable: false });
        const firstLine = scrubbed(
          Buffer.concat(chunks)
            .subarray(0, MAX_BODY)
            .toString('utf8')
            .split('\n')[0]!
            .replace(/[^\x20-\x7e]/g, ''),
          sent,
        ).slice(0, 200);
        if (status >= 300 && status < 400)
          return finish({
            ok: false,
            status,
            error: `HTTP ${status}: redirects are not followed`,
            retryable: false,
          });
        const retryable = status >= 500 || status === 429 || status === 408;
        const wait = retryAfter(response.headers['retry-after'], Date.now());
        finish({
          ok: false,
          status,
          error: `HTTP ${status}${firstLine ? `: ${firstLine}` : ''}`,
          retryable,
          ...(wait !== undefined ? { retryAfterMs: wait } : {}),
        });
      });
    };
    const onError = (err: NodeJS.ErrnoException) =>
      finish({ ok: false, status: null, ...networkError(err) });
    const servername = secure && !/^[0-9.]+$|:/.test(host) ? { servername: host } : {};
    const send = (make: () => http.ClientRequest) => {
      if (settled) return;
      req = make();
      req.on('error', onError);
      req.end(body);
    };
    if (!proxy) {
      send(() =>
        (secure ? https : http).request(
          target,
          {
            method: request.method,
            headers,
            agent: false,
            lookup: guardLookup(options.policy, options.lookup),
            ...servername,
          },
          onResponse,
        ),
      );
    } else if (!secure) {
      // Absolute form to the proxy; the proxy resolves and connects to the outlet.
      send(() =>
        (proxy.secure ? https : http).request(
          {
            host: proxy.host,
            port: proxy.port,
            path: target.href,
            method: request.method,
            headers: {
              ...headers,
              host: target.host,
              ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}),
            },
            agent: false,
            ...(options.lookup ? { lookup: options.lookup } : {}),
          },
          onResponse,
        ),
      );
    } else {
      const connect = (proxy.secure ? https : http).request({
        host: proxy.host,
        port: proxy.port,
        method: 'CONNECT',
        path: `${target.hostname}:${port}`,
        headers: {
          host: `${target.hostname}:${port}`,
          ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}),
        },
        agent: false,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      });
      req = connect;
      connect.on('error', onError);
      connect.on('response', (response) => {
        // A proxy that answers CONNECT with anything but a tunnel (no 'connect' event).
        response.resume();
        finish(tunnelRefused(response.statusCode ?? 0));
      });
      connect.on('connect', (response, socket) => {
        tunnel = socket;
        const status = response.statusCode ?? 0;
        if (status !== 200) return finish(tunnelRefused(status));
        send(() =>
          https.request(
            target,
            {
              method: request.method,
              headers,
              agent: false,
              createConnection: () => tls.connect({ socket, ...servername }),
            },
            onResponse,
          ),
        );
      });
      connect.end();
    }
    const deadline = setTimeout(
      () =>
        finish({
          ok: false,
          status: null,
          error: `Timed out after ${options.timeoutMs} ms`,
          retryable: true,
        }),
      options.timeoutMs,
    );
  });
}
