/**
 * Every alerting endpoint of the spec (part 3 > Alerting: alerts, classes, email templates,
 * maintenance windows, router configuration, outlets) and the designed ones (outlet update,
 * delete and send-test, routing rules, legacy alert definitions, the history ledger, device
 * parents), all under permission `alerts`. Validation is 400 `{errors}` (422 on the router
 * configuration and the legacy window routes, as the spec lists), other failures `{error}`.
 * Modern alerts are class-wide; routing rules and the legacy catalogue are tag filtered; a
 * tag-restricted caller scoping outside their tags gets 403 `{error}` naming the axis.
 */
import { Type } from '@sinclair/typebox';
import { actorOf, audited } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import {
  AlertClassRecord,
  AlertRecord,
  CreateAlertBody,
  CreateLegacyAlertBody,
  CreateOutletBody,
  Deleted,
  DeviceParentBody,
  DeviceParentParams,
  DeviceParentRecord,
  EmailTemplateRecord,
  FlapControlBody,
  FlapControlRecord,
  HistoryQuery,
  HistoryRecord,
  IdOnlyBody,
  IdParams,
  IdResult,
  LegacyAlertRecord,
  Message,
  OutletRecord,
  OutletTemplateBody,
  OutletTemplateRecord,
  RouterConfig,
  RouterConfigBody,
  RoutingRuleBody,
  RoutingRuleRecord,
  SaveWindowBody,
  SendTestResult,
  SourceParams,
  TemplateClassRecord,
  UpdateAlertBody,
  UpdateOutletBody,
  UpdateTemplateBody,
  WindowIdsBody,
  WindowShort,
  WindowWrite,
} from './alerts.schema.js';
import { flapSettings, saveFlapSettings } from './alerts.repository.js';
import type { AlertsService } from './alerts.service.js';

const TAGS = ['alerts'];
const access = allOf('alerts');
const errors = (internal?: string): RouteErrors => ({
  validation: 'errors',
  failure: 'error',
  ...(internal ? { internal } : {}),
});
const errors422: RouteErrors = { validation: 'errors', validationStatus: 422, failure: 'error' };

export interface AlertsRoutesDeps {
  alerts: AlertsService;
  /** Creates the latency tracker's device-down alert (trackers know the tracker's device). */
  latencyTrackerDevice: (trackerId: number) => number | null;
  /** Legacy alerts flapping now (the engine's flap detector). */
  flappingLegacyAlerts: () => number[];
}

export async function alertsRoutes(app: App, ctx: CoreContext, deps: AlertsRoutesDeps) {
  const { db, clock } = ctx;
  const service = deps.alerts;
  const audit = <T>(
    request: Parameters<typeof actorOf>[0],
    action: string,
    target: { type: string; id?: number | null; label?: string | null },
    change: () => T,
  ) =>
    audited(db, clock.now(), actorOf(request), change, (result) => {
      const id =
        target.id ??
        (typeof result === 'object' && result !== null && 'id' in result
          ? (result as { id: number }).id
          : null);
      return { action, outcome: 'success', target: { ...target, id } };
    });

  // spec: part3 > Alerting > Alerts
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'List alerts (ordered by id; class-wide, not tag filtered)',
    response: { 200: Type.Array(AlertRecord) },
    handler: async () => service.list(),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'One alert',
    params: IdParams,
    response: { 200: AlertRecord, 404: ErrorBody },
    handler: async (request) => service.get(request.params.id),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alerts',
    access,
    errors: errors('Failed to create alert'),
    tags: TAGS,
    summary: 'Create an alert',
    body: CreateAlertBody,
    response: { 201: AlertRecord, 403: ErrorBody },
    handler: async (request, reply) => {
      const created = audit(
        request,
        'alert.create',
        { type: 'alert', label: request.body.label },
        () => service.create(identityOf(request), request.body),
      );
      reply.code(201);
      return created;
    },
  });
  defineRoute(app, {
    method: 'PUT',
    url: '/api/alerts/:id',
    access,
    errors: errors('Failed to update alert'),
    tags: TAGS,
    summary: 'Update an alert (class is fixed at creation and ignored here)',
    params: IdParams,
    body: UpdateAlertBody,
    response: { 200: AlertRecord, 403: ErrorBody, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'alert.update', { type: 'alert', id: request.params.id }, () =>
        service.update(identityOf(request), request.params.id, request.body),
      ),
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/alerts/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete an alert (its history stays in the ledger)',
    params: IdParams,
    response: { 200: Deleted, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'alert.delete', { type: 'alert', id: request.params.id }, () =>
        service.delete(request.params.id),
      ),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alerts/:id/toggle',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Enable or disable an alert',
    params: IdParams,
    response: { 200: AlertRecord, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'alert.toggle', { type: 'alert', id: request.params.id }, () =>
        service.toggle(request.params.id),
      ),
  });

  // spec: part3 > Alerting > Alert classes
  defineRoute(app, {
    method: 'GET',
    url: '/api/alert-classes',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Alert classes with their parameter schemas, variables and default template',
    response: { 200: Type.Array(AlertClassRecord) },
    handler: async () => service.classes(),
  });

  // spec: part3 > Alerting > Email templates
  for (const url of ['/api/email-templates', '/api/alerts/templates'])
    defineRoute(app, {
      method: 'GET',
      url,
      access,
      errors: errors(),
      tags: TAGS,
      summary: 'Email templates',
      response: { 200: Type.Array(EmailTemplateRecord) },
      handler: async () => service.templates(),
    });
  defineRoute(app, {
    method: 'GET',
    url: '/api/email-templates/classes',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Template classes, their variables and whether a canonical default exists',
    response: { 200: Type.Array(TemplateClassRecord) },
    handler: async () => service.templateClasses(),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/email-templates/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'One email template',
    params: IdParams,
    response: { 200: EmailTemplateRecord, 404: ErrorBody },
    handler: async (request) => service.template(request.params.id),
  });
  defineRoute(app, {
    method: 'PUT',
    url: '/api/email-templates/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Update an email template (class null or empty clears it)',
    params: IdParams,
    body: UpdateTemplateBody,
    response: { 200: EmailTemplateRecord, 404: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'email_template.update',
        { type: 'email_template', id: request.params.id },
        () => service.updateTemplate(request.params.id, request.body),
      ),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/email-templates/:id/restore',
    access,
    errors: errors(),
    tags: TAGS,
    summary: "Reset a template's bodies to its class's canonical default",
    params: IdParams,
    response: { 200: EmailTemplateRecord, 404: ErrorBody, 422: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'email_template.restore',
        { type: 'email_template', id: request.params.id },
        () => service.restoreTemplate(request.params.id),
      ),
  });

  // spec: part3 > Alerting > Maintenance windows
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts/maintenance-windows',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Maintenance windows (short read shape)',
    response: { 200: Type.Array(WindowShort) },
    handler: async () => service.windows(),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alerts/maintenance-windows',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Create (201) or update (200, with id) a maintenance window',
    body: SaveWindowBody,
    response: { 200: IdResult, 201: IdResult, 404: ErrorBody },
    handler: async (request, reply) => {
      const saved = audit(
        request,
        'maintenance_window.save',
        { type: 'maintenance_window', label: request.body.label },
        () => service.saveWindow(request.body),
      );
      reply.code(saved.created ? 201 : 200);
      return { id: saved.id };
    },
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alerts/maintenance-windows/delete',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete a maintenance window (detached everywhere)',
    body: IdOnlyBody,
    response: { 200: Type.Object({ success: Type.String() }), 404: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'maintenance_window.delete',
        { type: 'maintenance_window', id: request.body.id },
        () => service.deleteWindow(request.body.id),
      ),
  });

  // spec: part3 > Alerting > Router configuration
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts/:source/:id/router-config',
    access,
    errors: errors422,
    tags: TAGS,
    summary: 'Router configuration of a modern alert or a legacy trigger (defaults filled)',
    params: SourceParams,
    response: { 200: RouterConfig, 404: ErrorBody },
    handler: async (request) =>
      service.routerConfig(identityOf(request), request.params.source, request.params.id),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alerts/:source/:id/router-config',
    access,
    errors: errors422,
    tags: TAGS,
    summary: 'Set the router configuration (stored; renotify and throttles never change delivery)',
    params: SourceParams,
    body: RouterConfigBody,
    response: { 200: Message, 404: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'alert.router_config',
        { type: `${request.params.source}_alert`, id: request.params.id },
        () =>
          service.setRouterConfig(
            identityOf(request),
            request.params.source,
            request.params.id,
            request.body,
          ),
      ),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts/legacy/:id/maintenance-windows',
    access,
    errors: errors422,
    tags: TAGS,
    summary: "A legacy trigger's maintenance windows (write shape)",
    params: IdParams,
    response: { 200: Type.Array(WindowWrite), 404: ErrorBody },
    handler: async (request) => service.legacyWindows(identityOf(request), request.params.id),
  });
  for (const how of ['attach', 'detach', 'sync'] as const)
    defineRoute(app, {
      method: 'POST',
      url: `/api/alerts/legacy/:id/maintenance-windows/${how}`,
      access,
      errors: errors422,
      tags: TAGS,
      summary: `${how[0]!.toUpperCase()}${how.slice(1)} maintenance windows of a legacy trigger`,
      params: IdParams,
      body: WindowIdsBody,
      response: { 200: Message, 404: ErrorBody },
      handler: async (request) =>
        audit(
          request,
          `legacy_alert.windows_${how}`,
          { type: 'legacy_alert', id: request.params.id },
          () =>
            service.changeLegacyWindows(
              identityOf(request),
              request.params.id,
              request.body.maintenance_window_ids,
              how,
            ),
        ),
    });

  // spec: part3 > Alerting > Outlets
  defineRoute(app, {
    method: 'GET',
    url: '/api/outlets',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Non-system outlets, ordered by id, secrets masked',
    response: { 200: Type.Array(OutletRecord) },
    handler: async () => service.outlets(),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/outlets/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'One outlet (system ones included), secrets masked',
    params: IdParams,
    response: { 200: OutletRecord, 404: ErrorBody },
    handler: async (request) => service.outlet(request.params.id),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/outlets',
    access,
    errors: errors('Failed to create outlet'),
    tags: TAGS,
    summary: 'Create an outlet (o365 refused; unknown config keys dropped)',
    body: CreateOutletBody,
    response: { 201: OutletRecord, 409: ErrorBody },
    handler: async (request, reply) => {
      const created = audit(
        request,
        'outlet.create',
        { type: 'outlet', label: request.body.name },
        () => service.createOutlet(request.body),
      );
      reply.code(201);
      return created;
    },
  });
  // designed: outlet update, delete and send-test
  defineRoute(app, {
    method: 'PUT',
    url: '/api/outlets/:id',
    access,
    errors: errors('Failed to update outlet'),
    tags: TAGS,
    summary: 'Update an outlet (a masked secret is kept on the sentinel, empty or omitted)',
    params: IdParams,
    body: UpdateOutletBody,
    response: { 200: OutletRecord, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
    handler: async (request) =>
      audit(request, 'outlet.update', { type: 'outlet', id: request.params.id }, () =>
        service.updateOutlet(request.params.id, request.body),
      ),
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/outlets/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete an outlet (its routes go; the history keeps its name)',
    params: IdParams,
    response: { 200: Deleted, 403: ErrorBody, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'outlet.delete', { type: 'outlet', id: request.params.id }, () =>
        service.deleteOutlet(request.params.id),
      ),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/outlets/:id/send-test',
    access,
    errors: errors('Failed to send the test notification'),
    tags: TAGS,
    summary: 'Send a test notification through an outlet (the URL is checked again)',
    params: IdParams,
    response: { 200: SendTestResult, 404: ErrorBody },
    handler: async (request) => service.sendTest(request.params.id),
  });

  // designed: outlet templates (no tag anchor)
  defineRoute(app, {
    method: 'GET',
    url: '/api/outlet-templates',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Outlet templates (a message body per outlet type)',
    response: { 200: Type.Array(OutletTemplateRecord) },
    handler: async () => service.outletTemplates(),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/outlet-templates/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'One outlet template',
    params: IdParams,
    response: { 200: OutletTemplateRecord, 404: ErrorBody },
    handler: async (request) => service.outletTemplate(request.params.id),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/outlet-templates',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Create an outlet template',
    body: OutletTemplateBody,
    response: { 201: OutletTemplateRecord, 409: ErrorBody },
    handler: async (request, reply) => {
      const saved = audit(
        request,
        'outlet_template.create',
        { type: 'outlet_template', label: request.body.name },
        () => service.saveOutletTemplate(null, request.body),
      );
      reply.code(201);
      return saved;
    },
  });
  defineRoute(app, {
    method: 'PUT',
    url: '/api/outlet-templates/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Replace an outlet template',
    params: IdParams,
    body: OutletTemplateBody,
    response: { 200: OutletTemplateRecord, 404: ErrorBody, 409: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'outlet_template.update',
        { type: 'outlet_template', id: request.params.id },
        () => service.saveOutletTemplate(request.params.id, request.body),
      ),
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/outlet-templates/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete an outlet template (outlets using it fall back to their email template)',
    params: IdParams,
    response: { 200: Deleted, 404: ErrorBody },
    handler: async (request) =>
      audit(
        request,
        'outlet_template.delete',
        { type: 'outlet_template', id: request.params.id },
        () => service.deleteOutletTemplate(request.params.id),
      ),
  });

  // designed: routing rules (tag filtered)
  defineRoute(app, {
    method: 'GET',
    url: '/api/alert-routing-rules',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Routing rules the caller may see (tag filtered)',
    response: { 200: Type.Array(RoutingRuleRecord) },
    handler: async (request) => service.rules(identityOf(request)),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/alert-routing-rules/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'One routing rule',
    params: IdParams,
    response: { 200: RoutingRuleRecord, 404: ErrorBody },
    handler: async (request) => service.rule(identityOf(request), request.params.id),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alert-routing-rules',
    access,
    errors: errors(),
    tags: TAGS,
    summary:
      'Create a routing rule (which alerts, severities, devices or tags go to which outlets)',
    body: RoutingRuleBody,
    response: { 201: RoutingRuleRecord, 403: ErrorBody },
    handler: async (request, reply) => {
      const saved = audit(
        request,
        'routing_rule.create',
        { type: 'routing_rule', label: request.body.label },
        () => service.saveRule(identityOf(request), null, request.body),
      );
      reply.code(201);
      return saved;
    },
  });
  defineRoute(app, {
    method: 'PUT',
    url: '/api/alert-routing-rules/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Replace a routing rule',
    params: IdParams,
    body: RoutingRuleBody,
    response: { 200: RoutingRuleRecord, 403: ErrorBody, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'routing_rule.update', { type: 'routing_rule', id: request.params.id }, () =>
        service.saveRule(identityOf(request), request.params.id, request.body),
      ),
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/alert-routing-rules/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete a routing rule',
    params: IdParams,
    response: { 200: Deleted, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'routing_rule.delete', { type: 'routing_rule', id: request.params.id }, () =>
        service.deleteRule(identityOf(request), request.params.id),
      ),
  });

  // designed: legacy alert definitions (tag filtered)
  defineRoute(app, {
    method: 'GET',
    url: '/api/legacy-alerts',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'The legacy alert catalogue the caller may see (tag filtered)',
    response: { 200: Type.Array(LegacyAlertRecord) },
    handler: async (request) => service.legacyList(identityOf(request)),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/legacy-alerts',
    access,
    errors: errors(),
    tags: TAGS,
    summary:
      "Create a latency tracker's device-down or a URL tracker's url-down alert (200 with the existing one)",
    body: CreateLegacyAlertBody,
    response: { 200: LegacyAlertRecord, 201: LegacyAlertRecord, 404: ErrorBody },
    handler: async (request, reply) => {
      const { tracker_kind: kind, tracker_id: trackerId, alert_type: type } = request.body;
      const severity = request.body.severity ?? 3;
      if ((kind === 'latency') !== (type === 'device_down')) {
        const message =
          kind === 'latency'
            ? 'A latency tracker holds the device_down alert.'
            : 'A URL tracker holds the url_down alert.';
        throw failure(400, message, { fields: { alert_type: [message] }, family: 'errors' });
      }
      let create: () => ReturnType<typeof service.createUrlDown>;
      if (kind === 'url') {
        // URL trackers belong to no device: visible to every holder of `alerts`.
        if ((service.deps.urlOfTracker?.(trackerId) ?? null) === null)
          throw failure(404, 'Tracker not found');
        create = () => service.createUrlDown(trackerId, severity);
      } else {
        const deviceId = deps.latencyTrackerDevice(trackerId);
        if (deviceId === null || !service.deps.devices.visibleDevice(identityOf(request), deviceId))
          throw failure(404, 'Tracker not found');
        create = () => service.createDeviceDown(trackerId, deviceId, severity);
      }
      const result = audit(request, 'legacy_alert.create', { type: 'legacy_alert' }, create);
      reply.code(result.created ? 201 : 200);
      return service.legacyRecord(result.row);
    },
  });
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/legacy-alerts/:id',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Delete a legacy alert definition (its history stays in the ledger)',
    params: IdParams,
    response: { 200: Deleted, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'legacy_alert.delete', { type: 'legacy_alert', id: request.params.id }, () =>
        service.deleteLegacy(identityOf(request), request.params.id),
      ),
  });

  // designed: flap control of legacy alerts (legacy-flap.rules.ts)
  const flapRecord = (request: Parameters<typeof identityOf>[0]) => {
    const visible = new Set(service.legacyList(identityOf(request)).map((a) => a.id));
    return {
      ...flapSettings(db),
      flapping: deps.flappingLegacyAlerts().filter((id) => visible.has(id)),
    };
  };
  defineRoute(app, {
    method: 'GET',
    url: '/api/alert-flap-control',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Flap control of legacy alerts, and which of them are flapping now',
    response: { 200: FlapControlRecord },
    handler: async (request) => flapRecord(request),
  });
  defineRoute(app, {
    method: 'PUT',
    url: '/api/alert-flap-control',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Set flap control of legacy alerts (the throttle_* fields stay inert)',
    body: FlapControlBody,
    response: { 200: FlapControlRecord },
    handler: async (request) => {
      audit(request, 'alert_flap_control.update', { type: 'alert_flap_control' }, () =>
        saveFlapSettings(db, request.body),
      );
      return flapRecord(request);
    },
  });

  // designed: the history ledger
  defineRoute(app, {
    method: 'GET',
    url: '/api/alerts/history',
    access,
    errors: errors(),
    tags: TAGS,
    summary: 'Alert occurrences, newest first, with what was queued to which outlet',
    querystring: HistoryQuery,
    response: { 200: Type.Array(HistoryRecord) },
    handler: async (request) => service.history(request.query),
  });

  // designed: device parents (dependency-aware suppression)
  defineRoute(app, {
    method: 'GET',
    url: '/api/alert-dependencies/:device',
    access,
    errors: errors(),
    tags: TAGS,
    summary: "A device's parent for dependency-aware suppression",
    params: DeviceParentParams,
    response: { 200: DeviceParentRecord, 404: ErrorBody },
    handler: async (request) => service.parent(identityOf(request), request.params.device),
  });
  defineRoute(app, {
    method: 'POST',
    url: '/api/alert-dependencies/:device',
    access,
    errors: errors(),
    tags: TAGS,
    summary: "Set (or clear with null) a device's parent",
    params: DeviceParentParams,
    body: DeviceParentBody,
    response: { 200: DeviceParentRecord, 404: ErrorBody },
    handler: async (request) =>
      audit(request, 'device.parent', { type: 'device', id: request.params.device }, () =>
        service.setParent(identityOf(request), request.params.device, request.body.parent_id),
      ),
  });
}
