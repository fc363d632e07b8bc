/**
 * spec: part2 > Trackers > Interfaces. Permission `write_devices`, tag scoped; interface
 * trackers are created by the device crawl only.
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, ErrorsBody } from '../../platform/http/schemas.js';
import type { InterfaceTrackers } from './interfaces.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  AlertToggled,
  DeviceInterface,
  HoursQuery,
  IdAnswer,
  IdBody,
  IdParams,
  InterfaceConnections,
  InterfaceDetail,
  InterfaceIndexRow,
  InterfaceSetBody,
  MessageAnswer,
  StorageEstimate,
} from './trackers.schema.js';

export function interfaceRoutes(app: App, interfaces: InterfaceTrackers): void {
  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/interfaces/get/:id',
    summary: 'An interface tracker with logs, alerts and neighbours',
    params: IdParams,
    querystring: HoursQuery,
    response: { 200: InterfaceDetail, 404: ErrorBody },
    handler: async (request) =>
      interfaces.detail(identityOf(request), request.params.id, request.query.hours),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/interfaces/stats/:id',
    summary: 'Storage estimate of an interface tracker’s logs',
    params: IdParams,
    response: { 200: StorageEstimate, 404: ErrorBody },
    handler: async (request) => interfaces.storage(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/device/:id/interfaces',
    summary: 'Interface trackers of a device, by interface index',
    params: IdParams,
    response: { 200: Type.Array(DeviceInterface), 404: ErrorBody },
    handler: async (request) => interfaces.ofDevice(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/device/:id/interfaces/connections',
    summary: 'Neighbours per interface id (interfaces without neighbours omitted)',
    description:
      'Neighbour discovery (LLDP/CDP/ARP) is not crawled yet, so every interface is omitted.',
    params: IdParams,
    response: { 200: InterfaceConnections, 404: ErrorBody },
    handler: async (request) => interfaces.connections(identityOf(request), request.params.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'GET',
    url: '/api/interfaces/all',
    summary: 'Every logging interface tracker the caller can see',
    response: { 200: Type.Array(InterfaceIndexRow) },
    handler: async (request) => interfaces.index(interfaces.listScope(request)),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/interfaces/set',
    summary: 'Update an interface tracker',
    body: InterfaceSetBody,
    response: { 200: IdAnswer, 400: ErrorsBody },
    handler: async (request) => ({ id: interfaces.update(identityOf(request), request.body) }),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/interfaces/toggleupdown',
    summary: 'Create the link-state alert of an interface, or flip its active flag',
    description: 'The alert fires when the interface’s oper status changes while it is active.',
    body: IdBody,
    response: { 200: AlertToggled, 400: ErrorsBody, 404: ErrorBody },
    handler: async (request) =>
      interfaces.toggleLinkStateAlert(identityOf(request), request.body.id),
  });

  defineRoute(app, {
    ...TRACKER_ROUTE,
    method: 'POST',
    url: '/api/interfaces/delete',
    summary: 'Delete an interface tracker (a later crawl may recreate it)',
    body: IdBody,
    response: { 200: MessageAnswer, 400: ErrorsBody, 404: ErrorBody },
    handler: async (request) => {
      interfaces.remove(identityOf(request), request.body.id);
      return { message: 'Interface deleted' };
    },
  });
}
