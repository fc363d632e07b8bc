/**
 * One URL check: an HTTP or HTTPS GET with a deadline, timing the whole exchange, reading at most
 * 1 MiB of the body, looking for the pattern (a plain substring, never a regular expression), and
 * reading the TLS certificate's expiry. The failure message names what failed: DNS, connect, TLS,
 * timeout, HTTP status, pattern, or a refused address. Name resolution is injectable (tests never
 * query DNS). Redirects are never followed (a 3xx is the answer checked).
 *
 * With a `policy`, the host is judged before anything is sent (IP literals by address, metadata
 * names by name) and every address a name resolves to is judged inside the lookup the socket
 * uses (platform/net/outbound.ts): the connection goes to the address that was checked.
 */
import type { LookupFunction } from 'node:net';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { guardLookup, hostRefusal, type OutboundPolicy } from '../../platform/net/outbound.js';

export interface UrlCheckResult {
  ok: boolean;
  /** Milliseconds from the request to the end of the body, -1 when no answer came. */
  latency: number;
  /** HTTP status, null when no answer came. */
  status: number | null;
  /** Certificate expiry (UTC ms) of an HTTPS answer. */
  sslExpiresAt: number | null;
  message: string;
}

export interface UrlCheckOptions {
  timeoutMs: number;
  /** Name resolution (default: the system resolver). */
  lookup?: LookupFunction;
  /** Addresses the check may connect to (none refused without one). */
  policy?: OutboundPolicy;
  now?: () => number;
  maxBodyBytes?: number;
}

const MAX_BODY = 1_048_576;

export function describeNetworkError(
  err: NodeJS.ErrnoException,
  host: string,
  port: number,
): string {
  const code = err.code ?? '';
  if (code === 'ERR_ADDRESS_REFUSED') return `Refused: ${err.message}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_FAIL')
    return `DNS lookup failed for ${host} (${code})`;
  if (code === 'ECONNREFUSED') return `Connection refused by ${host}:${port}`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    return `Host ${host} is unreachable (${code})`;
  if (code === 'ECONNRESET') return `Connection reset by ${host}:${port}`;
  if (
    code.startsWith('ERR_SSL') ||
    code.startsWith('ERR_TLS') ||
    code === 'EPROTO' ||
    /SSL|TLS|certificate/i.test(err.message)
  )
    return `TLS handshake with ${host}:${port} failed: ${err.message.split('\n')[0]}`;
  return `Request to ${host}:${port} failed: ${code || err.message}`;
}

export function checkUrl(
  url: string,
  pattern: string,
  options: UrlCheckOptions,
): Promise<UrlCheckResult> {
  const now = options.now ?? Date.now;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({
      ok: false,
      latency: -1,
      status: null,
      sslExpiresAt: null,
      message: 'The URL is not valid',
    });
  }
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:')
    return Promise.resolve({
      ok: false,
      latency: -1,
      status: null,
      sslExpiresAt: null,
      message: 'The URL scheme must be http or https',
    });
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port || (secure ? 443 : 80));
  const maxBody = options.maxBodyBytes ?? MAX_BODY;
  const refusal = options.policy ? hostRefusal(host, options.policy) : null;
  if (refusal)
    return Promise.resolve({
      ok: false,
      latency: -1,
      status: null,
      sslExpiresAt: null,
      message: `Refused: ${refusal}`,
    });
  const lookup = options.policy ? guardLookup(options.policy, options.lookup) : options.lookup;

  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1000) / 1000;
    let sslExpiresAt: number | null = null;
    let trustNote = '';
    let settled = false;
    const finish = (result: UrlCheckResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve(result);
    };
    const requestOptions: https.RequestOptions = {
      method: 'GET',
      headers: { 'user-agent': 'appliance-url-monitor', accept: '*/*' },
      agent: false,
      ...(lookup ? { lookup } : {}),
      ...(secure
        ? { rejectUnauthorized: false, servername: /^[0-9.]+$|:/.test(host) ? undefined : host }
        : {}),
    };
    const request = (secure ? https : http).request(target, requestOptions, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size >= maxBody) return;
        chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', (err) =>
        finish({
          ok: false,
          latency: -1,
          status: response.statusCode ?? null,
          sslExpiresAt,
          message: describeNetworkError(err, host, port),
        }),
      );
      response.on('end', () => {
        const latency = elapsed();
        const status = response.statusCode ?? 0;
        const body = Buffer.concat(chunks).subarray(0, maxBody).toString('utf8');
        const base = { latency, status, sslExpiresAt };
        if (sslExpiresAt !== null && sslExpiresAt < now())
          return finish({
            ...base,
            ok: false,
            message: `TLS certificate expired on ${new Date(sslExpiresAt).toISOString()}`,
          });
        if (status >= 400)
          return finish({
            ...base,
            ok: false,
            message: `HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`,
          });
        if (!body.includes(pattern))
          return finish({
            ...base,
            ok: false,
            message: `Pattern not found in the response (HTTP ${status})`,
          });
        finish({ ...base, ok: true, message: `OK (HTTP ${status})${trustNote}` });
      });
    });
    if (secure) {
      request.on('socket', (socket) => {
        socket.once('secureConnect', () => {
          const tls = socket as TLSSocket;
          const cert = tls.getPeerCertificate();
          if (cert && cert.valid_to) sslExpiresAt = Date.parse(cert.valid_to);
          if (!tls.authorized && tls.authorizationError)
            trustNote = `; certificate not trusted: ${String(tls.authorizationError)}`;
        });
      });
    }
    request.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        latency: -1,
        status: null,
        sslExpiresAt,
        message: describeNetworkError(err, host, port),
      }),
    );
    const deadline = setTimeout(
      () =>
        finish({
          ok: false,
          latency: -1,
          status: null,
          sslExpiresAt,
          message: `Timed out after ${options.timeoutMs} ms waiting for ${host}:${port}`,
        }),
      options.timeoutMs,
    );
    request.end();
  });
}
