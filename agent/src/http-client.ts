/**
 * HTTPS to the appliance (docs/agent-protocol.md §3): every POST signed with the agent key, TLS
 * trusted by a CA file or by a pinned SHA-256 fingerprint of the appliance's certificate, and
 * sent from `localAddress` when the agent is bound to one address (--bind).
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';

import { b64u, ed25519Sign, sha256hex } from './keys.js';

export interface TlsTrust {
  /** PEM text of the CA (or self-signed certificate) that must have signed the appliance's certificate. */
  ca?: string;
  /** SHA-256 fingerprint of the appliance's certificate (hex, colons optional): trusted instead of a CA. */
  pin?: string;
}

export interface HttpOptions {
  trust: TlsTrust;
  localAddress?: string;
  timeoutMs?: number;
  /** Largest answer body read; larger answers fail. */
  maxBodyBytes?: number;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function normalizePin(pin: string): string | null {
  const hex = pin.replace(/:/g, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}

/** The signing string of §3 (lines joined with \n, no trailing newline). */
export function signingString(
  method: string,
  path: string,
  timestamp: string,
  nonce: string,
  body: Uint8Array,
): string {
  return ['NETMON-AGENT-HTTP-1', method, path, timestamp, nonce, sha256hex(body)].join('\n');
}

export function signedHeaders(
  privateKey: KeyObject,
  publicB64u: string,
  path: string,
  body: Uint8Array,
  now = Date.now(),
): Record<string, string> {
  const timestamp = String(now);
  const nonce = b64u(randomBytes(16));
  const signature = b64u(
    ed25519Sign(privateKey, signingString('POST', path, timestamp, nonce, body)),
  );
  return {
    'X-Agent-Key': publicB64u,
    'X-Agent-Timestamp': timestamp,
    'X-Agent-Nonce': nonce,
    'X-Agent-Signature': signature,
  };
}

async function openTls(url: URL, options: HttpOptions): Promise<TLSSocket> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const pin = options.trust.pin ? normalizePin(options.trust.pin) : null;
  if (options.trust.pin && !pin) throw new Error('--pin: a SHA-256 fingerprint of 64 hex digits');
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(options.trust.ca ? { ca: options.trust.ca } : {}),
      // With a pin the chain is not judged by a CA: the exact certificate is (checked below).
      rejectUnauthorized: !pin,
    });
    const timer = setTimeout(
      () => socket.destroy(new Error('TLS connect timed out')),
      options.timeoutMs ?? 10_000,
    );
    socket.once('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      if (pin) {
        const seen = socket.getPeerCertificate().fingerprint256?.replace(/:/g, '').toLowerCase();
        if (seen !== pin) {
          socket.destroy();
          reject(new Error('certificate fingerprint does not match --pin'));
          return;
        }
      }
      resolve(socket);
    });
  });
}

/** One HTTPS request over a socket whose trust was checked before any byte of the request left. */
export async function httpsRequest(
  method: 'GET' | 'POST',
  url: URL,
  headers: Record<string, string>,
  body: Buffer | null,
  options: HttpOptions,
): Promise<HttpAnswer> {
  if (url.protocol !== 'https:') throw new Error('the appliance is reached over https only');
  const socket = await openTls(url, options);
  const maxBody = options.maxBodyBytes ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        method,
        host: url.hostname,
        port: url.port || 443,
        path: url.pathname + url.search,
        headers: {
          ...headers,
          ...(body ? { 'Content-Length': String(body.length) } : {}),
          Connection: 'close',
        },
        createConnection: () => socket,
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBody) {
            req.destroy(new Error('answer too large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

export interface SignedClient {
  post(path: string, payload: unknown): Promise<HttpAnswer & { json: unknown }>;
}

/** A client that signs every POST (§3) to `serverUrl` with the agent key. */
export function signedClient(
  serverUrl: string,
  key: { privateKey: KeyObject; publicB64u: string },
  options: HttpOptions,
): SignedClient {
  return {
    async post(path, payload) {
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      const url = new URL(path, serverUrl);
      const answer = await httpsRequest(
        'POST',
        url,
        {
          'Content-Type': 'application/json',
          ...signedHeaders(key.privateKey, key.publicB64u, url.pathname, body),
        },
        body,
        options,
      );
      let json: unknown = null;
      try {
        json = answer.body.length ? JSON.parse(answer.body.toString('utf8')) : null;
      } catch {
        json = null;
      }
      return { ...answer, json };
    },
  };
}
