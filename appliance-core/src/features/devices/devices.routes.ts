/**
 * Device inventory, tags and profiles (spec part 2 > Device inventory; Tags and profiles).
 * Every device-anchored route answers a missing and an out-of-scope device alike.
 */
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, anyOf, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { defineRoute, ERROR_PRESETS } from '../../platform/http/define-route.js';
import {
  legacy200,
  MessageBody,
  StatusCodeBody,
  StatusMessageBody,
  FalseErrorsBody,
  LegacyStatusBody,
} from '../../platform/http/schemas.js';
import { deviceWindow } from './device-window.rules.js';
import {
  findSnmpConfig,
  listProfiles,
  listTags,
  replaceDeviceTags,
  tagIdsOfDevice,
  tagsOfDevices,
} from './devices.repository.js';
import {
  AddTagsBody,
  DeleteDeviceBody,
  deviceDetailBody,
  deviceListBody,
  DeviceListQuery,
  DeviceStatusBody,
  DeviceStatusQuery,
  DeviceParams,
  DeviceSaved,
  DeviceSetBody,
  DeviceStats,
  DeviceTagList,
  DeviceWindowQuery,
  LegacyDeleted,
  ProfileList,
  RemoveTagsBody,
  StatusMessage,
  TagList,
  TestSnmpBody,
  TestSnmpResult,
} from './devices.schema.js';
import { canonicalIp, DeviceRuleError, type DevicesService } from './devices.service.js';
import { maskSnmpConfig, probeTargetOf } from '../../platform/snmp/snmp-config.js';
import { probeSystem, SnmpError, withSnmpSession } from '../../platform/snmp/snmp.client.js';

const TAGS = ['devices'];
const SECRET_FIELDS = [
  'snmpconfig.snmp_community',
  'snmpconfig.authpass',
  'snmpconfig.privpass',
] as const;
const DEVICE_NOT_FOUND = 'Device not found';
export const TEST_SNMP_TIMING = { timeoutMs: 2000, retries: 1 };
export const RECRAWL_WITHOUT_SNMP =
  'Nothing to crawl: SNMP is not enabled for this device (the crawl walks interfaces, disks and system data over SNMP). Only its reachability is measured, by its latency tracker when it has one.';
/** testSnmp: a device's stored secret is only sent to that device's own address. */
export const TEST_SNMP_SECRET_REQUIRED =
  "Give the SNMP secret: a device's stored secret is only used to test that device's own address.";

export interface DevicesRoutesDeps {
  devices: DevicesService;
}

export async function devicesRoutes(
  app: App,
  ctx: CoreContext,
  deps: DevicesRoutesDeps,
): Promise<void> {
  const { db, clock, secrets } = ctx;
  const { devices } = deps;

  // spec: part2 > Device inventory > GET /api/devices
  const { relations, sections } = devices.providedSchemas();
  defineRoute(app, {
    method: 'GET',
    url: '/api/devices',
    access: anyOf('devices', 'overwatch'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'List devices (tag scoped), with optional eager-loaded relations',
    querystring: DeviceListQuery,
    response: { 200: deviceListBody(relations) },

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const cached = devices.cachedListJson(
        identity,
        request.query,
        (list) => reply.serializeInput({ status: 200, devices: list }, '200') as string,
      );
      // The cached answer is this route's 200 body, already serialised with its schema.
      if (cached !== null)
        return reply.type('application/json; charset=utf-8').send(cached as never);
      return { status: 200 as const, devices: devices.list(identity, request.query) };
    },
  });

  // designed: the status columns of the device list (docs/features/devices.md)
  defineRoute(app, {
    method: 'GET',
    url: '/api/devices/status',
    access: anyOf('devices', 'overwatch'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'Reachability and latest latency of the listed devices, as columns',
    description:
      'The same filters and tag scope as GET /api/devices, answering only what a status column needs: one array per field, index i describing the same device. For tens of thousands of devices a small fraction of `GET /api/devices?ping=true`.',
    querystring: DeviceStatusQuery,
    response: { 200: DeviceStatusBody },
    handler: async (request) => ({
      status: 200 as const,
      devices: devices.status(identityOf(request), request.query),
    }),
  });

  // spec: part2 > Device inventory > GET /api/device/{device}
  defineRoute(app, {
    method: 'GET',
    url: '/api/device/:device',
    access: allOf('devices'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'One device with its SNMP configuration (masked) and its data in a time window',
    params: DeviceParams,
    querystring: DeviceWindowQuery,
    response: { 200: deviceDetailBody(sections), 404: StatusCodeBody },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.params.device);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      const window = deviceWindow(request.query, clock.now());
      if ('field' in window)
        throw failure(422, window.message, { fields: { [window.field]: [window.message] } });
      const { snmp, ...detail } = devices.detail(device, window.window);
      return { status: 200 as const, device: { ...detail, snmpconfig: maskSnmpConfig(snmp) } };
    },
  });

  // spec: part2 > Device inventory > GET /api/device/{device}/stats
  const stats: RouteErrors = {
    validation: 'message',
    validationStatus: 400,
    failure: 'message',
    internal: 'Device statistics could not be computed.',
  };
  defineRoute(app, {
    method: 'GET',
    url: '/api/device/:device/stats',
    access: allOf('devices'),
    errors: stats,
    tags: TAGS,
    summary: 'Rows and storage of each log category of a device, ending with a Total row',
    params: DeviceParams,
    response: {
      200: DeviceStats,
      400: MessageBody,
      404: MessageBody,
      500: MessageBody,
    },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.params.device);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      return devices.stats(device.id);
    },
  });

  // spec: part2 > Device inventory > POST /api/device/set
  const save: RouteErrors = {
    ...ERROR_PRESETS.statusCode,
    internal: 'The device could not be saved.',
  };
  defineRoute(app, {
    method: 'POST',
    url: '/api/device/set',
    access: allOf('write_devices'),
    errors: save,
    tags: TAGS,
    summary: 'Create (no id) or update a device',
    body: DeviceSetBody,
    response: {
      200: DeviceSaved,
      409: StatusCodeBody,
      422: StatusCodeBody,
      500: StatusCodeBody,
    },

    handler: async (request) => {
      try {
        const saved = devices.save(identityOf(request), request.body);
        return {
          status: 200 as const,
          message: saved.created ? 'Device created' : 'Device updated',
          device: { id: saved.id, tags: saved.tags },
        };
      } catch (err) {
        if (err instanceof DeviceRuleError)
          throw failure(err.status, err.message, err.fields ? { fields: err.fields } : {});
        throw err;
      }
    },
  });

  // spec: part2 > Device inventory > DELETE /api/device/{device}
  const remove: RouteErrors = {
    ...ERROR_PRESETS.statusCode,
    internal: 'The device could not be deleted.',
  };
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/device/:device',
    access: allOf('devices', 'write_devices'),
    errors: remove,
    tags: TAGS,
    summary: 'Delete a device with its tags and history',
    params: DeviceParams,
    response: { 200: StatusMessage(200), 500: StatusCodeBody },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.params.device);
      if (!device) throw failure(500, DEVICE_NOT_FOUND);
      const outcome = devices.delete(device.id);
      if (outcome === 'protected')
        throw failure(500, 'The appliance device (id 1) cannot be deleted.');
      if (outcome === 'missing') throw failure(500, DEVICE_NOT_FOUND);
      return { status: 200 as const, message: 'Device deleted' };
    },
  });

  // spec: part2 > Device inventory > POST /api/deleteDevice (legacy)
  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteDevice',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Delete a device (legacy)',
    body: DeleteDeviceBody,
    response: { 200: legacy200(LegacyDeleted), 404: LegacyStatusBody },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.body.device);
      if (!device) throw failure(404, DEVICE_NOT_FOUND, { family: 'legacyStatus' });
      const outcome = devices.delete(device.id);
      if (outcome === 'protected')
        throw failure(200, 'The appliance device (id 1) cannot be deleted.');
      if (outcome === 'missing') throw failure(404, DEVICE_NOT_FOUND, { family: 'legacyStatus' });
      return { status: 201 as const, hasError: false as const, message: true as const };
    },
  });

  // spec: part2 > Device inventory > POST /api/device/{device}/recrawl
  defineRoute(app, {
    method: 'POST',
    url: '/api/device/:device/recrawl',
    access: allOf('devices', 'write_devices'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'Queue a discovery crawl of the device (SNMP walk: interfaces, disks)',
    params: DeviceParams,
    response: {
      200: StatusMessage(200),
      404: StatusCodeBody,
    },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.params.device);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      // The crawl is an SNMP walk: a device without SNMP has nothing to crawl (spec: 200 always).
      if (device.enable_snmp !== 1 || !findSnmpConfig(db, device.id))
        return { status: 200 as const, message: RECRAWL_WITHOUT_SNMP };
      devices.crawl.schedule(device.id);
      devices.crawl.queueNow(device.id);
      return { status: 200 as const, message: 'Crawl queued' };
    },
  });

  // spec: part2 > Device inventory > POST /api/testSnmp
  const testSnmp: RouteErrors = {
    ...ERROR_PRESETS.statusMessage,
    validationStatus: 422,
    internal: 'The SNMP test failed unexpectedly.',
  };
  defineRoute(app, {
    method: 'POST',
    url: '/api/testSnmp',
    access: allOf('write_devices'),
    errors: testSnmp,
    tags: TAGS,
    summary: 'Probe an SNMP agent with a configuration (nothing is saved)',
    description:
      "Masked or blank secrets are taken from the device named by device_id, only when `ip` is that device's own address (elsewhere the secret must be sent). A probe that gets no proper answer is `{status: 301, message}`.",
    body: TestSnmpBody,
    response: {
      200: TestSnmpResult,
      404: StatusMessageBody,
      422: StatusMessageBody,
      500: StatusMessageBody,
    },

    handler: async (request) => {
      const { ip, snmpconfig, device_id: deviceId } = request.body;
      let stored = null;
      let device = null;
      if (deviceId !== undefined && deviceId !== null) {
        device = devices.visibleDevice(identityOf(request), deviceId);
        if (!device) throw failure(404, DEVICE_NOT_FOUND);
        stored = findSnmpConfig(db, device.id) ?? null;
      }
      const host = canonicalIp(ip);
      if (!host) throw failure(422, 'The ip must be a valid IP address.');
      // Masked secrets resolve to the device's stored ones only for the device's own address;
      // elsewhere the stored secrets are withheld and a missing one is asked for.
      if (stored && device && host !== device.ip_address) {
        const withheld = { ...stored, snmp_community: null, authpass: null, privpass: null };
        const bare = probeTargetOf(secrets, host, snmpconfig, withheld);
        if ('errors' in bare && SECRET_FIELDS.some((field) => bare.errors[field])) {
          const full = probeTargetOf(secrets, host, snmpconfig, stored);
          if (!('errors' in full)) throw failure(422, TEST_SNMP_SECRET_REQUIRED);
        }
        stored = withheld;
      }
      const probe = probeTargetOf(secrets, host, snmpconfig, stored);
      if ('errors' in probe)
        throw failure(422, Object.values(probe.errors)[0]?.[0] ?? 'The given data was invalid.');
      try {
        const system = await withSnmpSession(probe.target, TEST_SNMP_TIMING, (session) =>
          probeSystem(session),
        );
        const name = system.sysName ?? system.sysDescr ?? host;
        return { status: 200 as const, message: `SNMP answered: ${name}` };
      } catch (err) {
        if (err instanceof SnmpError) return { status: 301 as const, message: err.message };
        throw err;
      }
    },
  });

  // spec: part2 > Tags and profiles > GET /api/tags
  defineRoute(app, {
    method: 'GET',
    url: '/api/tags',
    access: anyOf('devices', 'overwatch', 'write_devices'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'List tags (a tag-restricted user sees their own tags)',
    response: { 200: TagList },

    handler: async (request) => ({
      status: 200 as const,
      tags: listTags(db, identityOf(request).tagIds),
    }),
  });

  // spec: part2 > Tags and profiles > GET /api/device/{device}/tags
  defineRoute(app, {
    method: 'GET',
    url: '/api/device/:device/tags',
    access: allOf('devices'),
    errors: 'statusCode',
    tags: TAGS,
    summary: "A device's tags",
    params: DeviceParams,
    response: { 200: DeviceTagList, 404: StatusCodeBody },

    handler: async (request) => {
      const device = devices.visibleDevice(identityOf(request), request.params.device);
      if (!device) throw failure(404, DEVICE_NOT_FOUND);
      return { status: 200 as const, tags: tagsOfDevices(db, [device.id]).get(device.id) ?? [] };
    },
  });

  // spec: part2 > Tags and profiles > POST /api/device/{device}/tags
  const changeTags = (
    identity: Identity,
    deviceId: number,
    tags: readonly { slug: string; name?: string }[],
    mode: 'add' | 'remove',
  ) => {
    const device = devices.visibleDevice(identity, deviceId);
    if (!device) throw failure(404, DEVICE_NOT_FOUND);
    const plan = devices.planTags(identity, tags, tagIdsOfDevice(db, device.id), mode);
    if (!plan.ok) throw failure(400, plan.message, { fields: { tags: [plan.message] } });
    db.transaction(() => replaceDeviceTags(db, device.id, devices.applyTagPlan(plan)))();
  };
  defineRoute(app, {
    method: 'POST',
    url: '/api/device/:device/tags',
    access: allOf('devices', 'write_devices'),
    errors: 'falseErrors',
    tags: TAGS,
    summary: 'Add tags to a device (missing tags are created)',
    params: DeviceParams,
    body: AddTagsBody,
    response: {
      201: StatusMessage(201),
      400: FalseErrorsBody,
      404: FalseErrorsBody,
    },

    handler: async (request, reply) => {
      changeTags(identityOf(request), request.params.device, request.body.tags, 'add');
      reply.code(201);
      return { status: 201 as const, message: 'Tags added' };
    },
  });

  // spec: part2 > Tags and profiles > DELETE /api/device/{device}/tags
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/device/:device/tags',
    access: allOf('devices', 'write_devices'),
    errors: 'falseErrors',
    tags: TAGS,
    summary: 'Remove tags from a device',
    params: DeviceParams,
    body: RemoveTagsBody,
    response: {
      200: StatusMessage(200),
      400: FalseErrorsBody,
      404: FalseErrorsBody,
    },

    handler: async (request) => {
      changeTags(identityOf(request), request.params.device, request.body.tags, 'remove');
      return { status: 200 as const, message: 'Tags removed' };
    },
  });

  // spec: part2 > Tags and profiles > GET /api/device/profiles
  defineRoute(app, {
    method: 'GET',
    url: '/api/device/profiles',
    access: anyOf('devices', 'overwatch', 'write_devices'),
    errors: 'statusCode',
    tags: TAGS,
    summary: 'Device profiles and their default dashboard layouts',
    response: { 200: ProfileList },

    handler: async () => ({
      status: 200 as const,
      profiles: listProfiles(db).map((p) => ({
        id: p.id,
        profile: p.profile,
        layout: JSON.parse(p.layout) as unknown,
      })),
    }),
  });
}
