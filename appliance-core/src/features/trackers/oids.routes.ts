/**
 * spec: part2 > Trackers > Custom OIDs. Permission `write_devices`, tag scoped.
 */
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody } from '../../platform/http/schemas.js';
import type { OidTrackers } from './oids.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  OidDetail,
  OidSetBody,
  SuccessAnswer,
} from './trackers.schema.js';

export function oidRoutes(app: App, oids: OidTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/oid/get/:id',
    summary: 'A custom OID tracker with logs and alerts',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: OidDetail, 404: ErrorBody },
    handler: async (request) =>
      oids.detail('oid', identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/oid/set',
    summary: 'Create (no `id`) or update a custom OID tracker',
    body: OidSetBody,
    response: { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody },
    handler: async (request, reply) => {
      const { id, created } = oids.saveOid(identityOf(request), request.body);
      if (created) reply.code(201);
      return { id };
    },
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/oid/delete',
    summary: 'Delete a custom OID tracker and its history',
    body: IdBody,
    response: { 200: SuccessAnswer, 400: ErrorsBody, 404: ErrorBody },
    handler: async (request) => {
      oids.removeOid(identityOf(request), request.body.id);
      return { success: 'OID deleted' };
    },
  });
}
