/**
 * POST /api/smtpSettings on a real appliance, against a real SMTP server on loopback: the get /
 * set / test round trip, the masked password and its sentinel, failures as HTTP 200 hasError,
 * and a password canary that never comes back in a response, an audit row or the database file
 * in clear.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../../test/harness/appliance.js';
import { smtpReceiver, type SmtpReceiver } from './testing/receivers.js';

const CANARY = 'canary-smtp-pass-4e1f9a';
const SENTINEL = { __encrypted__: true };

let h: Harness;
let token: string;
let mail: SmtpReceiver;
const responses: string[] = [];

const call = async (body: Record<string, unknown>, as = token) => {
  const res = await h.request('POST', '/api/smtpSettings', { token: as, body });
  responses.push(res.text);
  return res;
};

const settings = (over: Record<string, unknown> = {}) => ({
  action: 'set',
  sender: 'NOC Appliance',
  email: 'appliance@example.test',
  smtpserver: '127.0.0.1',
  port: mail.port,
  auth: true,
  usessl: false,
  authname: 'relay-user',
  authpass: CANARY,
  ...over,
});

beforeAll(async () => {
  h = await startAppliance();
  token = await h.login();
  mail = await smtpReceiver({ user: 'relay-user', pass: CANARY });
});
afterAll(async () => {
  await mail.close();
  await h.close();
});

describe('POST /api/smtpSettings', () => {
  it('get answers the defaults before anything is saved', async () => {
    const res = await call({ action: 'get' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 201,
      hasError: false,
      smtp: {
        sender: '',
        email: '',
        server: '',
        port: 25,
        auth: false,
        usessl: false,
        authname: '',
        authpass: null,
      },
    });
  });

  it('set refuses an incomplete or bad request with HTTP 200 hasError, saving nothing', async () => {
    const missing = await call({ action: 'set', sender: 'x' });
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({
      status: false,
      hasError: true,
      message:
        'The email field is required. The smtpserver field is required. The port field is required. The auth field is required. The usessl field is required.',
    });
    const bad = await call(settings({ email: 'not-an-address', smtpserver: '-oProxy=x' }));
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({
      status: false,
      hasError: true,
      message:
        'The email must be a valid email address. The smtpserver must be a host name or an IP address.',
    });
    const port = await call(settings({ port: 70000 }));
    expect(port.body).toMatchObject({ status: false, hasError: true });
    expect(port.body.message).toMatch(/port/);
    const metadata = await call(settings({ smtpserver: '169.254.169.254' }));
    expect(metadata.body.message).toBe(
      'The smtpserver is refused: 169.254.169.254 is a cloud metadata address.',
    );
    const noPass = await call(settings({ authpass: '' }));
    expect(noPass.body.message).toBe('The authpass field is required when auth is on.');
    const wrongType = await call({ action: 'set', port: { x: 1 } });
    expect(wrongType.status).toBe(200);
    expect(wrongType.body).toMatchObject({ status: false, hasError: true });
    expect((await call({ action: 'get' })).body.smtp.server).toBe('');
  });

  it('set saves, get masks the password, the sentinel keeps it, and test sends a real mail', async () => {
    const saved = await call(settings());
    expect(saved.body).toEqual({ status: 201, hasError: false, smtp: 'SMTP settings saved' });
    const read = await call({ action: 'get' });
    expect(read.body.smtp).toEqual({
      sender: 'NOC Appliance',
      email: 'appliance@example.test',
      server: '127.0.0.1',
      port: mail.port,
      auth: true,
      usessl: false,
      authname: 'relay-user',
      authpass: SENTINEL,
    });
    // The console sends back what it read: the sentinel keeps the stored password.
    expect(
      (await call({ ...read.body.smtp, smtpserver: '127.0.0.1', action: 'set' })).body.hasError,
    ).toBe(false);
    const before = mail.mails.length;
    const tested = await call({ action: 'test' });
    expect(tested.body).toEqual({
      status: 201,
      hasError: false,
      smtp: `Test email sent to appliance@example.test through 127.0.0.1:${mail.port}`,
    });
    expect(mail.mails).toHaveLength(before + 1);
    const got = mail.mails.at(-1)!;
    expect(got.to).toEqual(['appliance@example.test']);
    expect(got.user).toBe('relay-user');
    expect(got.data).toMatch(/Subject: Test email from the appliance/);
    expect(mail.logins.at(-1)).toEqual({ user: 'relay-user', pass: CANARY });
  });

  it('test with settings sent uses them without saving, and a failure is HTTP 200 hasError', async () => {
    const other = await smtpReceiver();
    try {
      const res = await call(
        settings({ action: 'test', port: other.port, auth: false, to: 'ops@example.test' }),
      );
      expect(res.body.smtp).toBe(
        `Test email sent to ops@example.test through 127.0.0.1:${other.port}`,
      );
      expect(other.mails[0]!.to).toEqual(['ops@example.test']);
    } finally {
      await other.close();
    }
    expect((await call({ action: 'get' })).body.smtp.port).toBe(mail.port);
    const refused = await call(settings({ action: 'test', authpass: `${CANARY}-wrong` }));
    expect(refused.status).toBe(200);
    expect(refused.body.hasError).toBe(true);
    expect(refused.body.message).toMatch(/^Test email failed: Mail relay 127\.0\.0\.1:\d+: EAUTH /);
    const closed = await call(settings({ action: 'test', port: other.port }));
    expect(closed.body.message).toMatch(/^Test email failed: .*ECONNREFUSED/);
  });

  it('is refused to a caller without the system permission', async () => {
    const alerts = await h.userWith(['alerts']);
    const res = await call({ action: 'get' }, alerts.token);
    expect(res.status).toBe(401);
    expect(res.body.hasError).toBe(true);
  });

  it('never returns, audits or stores the password in clear', async () => {
    const all = responses.join('\n');
    expect(all).not.toContain(CANARY);
    const audit = h.appliance.db.prepare('SELECT * FROM audit_log').all();
    expect(JSON.stringify(audit)).toContain('smtp.update');
    expect(JSON.stringify(audit)).not.toContain(CANARY);
    h.appliance.db.pragma('wal_checkpoint(TRUNCATE)');
    const file = fs.readFileSync(path.join(h.dataDir, 'appliance.db')).toString('latin1');
    expect(file).toContain('relay-user');
    expect(file).not.toContain(CANARY);
  });
});
