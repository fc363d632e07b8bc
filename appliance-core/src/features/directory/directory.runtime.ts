/**
 * One conversation with the directory through ldapts: LDAPS or StartTLS, `verify_tls`, and a
 * hard deadline. ldapts' own `timeout` covers each operation once connected; the deadline here
 * covers everything (a listener that accepts and never answers, a TLS handshake that never ends):
 * when it passes, every socket of the conversation is destroyed and the call fails at once.
 */
import net from 'node:net';
import tls from 'node:tls';
import { Client, InvalidCredentialsError, type Entry } from 'ldapts';
import type { DirectoryType } from './directory.rules.js';

export interface ConnectionSettings {
  host: string;
  port: number;
  use_ssl: boolean;
  use_tls: boolean;
  verify_tls: boolean;
  /** Seconds, 1 to 60. */
  timeout: number;
  directory_type: DirectoryType;
}

export type FailureKind = 'timeout' | 'unreachable' | 'credentials' | 'tls' | 'protocol';

/** An expected directory failure; `message` is safe to show (never holds a password). */
export class DirectoryFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

export function defaultPort(s: { use_ssl: boolean }): number {
  return s.use_ssl ? 636 : 389;
}

function hostForUrl(host: string): string {
  return net.isIPv6(host) ? `[${host}]` : host;
}

function describe(err: unknown, settings: ConnectionSettings): DirectoryFailure {
  if (err instanceof DirectoryFailure) return err;
  if (err instanceof InvalidCredentialsError)
    return new DirectoryFailure('credentials', 'The directory refused the credentials.');
  const e = err as { code?: string; message?: string; name?: string };
  const code = e.code ?? '';
  if (['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code))
    return new DirectoryFailure(
      'unreachable',
      `Could not connect to ${settings.host}:${settings.port} (${code}).`,
    );
  if (
    /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS|ERR_SSL/.test(code) ||
    /certificate/i.test(e.message ?? '')
  )
    return new DirectoryFailure(
      'tls',
      `The directory's TLS certificate was not accepted (${code || 'TLS error'}).`,
    );
  if (/timeout/i.test(e.name ?? '') || /timeout|timed out/i.test(e.message ?? ''))
    return new DirectoryFailure(
      'timeout',
      `The directory did not answer within ${settings.timeout} seconds.`,
    );
  return new DirectoryFailure(
    'protocol',
    `The directory answered with an error (${e.name ?? 'Error'}${code ? ` ${code}` : ''}).`,
  );
}

export interface Session {
  bind(dn: string, password: string): Promise<void>;
  search(
    base: string,
    filter: string,
    attributes: string[],
    options?: { sizeLimit?: number; scope?: 'base' | 'sub' },
  ): Promise<Entry[]>;
}

/**
 * Opens a connection, runs `work` within the deadline (`settings.timeout` seconds, or
 * `deadlineMs`), and always closes it. Failures are DirectoryFailure.
 */
export async function withDirectory<T>(
  settings: ConnectionSettings,
  work: (session: Session) => Promise<T>,
  deadlineMs = settings.timeout * 1000,
): Promise<T> {
  const sockets: net.Socket[] = [];
  const tlsOptions: tls.ConnectionOptions = {
    rejectUnauthorized: settings.verify_tls,
    minVersion: 'TLSv1.2',
    ...(net.isIP(settings.host) ? {} : { servername: settings.host }),
  };
  const url = `${settings.use_ssl ? 'ldaps' : 'ldap'}://${hostForUrl(settings.host)}:${settings.port}`;
  if (!URL.canParse(url) || /[\s/?#@]/.test(settings.host))
    throw new DirectoryFailure('protocol', 'The host is not a valid host name or address.');
  const client = new Client({
    url,
    timeout: settings.timeout * 1000,
    connectTimeout: settings.timeout * 1000,
    // ldapts opens TLS at once whenever tlsOptions are given: only for LDAPS (StartTLS gets them below).
    ...(settings.use_ssl ? { tlsOptions } : {}),
    strictDN: false,
    createConnection: ((...args: Parameters<typeof net.connect>) => {
      const socket = net.connect(...args);
      sockets.push(socket);
      return socket;
    }) as typeof net.connect,
    createSecureConnection: ((...args: Parameters<typeof tls.connect>) => {
      const socket = tls.connect(...args);
      sockets.push(socket);
      return socket;
    }) as typeof tls.connect,
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      for (const s of sockets) s.destroy();
      reject(
        new DirectoryFailure(
          'timeout',
          `The directory did not answer within ${settings.timeout} seconds.`,
        ),
      );
    }, deadlineMs);
  });
  const session: Session = {
    bind: async (dn, password) => {
      await client.bind(dn, password);
    },
    search: async (base, filter, attributes, options = {}) => {
      const result = await client.search(base, {
        scope: options.scope ?? 'sub',
        filter,
        attributes,
        ...(options.sizeLimit !== undefined ? { sizeLimit: options.sizeLimit } : {}),
      });
      return result.searchEntries;
    },
  };
  const run = async (): Promise<T> => {
    if (settings.use_tls && !settings.use_ssl) await client.startTLS(tlsOptions);
    return work(session);
  };
  try {
    return await Promise.race([run(), deadline]);
  } catch (err) {
    throw describe(err, settings);
  } finally {
    clearTimeout(timer);
    // Unbind politely when the connection still works; never wait for it.
    if (client.isConnected) client.unbind().catch(() => undefined);
    setTimeout(() => {
      for (const s of sockets) s.destroy();
    }, 1000).unref();
  }
}

/** Is this the directory refusing a password (result code 49)? */
export function isInvalidCredentials(err: unknown): boolean {
  return err instanceof InvalidCredentialsError;
}

/** The first value of an attribute as text ('' when absent). */
export function firstValue(entry: Entry, attribute: string): string {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  if (key === undefined) return '';
  const v = entry[key];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined ? '' : Buffer.isBuffer(one) ? one.toString('utf8') : String(one);
}

/** Every value of an attribute as text. */
export function allValues(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  if (key === undefined) return [];
  const v = entry[key];
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.map((x) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x)));
}
