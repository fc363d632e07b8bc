/**
 * The appliance settings and data maintenance endpoints the settings pages call (spec part 3,
 * "Appliance settings" and "Data maintenance"): services, network, hostname and host map, time,
 * license (permission `system`), retention (`system`) and daemons (`sa`). Failures come back as
 * one ApiError (HTTP 200 `{status: false, hasError: true, message}`, 422 `{message, errors}`,
 * procmon's 400/500, the daemons' `{message}`); answers are typed from the generated API types.
 * Query keys: the `settings` family.
 */
import { queryOptions } from '@tanstack/react-query';

import { api, type ApiBody, type ApiResult } from '../../lib/api-client.js';

export type ServicesAnswer = ApiResult<'/api/manageApplianceServices', 'get'>;
export type Service = ServicesAnswer['data']['services'][number];
export type ServiceAction = ApiBody<'/api/procmon', 'post'>['action'];
export type ProcmonAnswer = ApiResult<'/api/procmon', 'post'>;
export type RestartAnswer = ApiResult<'/api/restartAppliance', 'post'>;

export type NetworkAnswer = ApiResult<'/api/getNetworkInfo', 'post'>;
export type NetworkInterface = NetworkAnswer['interfaces'][number];
export type SetNetworkBody = ApiBody<'/api/setNetworkInfo', 'post'>;
export type SetNetworkAnswer = ApiResult<'/api/setNetworkInfo', 'post'>;

export type HostnameAnswer = ApiResult<'/api/getHostname', 'get'>;
export type SetHostnameAnswer = ApiResult<'/api/setHostname', 'post'>;
export type HostMapPage = ApiResult<'/api/getHostnames', 'post'>;
export type HostMapEntry = HostMapPage['data'][number];
export type HostMapFields = ApiBody<'/api/createHostname', 'post'>;

export type TimeAnswer = ApiResult<'/api/getTimeSettings', 'get'>;
export type SetTimeBody = ApiBody<'/api/setTimeSettings', 'post'>;
export type SetTimeAnswer = ApiResult<'/api/setTimeSettings', 'post'>;

export type LicenseAnswer = ApiResult<'/api/getLicenseInfo', 'get'>;
export type LicenseEntry = LicenseAnswer['data'][number];
export type ValidateLicenseAnswer = ApiResult<'/api/validateLicense', 'post'>;

export type RetentionAnswer = ApiResult<'/api/getRetentionPolicy', 'get'>;
export type RetentionRow = RetentionAnswer['message'][number];

/** The stored-secret sentinel the daemon endpoints read and accept. */
export const SECRET_SENTINEL = { __encrypted__: true } as const;
export type Sentinel = typeof SECRET_SENTINEL;
/** A daemon with its variables and `vars`, the variables it accepts (GET /api/daemons). */
export type Daemon = ApiResult<'/api/daemons', 'get'>['daemons'][number];
/** A variable a daemon accepts (the appliance's catalogue); any other is refused (422). */
export type CatalogVar = Daemon['vars'][number];
export interface DaemonSaveAnswer {
  message: string;
  reload_failed?: true;
}

export const settingsKeys = {
  all: ['settings'] as const,
  services: ['settings', 'services'] as const,
  network: ['settings', 'network'] as const,
  hostname: ['settings', 'hostname'] as const,
  hostMap: (page: number, limit: number) => ['settings', 'host-map', page, limit] as const,
  hostMapAll: ['settings', 'host-map'] as const,
  time: ['settings', 'time'] as const,
  license: ['settings', 'license'] as const,
  retention: ['settings', 'retention'] as const,
  daemons: ['settings', 'daemons'] as const,
  daemon: (name: string) => ['settings', 'daemons', name] as const,
};

// ---- services ----

export const servicesQuery = queryOptions({
  queryKey: settingsKeys.services,
  queryFn: () => api.get<ServicesAnswer>('/api/manageApplianceServices'),
  select: (answer) => answer.data.services,
  refetchInterval: 10_000,
});

export const procmon = (service: string, action: ServiceAction) =>
  api.post<ProcmonAnswer>('/api/procmon', { service, action });

export const restartAppliance = () => api.post<RestartAnswer>('/api/restartAppliance');

// ---- network ----

/** POST, not GET: the first one after an applied change confirms it (the 120 s window). */
export const networkQuery = queryOptions({
  queryKey: settingsKeys.network,
  queryFn: () => api.post<NetworkAnswer>('/api/getNetworkInfo'),
});

export const setNetwork = (body: SetNetworkBody) =>
  api.post<SetNetworkAnswer>('/api/setNetworkInfo', body);

// ---- hostname and host map ----

export const hostnameQuery = queryOptions({
  queryKey: settingsKeys.hostname,
  queryFn: () => api.get<HostnameAnswer>('/api/getHostname'),
  select: (answer) => answer.hostname,
});

export const setHostname = (hostname: string) =>
  api.post<SetHostnameAnswer>('/api/setHostname', { hostname });

export const hostMapQuery = (page: number, limit: number) =>
  queryOptions({
    queryKey: settingsKeys.hostMap(page, limit),
    queryFn: () => api.post<HostMapPage>('/api/getHostnames', { page, limit }),
  });

export const createHost = (fields: HostMapFields) => api.post('/api/createHostname', fields);
export const updateHost = (id: number, fields: HostMapFields) =>
  api.post('/api/updateHostname', { id, ...fields });
export const deleteHost = (id: number) => api.post('/api/deleteHost', { id });

// ---- time ----

export const timeQuery = queryOptions({
  queryKey: settingsKeys.time,
  queryFn: () => api.get<TimeAnswer>('/api/getTimeSettings'),
  select: (answer) => answer.data,
});

export const setTime = (body: SetTimeBody) => api.post<SetTimeAnswer>('/api/setTimeSettings', body);

// ---- license ----

export const licenseQuery = queryOptions({
  queryKey: settingsKeys.license,
  queryFn: () => api.get<LicenseAnswer>('/api/getLicenseInfo'),
  select: (answer) => answer.data,
});

export const validateLicense = (registrationKey: string) =>
  api.post<ValidateLicenseAnswer>('/api/validateLicense', { registrationKey });

// ---- retention ----

export const retentionQuery = queryOptions({
  queryKey: settingsKeys.retention,
  queryFn: () => api.get<RetentionAnswer>('/api/getRetentionPolicy'),
  select: (answer) => answer.message,
});

export const setRetention = (data: { id: number; retention: number }[]) =>
  api.post('/api/setRetentionPolicy', { data });

// ---- daemons ----

/** The daemons with their variables and catalogues: the designed GET /api/daemons, sorted by id. */
export const daemonsQuery = queryOptions({
  queryKey: settingsKeys.daemons,
  queryFn: async (): Promise<Daemon[]> =>
    (await api.get<ApiResult<'/api/daemons', 'get'>>('/api/daemons')).daemons,
});

export const saveDaemonConfig = (id: number, config: { var: string; value: string | Sentinel }[]) =>
  api.post<DaemonSaveAnswer>(`/api/daemon/${id}/config`, { config });

export const startDaemon = (id: number, startAuto: boolean) =>
  api.post<{ message: string }>(`/api/daemon/${id}/start`, { start_auto: startAuto });
