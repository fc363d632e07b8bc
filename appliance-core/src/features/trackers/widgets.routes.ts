/**
 * spec: part2 > Dashboards and layouts > getLatencyTracker, getTCPTracker: the latency and TCP
 * widgets of a device page. Permission `devices` (not `write_devices`), legacy answers (HTTP
 * 200); a device the caller cannot see, or without the probe, is "no probe" (`status: 204`).
 */
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/define-route.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { LegacyFailureBody } from '../../platform/http/schemas.js';
import type { LatencyTrackers } from './latency.service.js';
import type { PortTrackers } from './ports.service.js';
import { TRACKER_ROUTE } from './trackers.access.js';
import {
  GetLatencyTrackerBody,
  GetTcpTrackerBody,
  LatencyWidget,
  TcpWidget,
} from './trackers.schema.js';

const WIDGET_ROUTE = { ...TRACKER_ROUTE, access: allOf('devices'), errors: 'legacy' } as const;

export function widgetRoutes(app: App, latency: LatencyTrackers, ports: PortTrackers): void {
  defineRoute(app, {
    ...WIDGET_ROUTE,
    method: 'POST',
    url: '/api/getLatencyTracker',
    summary: 'Latency logs of a device for its widget',
    body: GetLatencyTrackerBody,
    response: { 200: Type.Union([LatencyWidget, LegacyFailureBody]) },
    handler: async (request) =>
      latency.widget(identityOf(request), request.body.deviceId, request.body.hours),
  });

  defineRoute(app, {
    ...WIDGET_ROUTE,
    method: 'POST',
    url: '/api/getTCPTracker',
    summary: 'TCP port logs of a device for its widget',
    body: GetTcpTrackerBody,
    response: { 200: Type.Union([TcpWidget, LegacyFailureBody]) },
    handler: async (request) =>
      ports.widget(identityOf(request), request.body.deviceId, request.body.id, request.body.hours),
  });
}
