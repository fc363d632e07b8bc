/**
 * spec: part2 > Trackers > Services. Permission `write_devices`, tag scoped. Service trackers
 * are stored and listed now; they are polled once the agent exists.
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody } from '../../platform/http/schemas.js';
import type { OidTrackers } from './oids.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  DeviceIdParams,
  DeviceService,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  ServiceDetail,
  ServiceSetBody,
  StorageEstimate,
  SuccessAnswer,
} from './trackers.schema.js';

export function serviceRoutes(app: App, oids: OidTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/service/get/:id',
    summary: 'A service tracker with logs and alerts (stored, polled once the agent exists)',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: ServiceDetail, 404: ErrorBody },
    handler: async (request) =>
      oids.detail('service', identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/service/statsOf/:id',
    summary: 'Storage estimate of a service tracker’s logs',
    params: IdParams,
    response: { 200: StorageEstimate, 404: ErrorBody },
    handler: async (request) => oids.serviceStorage(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/service/set',
    summary: 'Create (no `id`) or update a service tracker',
    body: ServiceSetBody,
    response: { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody },
    handler: async (request, reply) => {
      const { id, created } = oids.saveService(identityOf(request), request.body);
      if (created) reply.code(201);
      return { id };
    },
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/service/getAll/:deviceId',
    summary: 'Service trackers of a device, sorted by label',
    params: DeviceIdParams,
    response: { 200: Type.Array(DeviceService), 404: ErrorBody },
    handler: async (request) => oids.servicesOfDevice(identityOf(request), request.params.deviceId),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/service/delete',
    summary: 'Delete a service tracker (stops monitoring only)',
    body: IdBody,
    response: { 200: SuccessAnswer, 400: ErrorsBody, 500: ErrorBody },
    handler: async (request) => {
      oids.removeService(identityOf(request), request.body.id);
      return { success: 'Service deleted' };
    },
  });
}
