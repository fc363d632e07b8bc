/**
 * HTTP-level tests of every alerting endpoint (spec part 3 > Alerting) and the designed ones:
 * statuses, field rules and messages, permission `alerts`, tag rules (403 naming the axis; rules
 * and the legacy catalogue filtered), secrets never returned, the device deletion cascade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import type { AlertsEngine } from './alerts.engine.js';
import { recordingDelivery } from './testing/recording-delivery.js';

const CANARY = 'Bearer canary-7f3a9c-secret';
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

describe('alerting endpoints (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let east: string; // alerts, restricted to tag "east"
  let nobody: string;
  let eastDevice: number;
  let westDevice: number;
  let ipCounter = 20;
  const delivery = recordingDelivery();
  const texts: string[] = [];

  const req = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await h.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
    expect(res.text).not.toMatch(/\n\s+at |node_modules|"stack"/);
    texts.push(res.text);
    return res;
  };
  const device = async (label: string, tags: string[]) => {
    const res = await req('POST', '/api/device/set', admin, {
      ip_address: `127.0.2.${ipCounter++}`,
      label,
      profile: 'dash_generic',
      tags,
    });
    expect(res.status).toBe(200);
    return res.body.device.id as number;
  };
  const alertBody = (extra: Record<string, unknown> = {}) => ({
    label: 'Disk errors',
    class: 'syslog_log',
    severity: 3,
    parameters: { contains: ['disk'], occurrences_min: 2 },
    ...extra,
  });

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    const engine = h.appliance.engines.find((e) => e.name === 'alerts') as AlertsEngine;
    engine.service.connectDelivery(delivery.seam);
    eastDevice = await device('east-1', ['east']);
    westDevice = await device('west-1', ['west']);
    east = (await h.userWith(['alerts'], { tags: ['east'] })).token;
    nobody = (await h.userWith([])).token;
  }, 60_000);
  afterAll(async () => {
    // No response, error body included, ever carried the outlet secret.
    for (const text of texts) expect(text).not.toContain('canary-7f3a9c');
    await h?.close();
  });

  // spec: part3 > Alerting > Alerts
  describe('alerts', () => {
    it('creates with defaults filled, lists a bare array by id, reads one', async () => {
      const a = await req('POST', '/api/alerts', admin, alertBody());
      expect(a.status).toBe(201);
      expect(a.body).toMatchObject({
        label: 'Disk errors',
        class: 'syslog_log',
        severity: 3,
        enabled: true,
        scope: 'global',
        scope_id: null,
        tag_filters: [],
        renotify_minutes: null,
        last_evaluated_at: null,
        last_result_count: null,
        parameters: {
          contains: ['disk'],
          occurrences_min: 2,
          lookback_minutes: 5,
          combine_op: 'AND',
          invert: false,
          facility: null,
          severity_ceiling: null,
        },
      });
      const b = await req('POST', '/api/alerts', admin, alertBody({ label: 'Second' }));
      const list = await req('GET', '/api/alerts', admin);
      expect(list.status).toBe(200);
      expect(Array.isArray(list.body)).toBe(true);
      const ids = (list.body as { id: number }[]).map((x) => x.id);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(ids).toEqual(expect.arrayContaining([a.body.id, b.body.id]));
      expect((await req('GET', `/api/alerts/${a.body.id}`, admin)).body).toEqual(a.body);
    });

    it('refuses missing label, class, severity and a severity outside 1 to 5 with 400 {errors}', async () => {
      for (const body of [
        { class: 'syslog_log', severity: 1 },
        { label: 'x', severity: 1 },
        { label: 'x', class: 'syslog_log' },
        { label: 'x', class: 'syslog_log', severity: 6 },
        { label: 'x', class: 'syslog_log', severity: 0 },
      ]) {
        const res = await req('POST', '/api/alerts', admin, body);
        expect(res.status).toBe(400);
        expect(Object.keys(res.body)).toEqual(['errors']);
      }
    });

    it('validates syslog_log parameters exactly; an unknown class accepts any parameters', async () => {
      for (const [parameters, field] of [
        [{ lookback_minutes: 10081 }, 'parameters.lookback_minutes'],
        [{ lookback_minutes: 0 }, 'parameters.lookback_minutes'],
        [{ occurrences_min: 0 }, 'parameters.occurrences_min'],
        [{ combine_op: 'XOR' }, 'parameters.combine_op'],
        [{ severity_ceiling: 8 }, 'parameters.severity_ceiling'],
        [{ facility: 24 }, 'parameters.facility'],
      ] as const) {
        const res = await req('POST', '/api/alerts', admin, alertBody({ parameters }));
        expect(res.status, JSON.stringify(parameters)).toBe(400);
        expect(Object.keys(res.body.errors)).toEqual([field]);
      }
      const ok = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ parameters: { lookback_minutes: 10080 } }),
      );
      expect(ok.status).toBe(201);
      const odd = { anything: [1, 'two'], lookback_minutes: -5 };
      const unknown = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ class: 'snmp_trap', parameters: odd }),
      );
      expect(unknown.status).toBe(201);
      expect(unknown.body.parameters).toEqual(odd);
    });

    it('scope: required with scope_id, empty scope_id stored null, device must exist', async () => {
      const noScope = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ scope_id: String(eastDevice) }),
      );
      expect(noScope.status).toBe(400);
      expect(Object.keys(noScope.body.errors)).toEqual(['scope']);
      const empty = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ scope: 'global', scope_id: '' }),
      );
      expect(empty.status).toBe(201);
      expect(empty.body.scope_id).toBeNull();
      const missing = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ scope: 'device', scope_id: '999999' }),
      );
      expect(missing.status).toBe(400);
      expect(missing.body.errors.scope_id).toEqual(['The selected device does not exist.']);
      const dev = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ scope: 'device', scope_id: eastDevice }),
      );
      expect(dev.status).toBe(201);
      expect(dev.body.scope_id).toBe(String(eastDevice));
    });

    it('PUT ignores class, 404 {error: Alert not found}; DELETE {deleted: true}; toggle returns the alert', async () => {
      const a = await req('POST', '/api/alerts', admin, alertBody());
      const put = await req('PUT', `/api/alerts/${a.body.id}`, admin, {
        class: 'eve_log',
        label: 'Renamed',
        renotify_minutes: 15,
        throttle_flip_count: 3,
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        class: 'syslog_log',
        label: 'Renamed',
        renotify_minutes: 15,
        throttle_flip_count: 3,
      });
      const toggled = await req('POST', `/api/alerts/${a.body.id}/toggle`, admin);
      expect(toggled.status).toBe(200);
      expect(toggled.body.enabled).toBe(false);
      expect((await req('DELETE', `/api/alerts/${a.body.id}`, admin)).body).toEqual({
        deleted: true,
      });
      for (const [method, path] of [
        ['GET', `/api/alerts/${a.body.id}`],
        ['PUT', `/api/alerts/${a.body.id}`],
        ['DELETE', `/api/alerts/${a.body.id}`],
        ['POST', `/api/alerts/${a.body.id}/toggle`],
      ] as const) {
        const res = await req(method, path, admin, method === 'PUT' ? { label: 'x' } : undefined);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'Alert not found' });
      }
    });

    it('needs permission alerts', async () => {
      const res = await req('GET', '/api/alerts', nobody);
      expect(res.body).toEqual(DENIED);
    });

    it('a tag-restricted caller scopes only inside their tags (403 naming the axis); lists are class-wide', async () => {
      const global = await req('POST', '/api/alerts', east, alertBody());
      expect(global.status).toBe(403);
      expect(global.body.error).toMatch(/tags/);
      const west = await req(
        'POST',
        '/api/alerts',
        east,
        alertBody({ scope: 'device', scope_id: westDevice }),
      );
      expect(west.status).toBe(403);
      expect(west.body).toEqual({
        error: 'You may only scope an alert to a device inside your tags.',
      });
      const tag = await req(
        'POST',
        '/api/alerts',
        east,
        alertBody({ scope: 'tag', scope_id: 'west' }),
      );
      expect(tag.status).toBe(403);
      expect(tag.body).toEqual({ error: 'You may only scope an alert to a tag inside your tags.' });
      const ok = await req(
        'POST',
        '/api/alerts',
        east,
        alertBody({ scope: 'tag', scope_id: 'east' }),
      );
      expect(ok.status).toBe(201);
      const theirs = (await req('GET', '/api/alerts', east)).body as unknown[];
      const all = (await req('GET', '/api/alerts', admin)).body as unknown[];
      expect(theirs).toEqual(all);
    });
  });

  // spec: part3 > Alerting > Alert classes
  it('classes carry parameters, variables and the default template', async () => {
    const res = await req('GET', '/api/alert-classes', admin);
    expect(res.status).toBe(200);
    const names = (res.body as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining(['syslog_log', 'event_log', 'eve_log', 'legacy_device_down']),
    );
    const syslog = (res.body as Record<string, any>[]).find((c) => c.name === 'syslog_log')!;
    expect(syslog.parameters.map((p: { name: string }) => p.name)).toEqual([
      'facility',
      'severity_ceiling',
      'contains',
      'combine_op',
      'invert',
      'occurrences_min',
      'lookback_minutes',
    ]);
    expect(
      syslog.parameters.find((p: { name: string }) => p.name === 'lookback_minutes'),
    ).toMatchObject({
      required: true,
      min: 1,
      max: 10080,
      default: 5,
    });
    expect(syslog.variables).toContainEqual({ slug: 'device_label', label: 'Device' });
    expect(syslog.default_email_template_id).toEqual(expect.any(Number));
    expect(syslog.default_email_template_label).toBe('Syslog alert');
  });

  // spec: part3 > Alerting > Email templates
  describe('email templates', () => {
    it('both lists answer the same; classes say restorable', async () => {
      const a = await req('GET', '/api/email-templates', admin);
      const b = await req('GET', '/api/alerts/templates', admin);
      expect(a.status).toBe(200);
      expect(a.body).toEqual(b.body);
      expect((a.body as { class: string }[]).map((t) => t.class)).toContain('legacy_device_down');
      const classes = await req('GET', '/api/email-templates/classes', admin);
      expect(classes.body).toContainEqual(
        expect.objectContaining({ name: 'eve_log', restorable: true }),
      );
    });

    it('PUT edits, restore brings back the seeded body, class cleared gives 422, 404 message', async () => {
      const list = (await req('GET', '/api/email-templates', admin)).body as Record<string, any>[];
      const t = list.find((x) => x.class === 'syslog_log')!;
      const edited = await req('PUT', `/api/email-templates/${t.id}`, admin, {
        email_template: '<p>changed</p>',
        description: 'mine',
      });
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({ email_template: '<p>changed</p>', description: 'mine' });
      const restored = await req('POST', `/api/email-templates/${t.id}/restore`, admin);
      expect(restored.status).toBe(200);
      expect(restored.body.email_template).toBe(t.email_template);
      expect(restored.body.alt_template).toBe(t.alt_template);
      const long = await req('PUT', `/api/email-templates/${t.id}`, admin, {
        description: 'x'.repeat(1025),
      });
      expect(long.status).toBe(400);
      expect(Object.keys(long.body.errors)).toEqual(['description']);
      const cleared = await req('PUT', `/api/email-templates/${t.id}`, admin, { class: '' });
      expect(cleared.body.class).toBeNull();
      const none = await req('POST', `/api/email-templates/${t.id}/restore`, admin);
      expect(none.status).toBe(422);
      expect(Object.keys(none.body)).toEqual(['error']);
      await req('PUT', `/api/email-templates/${t.id}`, admin, { class: 'syslog_log' });
      expect((await req('GET', '/api/email-templates/999999', admin)).body).toEqual({
        error: 'Template not found',
      });
    });
  });

  // spec: part3 > Alerting > Maintenance windows; Router configuration
  describe('maintenance windows and router configuration', () => {
    let legacyId: number;

    beforeAll(async () => {
      const created = await req('POST', '/api/legacy-alerts', admin, {
        tracker_kind: 'latency',
        tracker_id: 1,
        alert_type: 'device_down',
      });
      expect(created.status).toBe(201);
      legacyId = created.body.id;
      expect(created.body).toMatchObject({
        class: 'legacy_device_down',
        device_id: 1,
        active: true,
      });
      const again = await req('POST', '/api/legacy-alerts', admin, {
        tracker_kind: 'latency',
        tracker_id: 1,
        alert_type: 'device_down',
      });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(legacyId);
    });

    it('creates 201 and updates 200 {id}; the list is the short read shape; each unit needs its fields', async () => {
      const created = await req('POST', '/api/alerts/maintenance-windows', admin, {
        label: 'Patch Tuesday',
        recurrence_unit: 'dawom',
        maintenance_duration: 120,
        schedule_hour: 22,
        schedule_week: 2,
        schedule_month: 2,
        schedule_day: 9,
      });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      expect(created.body).toEqual({ id });
      const updated = await req('POST', '/api/alerts/maintenance-windows', admin, {
        id,
        label: 'Patch Tuesday',
        recurrence_unit: 'dawom',
        maintenance_duration: 180,
        schedule_hour: 22,
        schedule_week: 2,
        schedule_month: 5,
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id });
      const list = (await req('GET', '/api/alerts/maintenance-windows', admin)).body as unknown[];
      expect(list).toContainEqual({
        id,
        label: 'Patch Tuesday',
        hour: 22,
        day: 2,
        date: null,
        month: 5,
        unit: 'dawom',
        duration: 180,
      });
      for (const [body, field] of [
        [{ recurrence_unit: 'week' }, 'schedule_week'],
        [{ recurrence_unit: 'month' }, 'schedule_day'],
        [{ recurrence_unit: 'dawom', schedule_week: 1 }, 'schedule_month'],
        [{ recurrence_unit: 'year' }, 'recurrence_unit'],
        [{ recurrence_unit: 'day', schedule_hour: 24 }, 'schedule_hour'],
      ] as const) {
        const res = await req('POST', '/api/alerts/maintenance-windows', admin, {
          label: 'w',
          maintenance_duration: 60,
          schedule_hour: 1,
          ...body,
        });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(res.body.errors)).toContain(field);
      }
    });

    it('legacy windows: attach, detach, sync (replaces), 422 without ids or with unknown ones; delete detaches everywhere', async () => {
      const mk = async (label: string) =>
        (
          await req('POST', '/api/alerts/maintenance-windows', admin, {
            label,
            recurrence_unit: 'day',
            maintenance_duration: 30,
            schedule_hour: 3,
          })
        ).body.id as number;
      const w1 = await mk('nightly');
      const w2 = await mk('nightly-2');
      const base = `/api/alerts/legacy/${legacyId}/maintenance-windows`;
      expect(
        (await req('POST', `${base}/attach`, admin, { maintenance_window_ids: [w1, w2] })).body,
      ).toEqual({ message: 'Maintenance windows attached' });
      const windows = (await req('GET', base, admin)).body as { id: number }[];
      expect(windows.map((w) => w.id)).toEqual([w1, w2]);
      expect(windows[0]).toEqual({
        id: w1,
        label: 'nightly',
        recurrence_unit: 'day',
        maintenance_duration: 30,
        schedule_hour: 3,
        schedule_week: null,
        schedule_day: null,
        schedule_month: null,
      });
      await req('POST', `${base}/detach`, admin, { maintenance_window_ids: [w1] });
      expect(((await req('GET', base, admin)).body as { id: number }[]).map((w) => w.id)).toEqual([
        w2,
      ]);
      await req('POST', `${base}/sync`, admin, { maintenance_window_ids: [w1] });
      expect(((await req('GET', base, admin)).body as { id: number }[]).map((w) => w.id)).toEqual([
        w1,
      ]);
      const none = await req('POST', `${base}/sync`, admin, {});
      expect(none.status).toBe(422);
      expect(Object.keys(none.body)).toEqual(['errors']);
      const unknown = await req('POST', `${base}/attach`, admin, {
        maintenance_window_ids: [999999],
      });
      expect(unknown.status).toBe(422);
      expect(
        (await req('GET', '/api/alerts/legacy/999999/maintenance-windows', admin)).body,
      ).toEqual({ error: 'Alert not found' });
      const del = await req('POST', '/api/alerts/maintenance-windows/delete', admin, { id: w1 });
      expect(del.body).toEqual({ success: 'Maintenance window deleted' });
      expect((await req('GET', base, admin)).body).toEqual([]);
      expect(
        (await req('POST', '/api/alerts/maintenance-windows/delete', admin, { id: w1 })).status,
      ).toBe(404);
    });

    it('router configuration: defaults filled, values >= 0 and severity 1-5 (422 {errors}), 404', async () => {
      const a = await req('POST', '/api/alerts', admin, alertBody({ severity: 4 }));
      const path = `/api/alerts/modern/${a.body.id}/router-config`;
      expect((await req('GET', path, admin)).body).toEqual({
        renotify_minutes: 0,
        throttle_flip_count: 0,
        throttle_flip_window_minutes: 0,
        throttle_stable_minutes: 0,
        severity: 4,
      });
      for (const body of [
        { severity: 6 },
        { renotify_minutes: -1 },
        { throttle_stable_minutes: 'x' },
      ]) {
        const res = await req('POST', path, admin, body);
        expect(res.status).toBe(422);
        expect(Object.keys(res.body)).toEqual(['errors']);
      }
      const ok = await req('POST', path, admin, { severity: 2, renotify_minutes: 30 });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ message: expect.any(String) });
      expect((await req('GET', `/api/alerts/${a.body.id}`, admin)).body).toMatchObject({
        severity: 2,
        renotify_minutes: 30,
      });
      const legacy = await req('POST', `/api/alerts/legacy/${legacyId}/router-config`, admin, {
        throttle_flip_count: 4,
      });
      expect(legacy.status).toBe(200);
      expect(
        (await req('GET', `/api/alerts/legacy/${legacyId}/router-config`, admin)).body,
      ).toMatchObject({ throttle_flip_count: 4, severity: 3 });
      for (const p of [
        '/api/alerts/modern/999999/router-config',
        '/api/alerts/legacy/999999/router-config',
      ])
        expect((await req('GET', p, admin)).body).toEqual({ error: 'Alert not found' });
      expect((await req('GET', '/api/alerts/other/1/router-config', admin)).status).toBe(422);
    });

    it('the legacy catalogue is tag filtered (device 1 carries no east tag)', async () => {
      const all = (await req('GET', '/api/legacy-alerts', admin)).body as { id: number }[];
      expect(all.map((a) => a.id)).toContain(legacyId);
      expect((await req('GET', '/api/legacy-alerts', east)).body).toEqual([]);
      expect((await req('GET', `/api/alerts/legacy/${legacyId}/router-config`, east)).body).toEqual(
        { error: 'Alert not found' },
      );
    });
  });

  // spec: part3 > Alerting > Outlets (and the designed update, delete, send-test)
  describe('outlets', () => {
    it('creates with secrets masked and unknown keys dropped; o365 refused; duplicate name 409', async () => {
      const res = await req('POST', '/api/outlets', admin, {
        name: 'Ops webhook',
        type: 'webhook',
        config: {
          url: 'https://hooks.example.test/x',
          authorization_header: CANARY,
          headers: { 'X-Env': 'prod' },
          extra: 1,
        },
        rate_limit_per_min: 10,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'Ops webhook',
        type: 'webhook',
        enabled: true,
        rate_limit_per_min: 10,
        template: null,
        config: {
          url: 'https://hooks.example.test/x',
          authorization_header: { __encrypted__: true },
          headers: { 'X-Env': 'prod' },
        },
      });
      expect(res.body.config.extra).toBeUndefined();
      const stored = h.appliance.db
        .prepare('SELECT config, secret FROM outlets WHERE id = ?')
        .get(res.body.id) as { config: string; secret: string };
      expect(stored.config + stored.secret).not.toContain('canary');
      const o365 = await req('POST', '/api/outlets', admin, {
        name: 'old',
        type: 'o365',
        config: { url: 'https://x.test' },
      });
      expect(o365.status).toBe(400);
      expect(Object.keys(o365.body.errors)).toEqual(['type']);
      const dup = await req('POST', '/api/outlets', admin, {
        name: 'ops WEBHOOK',
        type: 'slack',
        config: { url: 'https://hooks.slack.test/a' },
      });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ error: 'An outlet with this name already exists.' });
      for (const body of [
        { name: 'r', type: 'email', config: { email: 'a@b.test' }, rate_limit_per_min: 0 },
        { name: 'r', type: 'email', config: { email: 'not an address' } },
        {
          name: 'r',
          type: 'webhook',
          config: { url: 'https://a.test', headers: { 'X-A': 'a\r\nInjected: 1' } },
        },
        { name: 'r', type: 'webhook', config: {} },
      ])
        expect((await req('POST', '/api/outlets', admin, body)).status, JSON.stringify(body)).toBe(
          400,
        );
    });

    it('a refused address is refused on create, update and send-test', async () => {
      for (const url of [
        'http://127.0.0.1/',
        'http://2130706433/',
        'http://0177.0.0.1/',
        'http://[::1]/',
        'http://169.254.169.254/latest',
        'http://0.0.0.0/',
        'http://[::ffff:127.0.0.1]/',
      ]) {
        const res = await req('POST', '/api/outlets', admin, {
          name: `bad ${url}`,
          type: 'webhook',
          config: { url },
        });
        expect(res.status, url).toBe(400);
        expect(Object.keys(res.body.errors)).toEqual(['config.url']);
      }
      const o = await req('POST', '/api/outlets', admin, {
        name: 'Teams',
        type: 'teams',
        config: { url: 'https://teams.example.test/hook' },
      });
      const upd = await req('PUT', `/api/outlets/${o.body.id}`, admin, {
        config: { url: 'http://127.1/' },
      });
      expect(upd.status).toBe(400);
      // A row that holds a refused URL (written before a policy change) fails send-test.
      h.appliance.db
        .prepare('UPDATE outlets SET config = ? WHERE id = ?')
        .run(JSON.stringify({ url: 'http://127.0.0.1:9/' }), o.body.id);
      const test = await req('POST', `/api/outlets/${o.body.id}/send-test`, admin);
      expect(test.status).toBe(400);
      expect(delivery.tests).toHaveLength(0);
    });

    it('update keeps a masked secret on the sentinel, empty or omission, and replaces it on plaintext; delete; send-test', async () => {
      const o = await req('POST', '/api/outlets', admin, {
        name: 'Hook 2',
        type: 'webhook',
        config: { url: 'https://hooks.example.test/2', authorization_header: CANARY },
      });
      const engine = h.appliance.engines.find((e) => e.name === 'alerts') as AlertsEngine;
      const secretNow = () => {
        const row = h.appliance.db
          .prepare('SELECT * FROM outlets o LEFT JOIN outlet_templates t ON 0 WHERE o.id = ?')
          .get(o.body.id) as never;
        return engine.service.target(row).config.authorization_header;
      };
      for (const kept of [{ __encrypted__: true }, '', undefined]) {
        const res = await req('PUT', `/api/outlets/${o.body.id}`, admin, {
          config: {
            url: 'https://hooks.example.test/2',
            ...(kept === undefined ? {} : { authorization_header: kept }),
          },
        });
        expect(res.status).toBe(200);
        expect(secretNow()).toBe(CANARY);
      }
      await req('PUT', `/api/outlets/${o.body.id}`, admin, {
        config: { url: 'https://hooks.example.test/2', authorization_header: 'Bearer new' },
      });
      expect(secretNow()).toBe('Bearer new');
      const test = await req('POST', `/api/outlets/${o.body.id}/send-test`, admin);
      expect(test.body).toEqual({ ok: true });
      expect(delivery.tests.at(-1)?.config.authorization_header).toBe('Bearer new');
      expect((await req('DELETE', `/api/outlets/${o.body.id}`, admin)).body).toEqual({
        deleted: true,
      });
      expect((await req('GET', `/api/outlets/${o.body.id}`, admin)).body).toEqual({
        error: 'Outlet not found',
      });
    });

    it('outlet templates: CRUD, 409 on a duplicate name, the outlet carries the trimmed template', async () => {
      const t = await req('POST', '/api/outlet-templates', admin, {
        name: 'slack-short',
        outlet_type: 'slack',
        label: 'Short Slack line',
        body: '{$alert_label} on {$device_label}',
      });
      expect(t.status).toBe(201);
      expect(
        (await req('POST', '/api/outlet-templates', admin, { ...t.body, id: undefined })).status,
      ).toBe(409);
      expect(
        (
          await req('POST', '/api/outlet-templates', admin, {
            name: 'x',
            outlet_type: 'o365',
            label: 'x',
            body: '',
          })
        ).status,
      ).toBe(400);
      const o = await req('POST', '/api/outlets', admin, {
        name: 'Slack ops',
        type: 'slack',
        config: { url: 'https://hooks.slack.test/ops' },
        template_id: t.body.id,
      });
      expect(o.body.template).toEqual({
        id: t.body.id,
        name: 'slack-short',
        outlet_type: 'slack',
        label: 'Short Slack line',
      });
      const missing = await req('POST', '/api/outlets', admin, {
        name: 'Slack 2',
        type: 'slack',
        config: { url: 'https://hooks.slack.test/2' },
        template_id: 999999,
      });
      expect(Object.keys(missing.body.errors)).toEqual(['template_id']);
      const upd = await req('PUT', `/api/outlet-templates/${t.body.id}`, admin, {
        ...t.body,
        id: undefined,
        label: 'Renamed',
      });
      expect(upd.body.label).toBe('Renamed');
      expect((await req('DELETE', `/api/outlet-templates/${t.body.id}`, admin)).body).toEqual({
        deleted: true,
      });
      expect((await req('GET', `/api/outlets/${o.body.id}`, admin)).body).toMatchObject({
        template_id: null,
        template: null,
      });
      expect((await req('GET', `/api/outlet-templates/${t.body.id}`, admin)).body).toEqual({
        error: 'Outlet template not found',
      });
    });

    it('system outlets are hidden from the list, readable by id, and read only', async () => {
      const id = Number(
        h.appliance.db
          .prepare(
            "INSERT INTO outlets (name, type, config, system, created_at, updated_at) VALUES ('System mail', 'email', '{\"email\":\"root@appliance.local\"}', 1, 0, 0)",
          )
          .run().lastInsertRowid,
      );
      const list = (await req('GET', '/api/outlets', admin)).body as { id: number }[];
      expect(list.map((o) => o.id)).not.toContain(id);
      expect(list.map((o) => o.id)).toEqual([...list.map((o) => o.id)].sort((a, b) => a - b));
      expect((await req('GET', `/api/outlets/${id}`, admin)).body.name).toBe('System mail');
      expect((await req('DELETE', `/api/outlets/${id}`, admin)).status).toBe(403);
    });
  });

  // designed: routing rules, history, device parents, device deletion
  describe('routing rules, history and device deletion', () => {
    it('rules are tag filtered; a restricted caller must anchor them inside their tags (403 naming the axis)', async () => {
      const outlet = await req('POST', '/api/outlets', admin, {
        name: 'Mail ops',
        type: 'email',
        config: { emails: ['ops@example.test'] },
      });
      const open = await req('POST', '/api/alert-routing-rules', admin, {
        label: 'Everything',
        outlet_ids: [outlet.body.id],
      });
      expect(open.status).toBe(201);
      expect(open.body).toMatchObject({
        label: 'Everything',
        enabled: true,
        outlet_ids: [outlet.body.id],
        tag_slugs: [],
        maintenance_window_ids: [],
      });
      const eastRule = await req('POST', '/api/alert-routing-rules', east, {
        label: 'East',
        tag_slugs: ['east'],
        outlet_ids: [outlet.body.id],
      });
      expect(eastRule.status).toBe(201);
      expect(
        (
          await req('POST', '/api/alert-routing-rules', east, {
            label: 'x',
            outlet_ids: [outlet.body.id],
          })
        ).status,
      ).toBe(403);
      const west = await req('POST', '/api/alert-routing-rules', east, {
        label: 'x',
        tag_slugs: ['west'],
        outlet_ids: [outlet.body.id],
      });
      expect(west.body).toEqual({ error: 'You may only route tags inside your tags.' });
      const westDev = await req('POST', '/api/alert-routing-rules', east, {
        label: 'x',
        device_ids: [westDevice],
        outlet_ids: [outlet.body.id],
      });
      expect(westDev.body).toEqual({ error: 'You may only route devices inside your tags.' });
      expect(
        ((await req('GET', '/api/alert-routing-rules', east)).body as { id: number }[]).map(
          (r) => r.id,
        ),
      ).toEqual([eastRule.body.id]);
      expect((await req('GET', `/api/alert-routing-rules/${open.body.id}`, east)).body).toEqual({
        error: 'Routing rule not found',
      });
      const badOutlet = await req('POST', '/api/alert-routing-rules', admin, {
        label: 'x',
        outlet_ids: [999999],
      });
      expect(badOutlet.status).toBe(400);
      expect((await req('DELETE', `/api/alert-routing-rules/${open.body.id}`, admin)).body).toEqual(
        { deleted: true },
      );
    });

    it('device parents: set, read, no loops, cleared with null', async () => {
      const path = `/api/alert-dependencies/${eastDevice}`;
      expect((await req('POST', path, admin, { parent_id: westDevice })).body).toEqual({
        device_id: eastDevice,
        parent_id: westDevice,
      });
      const loop = await req('POST', `/api/alert-dependencies/${westDevice}`, admin, {
        parent_id: eastDevice,
      });
      expect(loop.status).toBe(400);
      expect((await req('POST', path, admin, { parent_id: null })).body).toEqual({
        device_id: eastDevice,
        parent_id: null,
      });
    });

    it('deleting a device disables its device-scoped alerts (scope kept) and keeps history', async () => {
      const doomed = await device('doomed', []);
      const a = await req(
        'POST',
        '/api/alerts',
        admin,
        alertBody({ scope: 'device', scope_id: doomed }),
      );
      h.appliance.db
        .prepare(
          "INSERT INTO alert_occurrences (source, alert_id, alert_label, alert_class, severity, device_id, device_label, opened_at) VALUES ('modern', ?, 'Disk errors', 'syslog_log', 3, ?, 'doomed', 1)",
        )
        .run(a.body.id, doomed);
      const del = await h.request('DELETE', `/api/device/${doomed}`, { token: admin });
      expect(del.status).toBe(200);
      const after = (await req('GET', `/api/alerts/${a.body.id}`, admin)).body;
      expect(after).toMatchObject({
        enabled: false,
        scope: 'device',
        scope_id: String(doomed),
        disabled_reason: 'device_deleted',
      });
      const history = (await req('GET', `/api/alerts/history?alert_id=${a.body.id}`, admin))
        .body as Record<string, unknown>[];
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({
        device_id: doomed,
        device_label: 'doomed',
        alert_label: 'Disk errors',
        notifications: [],
      });
    });
  });

  it("the history carries each notification's delivery status, attempts, error and rate delay", async () => {
    const db = h.appliance.db;
    const occ = db
      .prepare(
        "INSERT INTO alert_occurrences (source, alert_id, alert_label, alert_class, severity, opened_at) VALUES ('modern', 987654, 'Ledger probe', 'syslog_log', 2, 1000)",
      )
      .run().lastInsertRowid;
    const delivery = db
      .prepare(
        `INSERT INTO alert_deliveries (outlet_id, outlet_name, outlet_type, occurrence_id, alert_label,
           severity, notification, target_sealed, status, attempts, created_at, sent_at, error,
           rate_delay_ms)
         VALUES (1, 'ops', 'webhook', ?, 'Ledger probe', 2, '{}', 'x', 'failed', 3, 1000, NULL,
           'HTTP 500 from the receiver', 60000)`,
      )
      .run(occ).lastInsertRowid;
    const note = db.prepare(
      'INSERT INTO alert_notifications (occurrence_id, outlet_id, outlet_name, delivery_id, suppressed_by, queued_at) VALUES (?, ?, ?, ?, ?, 1000)',
    );
    note.run(occ, 1, 'ops', delivery, null);
    note.run(occ, 2, 'mail', null, 'Patch night');
    const history = (await req('GET', '/api/alerts/history?alert_id=987654', admin)).body;
    expect(history[0].notifications).toEqual([
      expect.objectContaining({
        outlet_name: 'ops',
        delivery_id: Number(delivery),
        status: 'failed',
        attempts: 3,
        error: 'HTTP 500 from the receiver',
        rate_delay_ms: 60000,
        sent_at: null,
      }),
      expect.objectContaining({
        outlet_name: 'mail',
        delivery_id: null,
        suppressed_by: 'Patch night',
        status: null,
        attempts: null,
        error: null,
        rate_delay_ms: null,
      }),
    ]);
  });
});
