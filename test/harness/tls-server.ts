/**
 * A real HTTPS server on a free loopback port with a certificate the test made, that records
 * every request it receives (so a test can prove that nothing reached a refused peer) and can
 * switch certificates live (as an appliance does when an operator installs one).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

import type { TestCertificate } from './tls-certs.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface TestTlsServer {
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** Serves this certificate to new connections from now on (and drops the open ones). */
  useCertificate(certificate: TestCertificate): void;
  close(): Promise<void>;
}

export async function startTlsServer(
  certificate: TestCertificate,
  handler: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"ok":true}');
  },
): Promise<TestTlsServer> {
  const requests: RecordedRequest[] = [];
  const server = https.createServer(
    { cert: certificate.cert, key: certificate.key },
    (request, response) => {
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
      });
      handler(request, response);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    requests,
    useCertificate(next) {
      server.setSecureContext({ cert: next.cert, key: next.key });
      server.closeAllConnections();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
