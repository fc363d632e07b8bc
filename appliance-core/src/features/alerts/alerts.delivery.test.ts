/**
 * The whole path on the running appliance, nothing injected: a syslog line sent with `logger`
 * matches an enabled alert, the engine opens one occurrence, the routing rule sends it to an
 * email outlet and a webhook outlet, and the delivery queue hands it to a real SMTP server (through
 * the mail relay set with POST /api/smtpSettings) and to a webhook receiver, both on 127.0.0.1
 * (allowlisted with APPLIANCE_OUTLET_ALLOW). The history then says both were sent.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import {
  httpReceiver,
  smtpReceiver,
  until,
  type HttpReceiver,
  type SmtpReceiver,
} from './delivery/testing/receivers.js';

const HAVE_LOGGER = havePeer('logger', 'bsdutils');

describe.runIf(HAVE_LOGGER)('syslog to mail and webhook, end to end', () => {
  let h: Harness;
  let admin: string;
  let mail: SmtpReceiver;
  let hook: HttpReceiver;

  beforeAll(async () => {
    mail = await smtpReceiver();
    hook = await httpReceiver();
    h = await startAppliance({
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_OUTLET_ALLOW: '127.0.0.1',
    });
    admin = await h.login();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await mail?.close();
    await hook?.close();
  });

  it('delivers one notification per outlet for a matching line, and the history says sent', async () => {
    const relay = await h.request('POST', '/api/smtpSettings', {
      token: admin,
      body: {
        action: 'set',
        sender: 'NOC Appliance',
        email: 'appliance@example.test',
        smtpserver: '127.0.0.1',
        port: mail.port,
        auth: false,
        usessl: false,
      },
    });
    expect(relay.body).toMatchObject({ status: 201, hasError: false });
    const outlets: number[] = [];
    for (const body of [
      { name: 'noc mail', type: 'email', config: { email: 'noc@example.test' } },
      { name: 'noc hook', type: 'webhook', config: { url: hook.url } },
    ]) {
      const res = await h.request('POST', '/api/outlets', { token: admin, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      outlets.push(res.body.id);
    }
    const alert = await h.request('POST', '/api/alerts', {
      token: admin,
      body: {
        label: 'RAID degraded',
        class: 'syslog_log',
        severity: 2,
        parameters: { contains: ['raid degraded'], occurrences_min: 1, lookback_minutes: 5 },
      },
    });
    expect(alert.status).toBe(201);
    const rule = await h.request('POST', '/api/alert-routing-rules', {
      token: admin,
      body: { label: 'noc', alert_ids: [alert.body.id], outlet_ids: outlets },
    });
    expect(rule.status).toBe(201);

    const port = h.appliance.ctx.collectorPorts.report().syslog!.udp!;
    const send = (text: string) =>
      execFileSync('logger', ['-n', '127.0.0.1', '-P', String(port), '-d', '-t', 'storage', text], {
        timeout: 5000,
      });
    send('controller 0: all arrays optimal'); // matches nothing
    send('controller 0: RAID DEGRADED on array md1');
    send('controller 0: raid degraded on array md1 (still)'); // same occurrence: no second notification

    await until(
      () => mail.mails.length >= 1 && hook.received.length >= 1,
      20_000,
      'both deliveries',
    );
    await new Promise((r) => setTimeout(r, 1500)); // room for a wrong second notification to arrive
    expect(mail.mails).toHaveLength(1);
    expect(mail.mails[0]!.to).toEqual(['noc@example.test']);
    expect(mail.mails[0]!.data).toMatch(/Subject: \[severity 2\] RAID degraded/);
    expect(mail.mails[0]!.data).toContain('RAID DEGRADED on array md1');
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
      alert: 'RAID degraded',
      severity: 2,
    });

    const history = await h.request('GET', `/api/alerts/history?alert_id=${alert.body.id}`, {
      token: admin,
    });
    expect(history.body).toHaveLength(1);
    expect(history.body[0].notifications).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ outlet_name: 'noc mail', status: 'sent' }),
        expect.objectContaining({ outlet_name: 'noc hook', status: 'sent' }),
      ]),
    );
  });
});
