/**
 * Tag scoping on every device-anchored endpoint of the devices, dashboards and walks routes
 * (spec part 1 > General conventions 8; part 2: "Tag scoping applies to every device-anchored
 * endpoint"; Errors: "Out-of-scope and missing device-anchored records both return 404").
 * A user restricted to `site-a` gets for a `site-b` device exactly the answer of a missing one,
 * sees only in-scope rows in lists, and can never move a device out of their own view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAppliance,
  type Harness,
  type RequestOptions,
  type Response,
} from '../../../../test/harness/appliance.js';

const MISSING = 987_654;

describe('tag scoping of device-anchored endpoints', () => {
  let h: Harness;
  let admin: string;
  let restricted: string;
  let inScope: number;
  let outOfScope: number;
  let pendingIn: number;
  let pendingOut: number;

  const req = async <T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const res = await h.request<T>(method, path, options);
    expect(res.text).not.toMatch(/\n\s+at |node_modules|\.[jt]s:\d+|"stack"/);
    return res;
  };
  const asAdmin = (method: string, path: string, body?: unknown) =>
    req(method, path, { token: admin, body });
  const asRestricted = (method: string, path: string, body?: unknown) =>
    req(method, path, { token: restricted, body });

  /** The same request for an out-of-scope id and a missing id must answer identically. */
  const sameAsMissing = async (name: string, call: (id: number) => Promise<Response>) => {
    const out = await call(outOfScope);
    const missing = await call(MISSING);
    expect({ status: out.status, body: out.body }, name).toEqual({
      status: missing.status,
      body: missing.body,
    });
    return out;
  };

  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
    const device = async (ip: string, tag: string) =>
      (
        await asAdmin('POST', '/api/device/set', {
          ip_address: ip,
          label: `dev-${tag}`,
          profile: 'dash_generic',
          tags: [tag],
        })
      ).body.device.id as number;
    inScope = await device('127.0.4.1', 'site-a');
    outOfScope = await device('127.0.4.2', 'site-b');
    restricted = (await h.userWith(['devices', 'write_devices', 'tools'], { tags: ['site-a'] }))
      .token;
    const now = Date.now();
    const db = h.appliance.db;
    for (const id of [inScope, outOfScope]) {
      db.prepare(
        `INSERT INTO interface_trackers (device_id, interface, name, last_seen_at, created_at, updated_at) VALUES (?, 1, 'eth0', ?, ?, ?)`,
      ).run(id, now, now, now);
      db.prepare(
        `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (?, ?, 'crawl', 0, 1, '[]')`,
      ).run(id, now);
      db.prepare(
        `INSERT INTO device_layouts (user_id, device_id, layouts, updated_at) VALUES ((SELECT max(id) FROM users), ?, '{}', ?)`,
      ).run(id, now);
    }
    const pending = (ip: string, tag: string) => {
      const id = Number(
        db
          .prepare(
            `INSERT INTO pending_devices (label, ip_address, profile, source, first_seen_at, last_seen_at) VALUES ('p', ?, 'dash_generic', 'agent', ?, ?)`,
          )
          .run(ip, now, now).lastInsertRowid,
      );
      db.prepare(
        `INSERT INTO pending_device_tags (pending_id, tag_id) SELECT ?, id FROM tags WHERE slug = ?`,
      ).run(id, tag);
      return id;
    };
    pendingIn = pending('127.0.4.11', 'site-a');
    pendingOut = pending('127.0.4.12', 'site-b');
    pending('127.0.4.13', 'site-b');
  });
  afterAll(() => h?.close());

  it('lists show only in-scope rows', async () => {
    expect(
      (await asRestricted('GET', '/api/devices')).body.devices.map((d: { id: number }) => d.id),
    ).toEqual([inScope]);
    expect((await asRestricted('GET', '/api/devices?tag=site-b')).body.devices).toEqual([]);
    expect((await asRestricted('GET', '/api/devices/status')).body.devices.id).toEqual([inScope]);
    expect(
      (await asRestricted('GET', '/api/tags')).body.tags.map((t: { slug: string }) => t.slug),
    ).toEqual(['site-a']);
    expect(
      (await asRestricted('POST', '/api/getDevicesPending')).body.devices.map(
        (d: { id: number }) => d.id,
      ),
    ).toEqual([pendingIn]);
    // The unrestricted super-admin sees everything.
    expect(
      (await asAdmin('GET', '/api/devices')).body.devices.map((d: { id: number }) => d.id),
    ).toEqual(expect.arrayContaining([1, inScope, outOfScope]));
    expect((await asAdmin('GET', '/api/devices/status')).body.devices.id).toEqual(
      expect.arrayContaining([1, inScope, outOfScope]),
    );
    expect((await asAdmin('POST', '/api/getDevicesPending')).body.devices).toHaveLength(3);
  });

  it('device inventory endpoints answer an out-of-scope device exactly like a missing one', async () => {
    expect(
      (await sameAsMissing('get', (id) => asRestricted('GET', `/api/device/${id}`))).status,
    ).toBe(404);
    expect((await asRestricted('GET', `/api/device/${inScope}`)).status).toBe(200);
    expect(
      (await sameAsMissing('stats', (id) => asRestricted('GET', `/api/device/${id}/stats`))).status,
    ).toBe(404);
    expect((await asRestricted('GET', `/api/device/${inScope}/stats`)).status).toBe(200);
    expect(
      (await sameAsMissing('recrawl', (id) => asRestricted('POST', `/api/device/${id}/recrawl`)))
        .status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('testSnmp', (id) =>
          asRestricted('POST', '/api/testSnmp', {
            ip: '127.0.0.1',
            snmpconfig: { snmp_community: 'x', snmp_port: 9 },
            device_id: id,
          }),
        )
      ).status,
    ).toBe(404);
    const update = (id: number) =>
      asRestricted('POST', '/api/device/set', {
        id,
        ip_address: '127.0.4.99',
        label: 'x',
        profile: 'dash_generic',
        tags: ['site-a'],
      });
    expect((await sameAsMissing('device/set update', update)).body).toEqual({
      status: 422,
      errors: { id: ['The selected id is invalid.'] },
    });
    expect(
      (await sameAsMissing('delete', (id) => asRestricted('DELETE', `/api/device/${id}`))).body,
    ).toEqual({ status: 500, message: 'Device not found' });
    expect(
      (
        await sameAsMissing('deleteDevice', (id) =>
          asRestricted('POST', '/api/deleteDevice', { device: id }),
        )
      ).status,
    ).toBe(404);
    expect(
      h.appliance.db.prepare('SELECT 1 FROM devices WHERE id = ?').get(outOfScope),
    ).toBeDefined();
  });

  it('tag endpoints answer an out-of-scope device exactly like a missing one', async () => {
    expect(
      (await sameAsMissing('tags', (id) => asRestricted('GET', `/api/device/${id}/tags`))).status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('add tags', (id) =>
          asRestricted('POST', `/api/device/${id}/tags`, { tags: [{ slug: 'site-a' }] }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('remove tags', (id) =>
          asRestricted('DELETE', `/api/device/${id}/tags`, { tags: [{ slug: 'site-b' }] }),
        )
      ).status,
    ).toBe(404);
    expect((await asRestricted('GET', `/api/device/${inScope}/tags`)).body.tags).toEqual([
      { name: 'site-a', slug: 'site-a', type: 'device' },
    ]);
  });

  it('walk endpoints answer an out-of-scope device exactly like a missing one', async () => {
    expect(
      (await sameAsMissing('walk', (id) => asRestricted('POST', `/api/getSNMPWalkInfo/${id}`)))
        .body,
    ).toEqual({ status: false, message: 'Invalid device specified' });
    expect(
      (await sameAsMissing('last walk', (id) => asRestricted('GET', `/api/getLastWalk/${id}`)))
        .body,
    ).toEqual({ status: false, message: 'Invalid device specified' });
    expect((await asRestricted('GET', `/api/getLastWalk/${inScope}`)).body).toMatchObject({
      status: 201,
      walk: { device_id: inScope },
    });
  });

  it('dashboard endpoints answer an out-of-scope device exactly like a missing one', async () => {
    expect(
      (
        await sameAsMissing('trackers', (id) =>
          asRestricted('GET', `/api/getDeviceTrackers?deviceId=${id}`),
        )
      ).status,
    ).toBe(422);
    expect((await asRestricted('GET', `/api/getDeviceTrackers?deviceId=${inScope}`)).status).toBe(
      200,
    );
    expect(
      (
        await sameAsMissing('layouts', (id) =>
          asRestricted('POST', '/api/setDeviceLayouts', { deviceId: id, layouts: {} }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('pinned', (id) =>
          asRestricted('POST', '/api/setDevicePinnedWidgets', { deviceId: id, pinnedWidgets: [] }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('delete layouts', (id) =>
          asRestricted('POST', '/api/deleteDeviceLayouts', { deviceId: id }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await sameAsMissing('widget', (id) =>
          asRestricted('POST', '/api/addWidgetToDash', {
            dashboardName: 'd',
            widget: { widgetId: 1, deviceId: id },
          }),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await asRestricted('POST', '/api/addWidgetToDash', {
          dashboardName: 'd',
          widget: { widgetId: 1, deviceId: inScope },
        })
      ).status,
    ).toBe(201);
    expect(
      h.appliance.db
        .prepare('SELECT count(*) AS n FROM device_layouts WHERE device_id = ?')
        .get(outOfScope),
    ).toEqual({ n: 1 });
  });

  it('pending endpoints answer an out-of-scope row exactly like a missing one', async () => {
    const sameAsMissingPending = async (name: string, call: (id: number) => Promise<Response>) => {
      const out = await call(pendingOut);
      const missing = await call(MISSING);
      expect({ status: out.status, body: out.body }, name).toEqual({
        status: missing.status,
        body: missing.body,
      });
      expect(out.status, name).toBe(404);
    };
    await sameAsMissingPending('import', (id) =>
      asRestricted('POST', '/api/importPending', { id }),
    );
    await sameAsMissingPending('hide', (id) =>
      asRestricted('POST', '/api/hidePendingDevice', { id }),
    );
    await sameAsMissingPending('remove', (id) =>
      asRestricted('POST', '/api/removePendingDevice', { id }),
    );
    await sameAsMissingPending('field', (id) =>
      asRestricted('POST', '/api/updatePendingDeviceField', { id, field: 'label', value: 'x' }),
    );
    await sameAsMissingPending('tags', (id) =>
      asRestricted('POST', '/api/updatePendingDeviceTags', { id, tags: ['site-a'] }),
    );
    expect(
      h.appliance.db
        .prepare('SELECT label, hidden FROM pending_devices WHERE id = ?')
        .get(pendingOut),
    ).toEqual({ label: 'p', hidden: 0 });
    expect(
      (
        await asRestricted('POST', '/api/updatePendingDeviceField', {
          id: pendingIn,
          field: 'label',
          value: 'mine',
        })
      ).status,
    ).toBe(201);
  });

  it('a restricted writer names only their own tags and always keeps one on a device', async () => {
    const create = (tags?: unknown[]) =>
      asRestricted('POST', '/api/device/set', {
        ip_address: '127.0.4.50',
        label: 'mine',
        profile: 'dash_generic',
        ...(tags ? { tags } : {}),
      });
    expect((await create()).body).toEqual({
      status: 422,
      errors: { tags: ['A tag-restricted user must give the device at least one of their tags.'] },
    });
    expect((await create(['site-b'])).body).toEqual({
      status: 422,
      errors: { tags: ['The tag site-b is outside your tag scope.'] },
    });
    expect((await create(['brand-new-tag'])).body).toEqual({
      status: 422,
      errors: { tags: ['The tag brand-new-tag is outside your tag scope.'] },
    });
    expect(
      h.appliance.db.prepare(`SELECT 1 FROM tags WHERE slug = 'brand-new-tag'`).get(),
    ).toBeUndefined();
    const created = await create(['site-a']);
    expect(created.status).toBe(200);
    const mine = created.body.device.id as number;

    // A tag outside the writer's scope, put there by an administrator, survives their writes.
    await asAdmin('POST', `/api/device/${mine}/tags`, { tags: [{ slug: 'site-b' }] });
    const update = (tags: unknown[]) =>
      asRestricted('POST', '/api/device/set', {
        id: mine,
        ip_address: '127.0.4.50',
        label: 'mine',
        profile: 'dash_generic',
        tags,
      });
    expect((await update([])).body).toEqual({
      status: 422,
      errors: {
        tags: ['A tag-restricted user must leave at least one of their own tags on a device.'],
      },
    });
    expect(
      (await update(['site-a'])).body.device.tags.map((t: { slug: string }) => t.slug),
    ).toEqual(['site-a', 'site-b']);
    expect(
      (await asRestricted('POST', `/api/device/${mine}/tags`, { tags: [{ slug: 'site-b' }] })).body,
    ).toEqual({ status: false, errors: { tags: ['The tag site-b is outside your tag scope.'] } });
    expect(
      (await asRestricted('DELETE', `/api/device/${mine}/tags`, { tags: [{ slug: 'site-a' }] }))
        .body,
    ).toEqual({
      status: false,
      errors: {
        tags: ['A tag-restricted user must leave at least one of their own tags on a device.'],
      },
    });
    expect(
      (
        await asRestricted('POST', '/api/updatePendingDeviceTags', {
          id: pendingIn,
          tags: ['site-b'],
        })
      ).body,
    ).toEqual({
      status: false,
      hasError: true,
      message: 'The tag site-b is outside your tag scope.',
    });
    expect((await asRestricted('DELETE', `/api/device/${mine}`)).body).toEqual({
      status: 200,
      message: 'Device deleted',
    });
  });

  it("an address held by a device outside the caller's scope is refused with a text naming no device", async () => {
    const GENERIC = { status: 409, message: 'This IP address cannot be used.' };
    const set = (body: Record<string, unknown>) =>
      asRestricted('POST', '/api/device/set', {
        label: 'probe',
        profile: 'dash_generic',
        tags: ['site-a'],
        ...body,
      });
    const devicesBefore = (
      h.appliance.db.prepare('SELECT count(*) AS n FROM devices').get() as { n: number }
    ).n;
    // Create: the holder is out of scope (IPv6-mapped and canonical spellings alike).
    const out = await set({ ip_address: '127.0.4.2' });
    expect(out.status).toBe(409);
    expect(out.body).toEqual(GENERIC);
    expect(out.text).not.toContain('127.0.4.2');
    // In scope: the caller may see the holder, so the address is named as before.
    expect((await set({ ip_address: '127.0.4.1' })).body).toEqual({
      status: 409,
      message: 'A device with the IP address 127.0.4.1 already exists.',
    });
    // Update: moving an own device onto the out-of-scope holder's address.
    const own = await set({ ip_address: '127.0.4.60' });
    expect(own.status).toBe(200);
    const ownId = own.body.device.id as number;
    expect((await set({ id: ownId, ip_address: '127.0.4.2' })).body).toEqual(GENERIC);
    expect(
      (
        h.appliance.db.prepare('SELECT ip_address FROM devices WHERE id = ?').get(ownId) as {
          ip_address: string;
        }
      ).ip_address,
    ).toBe('127.0.4.60');
    // An unrestricted caller still reads which address is taken.
    expect(
      (
        await asAdmin('POST', '/api/device/set', {
          ip_address: '127.0.4.2',
          label: 'dup',
          profile: 'dash_generic',
        })
      ).body,
    ).toEqual({ status: 409, message: 'A device with the IP address 127.0.4.2 already exists.' });
    // Importing an in-scope pending row whose address an out-of-scope device holds.
    const now = Date.now();
    const db = h.appliance.db;
    const pendingId = Number(
      db
        .prepare(
          `INSERT INTO pending_devices (label, ip_address, profile, source, first_seen_at, last_seen_at) VALUES ('p', '127.0.4.2', 'dash_generic', 'agent', ?, ?)`,
        )
        .run(now, now).lastInsertRowid,
    );
    db.prepare(
      `INSERT INTO pending_device_tags (pending_id, tag_id) SELECT ?, id FROM tags WHERE slug = 'site-a'`,
    ).run(pendingId);
    expect((await asRestricted('POST', '/api/importPending', { id: pendingId })).body).toEqual({
      status: false,
      hasError: true,
      message: 'This IP address cannot be used.',
    });
    db.prepare('DELETE FROM pending_devices WHERE id = ?').run(pendingId);
    await asRestricted('DELETE', `/api/device/${ownId}`);
    expect((db.prepare('SELECT count(*) AS n FROM devices').get() as { n: number }).n).toBe(
      devicesBefore,
    );
  });
});
