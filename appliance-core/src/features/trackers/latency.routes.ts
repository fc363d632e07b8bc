/**
 * spec: part2 > Trackers > Latency. Permission `write_devices`, tag scoped.
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody, LegacyFailureBody } from '../../platform/http/schemas.js';
import type { LatencyTrackers } from './latency.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  DeviceLatency,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  InBodyStatus,
  LatencyDetail,
  LatencyIndexRow,
  LatencySetBody,
  LatencyStats,
  LatencyStatsBody,
  MessageAnswer,
  StorageEstimate,
} from './trackers.schema.js';

export function latencyRoutes(app: App, latency: LatencyTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/latency/get/:id',
    summary: 'A latency tracker with logs and alerts',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: LatencyDetail, 404: ErrorBody },
    handler: async (request) =>
      latency.detail(identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/latency/stats/:id',
    summary: 'Storage estimate of a latency tracker’s logs',
    params: IdParams,
    response: { 200: StorageEstimate, 404: ErrorBody },
    handler: async (request) => latency.storage(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    errors: 'legacy',
    method: 'POST',
    url: '/api/latency/stats',
    summary: 'Latency averages, loss, uptime and monitoring duration',
    description:
      'Always HTTP 200 with the outcome in `status`: 204 without `icmpingId`, 200 with a message without logs, 500 on error. `monitoringDuration` is in seconds.',
    body: LatencyStatsBody,
    response: { 200: Type.Union([InBodyStatus(LatencyStats), LegacyFailureBody]) },
    handler: async (request) =>
      latency.stats(identityOf(request), request.body.icmpingId, request.log),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/latency/set',
    summary: 'Create (no `id`) or update the latency tracker of a device',
    body: LatencySetBody,
    response: { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody, 409: ErrorBody },
    handler: async (request, reply) => {
      const { id, created } = latency.save(identityOf(request), request.body);
      if (created) reply.code(201);
      return { id };
    },
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/device/:id/latency',
    summary: 'The latency tracker of a device',
    params: IdParams,
    response: { 200: DeviceLatency, 404: ErrorBody },
    handler: async (request) => latency.ofDevice(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/latency/all',
    summary: 'Every latency tracker the caller can see',
    response: { 200: Type.Array(LatencyIndexRow) },
    handler: async (request) => latency.index(latency.listScope(request)),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/latency/delete',
    summary: 'Delete a latency tracker and its history',
    body: IdBody,
    response: { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody },
    handler: async (request) => {
      latency.remove(identityOf(request), request.body.id);
      return { message: 'ICMP ping configuration deleted' };
    },
  });
}
