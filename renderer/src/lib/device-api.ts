/** One device: GET /api/device/{device} over a window, its tags, trackers and walks. */
import { queryOptions } from '@tanstack/react-query';

import { api, type ApiResult } from './api-client.js';
import { windowKey, windowQuery, type TimeWindow } from './prefs.js';
import { keys } from './query-keys.js';

export type DeviceDetail = ApiResult<'/api/device/{device}', 'get'>['device'];

export interface LatencyPoint {
  latency: number;
  loss: number;
  timestamp: string;
}
export interface InterfaceTracker {
  id: number;
  interface: number;
  name: string;
  description: string | null;
  interval: number;
  enable_logging: boolean;
  logs: { timestamp: string; in_bps: number; out_bps: number; oper_status?: number }[];
}
export interface DiskTracker {
  id: number;
  name: string;
  interval: number;
  available: number | null;
  total: number | null;
  logs: { timestamp: string; available: number; total: number }[];
}
export interface PortTracker {
  id: number;
  port: number;
  label: string;
  state: string | null;
  interval: number;
  latency: number | null;
  logs: { timestamp: string; latency: number }[];
}
export interface OidTracker {
  id: number;
  oid: string;
  label: string;
  datatype: 'S' | 'I';
  interval: number;
  value: string | null;
  name?: string;
  logs: { timestamp: string; value: string | null }[];
}

export function deviceQuery(id: number, window: TimeWindow) {
  return queryOptions({
    queryKey: keys.devices.detail(id, windowKey(window)),
    queryFn: ({ signal }) =>
      api.get<ApiResult<'/api/device/{device}', 'get'>>(`/api/device/${id}`, {
        query: windowQuery(window),
        signal,
      }),
    select: (a) => a.device,
    // Live: relative windows refresh; the previous answer stays on screen meanwhile (no flicker).
    refetchInterval: window.kind === 'relative' ? 30_000 : false,
    placeholderData: (previous) => previous,
  });
}

export interface LatencyStats {
  dayAvgLatency: number | null;
  weekAvgLatency: number | null;
  dayAvgLoss: number | null;
  dayUptime: number | null;
  weekUptime: number | null;
  allTimeUptime: number | null;
  currentLatency: number | null;
  currentLoss: number | null;
  monitoringDuration: number | null;
}

export function latencyStatsQuery(icmpingId: number) {
  return queryOptions({
    queryKey: keys.trackers.latencyStats(icmpingId),
    queryFn: () =>
      api.post<{ status: number; data?: LatencyStats; message?: string }>('/api/latency/stats', {
        icmpingId,
      }),
    select: (a) => a.data ?? null,
    refetchInterval: 60_000,
  });
}

export interface DiskStats {
  oneDayGrowthKB: number | null;
  oneWeekGrowthKB: number | null;
  oneMonthGrowthKB: number | null;
  allTimeGrowthKB: number | null;
  estimatedFillTime: string | number | null;
}

export function diskStatsQuery(diskId: number) {
  return queryOptions({
    queryKey: keys.trackers.diskStats(diskId),
    queryFn: () =>
      api.post<{ status: number; data?: DiskStats; message?: string }>('/api/disk/stats', {
        diskId,
      }),
    select: (a) => a.data ?? null,
    staleTime: 5 * 60_000,
  });
}

export interface LatencyTrackerRecord {
  icmping_id: number;
  id: number;
  label: string;
  interval: number;
  timeout: number;
  lossout: number;
}

export function latencyTrackerOf(deviceId: number) {
  return queryOptions({
    queryKey: [...keys.trackers.ofDevice(deviceId), 'latency'],
    queryFn: async () => {
      try {
        return await api.get<LatencyTrackerRecord>(`/api/device/${deviceId}/latency`);
      } catch (err) {
        if ((err as { status?: number }).status === 404) return null;
        throw err;
      }
    },
  });
}

/**
 * A device's trackers as widgets with the caller's saved layout and pinned widgets
 * (GET /api/getDeviceTrackers, `devices`); null when the device has no trackers (HTTP 204).
 */
export type DeviceWidgetsAnswer = ApiResult<'/api/getDeviceTrackers', 'get'>;

export function deviceWidgetsQuery(deviceId: number) {
  return queryOptions({
    queryKey: keys.devices.widgets(deviceId),
    queryFn: ({ signal }) =>
      api.get<DeviceWidgetsAnswer | null>('/api/getDeviceTrackers', {
        query: { deviceId },
        signal,
      }),
    staleTime: 60_000,
  });
}

export function saveDeviceLayouts(deviceId: number, layouts: object): Promise<unknown> {
  return api.post('/api/setDeviceLayouts', { deviceId, layouts });
}

export function saveDevicePinnedWidgets(
  deviceId: number,
  pinnedWidgets: string[],
): Promise<unknown> {
  return api.post('/api/setDevicePinnedWidgets', { deviceId, pinnedWidgets });
}

/** Forgets the saved layout (pinned widgets stay). The API answers 404 when none was saved. */
export function deleteDeviceLayouts(deviceId: number): Promise<unknown> {
  return api.post('/api/deleteDeviceLayouts', { deviceId });
}
