/**
 * Trust on first use, and what happens when an appliance's certificate changes.
 *
 * Every connection to an appliance goes through a PinnedAgent: it completes the TLS handshake
 * itself and hands the socket to the HTTP client only after deciding on the presented
 * certificate, so no request byte (and no bearer token) is ever written to an unverified peer.
 * The rule (decidePin, pure):
 * - the presented certificate's SHA-256 equals the pin: accepted;
 * - it differs (or nothing is pinned yet) but the certificate chains to a CA of the operating
 *   system's store and matches the host name: accepted and re-pinned (an operator installed a
 *   real certificate through settings + maintenance);
 * - otherwise refused with both fingerprints, until the user accepts the new one (re-pin).
 * TLS session resumption is off (a resumed session skips the host-name check and carries no
 * fresh certificate decision).
 *
 * The operating system's trust store is injected (tests pass their own CA).
 */
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';

import type { CertificateSummary } from '../../electron/contract/bridge.js';
import { UserFacingError } from '../errors.js';

/** PEM certificates of the CAs the operating system trusts. */
export type TrustStore = () => readonly string[];

/** Electron 41 runs Node 24: `tls.getCACertificates('system')` reads the OS store; older Node falls back to Mozilla's. */
export const systemTrustStore: TrustStore = () => {
  const getCACertificates = (
    tls as unknown as { getCACertificates?: (type: 'system' | 'default') => string[] }
  ).getCACertificates;
  if (typeof getCACertificates === 'function') {
    const system = getCACertificates('system');
    if (system.length > 0) return system;
  }
  return tls.rootCertificates;
};

export type PinDecision =
  | { action: 'accept' }
  | { action: 'repin'; presentedSha256: string }
  | { action: 'refuse'; pinnedSha256: string | null; presentedSha256: string };

export function decidePin(
  pinnedSha256: string | null,
  presentedSha256: string,
  trustedByOs: boolean,
): PinDecision {
  if (pinnedSha256 !== null && pinnedSha256 === presentedSha256) return { action: 'accept' };
  if (trustedByOs) return { action: 'repin', presentedSha256 };
  return { action: 'refuse', pinnedSha256, presentedSha256 };
}

export class CertificateChangedError extends UserFacingError {
  override name = 'CertificateChangedError';
  readonly code = 'CERTIFICATE_CHANGED';

  constructor(
    readonly pinnedSha256: string | null,
    readonly presentedSha256: string,
  ) {
    super(
      pinnedSha256 === null
        ? `the appliance's certificate (SHA-256 ${presentedSha256}) has not been accepted`
        : `the appliance's certificate changed: pinned SHA-256 ${pinnedSha256}, presented ${presentedSha256}`,
    );
  }
}

export interface TlsTarget {
  host: string;
  port: number;
}

export function tlsTargetOf(origin: string): TlsTarget {
  const url = new URL(origin);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port === '' ? 443 : Number(url.port) };
}

/** Options for tls.connect shared by the probe and the agent: the OS store, no SNI for IP literals. */
function connectOptions(target: TlsTarget, trustStore: TrustStore): tls.ConnectionOptions {
  return {
    host: target.host,
    port: target.port,
    ...(net.isIP(target.host) === 0 ? { servername: target.host } : {}),
    ca: [...trustStore()],
    // The decision is ours (decidePin): an untrusted certificate may be the pinned one.
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
  };
}

function summarize(socket: tls.TLSSocket): CertificateSummary {
  const certificate = socket.getPeerCertificate();
  if (!certificate?.fingerprint256) throw new Error('the appliance presented no certificate');
  return {
    sha256: certificate.fingerprint256,
    subject: distinguishedName(certificate.subject),
    issuer: distinguishedName(certificate.issuer),
    validFrom: certificate.valid_from,
    validTo: certificate.valid_to,
    trustedByOs: socket.authorized,
  };
}

function distinguishedName(name: tls.Certificate | undefined): string {
  if (!name) return '';
  return Object.entries(name)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(', ');
}

/** Connects, reads the certificate the appliance presents and hangs up (nothing is sent). */
export function probeCertificate(
  origin: string,
  options: { trustStore: TrustStore; timeoutMs?: number },
): Promise<CertificateSummary> {
  const target = tlsTargetOf(origin);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(connectOptions(target, options.trustStore));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TLS answer from ${target.host}:${target.port} within 10 s`));
    }, options.timeoutMs ?? 10_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      try {
        resolve(summarize(socket));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      } finally {
        socket.destroy();
      }
    });
    socket.once('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export interface PinnedAgentOptions {
  /** The pin at the moment of connecting (the store may re-pin between connections). */
  pinnedSha256(): string | null;
  /** Called before the socket is used when a CA-valid certificate replaces the pin. */
  onRepin(presentedSha256: string): void;
  trustStore: TrustStore;
  /** Handshake budget. */
  connectTimeoutMs?: number;
}

/**
 * An https.Agent that decides on the certificate before any request is written (see the header).
 * One per connection: its keep-alive pool holds only sockets to that appliance.
 */
export class PinnedAgent extends https.Agent {
  constructor(private readonly pinning: PinnedAgentOptions) {
    super({ keepAlive: true, maxCachedSessions: 0, timeout: 60_000 });
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): undefined {
    const done = onceCallback(callback);
    const target = { host: String(options.host ?? options.hostname), port: Number(options.port) };
    const socket = tls.connect(connectOptions(target, this.pinning.trustStore));
    const timer = setTimeout(() => {
      socket.destroy();
      done(new Error(`no TLS answer from ${target.host}:${target.port}`));
    }, this.pinning.connectTimeoutMs ?? 15_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      let presented: CertificateSummary;
      try {
        presented = summarize(socket);
      } catch (error) {
        socket.destroy();
        done(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const decision = decidePin(
        this.pinning.pinnedSha256(),
        presented.sha256,
        presented.trustedByOs,
      );
      if (decision.action === 'refuse') {
        socket.destroy();
        done(new CertificateChangedError(decision.pinnedSha256, decision.presentedSha256));
        return;
      }
      if (decision.action === 'repin') this.pinning.onRepin(decision.presentedSha256);
      done(null, socket);
    });
    socket.once('error', (error: Error) => {
      clearTimeout(timer);
      done(error);
    });
    return undefined;
  }
}

function onceCallback(
  callback: ((error: Error | null, stream: Duplex) => void) | undefined,
): (error: Error | null, stream?: Duplex) => void {
  let called = false;
  return (error, stream) => {
    if (called || !callback) return;
    called = true;
    callback(error, stream as Duplex);
  };
}
