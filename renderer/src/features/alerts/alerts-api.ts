/**
 * The alerting endpoints for the console (spec part 3, Alerting, and the designed routes of
 * issue 17; permission `alerts`, the mail relay `system`): query keys (the `alerts` family),
 * fetchers and writers. Types come from the generated api-types.ts through ApiResult/ApiBody, so
 * a changed route schema breaks the build here, not at run time.
 */
import { queryOptions } from '@tanstack/react-query';

import { api, type ApiBody, type ApiResult } from '../../lib/api-client.js';

export type AlertRow = ApiResult<'/api/alerts', 'get'>[number];
export type AlertBody = ApiBody<'/api/alerts', 'post'>;
export type AlertClass = ApiResult<'/api/alert-classes', 'get'>[number];
export type EmailTemplate = ApiResult<'/api/email-templates', 'get'>[number];
export type TemplateClass = ApiResult<'/api/email-templates/classes', 'get'>[number];
export type TemplateBody = ApiBody<'/api/email-templates/{id}', 'put'>;
export type WindowShort = ApiResult<'/api/alerts/maintenance-windows', 'get'>[number];
export type WindowBody = ApiBody<'/api/alerts/maintenance-windows', 'post'>;
export type WindowWrite = ApiResult<'/api/alerts/legacy/{id}/maintenance-windows', 'get'>[number];
export type RouterConfig = ApiResult<'/api/alerts/{source}/{id}/router-config', 'get'>;
export type RouterConfigBody = ApiBody<'/api/alerts/{source}/{id}/router-config', 'post'>;
export type Outlet = ApiResult<'/api/outlets', 'get'>[number];
export type OutletBody = ApiBody<'/api/outlets', 'post'>;
export type OutletUpdateBody = ApiBody<'/api/outlets/{id}', 'put'>;
export type SendTestAnswer = ApiResult<'/api/outlets/{id}/send-test', 'post'>;
export type OutletTemplate = ApiResult<'/api/outlet-templates', 'get'>[number];
export type OutletTemplateBody = ApiBody<'/api/outlet-templates', 'post'>;
export type RoutingRule = ApiResult<'/api/alert-routing-rules', 'get'>[number];
export type RoutingRuleBody = ApiBody<'/api/alert-routing-rules', 'post'>;
export type LegacyAlert = ApiResult<'/api/legacy-alerts', 'get'>[number];
export type FlapControl = ApiResult<'/api/alert-flap-control', 'get'>;
export type FlapControlBody = ApiBody<'/api/alert-flap-control', 'put'>;
export type HistoryRow = ApiResult<'/api/alerts/history', 'get'>[number];
export type SmtpBody = ApiBody<'/api/smtpSettings', 'post'>;
export type DeviceParent = ApiResult<'/api/alert-dependencies/{device}', 'get'>;

/** What `smtpSettings` `get` answers (the password masked with the sentinel). */
export interface SmtpView {
  sender: string;
  email: string;
  server: string;
  port: number;
  auth: boolean;
  usessl: boolean;
  authname: string;
  authpass: { __encrypted__: true } | null;
}

export type Source = 'modern' | 'legacy';

export const alertKeys = {
  all: ['alerts'] as const,
  list: ['alerts', 'list'] as const,
  classes: ['alerts', 'classes'] as const,
  templates: ['alerts', 'email-templates'] as const,
  templateClasses: ['alerts', 'email-template-classes'] as const,
  windows: ['alerts', 'windows'] as const,
  legacy: ['alerts', 'legacy'] as const,
  legacyWindows: (id: number) => ['alerts', 'legacy', id, 'windows'] as const,
  routerConfig: (source: Source, id: number) => ['alerts', 'router-config', source, id] as const,
  flap: ['alerts', 'flap'] as const,
  outlets: ['alerts', 'outlets'] as const,
  outletTemplates: ['alerts', 'outlet-templates'] as const,
  rules: ['alerts', 'rules'] as const,
  history: (filter: { alert_id?: number; source?: Source }) =>
    ['alerts', 'history', filter] as const,
  parent: (device: number) => ['alerts', 'parent', device] as const,
  smtp: ['alerts', 'smtp'] as const,
};

export const alertsQuery = queryOptions({
  queryKey: alertKeys.list,
  queryFn: () => api.get<AlertRow[]>('/api/alerts'),
});
export const classesQuery = queryOptions({
  queryKey: alertKeys.classes,
  queryFn: () => api.get<AlertClass[]>('/api/alert-classes'),
  staleTime: 300_000,
});
export const templatesQuery = queryOptions({
  queryKey: alertKeys.templates,
  queryFn: () => api.get<EmailTemplate[]>('/api/email-templates'),
});
export const templateClassesQuery = queryOptions({
  queryKey: alertKeys.templateClasses,
  queryFn: () => api.get<TemplateClass[]>('/api/email-templates/classes'),
  staleTime: 300_000,
});
export const windowsQuery = queryOptions({
  queryKey: alertKeys.windows,
  queryFn: () => api.get<WindowShort[]>('/api/alerts/maintenance-windows'),
});
export const legacyQuery = queryOptions({
  queryKey: alertKeys.legacy,
  queryFn: () => api.get<LegacyAlert[]>('/api/legacy-alerts'),
});
export const legacyWindowsQuery = (id: number) =>
  queryOptions({
    queryKey: alertKeys.legacyWindows(id),
    queryFn: () => api.get<WindowWrite[]>(`/api/alerts/legacy/${id}/maintenance-windows`),
  });
export const routerConfigQuery = (source: Source, id: number) =>
  queryOptions({
    queryKey: alertKeys.routerConfig(source, id),
    queryFn: () => api.get<RouterConfig>(`/api/alerts/${source}/${id}/router-config`),
  });
export const flapQuery = queryOptions({
  queryKey: alertKeys.flap,
  queryFn: () => api.get<FlapControl>('/api/alert-flap-control'),
});
export const outletsQuery = queryOptions({
  queryKey: alertKeys.outlets,
  queryFn: () => api.get<Outlet[]>('/api/outlets'),
});
export const outletTemplatesQuery = queryOptions({
  queryKey: alertKeys.outletTemplates,
  queryFn: () => api.get<OutletTemplate[]>('/api/outlet-templates'),
});
export const rulesQuery = queryOptions({
  queryKey: alertKeys.rules,
  queryFn: () => api.get<RoutingRule[]>('/api/alert-routing-rules'),
});
export const parentQuery = (device: number) =>
  queryOptions({
    queryKey: alertKeys.parent(device),
    queryFn: () => api.get<DeviceParent>(`/api/alert-dependencies/${device}`),
  });
export const smtpQuery = queryOptions({
  queryKey: alertKeys.smtp,
  queryFn: () =>
    api.post<{ status: 201; hasError: false; smtp: SmtpView }>('/api/smtpSettings', {
      action: 'get',
    }),
  select: (a) => a.smtp,
});

/** One page of the history ledger, newest first, older pages by `before_id`. */
export const HISTORY_PAGE = 50;
export const fetchHistory = (
  filter: { alert_id?: number; source?: Source },
  beforeId: number | undefined,
) =>
  api.get<HistoryRow[]>('/api/alerts/history', {
    query: { limit: HISTORY_PAGE, before_id: beforeId, ...filter },
  });

export const saveAlert = (id: number | null, body: AlertBody) =>
  id === null
    ? api.post<AlertRow>('/api/alerts', body)
    : api.put<AlertRow>(`/api/alerts/${id}`, body);
export const toggleAlert = (id: number) => api.post<AlertRow>(`/api/alerts/${id}/toggle`);
export const deleteAlert = (id: number) => api.delete<{ deleted: true }>(`/api/alerts/${id}`);

export const saveTemplate = (id: number, body: TemplateBody) =>
  api.put<EmailTemplate>(`/api/email-templates/${id}`, body);
export const restoreTemplate = (id: number) =>
  api.post<EmailTemplate>(`/api/email-templates/${id}/restore`);

export const saveWindow = (body: WindowBody) =>
  api.post<{ id: number }>('/api/alerts/maintenance-windows', body);
export const deleteWindow = (id: number) =>
  api.post<{ success: string }>('/api/alerts/maintenance-windows/delete', { id });

export const saveRouterConfig = (source: Source, id: number, body: RouterConfigBody) =>
  api.post<{ message: string }>(`/api/alerts/${source}/${id}/router-config`, body);
export const changeLegacyWindows = (
  id: number,
  action: 'attach' | 'detach' | 'sync',
  windowIds: number[],
) =>
  api.post<unknown>(`/api/alerts/legacy/${id}/maintenance-windows/${action}`, {
    maintenance_window_ids: windowIds,
  });
export const createLegacyAlert = (trackerId: number, severity: number) =>
  api.post<LegacyAlert>('/api/legacy-alerts', {
    tracker_kind: 'latency',
    tracker_id: trackerId,
    alert_type: 'device_down',
    severity,
  });
export const deleteLegacyAlert = (id: number) => api.delete<unknown>(`/api/legacy-alerts/${id}`);
export const saveFlap = (body: FlapControlBody) =>
  api.put<FlapControl>('/api/alert-flap-control', body);

export const saveOutlet = (id: number | null, body: OutletBody) => {
  if (id === null) return api.post<Outlet>('/api/outlets', body);
  const { type: _type, ...rest } = body;
  const update: OutletUpdateBody = rest;
  return api.put<Outlet>(`/api/outlets/${id}`, update);
};
export const deleteOutlet = (id: number) => api.delete<unknown>(`/api/outlets/${id}`);
export const sendTest = (id: number) => api.post<SendTestAnswer>(`/api/outlets/${id}/send-test`);

export const saveOutletTemplate = (id: number | null, body: OutletTemplateBody) =>
  id === null
    ? api.post<OutletTemplate>('/api/outlet-templates', body)
    : api.put<OutletTemplate>(`/api/outlet-templates/${id}`, body);
export const deleteOutletTemplate = (id: number) =>
  api.delete<unknown>(`/api/outlet-templates/${id}`);

export const saveRule = (id: number | null, body: RoutingRuleBody) =>
  id === null
    ? api.post<RoutingRule>('/api/alert-routing-rules', body)
    : api.put<RoutingRule>(`/api/alert-routing-rules/${id}`, body);
export const deleteRule = (id: number) => api.delete<unknown>(`/api/alert-routing-rules/${id}`);

export const setParent = (device: number, parentId: number | null) =>
  api.post<DeviceParent>(`/api/alert-dependencies/${device}`, { parent_id: parentId });

export const smtpAction = (body: SmtpBody) =>
  api.post<{ status: 201; hasError: false; smtp: string }>('/api/smtpSettings', body);
