/**
 * The mail relay settings (POST /api/smtpSettings): read masked, written with the password kept
 * on the sentinel, an empty value or none, and a real test mail.
 *
 * Invariants:
 * - The password is stored sealed by the secret box and leaves this module in clear only toward
 *   nodemailer (`relay()` for the delivery queue, `test`); reads show the sentinel.
 * - `test` uses the settings sent with it when they are complete (so an operator can try before
 *   saving; the sentinel or an empty password uses the stored one), else the stored settings.
 * - The relay's host is judged by the relay policy (link-local and metadata refused) before it is
 *   stored, and again, with its resolved address, at every send.
 */
import { ApiFailure, failure } from '../../../platform/http/envelopes.js';
import {
  ENCRYPTED_SENTINEL,
  nextSealedSecret,
  resolveSecret,
} from '../../../platform/http/encrypted-field.js';
import { hostRefusal, type OutboundPolicy } from '../../../platform/net/outbound.js';
import { parseTarget } from '../../../platform/net/targets.js';
import type { DB } from '../../../platform/db/database.js';
import type { SecretBox } from '../../../platform/security/secret-box.js';
import type { Clock } from '../../../platform/time/time.js';
import {
  readSmtpSettings,
  writeSmtpSettings,
  type SmtpSettingsRow,
} from './delivery.repository.js';
import { isEmailAddress, relayPolicyOf, sendMail, type SmtpRelay } from './mail.service.js';
import type { SmtpSettingsInput, SmtpViewRecord } from './smtp-settings.schema.js';

const REQUIRED = ['sender', 'email', 'smtpserver', 'port', 'auth', 'usessl'] as const;

export const DEFAULT_SMTP: SmtpViewRecord = {
  sender: '',
  email: '',
  server: '',
  port: 25,
  auth: false,
  usessl: false,
  authname: '',
  authpass: null,
};

const flag = (value: unknown) => value === true || value === 1;

export interface SmtpSettingsDeps {
  db: DB;
  clock: Clock;
  secrets: SecretBox;
  /** The outlet policy; the relay policy is derived from it (relayPolicyOf). */
  policy: OutboundPolicy;
  clientName: () => string;
  timeoutMs?: number;
}

export class SmtpSettingsService {
  constructor(private readonly deps: SmtpSettingsDeps) {}

  view(): SmtpViewRecord {
    const row = readSmtpSettings(this.deps.db);
    if (!row) return { ...DEFAULT_SMTP };
    return {
      sender: row.sender,
      email: row.email,
      server: row.server,
      port: row.port,
      auth: row.auth === 1,
      usessl: row.usessl === 1,
      authname: row.authname,
      authpass: row.authpass_sealed ? ENCRYPTED_SENTINEL : null,
    };
  }

  /** The relay with its password in clear (server side only), null when none is configured. */
  relay(): SmtpRelay | null {
    const row = readSmtpSettings(this.deps.db);
    if (!row) return null;
    return {
      sender: row.sender,
      email: row.email,
      server: row.server,
      port: row.port,
      auth: row.auth === 1,
      usessl: row.usessl === 1,
      authname: row.authname,
      authpass: row.authpass_sealed ? this.deps.secrets.open(row.authpass_sealed) : null,
    };
  }

  /**
   * The row `input` describes (validated), sealing a new password or keeping the stored one.
   * Throws ApiFailure (422, one message listing every problem) when the input is not complete.
   */
  private rowOf(input: SmtpSettingsInput, stored: SmtpSettingsRow | null): SmtpSettingsRow {
    const problems: string[] = [];
    for (const key of REQUIRED)
      if (input[key] === undefined || input[key] === null || input[key] === '')
        problems.push(`The ${key} field is required.`);
    if (problems.length > 0) throw failure(422, problems.join(' '));
    const email = String(input.email).trim();
    if (!isEmailAddress(email)) problems.push('The email must be a valid email address.');
    const server = String(input.smtpserver).trim();
    const target = parseTarget(server);
    if (!target) problems.push('The smtpserver must be a host name or an IP address.');
    else {
      const refusal = hostRefusal(target.value, relayPolicyOf(this.deps.policy));
      if (refusal) problems.push(`The smtpserver is refused: ${refusal}.`);
    }
    const port = Number(input.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      problems.push('The port must be between 1 and 65535.');
    const auth = flag(input.auth);
    const authname = (input.authname ?? '').trim();
    let sealed: string | null;
    try {
      sealed = nextSealedSecret(this.deps.secrets, stored?.authpass_sealed ?? null, input.authpass);
    } catch {
      sealed = null;
      problems.push('The authpass must be a string.');
    }
    if (auth && authname === '') problems.push('The authname field is required when auth is on.');
    if (auth && !sealed) problems.push('The authpass field is required when auth is on.');
    if (problems.length > 0) throw failure(422, problems.join(' '));
    return {
      sender: String(input.sender).trim(),
      email,
      server: target!.value,
      port,
      auth: auth ? 1 : 0,
      usessl: flag(input.usessl) ? 1 : 0,
      authname,
      authpass_sealed: sealed,
    };
  }

  /** Saves the settings; returns the row (for the audit, never the password). */
  set(input: SmtpSettingsInput): SmtpSettingsRow {
    const stored = readSmtpSettings(this.deps.db);
    const row = this.rowOf(input, stored);
    writeSmtpSettings(this.deps.db, row, this.deps.clock.now());
    return row;
  }

  /** Sends a real test mail; returns where it went. Throws ApiFailure when it fails. */
  async test(input: SmtpSettingsInput): Promise<{ to: string; server: string }> {
    const stored = readSmtpSettings(this.deps.db);
    const sent = REQUIRED.some((key) => input[key] !== undefined);
    if (!sent && !stored) throw failure(422, 'The mail relay is not configured.');
    const row = sent ? this.rowOf(input, stored) : stored!;
    const to = (input.to ?? row.email).trim();
    if (!isEmailAddress(to)) throw failure(422, 'The to field must be a valid email address.');
    const relay: SmtpRelay = {
      sender: row.sender,
      email: row.email,
      server: row.server,
      port: row.port,
      auth: row.auth === 1,
      usessl: row.usessl === 1,
      authname: row.authname,
      authpass: row.auth === 1 ? resolveSecret(this.deps.secrets, row.authpass_sealed, null) : null,
    };
    const now = new Date(this.deps.clock.now()).toISOString();
    const result = await sendMail(
      relay,
      {
        to: [to],
        subject: 'Test email from the appliance',
        text: `This is a test of the mail relay ${row.server}:${row.port}, sent ${now} by ${this.deps.clientName()}.`,
        html: null,
      },
      {
        policy: relayPolicyOf(this.deps.policy),
        timeoutMs: this.deps.timeoutMs ?? 15_000,
        clientName: this.deps.clientName(),
      },
    );
    if (!result.ok) throw new ApiFailure(422, `Test email failed: ${result.error}`);
    return { to, server: `${row.server}:${row.port}` };
  }
}
