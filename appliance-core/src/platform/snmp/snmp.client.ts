/**
 * The one SNMP client of the appliance: a thin wrapper over net-snmp.
 *
 * Invariants:
 * - Every session is closed on every path (success, error, timeout, abort, deadline): callers
 *   use withSnmpSession(), which closes in `finally`; close() is idempotent.
 * - Every request has a timeout and a bounded number of retries; walks also have a varbind cap
 *   and an overall deadline, and an AbortSignal ends them at once (closing the socket cancels
 *   the request in flight).
 * - Failures become SnmpError with a stable kind and a message fit for an API answer (never a
 *   secret: net-snmp's messages carry no key material).
 * - Values come back decoded to JSON-safe types (device text is data: never markup).
 */
import net from 'node:net';
import snmp from 'net-snmp';
import type { Varbind } from 'net-snmp';

export type SnmpVersion = 1 | 2 | 3;
export const V3_SECURITY_LEVELS = ['noAuthNoPriv', 'authNoPriv', 'authPriv'] as const;
export type V3Security = (typeof V3_SECURITY_LEVELS)[number];
export const AUTH_PROTOCOLS = ['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512'] as const;
export type AuthProtocol = (typeof AUTH_PROTOCOLS)[number];
export const PRIV_PROTOCOLS = ['DES', 'AES', 'AES256B', 'AES256R'] as const;
export type PrivProtocol = (typeof PRIV_PROTOCOLS)[number];

/** Where and how to reach an agent; secrets in plaintext (only ever held in memory). */
export interface SnmpTarget {
  host: string;
  port: number;
  version: SnmpVersion;
  community?: string | null;
  security?: V3Security | null;
  user?: string | null;
  authProtocol?: AuthProtocol | null;
  authKey?: string | null;
  privProtocol?: PrivProtocol | null;
  privKey?: string | null;
}

export interface SnmpTiming {
  /** Milliseconds to wait for each answer. */
  timeoutMs: number;
  /** Re-sends after a timeout. */
  retries: number;
}

export type SnmpValue = string | number | boolean | null;
export interface DecodedVarbind {
  oid: string;
  /** net-snmp's type name (`OctetString`, `Integer`, `Counter64`...); `Hex-STRING` for binary octet strings. */
  type: string;
  value: SnmpValue;
}

export type SnmpErrorKind = 'timeout' | 'auth' | 'refused' | 'unsupported' | 'aborted' | 'invalid';

export class SnmpError extends Error {
  constructor(
    readonly kind: SnmpErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface WalkOptions {
  /** Stop after this many varbinds (the result is marked truncated). */
  maxVarbinds: number;
  /** Wall-clock budget of the whole walk in ms (the result is marked truncated when it runs out). */
  deadlineMs: number;
  maxRepetitions?: number;
  signal?: AbortSignal;
}

export interface WalkResult {
  varbinds: DecodedVarbind[];
  truncated: boolean;
  durationMs: number;
}

const AUTH: Record<AuthProtocol, number> = {
  MD5: snmp.AuthProtocols.md5,
  SHA: snmp.AuthProtocols.sha,
  SHA224: snmp.AuthProtocols.sha224,
  SHA256: snmp.AuthProtocols.sha256,
  SHA384: snmp.AuthProtocols.sha384,
  SHA512: snmp.AuthProtocols.sha512,
};
const PRIV: Record<PrivProtocol, number> = {
  DES: snmp.PrivProtocols.des,
  AES: snmp.PrivProtocols.aes,
  AES256B: snmp.PrivProtocols.aes256b,
  AES256R: snmp.PrivProtocols.aes256r,
};
const LEVEL: Record<V3Security, number> = {
  noAuthNoPriv: snmp.SecurityLevel.noAuthNoPriv,
  authNoPriv: snmp.SecurityLevel.authNoPriv,
  authPriv: snmp.SecurityLevel.authPriv,
};

/** OIDs per GET request: many per request, within what agents accept in one PDU. */
const GET_CHUNK = 32;

function typeName(type: number): string {
  const name = snmp.ObjectType[type];
  return typeof name === 'string' ? name : `Type${type}`;
}

function isPrintable(text: string): boolean {
  // Control characters other than tab, CR and LF, or a replacement character (invalid UTF-8), mean binary.
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (
      (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
      code === 0x7f ||
      code === 0xfffd
    )
      return false;
  }
  return true;
}

export function hexOf(buffer: Buffer): string {
  return [...buffer].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

function counter64(buffer: Buffer): number | string {
  let value = 0n;
  for (const byte of buffer) value = (value << 8n) | BigInt(byte);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** A net-snmp varbind as JSON-safe data. */
export function decodeVarbind(varbind: Varbind): DecodedVarbind {
  const type = typeName(varbind.type);
  const raw = varbind.value;
  if (snmp.isVarbindError(varbind)) return { oid: varbind.oid, type, value: null };
  if (Buffer.isBuffer(raw)) {
    if (type === 'Counter64') return { oid: varbind.oid, type, value: counter64(raw) };
    if (type === 'OctetString') {
      const text = raw.toString('utf8');
      return isPrintable(text)
        ? { oid: varbind.oid, type, value: text }
        : { oid: varbind.oid, type: 'Hex-STRING', value: hexOf(raw) };
    }
    return { oid: varbind.oid, type, value: hexOf(raw) };
  }
  if (typeof raw === 'number' || typeof raw === 'string' || typeof raw === 'boolean')
    return { oid: varbind.oid, type, value: raw };
  if (typeof raw === 'bigint')
    return {
      oid: varbind.oid,
      type,
      value: raw <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(raw) : raw.toString(),
    };
  // Anything else (null for Null, an unknown shape) carries no value worth showing.
  return { oid: varbind.oid, type, value: null };
}

/** True when `oid` lies under `base` (dotted, no leading dot). */
export function oidUnder(oid: string, base: string): boolean {
  return oid.startsWith(`${base}.`);
}

function toSnmpError(err: unknown, target: SnmpTarget): SnmpError {
  if (err instanceof SnmpError) return err;
  const where = `${target.host}:${target.port}`;
  const error = err as Error & { code?: string | number; status?: number };
  if (err instanceof snmp.RequestTimedOutError)
    return new SnmpError('timeout', `SNMP request to ${where} timed out`);
  if (err instanceof snmp.ResponseInvalidError) {
    if (/digest|user name|authenticat/i.test(error.message))
      return new SnmpError('auth', `SNMPv3 authentication failed at ${where}: ${error.message}`);
    return new SnmpError('invalid', `SNMP answer from ${where} is invalid: ${error.message}`);
  }
  if (err instanceof snmp.RequestFailedError)
    return new SnmpError('refused', `SNMP request refused by ${where}: ${error.message}`);
  if (error.code === 'ERR_OSSL_EVP_UNSUPPORTED') {
    return new SnmpError(
      'unsupported',
      'The privacy protocol is not available in this Node.js build (DES needs the OpenSSL legacy provider); use AES',
    );
  }
  if (/forcibly closed/i.test(error.message ?? ''))
    return new SnmpError('aborted', 'SNMP request cancelled');
  if (err instanceof snmp.RequestInvalidError)
    return new SnmpError('invalid', `SNMP request to ${where} is invalid: ${error.message}`);
  return new SnmpError(
    'invalid',
    `SNMP request to ${where} failed: ${error.message ?? String(err)}`,
  );
}

/** One open session to one agent. */
export class SnmpSession {
  private closed = false;
  private readonly session: ReturnType<typeof snmp.createSession>;

  private constructor(
    readonly target: SnmpTarget,
    timing: SnmpTiming,
  ) {
    const options = {
      port: target.port,
      timeout: timing.timeoutMs,
      retries: timing.retries,
      transport: net.isIPv6(target.host) ? ('udp6' as const) : ('udp4' as const),
      backwardsGetNexts: false,
    };
    if (target.version === 3) {
      const level = target.security ?? 'noAuthNoPriv';
      if (!target.user) throw new SnmpError('invalid', 'An SNMPv3 user name is required');
      const user: Parameters<typeof snmp.createV3Session>[1] = {
        name: target.user,
        level: LEVEL[level],
      };
      if (level !== 'noAuthNoPriv') {
        if (!target.authProtocol || !target.authKey)
          throw new SnmpError('invalid', 'SNMPv3 authentication needs a protocol and a passphrase');
        user.authProtocol = AUTH[target.authProtocol];
        user.authKey = target.authKey;
      }
      if (level === 'authPriv') {
        if (!target.privProtocol || !target.privKey)
          throw new SnmpError('invalid', 'SNMPv3 privacy needs a protocol and a passphrase');
        user.privProtocol = PRIV[target.privProtocol];
        user.privKey = target.privKey;
      }
      this.session = snmp.createV3Session(target.host, user, {
        ...options,
        version: snmp.Version3,
      });
    } else {
      if (!target.community) throw new SnmpError('invalid', 'An SNMP community is required');
      this.session = snmp.createSession(target.host, target.community, {
        ...options,
        version: target.version === 1 ? snmp.Version1 : snmp.Version2c,
      });
    }
    // A socket error without a listener would crash the process; the request in flight fails on its own.
    this.session.on('error', () => this.close());
  }

  static open(target: SnmpTarget, timing: SnmpTiming): SnmpSession {
    if (net.isIP(target.host) === 0)
      throw new SnmpError('invalid', 'The SNMP target must be an IP address');
    try {
      return new SnmpSession(target, timing);
    } catch (err) {
      throw toSnmpError(err, target);
    }
  }

  /** GETs the OIDs (many per request); the answer is in the same order. */
  async get(oids: readonly string[], signal?: AbortSignal): Promise<DecodedVarbind[]> {
    const answers: DecodedVarbind[] = [];
    for (let i = 0; i < oids.length; i += GET_CHUNK) {
      const chunk = oids.slice(i, i + GET_CHUNK);
      const varbinds = await this.request<Varbind[]>(signal, (done) =>
        this.session.get([...chunk], (error, result) => done(error, result ?? [])),
      );
      answers.push(...varbinds.map(decodeVarbind));
    }
    return answers;
  }

  /** Every varbind under `oid` (GETBULK on v2c/v3, GETNEXT on v1), within the walk's bounds. */
  subtree(oid: string, options: WalkOptions): Promise<WalkResult> {
    return this.collect(oid, options, 'subtree');
  }

  /** Every varbind from `oid` to the end of the agent's MIB view, within the walk's bounds. */
  walk(oid: string, options: WalkOptions): Promise<WalkResult> {
    return this.collect(oid, options, 'walk');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.session.close();
    } catch {
      // Already closed by a socket error.
    }
  }

  private async collect(
    oid: string,
    options: WalkOptions,
    method: 'subtree' | 'walk',
  ): Promise<WalkResult> {
    const started = Date.now();
    const varbinds: DecodedVarbind[] = [];
    let truncated = false;
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      this.close();
    }, options.deadlineMs);
    try {
      await this.request<void>(options.signal, (done) => {
        const feed = (batch: Varbind[]) => {
          for (const varbind of batch) {
            if (snmp.isVarbindError(varbind)) continue;
            if (varbinds.length >= options.maxVarbinds) {
              truncated = true;
              return true;
            }
            varbinds.push(decodeVarbind(varbind));
          }
          return false;
        };
        this.session[method](oid, options.maxRepetitions ?? 20, feed, (error) =>
          done(error, undefined),
        );
      });
    } catch (err) {
      if (!(expired && err instanceof SnmpError && err.kind === 'aborted')) throw err;
      truncated = true;
    } finally {
      clearTimeout(timer);
    }
    return { varbinds, truncated, durationMs: Date.now() - started };
  }

  private request<T>(
    signal: AbortSignal | undefined,
    start: (done: (error: Error | null, value: T) => void) => void,
  ): Promise<T> {
    if (this.closed) return Promise.reject(new SnmpError('aborted', 'SNMP request cancelled'));
    if (signal?.aborted) return Promise.reject(new SnmpError('aborted', 'SNMP request cancelled'));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => this.close();
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (error: Error | null, value: T) => {
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(toSnmpError(error, this.target));
        else resolve(value);
      };
      try {
        start(done);
      } catch (err) {
        done(err as Error, undefined as T);
      }
    });
  }
}

/** Opens a session, runs `fn`, and closes the session whatever happens. */
export async function withSnmpSession<T>(
  target: SnmpTarget,
  timing: SnmpTiming,
  fn: (session: SnmpSession) => Promise<T>,
): Promise<T> {
  const session = SnmpSession.open(target, timing);
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}

/** MIB-2 system group scalars, read by probes and crawls. */
export const SYSTEM_OIDS = {
  sysDescr: '1.3.6.1.2.1.1.1.0',
  sysObjectID: '1.3.6.1.2.1.1.2.0',
  sysUpTime: '1.3.6.1.2.1.1.3.0',
  sysContact: '1.3.6.1.2.1.1.4.0',
  sysName: '1.3.6.1.2.1.1.5.0',
  sysLocation: '1.3.6.1.2.1.1.6.0',
} as const;

export interface SystemInfo {
  sysDescr: string | null;
  sysObjectID: string | null;
  sysName: string | null;
}

/** Reads sysDescr, sysObjectID and sysName in one request: the probe behind testSnmp and discovery. */
export async function probeSystem(session: SnmpSession, signal?: AbortSignal): Promise<SystemInfo> {
  const [descr, objectId, name] = await session.get(
    [SYSTEM_OIDS.sysDescr, SYSTEM_OIDS.sysObjectID, SYSTEM_OIDS.sysName],
    signal,
  );
  const text = (v: DecodedVarbind | undefined) => (v && v.value !== null ? String(v.value) : null);
  return { sysDescr: text(descr), sysObjectID: text(objectId), sysName: text(name) };
}
