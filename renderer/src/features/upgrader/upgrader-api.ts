/**
 * The OS upgrade bootstrap (spec part 1, permission `sa`): the upgrader status, install, start
 * (the upgrader's URL and its one-time token, returned once) and stop. Failures are
 * `{status: 404|500, message}`, which the client turns into an ApiError. Query keys: `upgrader`.
 */
import { queryOptions } from '@tanstack/react-query';

import { api } from '../../lib/api-client.js';

export interface UpgraderStatus {
  codename: string;
  appliance_version: string;
  database_clusters: {
    version: string;
    cluster: string;
    port: string;
    status: string;
    raw: string;
  }[];
  upgrader_installed: boolean;
  upgrader_active: string;
  upgrader_enabled: string;
  upgrader_package_available: boolean;
}

export interface UpgraderSession {
  url: string;
  token: string;
}

export const upgraderKeys = { all: ['upgrader'] as const, info: ['upgrader', 'info'] as const };

export const upgraderInfoQuery = queryOptions({
  queryKey: upgraderKeys.info,
  queryFn: () => api.get<UpgraderStatus>('/api/osUpgrade/info'),
});

export const installUpgrader = () =>
  api.post<{ ok: true; already_installed?: true }>('/api/osUpgrade/install');
export const startUpgrader = () => api.post<UpgraderSession>('/api/osUpgrade/start');
export const stopUpgrader = () => api.post<{ ok: true }>('/api/osUpgrade/stop');

/** The host lacks the mechanism (no root helper): the appliance says `unavailable`. */
export const hostHasUpgrader = (s: UpgraderStatus) =>
  s.upgrader_active !== 'unavailable' && s.upgrader_enabled !== 'unavailable';
