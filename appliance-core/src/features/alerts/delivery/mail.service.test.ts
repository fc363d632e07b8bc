/**
 * Mail through a real SMTP server on loopback, the relay's name resolved by a stub through the
 * guarded lookup: the connection goes to the checked address, a metadata answer is refused.
 */
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outletPolicy } from '../../../platform/net/outbound.js';
import { relayPolicyOf, sendMail, type SmtpRelay } from './mail.service.js';
import { smtpReceiver, type SmtpReceiver } from './testing/receivers.js';

let mail: SmtpReceiver;
beforeAll(async () => {
  mail = await smtpReceiver();
});
afterAll(() => mail.close());

const relay = (over: Partial<SmtpRelay> = {}): SmtpRelay => ({
  sender: 'NOC',
  email: 'appliance@example.test',
  server: 'relay.example.test',
  port: mail.port,
  auth: false,
  usessl: false,
  authname: '',
  authpass: null,
  ...over,
});
const message = { to: ['ops@example.test'], subject: 'hello', text: 'body', html: '<p>body</p>' };
const stub =
  (address: string, calls: string[] = []): LookupFunction =>
  (hostname, options, callback) => {
    calls.push(hostname);
    if ((options as { all?: boolean }).all) callback(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };

describe('sendMail', () => {
  const policy = relayPolicyOf(outletPolicy([]));

  it('resolves the relay once through the guarded lookup and connects to that address', async () => {
    const calls: string[] = [];
    const before = mail.mails.length;
    const result = await sendMail(relay(), message, {
      policy,
      timeoutMs: 3000,
      lookup: stub('127.0.0.1', calls),
    });
    expect(result.ok).toBe(true);
    expect(calls).toEqual(['relay.example.test']);
    expect(mail.mails).toHaveLength(before + 1);
    expect(mail.mails.at(-1)!.data).toMatch(/Content-Type: text\/html/);
  });

  it('refuses a relay name that resolves to a metadata or link-local address, without retry', async () => {
    const before = mail.mails.length;
    expect(
      await sendMail(relay(), message, {
        policy,
        timeoutMs: 3000,
        lookup: stub('169.254.169.254'),
      }),
    ).toEqual({
      ok: false,
      error: 'Refused: relay.example.test resolves to 169.254.169.254, a cloud metadata address',
      retryable: false,
    });
    expect(
      await sendMail(relay({ server: '169.254.10.10' }), message, { policy, timeoutMs: 3000 }),
    ).toEqual({
      ok: false,
      error: 'Refused: 169.254.10.10 is a link-local address',
      retryable: false,
    });
    expect(mail.mails).toHaveLength(before);
  });

  it('reports an unreachable relay as retryable and a missing relay as not', async () => {
    const closed = await sendMail(relay({ server: '127.0.0.1', port: 1 }), message, {
      policy,
      timeoutMs: 2000,
    });
    expect(closed).toMatchObject({ ok: false, retryable: true });
    expect((closed as { error: string }).error).toMatch(
      /^Mail relay 127\.0\.0\.1:1: (ECONNECTION|ESOCKET)/,
    );
    expect(await sendMail(relay({ server: '' }), message, { policy, timeoutMs: 2000 })).toEqual({
      ok: false,
      error: 'The mail relay is not configured',
      retryable: false,
    });
  });
});
