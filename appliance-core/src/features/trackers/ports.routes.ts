/**
 * spec: part2 > Trackers > TCP ports (the list and delete routes the spec marks "not shown" are
 * designed in the style of disks). Permission `write_devices`, tag scoped.
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody } from '../../platform/http/schemas.js';
import type { PortTrackers } from './ports.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  DevicePort,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  MessageAnswer,
  PortDetail,
  PortIndexRow,
  PortSetBody,
  StorageEstimate,
} from './trackers.schema.js';

export function portRoutes(app: App, ports: PortTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/port/get/:id',
    summary: 'A TCP port tracker with logs (latency -1: closed, filtered or unreachable)',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: PortDetail, 404: ErrorBody },
    handler: async (request) =>
      ports.detail(identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/port/stats/:id',
    summary: 'Storage estimate of a port tracker’s logs',
    params: IdParams,
    response: { 200: StorageEstimate, 404: ErrorBody },
    handler: async (request) => ports.storage(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/port/set',
    summary: 'Create or update a TCP port tracker',
    description:
      'Without `id`, (`deviceId`, `port`) is the natural key: an existing pair is updated (200), a new one created (201).',
    body: PortSetBody,
    response: { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody },
    handler: async (request, reply) => {
      const { id, created } = ports.save(identityOf(request), request.body);
      if (created) reply.code(201);
      return { id };
    },
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/device/:id/port',
    summary: 'TCP port trackers of a device, sorted by port',
    params: IdParams,
    response: { 200: Type.Array(DevicePort), 404: ErrorBody },
    handler: async (request) => ports.ofDevice(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/port/all',
    summary: 'Every TCP port tracker the caller can see',
    response: { 200: Type.Array(PortIndexRow) },
    handler: async (request) => ports.index(ports.listScope(request)),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/port/delete',
    summary: 'Delete a TCP port tracker and its history',
    body: IdBody,
    response: { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody },
    handler: async (request) => {
      ports.remove(identityOf(request), request.body.id);
      return { message: 'Port deleted' };
    },
  });
}
