/**
 * spec: part2 > Trackers > Disks. Permission `write_devices`, tag scoped (a disk of an
 * out-of-scope device answers like a missing one); validation 400 `{errors}`, failures `{error}`.
 */
import type { App } from '../../platform/http/http-server.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody, LegacyFailureBody } from '../../platform/http/schemas.js';
import type { DiskTrackers } from './disks.service.js';
import {
  DeviceDisk,
  DiskDetail,
  DiskIndexRow,
  DiskSetBody,
  DiskStats,
  DiskStatsBody,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  InBodyStatus,
  MessageAnswer,
  StorageEstimate,
} from './trackers.schema.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import { Type } from '@sinclair/typebox';

export function diskRoutes(app: App, disks: DiskTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/disk/get/:id',
    summary: 'A disk tracker with its device, logs and alerts',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: DiskDetail, 404: ErrorBody },
    handler: async (request) =>
      disks.detail(identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/disk/stats/:id',
    summary: 'Storage estimate of a disk tracker’s logs',
    params: IdParams,
    response: { 200: StorageEstimate, 404: ErrorBody },
    handler: async (request) => disks.storage(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    errors: 'legacy',
    method: 'POST',
    url: '/api/disk/stats',
    summary: 'Disk growth and fill-time projection',
    description:
      'Always HTTP 200 with the outcome in `status`: 204 without `diskId`, 200 with a message without logs, 500 on error.',
    body: DiskStatsBody,
    response: { 200: Type.Union([InBodyStatus(DiskStats), LegacyFailureBody]) },
    handler: async (request) => disks.stats(identityOf(request), request.body.diskId, request.log),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/disk/set',
    summary: 'Create (no `id`) or update a disk tracker',
    body: DiskSetBody,
    response: { 200: IdAnswer, 201: IdAnswer, 400: ErrorsBody },
    handler: async (request, reply) => {
      const { id, created } = disks.save(identityOf(request), request.body);
      if (created) reply.code(201);
      return { id };
    },
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/device/:id/disks',
    summary: 'Disk trackers of a device, sorted by name',
    params: IdParams,
    response: { 200: Type.Array(DeviceDisk), 404: ErrorBody },
    handler: async (request) => disks.ofDevice(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/disk/all',
    summary: 'Every disk tracker the caller can see',
    response: { 200: Type.Array(DiskIndexRow) },
    handler: async (request) => disks.index(disks.listScope(request)),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/disk/delete',
    summary: 'Delete a disk tracker and its history',
    body: IdBody,
    response: { 200: MessageAnswer, 400: ErrorsBody },
    handler: async (request) => {
      disks.remove(identityOf(request), request.body.id);
      return { message: 'Disk deleted' };
    },
  });
}
