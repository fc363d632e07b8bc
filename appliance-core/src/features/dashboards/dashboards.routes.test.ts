/**
 * HTTP-level tests of dashboards and layouts (spec part 2 > Dashboards and layouts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const INVALID = { error: 'Invalid parameter' };

describe('dashboards and layouts (shared appliance)', () => {
  let h: Harness;
  let admin: string;
  let viewer: { id: number; token: string };
  let plain: { id: number; token: string };
  let deviceId: number;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const post = (path: string, token: string, body: unknown) => req('POST', path, { token, body });

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    viewer = await h.userWith(['devices']);
    plain = await h.userWith([]);
    const created = await post('/api/device/set', admin, {
      ip_address: '127.0.3.1',
      label: 'dash-dev',
      profile: 'dash_generic',
    });
    deviceId = created.body.device.id;
  });
  afterAll(() => h?.close());

  // spec: part2 > Dashboards and layouts > GET /api/getDashboards; POST /api/setDashboards
  it('starts empty for a new user and keeps each user’s dashboards apart', async () => {
    expect((await req('GET', '/api/getDashboards', { token: plain.token })).body).toEqual({
      dashboards: {},
      layouts: {},
    });
    const dashboards = { Main: [{ widgetId: 2, trackerId: 7, title: '<b>core</b>' }], Empty: [] };
    const layouts = { Main: { lg: [{ i: 'a', x: 0, y: 0, w: 6, h: 4 }] } };
    const saved = await post('/api/setDashboards', plain.token, { dashboards, layouts });
    expect(saved.status).toBe(201);
    expect(saved.body).toEqual({ message: 'Dashboards saved' });
    expect((await req('GET', '/api/getDashboards', { token: plain.token })).body).toEqual({
      dashboards,
      layouts,
    });
    expect((await req('GET', '/api/getDashboards', { token: viewer.token })).body).toEqual({
      dashboards: {},
      layouts: {},
    });
  });

  it('refuses bodies that are not two objects with 422 {message, errors}', async () => {
    const cases: [unknown, Record<string, string[]>][] = [
      [{ layouts: {} }, { dashboards: ['The dashboards field is required.'] }],
      [{ dashboards: {} }, { layouts: ['The layouts field is required.'] }],
      [
        { dashboards: [], layouts: {} },
        { dashboards: ['The dashboards field must be an object.'] },
      ],
      [{ dashboards: {}, layouts: 'x' }, { layouts: ['The layouts field must be an object.'] }],
    ];
    for (const [body, errors] of cases) {
      const res = await post('/api/setDashboards', plain.token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body, JSON.stringify(body)).toEqual({
        message: Object.values(errors)[0]![0],
        errors,
      });
    }
    expect((await req('GET', '/api/getDashboards')).status).toBe(401);
  });

  // spec: part2 > Dashboards and layouts > POST /api/addWidgetToDash
  it('adds a widget, creating the dashboard when missing: 201 {status: "success"}', async () => {
    const first = await post('/api/addWidgetToDash', viewer.token, {
      dashboardName: 'Ops',
      widget: { widgetId: 3, trackerId: 11, note: 'kept' },
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ status: 'success' });
    await post('/api/addWidgetToDash', viewer.token, {
      dashboardName: 'Ops',
      widget: { widgetId: 1, deviceId },
    });
    await post('/api/setDashboards', viewer.token, {
      dashboards: {
        ...(await req('GET', '/api/getDashboards', { token: viewer.token })).body.dashboards,
        Grid: { widgets: [] },
      },
      layouts: { Ops: { x: 1 } },
    });
    await post('/api/addWidgetToDash', viewer.token, {
      dashboardName: 'Grid',
      widget: { widgetId: 4 },
    });
    const got = (await req('GET', '/api/getDashboards', { token: viewer.token })).body;
    expect(got).toEqual({
      dashboards: {
        Ops: [
          { widgetId: 3, trackerId: 11, note: 'kept' },
          { widgetId: 1, deviceId },
        ],
        Grid: { widgets: [{ widgetId: 4 }] },
      },
      layouts: { Ops: { x: 1 } },
    });
  });

  it('answers 400 {error: "Invalid parameter"} for any bad request, changing nothing', async () => {
    const before = (await req('GET', '/api/getDashboards', { token: viewer.token })).body;
    await post('/api/setDashboards', viewer.token, {
      dashboards: { ...before.dashboards, Odd: 'text' },
      layouts: before.layouts,
    });
    const snapshot = (await req('GET', '/api/getDashboards', { token: viewer.token })).body;
    for (const body of [
      {},
      { dashboardName: 'Ops' },
      { dashboardName: '', widget: { widgetId: 1 } },
      { dashboardName: 'x'.repeat(256), widget: { widgetId: 1 } },
      { dashboardName: 7, widget: { widgetId: 1 } },
      { dashboardName: 'Ops', widget: { widgetId: 0 } },
      { dashboardName: 'Ops', widget: { widgetId: 1.5 } },
      { dashboardName: 'Ops', widget: { widgetId: '2' } },
      { dashboardName: 'Ops', widget: [1] },
      { dashboardName: 'Ops', widget: { widgetId: 1, deviceId: 999_999 } },
      { dashboardName: 'Odd', widget: { widgetId: 1 } },
    ]) {
      const res = await post('/api/addWidgetToDash', viewer.token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toEqual(INVALID);
    }
    expect((await req('GET', '/api/getDashboards', { token: viewer.token })).body).toEqual(
      snapshot,
    );
    expect(
      (
        await post('/api/addWidgetToDash', plain.token, {
          dashboardName: 'x',
          widget: { widgetId: 1 },
        })
      ).body,
    ).toEqual(DENIED);
  });

  // spec: part2 > Dashboards and layouts > GET /api/getDeviceTrackers
  it('answers 204 without trackers, then the trackers as widgets with the saved layout and pinned widgets', async () => {
    const none = await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, {
      token: viewer.token,
    });
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
    const now = Date.now();
    const db = h.appliance.db;
    const iface = Number(
      db
        .prepare(
          `INSERT INTO interface_trackers (device_id, interface, name, last_seen_at, created_at, updated_at) VALUES (?, 3, 'eth1', ?, ?, ?)`,
        )
        .run(deviceId, now, now, now).lastInsertRowid,
    );
    const disk = Number(
      db
        .prepare(
          `INSERT INTO disk_trackers (device_id, name, storage_index, freespace_oid, created_at, updated_at) VALUES (?, '/var', 5, '1.3.6.1.2.1.25.2.3.1.6.5', ?, ?)`,
        )
        .run(deviceId, now, now).lastInsertRowid,
    );
    const res = await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, {
      token: viewer.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      hasError: false,
      trackers: [
        { trackerId: iface, trackerTable: 'interfaces', widgetId: 2, w: 6, h: 4 },
        { trackerId: disk, trackerTable: 'disks', widgetId: 3, w: 4, h: 3 },
      ],
      layouts: {},
      pinnedWidgets: [],
    });
    await post('/api/setDeviceLayouts', viewer.token, {
      deviceId,
      layouts: { lg: [{ i: String(iface), x: 0, y: 0, w: 6, h: 4 }] },
    });
    await post('/api/setDevicePinnedWidgets', viewer.token, { deviceId, pinnedWidgets: [iface] });
    const saved = await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, {
      token: viewer.token,
    });
    expect(saved.body).toMatchObject({
      layouts: { lg: [{ i: String(iface), x: 0, y: 0, w: 6, h: 4 }] },
      pinnedWidgets: [iface],
    });
    // Layouts are per user.
    expect(
      (await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, { token: admin })).body,
    ).toMatchObject({ layouts: {}, pinnedWidgets: [] });
  });

  it('answers 422 {message, errors} when deviceId is missing, malformed or names no device', async () => {
    const cases: [string, string][] = [
      ['', 'The deviceId field is required.'],
      ['?deviceId=abc', 'The deviceId field must be an integer.'],
      ['?deviceId=999999', 'The selected device id is invalid.'],
    ];
    for (const [query, message] of cases) {
      const res = await req('GET', `/api/getDeviceTrackers${query}`, { token: viewer.token });
      expect(res.status, query).toBe(422);
      expect(res.body, query).toEqual({ message, errors: { deviceId: [message] } });
    }
    expect(
      (await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, { token: plain.token }))
        .body,
    ).toEqual(DENIED);
  });

  // spec: part2 > Dashboards and layouts > setDeviceLayouts, setDevicePinnedWidgets, deleteDeviceLayouts
  it('saves, pins and deletes device layouts: 201 {hasError: false, message}; 404 when none saved; 400 when deviceId is missing', async () => {
    const set = await post('/api/setDeviceLayouts', viewer.token, {
      deviceId,
      layouts: { md: [] },
    });
    expect(set.status).toBe(201);
    expect(set.body).toEqual({ hasError: false, message: 'Device layout saved' });
    const pin = await post('/api/setDevicePinnedWidgets', viewer.token, {
      deviceId,
      pinnedWidgets: { top: [1, 2] },
    });
    expect(pin.status).toBe(201);
    expect(pin.body).toEqual({ hasError: false, message: 'Pinned widgets saved' });
    const deleted = await post('/api/deleteDeviceLayouts', viewer.token, { deviceId });
    expect(deleted.status).toBe(201);
    expect(deleted.body).toEqual({ hasError: false, message: 'Device layout deleted' });
    // The pinned widgets stay; the layout is gone.
    expect(
      (await req('GET', `/api/getDeviceTrackers?deviceId=${deviceId}`, { token: viewer.token }))
        .body,
    ).toMatchObject({ layouts: {}, pinnedWidgets: { top: [1, 2] } });
    const again = await post('/api/deleteDeviceLayouts', viewer.token, { deviceId });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({
      status: false,
      hasError: true,
      message: 'No saved layout for this device',
    });

    for (const [path, body, message] of [
      ['/api/setDeviceLayouts', { layouts: {} }, 'The deviceId field is required.'],
      ['/api/setDeviceLayouts', { deviceId }, 'The layouts field is required.'],
      [
        '/api/setDevicePinnedWidgets',
        { deviceId: 'x', pinnedWidgets: [] },
        'The deviceId field must be an integer.',
      ],
      ['/api/deleteDeviceLayouts', {}, 'The deviceId field is required.'],
    ] as const) {
      const res = await post(path, viewer.token, body);
      expect(res.status, path).toBe(400);
      expect(res.body, path).toEqual({ status: false, hasError: true, message });
    }
    for (const path of [
      '/api/setDeviceLayouts',
      '/api/setDevicePinnedWidgets',
      '/api/deleteDeviceLayouts',
    ]) {
      const res = await post(path, viewer.token, {
        deviceId: 999_999,
        layouts: {},
        pinnedWidgets: [],
      });
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual({
        status: false,
        hasError: true,
        message: 'Device not found',
      });
    }
  });
});
