/**
 * A minimal HTTPS peer speaking the appliance's side of docs/agent-protocol.md §3 for agent tests:
 * a self-signed certificate made with openssl, every POST's signature checked as the appliance
 * checks it, and answers chosen by the test.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { signingString } from '../src/http-client.js';

export interface Received {
  path: string;
  remoteAddress: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  signatureValid: boolean;
}

export type Responder = (req: Received) => { status: number; body?: unknown };

export interface HttpsAppliance {
  url: string;
  port: number;
  certPem: string;
  fingerprint256: string;
  received: Received[];
  respond: Responder;
  close(): Promise<void>;
}

export function makeCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkSignature(
  pathname: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): boolean {
  const key = headers['x-agent-key'];
  const ts = headers['x-agent-timestamp'];
  const nonce = headers['x-agent-nonce'];
  const sig = headers['x-agent-signature'];
  if (
    typeof key !== 'string' ||
    typeof ts !== 'string' ||
    typeof nonce !== 'string' ||
    typeof sig !== 'string'
  )
    return false;
  if (Math.abs(Number(ts) - Date.now()) > 120_000) return false;
  try {
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: key },
      format: 'jwk',
    });
    return verify(
      null,
      Buffer.from(signingString('POST', pathname, ts, nonce, body)),
      publicKey,
      Buffer.from(sig, 'base64url'),
    );
  } catch {
    return false;
  }
}

export async function startHttpsAppliance(respond: Responder): Promise<HttpsAppliance> {
  const { key, cert } = makeCertificate();
  const received: Received[] = [];
  const state: HttpsAppliance = {
    url: '',
    port: 0,
    certPem: cert,
    fingerprint256: new X509Certificate(cert).fingerprint256,
    received,
    respond,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const pathname = new URL(req.url ?? '/', 'https://x').pathname;
      let body: unknown = null;
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : null;
      } catch {
        body = raw.toString('utf8');
      }
      const entry: Received = {
        path: pathname,
        remoteAddress: req.socket.remoteAddress ?? '',
        headers: req.headers,
        body,
        signatureValid: req.method === 'POST' ? checkSignature(pathname, req.headers, raw) : false,
      };
      received.push(entry);
      const answer = state.respond(entry);
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  state.port = typeof address === 'object' && address ? address.port : 0;
  state.url = `https://127.0.0.1:${state.port}`;
  return state;
}
