/**
 * Dashboards and layouts (spec part 2 > Dashboards and layouts). Dashboards belong to the caller;
 * device layouts belong to the caller and a device they can see (tag scoped: a device out of
 * scope answers like a missing one).
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, authenticated, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { defineRoute, ERROR_PRESETS } from '../../platform/http/define-route.js';
import { ErrorBody, LegacyStatusBody, MessageErrorsBody } from '../../platform/http/schemas.js';
import type { DevicesService } from '../devices/index.js';
import {
  deleteDeviceLayouts,
  getDashboards,
  getDeviceLayout,
  saveDashboards,
  saveDeviceLayouts,
  saveDevicePinnedWidgets,
  type JsonObject,
} from './dashboards.repository.js';
import {
  AddWidgetBody,
  INVALID_PARAMETER,
  Dashboards,
  DeviceIdBody,
  DeviceTrackers,
  DeviceTrackersQuery,
  LayoutSaved,
  Message,
  SetDashboardsBody,
  SetDeviceLayoutsBody,
  SetPinnedWidgetsBody,
  WidgetAdded,
} from './dashboards.schema.js';
import type { TrackerWidgets } from './widgets.catalog.js';

const TAGS = ['dashboards'];

export interface DashboardsRoutesDeps {
  devices: DevicesService;
  widgets: TrackerWidgets;
}

const isPlainObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export async function dashboardsRoutes(
  app: App,
  ctx: CoreContext,
  deps: DashboardsRoutesDeps,
): Promise<void> {
  const { db, clock } = ctx;
  const { devices, widgets } = deps;

  // spec: part2 > Dashboards and layouts > GET /api/getDashboards
  defineRoute(app, {
    method: 'GET',
    url: '/api/getDashboards',
    access: authenticated,
    errors: 'messageErrors',
    tags: TAGS,
    summary: "The caller's dashboards and layouts (empty for new users)",
    response: { 200: Dashboards },

    handler: async (request) => getDashboards(db, identityOf(request).user.id),
  });

  // spec: part2 > Dashboards and layouts > POST /api/setDashboards
  defineRoute(app, {
    method: 'POST',
    url: '/api/setDashboards',
    access: authenticated,
    errors: 'messageErrors',
    tags: TAGS,
    summary: "Replace the caller's dashboards and layouts",
    body: SetDashboardsBody,
    response: { 201: Message, 422: MessageErrorsBody },

    handler: async (request, reply) => {
      saveDashboards(
        db,
        identityOf(request).user.id,
        request.body.dashboards,
        request.body.layouts,
        clock.now(),
      );
      reply.code(201);
      return { message: 'Dashboards saved' };
    },
  });

  // spec: part2 > Dashboards and layouts > POST /api/addWidgetToDash
  const widget: RouteErrors = { validation: 'error', validationStatus: 400, failure: 'error' };
  defineRoute(app, {
    method: 'POST',
    url: '/api/addWidgetToDash',
    access: allOf('devices'),
    errors: widget,
    tags: TAGS,
    summary: 'Append a widget to one of your dashboards (created when missing)',
    description:
      'A widget that names a device (`deviceId` or `device_id`) must name one the caller can see.',
    body: AddWidgetBody,
    response: { 201: WidgetAdded, 400: ErrorBody },

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const { dashboardName: name, widget: added } = request.body;
      if (typeof name !== 'string' || name.trim() === '' || name.length > 255)
        throw failure(400, INVALID_PARAMETER);
      if (!isPlainObject(added) || !Number.isInteger(added.widgetId) || added.widgetId < 1)
        throw failure(400, INVALID_PARAMETER);
      const deviceRef = added.deviceId ?? added.device_id;
      if (
        deviceRef !== undefined &&
        (!Number.isInteger(deviceRef) || !devices.visibleDevice(identity, deviceRef as number))
      )
        throw failure(400, INVALID_PARAMETER);
      const current = getDashboards(db, identity.user.id);
      const existing = current.dashboards[name];
      let next: unknown;
      if (existing === undefined) next = [added];
      else if (Array.isArray(existing)) next = [...(existing as unknown[]), added];
      else if (isPlainObject(existing) && Array.isArray(existing.widgets))
        next = { ...existing, widgets: [...(existing.widgets as unknown[]), added] };
      else throw failure(400, INVALID_PARAMETER);
      saveDashboards(
        db,
        identity.user.id,
        { ...current.dashboards, [name]: next },
        current.layouts,
        clock.now(),
      );
      reply.code(201);
      return { status: 'success' as const };
    },
  });

  // spec: part2 > Dashboards and layouts > GET /api/getDeviceTrackers
  defineRoute(app, {
    method: 'GET',
    url: '/api/getDeviceTrackers',
    access: allOf('devices'),
    errors: 'messageErrors',
    tags: TAGS,
    summary: "A device's trackers as widgets, with your saved layout and pinned widgets",
    description: 'HTTP 204 (no body) when the device has no trackers.',
    querystring: DeviceTrackersQuery,
    response: {
      200: DeviceTrackers,
      204: Type.Null({ description: 'no trackers' }),
      422: MessageErrorsBody,
    },

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const device = devices.visibleDevice(identity, request.query.deviceId);
      if (!device) {
        const message = 'The selected device id is invalid.';
        throw failure(422, message, { fields: { deviceId: [message] } });
      }
      const list = widgets.forDevice(device.id);
      if (list.length === 0) {
        reply.code(204);
        return null;
      }
      const saved = getDeviceLayout(db, identity.user.id, device.id);
      return {
        hasError: false as const,
        trackers: list,
        layouts: saved?.layouts ?? {},
        pinnedWidgets: saved?.pinnedWidgets ?? [],
      };
    },
  });

  // spec: part2 > Dashboards and layouts > setDeviceLayouts, setDevicePinnedWidgets, deleteDeviceLayouts
  const layout: RouteErrors = { ...ERROR_PRESETS.legacyStatus, validationStatus: 400 };
  const visible = (identity: Identity, deviceId: number) => {
    const device = devices.visibleDevice(identity, deviceId);
    if (!device) throw failure(404, 'Device not found');
    return device;
  };
  const layoutResponses = { 201: LayoutSaved, 400: LegacyStatusBody, 404: LegacyStatusBody };

  defineRoute(app, {
    method: 'POST',
    url: '/api/setDeviceLayouts',
    access: allOf('devices'),
    errors: layout,
    tags: TAGS,
    summary: 'Save your layout of a device page',
    body: SetDeviceLayoutsBody,
    response: layoutResponses,

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const device = visible(identity, request.body.deviceId);
      saveDeviceLayouts(db, identity.user.id, device.id, request.body.layouts, clock.now());
      reply.code(201);
      return { hasError: false as const, message: 'Device layout saved' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/setDevicePinnedWidgets',
    access: allOf('devices'),
    errors: layout,
    tags: TAGS,
    summary: 'Save your pinned widgets of a device page',
    body: SetPinnedWidgetsBody,
    response: layoutResponses,

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const device = visible(identity, request.body.deviceId);
      saveDevicePinnedWidgets(
        db,
        identity.user.id,
        device.id,
        request.body.pinnedWidgets,
        clock.now(),
      );
      reply.code(201);
      return { hasError: false as const, message: 'Pinned widgets saved' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteDeviceLayouts',
    access: allOf('devices'),
    errors: layout,
    tags: TAGS,
    summary: 'Delete your saved layout of a device page',
    body: DeviceIdBody,
    response: layoutResponses,

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const device = visible(identity, request.body.deviceId);
      if (!deleteDeviceLayouts(db, identity.user.id, device.id))
        throw failure(404, 'No saved layout for this device');
      reply.code(201);
      return { hasError: false as const, message: 'Device layout deleted' };
    },
  });
}
