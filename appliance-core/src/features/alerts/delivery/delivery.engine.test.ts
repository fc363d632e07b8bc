/**
 * The persisted delivery queue against a real SQLite file, a real SMTP server and HTTP receivers
 * on loopback (allowlisted through the outlet policy): transports and their payloads, the rate
 * limit, coalescing, retries, suppression, restart, and the secrets that never reach a row or
 * a log line.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../../platform/db/database.js';
import { migrate } from '../../../platform/db/migrate.js';
import { REDACT_PATHS } from '../../../platform/logging/logger.js';
import { outletPolicy } from '../../../platform/net/outbound.js';
import { SecretBox } from '../../../platform/security/secret-box.js';
import { attemptsOf, findDelivery } from './delivery.repository.js';
import { DeliveryEngine, type DeliveryEngineOptions } from './delivery.engine.js';
import type { Notification, OutletTarget } from './delivery.schema.js';
import type { SmtpRelay } from './mail.service.js';
import {
  httpReceiver,
  smtpReceiver,
  until,
  type HttpReceiver,
  type SmtpReceiver,
} from './testing/receivers.js';

const CANARY_AUTH = 'Bearer canary-auth-7f3a9c1e55';
const CANARY_PASS = 'canary-pass-b81d2e77';

class TestClock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Setup {
  db: DB;
  file: string;
  clock: TestClock;
  secrets: SecretBox;
  logs: string[];
  engine: DeliveryEngine;
  relay: { value: SmtpRelay | null };
  make(extra?: Partial<DeliveryEngineOptions>): DeliveryEngine;
  drain(engine?: DeliveryEngine): Promise<void>;
}

function setup(
  extra: Partial<DeliveryEngineOptions> = {},
  existing?: { file: string; key: Buffer },
): Setup {
  const dir = existing
    ? path.dirname(existing.file)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'delivery-'));
  const file = existing?.file ?? path.join(dir, 'appliance.db');
  const db = openDatabase(file);
  migrate(db, Date.now());
  const key = existing?.key ?? crypto.randomBytes(32);
  const secrets = new SecretBox(key);
  (secrets as unknown as { key: Buffer }).key = key;
  // Just after a minute starts, so that a test's sends fall in one calendar minute.
  const clock = new TestClock(Math.floor(Date.now() / 60_000) * 60_000 + 1000);
  const logs: string[] = [];
  const log = pino(
    { level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => logs.push(line) },
  );
  const relay = { value: null as SmtpRelay | null };
  const engines: DeliveryEngine[] = [];
  const make = (more: Partial<DeliveryEngineOptions> = {}) => {
    const engine = new DeliveryEngine({
      db,
      clock,
      secrets,
      log,
      policy: outletPolicy(['127.0.0.1']),
      relay: () => relay.value,
      baseBackoffMs: 1000,
      timeoutMs: 2000,
      ...extra,
      ...more,
    });
    engines.push(engine);
    return engine;
  };
  const engine = make();
  cleanups.push(async () => {
    for (const e of engines) await e.stop();
    db.close();
  });
  const drain = async (e = engine) => {
    for (let i = 0; i < 50; i++) {
      const due = db
        .prepare(
          `SELECT count(*) AS n FROM alert_deliveries WHERE status = 'pending' AND next_attempt_at <= ?`,
        )
        .get(clock.now()) as { n: number };
      if (due.n === 0) return;
      await e.runOnce();
    }
  };
  return { db, file, clock, secrets, logs, engine, relay, make, drain };
}

async function receiver(): Promise<HttpReceiver> {
  const r = await httpReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function smtp(credentials?: { user: string; pass: string }): Promise<SmtpReceiver> {
  const s = await smtpReceiver(credentials);
  cleanups.push(() => s.close());
  return s;
}

const note = (over: Partial<Notification> = {}): Notification => ({
  occurrenceId: 41,
  alertLabel: 'Core link flaps',
  severity: 2,
  subject: 'Link down on core-1',
  text: 'Interface ge-0/0/1 went down',
  html: '<p>Interface ge-0/0/1 went down</p>',
  variables: { device: 'core-1' },
  ...over,
});

const webhook = (url: string, over: Partial<OutletTarget> = {}): OutletTarget => ({
  id: 7,
  type: 'webhook',
  name: 'noc-hook',
  config: { url, method: 'POST', headers: { 'X-Team': 'noc' }, authorization_header: CANARY_AUTH },
  rate_limit_per_min: null,
  ...over,
});

function fileText(file: string): string {
  return [file, `${file}-wal`]
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString('latin1'))
    .join('');
}

describe('DeliveryEngine transports', () => {
  it('posts a webhook with its method, custom headers and authorization header, and records the attempt', async () => {
    const s = setup();
    const r = await receiver();
    const id = s.engine.enqueue(webhook(r.url), note());
    expect(findDelivery(s.db, id)).toMatchObject({ status: 'pending', attempts: 0 });
    await s.drain();
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.headers.authorization).toBe(CANARY_AUTH);
    expect(got.headers['x-team']).toBe('noc');
    expect(JSON.parse(got.body)).toMatchObject({
      occurrence_id: 41,
      alert: 'Core link flaps',
      severity: 2,
      subject: 'Link down on core-1',
      text: 'Interface ge-0/0/1 went down',
      variables: { device: 'core-1' },
    });
    expect(findDelivery(s.db, id)).toMatchObject({
      status: 'sent',
      attempts: 1,
      error: null,
      sent_at: s.clock.t,
    });
    expect(attemptsOf(s.db, id)).toMatchObject([{ attempt: 1, outcome: 'sent', http_status: 200 }]);
  });

  it('sends Slack, Teams and Discord payloads in their documented formats', async () => {
    const s = setup();
    const r = await receiver();
    const n = note({ text: 'a <b> & @everyone' });
    s.engine.enqueue(
      { id: 1, type: 'slack', name: 'slack', config: { url: r.url }, rate_limit_per_min: null },
      n,
    );
    s.engine.enqueue(
      { id: 2, type: 'teams', name: 'teams', config: { url: r.url }, rate_limit_per_min: null },
      n,
    );
    s.engine.enqueue(
      { id: 3, type: 'discord', name: 'discord', config: { url: r.url }, rate_limit_per_min: null },
      n,
    );
    await s.drain();
    expect(r.received).toHaveLength(3);
    const bodies = r.received.map((x) => JSON.parse(x.body) as Record<string, any>);
    const slack = bodies.find((b) => 'blocks' in b)!;
    expect(slack.text).toBe('Link down on core-1');
    expect(slack.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Link down on core-1', emoji: false },
    });
    expect(slack.blocks[1]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: 'a &lt;b&gt; &amp; @everyone' },
    });
    const teams = bodies.find((b) => b.type === 'message')!;
    expect(teams.attachments).toHaveLength(1);
    expect(teams.attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(teams.attachments[0].content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(teams.attachments[0].content.body[0]).toMatchObject({
      type: 'TextBlock',
      text: 'Link down on core-1',
    });
    const discord = bodies.find((b) => 'embeds' in b)!;
    expect(discord.allowed_mentions).toEqual({ parse: [] });
    expect(discord.embeds[0]).toMatchObject({
      title: 'Link down on core-1',
      description: 'a <b> & @everyone',
      color: 0xf57c00,
    });
    expect(discord.content).toBeUndefined();
  });

  it('mails through the relay to a real SMTP server with the relay login', async () => {
    const s = setup();
    const mail = await smtp({ user: 'relay-user', pass: CANARY_PASS });
    s.relay.value = {
      sender: 'NOC Appliance',
      email: 'appliance@example.test',
      server: '127.0.0.1',
      port: mail.port,
      auth: true,
      usessl: false,
      authname: 'relay-user',
      authpass: CANARY_PASS,
    };
    const id = s.engine.enqueue(
      {
        id: 9,
        type: 'email',
        name: 'ops mail',
        config: { email: 'ops@example.test', emails: ['a@example.test', 'bad address'] },
        rate_limit_per_min: null,
      },
      note(),
    );
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(mail.mails).toHaveLength(1);
    expect(mail.mails[0]!.to).toEqual(['ops@example.test', 'a@example.test']);
    expect(mail.mails[0]!.from).toBe('appliance@example.test');
    expect(mail.mails[0]!.user).toBe('relay-user');
    expect(mail.mails[0]!.data).toMatch(/Subject: Link down on core-1/);
    expect(mail.mails[0]!.data).toMatch(/From: NOC Appliance <appliance@example.test>/);
  });

  it('fails a mail at once on a refused login, without the password in the error', async () => {
    const s = setup();
    const mail = await smtp({ user: 'relay-user', pass: 'the-right-one' });
    s.relay.value = {
      sender: 'NOC',
      email: 'appliance@example.test',
      server: '127.0.0.1',
      port: mail.port,
      auth: true,
      usessl: false,
      authname: 'relay-user',
      authpass: CANARY_PASS,
    };
    const id = s.engine.enqueue(
      {
        id: 9,
        type: 'email',
        name: 'm',
        config: { email: 'ops@example.test' },
        rate_limit_per_min: null,
      },
      note(),
    );
    await s.drain();
    const row = findDelivery(s.db, id)!;
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/EAUTH/);
    expect(mail.logins[0]!.pass).toBe(CANARY_PASS);
    expect(JSON.stringify(row)).not.toContain(CANARY_PASS);
  });

  it('sendTest sends at once and reports a refused destination', async () => {
    const s = setup();
    const r = await receiver();
    expect(await s.engine.sendTest(webhook(r.url))).toEqual({ ok: true });
    expect(JSON.parse(r.received[0]!.body).subject).toBe('Test notification from noc-hook');
    expect(await s.engine.sendTest(webhook('http://169.254.169.254/latest/'))).toEqual({
      ok: false,
      error: 'Refused: 169.254.169.254 is a cloud metadata address',
    });
    expect(await s.engine.sendTest(webhook('http://localhost:1/'))).toEqual({
      ok: false,
      error: 'Refused: localhost is a loopback name',
    });
    const count = s.db.prepare('SELECT count(*) AS n FROM alert_deliveries').get() as { n: number };
    expect(count.n).toBe(0);
  });

  it('refuses custom headers with CR or LF and fails the delivery without sending', async () => {
    const s = setup();
    const r = await receiver();
    const id = s.engine.enqueue(
      webhook(r.url, { config: { url: r.url, headers: { 'X-A': 'ok\r\nX-Injected: 1' } } }),
      note(),
    );
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({
      status: 'failed',
      error: 'The header X-A must not contain CR, LF or NUL',
    });
    expect(r.received).toHaveLength(0);
  });
});

describe('DeliveryEngine queue rules', () => {
  it('holds deliveries past rate_limit_per_min for the next minute, never dropping one, and records the delay', async () => {
    const s = setup();
    const r = await receiver();
    const outlet = webhook(r.url, { rate_limit_per_min: 2 });
    const ids = [1, 2, 3, 4, 5].map((i) => s.engine.enqueue(outlet, note({ subject: `n${i}` })));
    await s.drain();
    expect(r.received.map((x) => JSON.parse(x.body).subject)).toEqual(['n1', 'n2']);
    const minuteStart = Math.floor(s.clock.t / 60_000) * 60_000;
    for (const id of ids.slice(2))
      expect(findDelivery(s.db, id)).toMatchObject({
        status: 'pending',
        next_attempt_at: minuteStart + 60_000,
        rate_delay_ms: minuteStart + 60_000 - s.clock.t,
      });
    s.clock.t = minuteStart + 60_000;
    await s.drain();
    expect(r.received).toHaveLength(4);
    s.clock.t = minuteStart + 120_000 + 5;
    await s.drain();
    expect(r.received.map((x) => JSON.parse(x.body).subject)).toEqual([
      'n1',
      'n2',
      'n3',
      'n4',
      'n5',
    ]);
    expect(findDelivery(s.db, ids[4]!)).toMatchObject({
      status: 'sent',
      rate_delay_ms: 59_000 + 60_000,
    });
    expect(findDelivery(s.db, ids[0]!)).toMatchObject({ status: 'sent', rate_delay_ms: 0 });
  });

  it('folds a backlog beyond the cap into one counted summary, keeping every row', async () => {
    const s = setup({ backlogCap: 3 });
    const r = await receiver();
    const outlet = webhook(r.url);
    const ids = Array.from({ length: 10 }, (_, i) =>
      s.engine.enqueue(outlet, note({ subject: `n${i}`, alertLabel: `alert ${i}` })),
    );
    const rows = ids.map((id) => findDelivery(s.db, id)!);
    expect(rows.slice(0, 3).every((x) => x.status === 'pending')).toBe(true);
    expect(rows.slice(3).every((x) => x.status === 'coalesced')).toBe(true);
    const summaryId = rows[3]!.coalesced_into!;
    expect(rows.slice(3).every((x) => x.coalesced_into === summaryId)).toBe(true);
    expect(findDelivery(s.db, summaryId)).toMatchObject({
      kind: 'summary',
      coalesced_count: 7,
      status: 'pending',
    });
    await s.drain();
    expect(r.received).toHaveLength(4);
    const summary = JSON.parse(r.received[3]!.body) as { subject: string; text: string };
    expect(summary.subject).toBe('7 notifications held back for noc-hook');
    expect(summary.text).toContain('- [severity 2] alert 3: n3');
    expect(summary.text).toContain('- [severity 2] alert 9: n9');
    expect(findDelivery(s.db, summaryId)).toMatchObject({ status: 'sent' });
  });

  it('retries a 500 with exponential backoff, then delivers', async () => {
    const s = setup({ baseBackoffMs: 1000 });
    const r = await receiver();
    let failures = 2;
    r.answer = (_q, res) => {
      if (failures-- > 0) {
        res.writeHead(500);
        res.end('boom');
      } else res.end('ok');
    };
    const id = s.engine.enqueue(webhook(r.url), note());
    const t0 = s.clock.t;
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'HTTP 500: boom',
      next_attempt_at: t0 + 1000,
    });
    await s.drain(); // not due yet
    expect(r.received).toHaveLength(1);
    s.clock.t = t0 + 1000;
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({
      status: 'pending',
      attempts: 2,
      next_attempt_at: t0 + 1000 + 2000,
    });
    s.clock.t = t0 + 3000;
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({ status: 'sent', attempts: 3, error: null });
    expect(attemptsOf(s.db, id).map((a) => [a.outcome, a.http_status])).toEqual([
      ['retry', 500],
      ['retry', 500],
      ['sent', 200],
    ]);
  });

  it('fails at once on a 4xx, and gives up after maxAttempts of 5xx', async () => {
    const s = setup({ baseBackoffMs: 10, maxAttempts: 3 });
    const r = await receiver();
    r.answer = (req, res) => {
      res.writeHead(req.url.includes('gone') ? 404 : 503);
      res.end();
    };
    const gone = s.engine.enqueue(webhook(`${r.url}/gone`), note());
    const busy = s.engine.enqueue(webhook(r.url, { id: 8 }), note());
    for (let i = 0; i < 5; i++) {
      await s.drain();
      s.clock.t += 1000;
    }
    expect(findDelivery(s.db, gone)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'HTTP 404',
    });
    expect(findDelivery(s.db, busy)).toMatchObject({
      status: 'failed',
      attempts: 3,
      error: 'HTTP 503 (gave up after 3 attempts)',
    });
  });

  it('records a suppressed notification without sending it', async () => {
    const s = setup();
    const r = await receiver();
    const id = s.engine.enqueue(webhook(r.url), note(), {
      suppressedBy: 'maintenance window "Sunday patching" (#3)',
    });
    await s.drain();
    expect(findDelivery(s.db, id)).toMatchObject({
      status: 'suppressed',
      suppressed_by: 'maintenance window "Sunday patching" (#3)',
      next_attempt_at: null,
      attempts: 0,
    });
    expect(r.received).toHaveLength(0);
  });

  it('sends to the outlet as it is now, and fails the deliveries of a deleted outlet', async () => {
    const r = await receiver();
    const other = await receiver();
    let current: OutletTarget | null = webhook(other.url);
    const s = setup({ currentOutlet: () => current });
    const moved = s.engine.enqueue(webhook(r.url), note());
    await s.drain();
    expect(r.received).toHaveLength(0);
    expect(other.received).toHaveLength(1);
    expect(findDelivery(s.db, moved)!.status).toBe('sent');
    current = null;
    const orphan = s.engine.enqueue(webhook(r.url), note());
    await s.drain();
    expect(findDelivery(s.db, orphan)).toMatchObject({
      status: 'failed',
      error: 'The outlet was deleted',
    });
  });
});

describe('DeliveryEngine restart', () => {
  it('a delivery in flight when the queue stops is sent by the next queue on the same file', async () => {
    const first = setup();
    const r = await receiver();
    const held: (() => void)[] = [];
    r.answer = (_q, res) => held.push(() => res.end('late'));
    const key = (first.secrets as unknown as { key: Buffer }).key;
    await first.engine.start();
    const inFlight = first.engine.enqueue(webhook(r.url), note({ subject: 'in flight' }));
    await until(() => r.received.length === 1, 5000, 'the first attempt');
    first.engine.abandon(); // the process dies mid-delivery: nothing more is recorded
    // Committed by a queue that never got to send it.
    const waiting = first.engine.enqueue(webhook(r.url, { id: 99 }), note({ subject: 'queued' }));
    expect(findDelivery(first.db, waiting)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(findDelivery(first.db, inFlight)!.status).toBe('sending');

    r.answer = (_q, res) => res.end('ok');
    const second = setup({}, { file: first.file, key });
    await second.engine.start();
    await until(
      () =>
        findDelivery(second.db, inFlight)!.status === 'sent' &&
        findDelivery(second.db, waiting)!.status === 'sent',
      5000,
      'both deliveries after the restart',
    );
    held.forEach((release) => release());
    expect(r.received.map((x) => JSON.parse(x.body).subject).sort()).toEqual([
      'in flight',
      'in flight',
      'queued',
    ]);
    expect(attemptsOf(second.db, inFlight).map((a) => a.outcome)).toEqual(['interrupted', 'sent']);
  });
});

describe('secrets', () => {
  it('the authorization header and the relay password never reach a row, the file or a log line', async () => {
    const s = setup();
    const r = await receiver();
    r.answer = (_q, res) => {
      res.writeHead(500);
      res.end(`echo ${CANARY_AUTH}`); // a hostile receiver echoing the secret
    };
    const mail = await smtp({ user: 'u', pass: 'other' });
    s.relay.value = {
      sender: 'x',
      email: 'a@example.test',
      server: '127.0.0.1',
      port: mail.port,
      auth: true,
      usessl: false,
      authname: 'u',
      authpass: CANARY_PASS,
    };
    const hook = s.engine.enqueue(webhook(r.url), note());
    const email = s.engine.enqueue(
      {
        id: 3,
        type: 'email',
        name: 'm',
        config: { email: 'b@example.test' },
        rate_limit_per_min: null,
      },
      note(),
    );
    await s.drain();
    s.logs.length = 0;
    const log = pino(
      { level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
      { write: (l: string) => s.logs.push(l) },
    );
    log.info(
      { outlet: webhook(r.url), body: { action: 'set', authpass: CANARY_PASS } },
      'outlet saved',
    );
    log.info({ config: { authorization_header: CANARY_AUTH } }, 'config');
    log.info(
      { req: { body: { authpass: CANARY_PASS, config: { authorization_header: CANARY_AUTH } } } },
      'request',
    );
    const everything = [
      JSON.stringify(findDelivery(s.db, hook)),
      JSON.stringify(findDelivery(s.db, email)),
      JSON.stringify(attemptsOf(s.db, hook)),
      fileText(s.file),
      s.logs.join('\n'),
    ].join('\n');
    expect(s.logs.join('\n')).toContain('[redacted]');
    expect(everything).not.toContain(CANARY_AUTH.slice(7));
    expect(everything).not.toContain(CANARY_PASS);
  });
});

describe('DeliveryEngine stop', () => {
  it('waits a bounded time for an outlet that does not answer, and the next start sends again', async () => {
    const first = setup({ stopGraceMs: 200, timeoutMs: 10_000 });
    const r = await receiver();
    const held: (() => void)[] = [];
    r.answer = (_q, res) => held.push(() => res.end('late'));
    const key = (first.secrets as unknown as { key: Buffer }).key;
    await first.engine.start();
    const id = first.engine.enqueue(webhook(r.url), note());
    await until(() => r.received.length === 1, 5000, 'the first attempt');
    const started = Date.now();
    await first.engine.stop();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(findDelivery(first.db, id)!.status).toBe('sending');
    held.forEach((release) => release());
    r.answer = (_q, res) => res.end('ok');
    const second = setup({}, { file: first.file, key });
    await second.engine.start();
    await until(
      () => findDelivery(second.db, id)!.status === 'sent',
      5000,
      'the delivery after the restart',
    );
    expect(attemptsOf(second.db, id).map((a) => a.outcome)).toEqual(['interrupted', 'sent']);
  });
});
