/**
 * Local receivers for delivery tests: an HTTP receiver that records requests and answers as the
 * test says, and a real SMTP server (smtp-server) on loopback that records mails.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface HttpReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** How the next requests are answered (default 200 'ok'). */
  answer: (req: ReceivedRequest, res: http.ServerResponse) => void;
  close(): Promise<void>;
}

export async function httpReceiver(host = '127.0.0.1'): Promise<HttpReceiver> {
  const received: ReceivedRequest[] = [];
  const state: HttpReceiver = {
    url: '',
    port: 0,
    received,
    answer: (_req, res) => res.end('ok'),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
      };
      received.push(entry);
      state.answer(entry, res);
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://${host}:${state.port}/hook`;
  return state;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
  user: string | null;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  /** Logins tried, with the password (tests compare it). */
  logins: { user: string; pass: string }[];
  close(): Promise<void>;
}

/** A real SMTP server on loopback; with `credentials`, AUTH PLAIN/LOGIN is required. */
export async function smtpReceiver(credentials?: {
  user: string;
  pass: string;
}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const logins: { user: string; pass: string }[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !credentials,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
      if (credentials && auth.username === credentials.user && auth.password === credentials.pass)
        return callback(null, { user: auth.username });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (c: Buffer) => (data += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data,
          user: typeof session.user === 'string' ? session.user : null,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    logins,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Waits until `check` holds (bounded). */
export async function until(
  check: () => boolean,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
