/**
 * Mail through the operator's relay (POST /api/smtpSettings) with nodemailer.
 *
 * Invariants:
 * - The relay's name is resolved once, through the outbound policy's guarded lookup (loopback
 *   and private relays are normal, so only link-local and metadata addresses are refused unless
 *   allowlisted), and nodemailer connects to that checked address; TLS still verifies the
 *   certificate against the relay's name (`servername`).
 * - The relay password is handed to nodemailer only; errors are reduced to nodemailer's code and
 *   the server's reply (an SMTP server never echoes the password), and every error message is
 *   scrubbed of the password and the user name before it leaves this module.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import nodemailer from 'nodemailer';
import { guardLookup, hostRefusal, type OutboundPolicy } from '../../../platform/net/outbound.js';
import { ipVersion } from '../../../platform/net/targets.js';

export interface SmtpRelay {
  /** Display name of the sender. */
  sender: string;
  /** The sender's address (From), also where `test` mails go by default. */
  email: string;
  server: string;
  port: number;
  auth: boolean;
  usessl: boolean;
  authname: string;
  /** Plaintext, server side only. */
  authpass: string | null;
}

export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html: string | null;
}

export interface MailOptions {
  /** The relay policy (relayPolicyOf). */
  policy: OutboundPolicy;
  timeoutMs: number;
  /** Name resolution (default: the system resolver). */
  lookup?: LookupFunction;
  /** The name this appliance gives in EHLO. */
  clientName?: string;
}

export type MailResult =
  { ok: true; messageId: string } | { ok: false; error: string; retryable: boolean };

/** Relays may be on loopback or the LAN; link-local and metadata stay refused. */
export function relayPolicyOf(outlet: OutboundPolicy): OutboundPolicy {
  return { allowPrivate: true, ...(outlet.allow ? { allow: outlet.allow } : {}) };
}

const EMAIL = /^[^\s@<>",;]{1,64}@[^\s@<>",;]{1,255}$/;

export function isEmailAddress(text: string): boolean {
  return EMAIL.test(text) && text.length <= 320;
}

function resolveChecked(host: string, options: MailOptions): Promise<string> {
  const refusal = hostRefusal(host, options.policy);
  if (refusal)
    return Promise.reject(Object.assign(new Error(`Refused: ${refusal}`), { permanent: true }));
  if (ipVersion(host) !== 0) return Promise.resolve(host);
  const lookup = guardLookup(options.policy, options.lookup ?? dns.lookup);
  return new Promise((resolve, reject) =>
    lookup(host, { all: false }, (err, address) => {
      if (err) {
        const code = err.code;
        return reject(
          code === 'ERR_ADDRESS_REFUSED'
            ? Object.assign(new Error(`Refused: ${err.message}`), { permanent: true })
            : new Error(`DNS lookup of ${host} failed (${code ?? err.message})`),
        );
      }
      resolve(typeof address === 'string' ? address : (address[0]?.address ?? ''));
    }),
  );
}

function scrub(message: string, relay: SmtpRelay): string {
  let text = message.split('\n')[0] ?? '';
  for (const secret of [relay.authpass, relay.auth ? relay.authname : null])
    if (secret && secret.length >= 3) text = text.split(secret).join('[redacted]');
  return text.slice(0, 300);
}

/** Sends one message through the relay. Never throws. */
export async function sendMail(
  relay: SmtpRelay,
  message: MailMessage,
  options: MailOptions,
): Promise<MailResult> {
  if (!relay.server)
    return { ok: false, error: 'The mail relay is not configured', retryable: false };
  if (message.to.length === 0) return { ok: false, error: 'No recipient', retryable: false };
  let address: string;
  try {
    address = await resolveChecked(relay.server, options);
  } catch (err) {
    const e = err as Error & { permanent?: boolean };
    return { ok: false, error: scrub(e.message, relay), retryable: !e.permanent };
  }
  const transport = nodemailer.createTransport({
    host: address,
    port: relay.port,
    secure: relay.usessl,
    name: options.clientName ?? 'appliance',
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    tls: ipVersion(relay.server) === 0 ? { servername: relay.server } : {},
    ...(relay.auth ? { auth: { user: relay.authname, pass: relay.authpass ?? '' } } : {}),
    logger: false,
    debug: false,
  });
  try {
    const info = (await transport.sendMail({
      from: { name: relay.sender || relay.email, address: relay.email },
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html !== null ? { html: message.html } : {}),
    })) as { messageId: string };
    return { ok: true, messageId: info.messageId };
  } catch (err) {
    const e = err as Error & { code?: string; responseCode?: number; response?: string };
    // 5xx replies (bad recipient, authentication refused) will not change on retry; 4xx and
    // network failures may.
    const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
    const detail = e.response ?? e.message;
    return {
      ok: false,
      error: scrub(
        `Mail relay ${relay.server}:${relay.port}: ${e.code ? `${e.code} ` : ''}${detail}`,
        relay,
      ),
      retryable: !permanent,
    };
  } finally {
    transport.close();
  }
}
