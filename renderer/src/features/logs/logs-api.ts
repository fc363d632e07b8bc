/**
 * The log endpoints of spec part 3 (Syslog, Windows events, IDS events, Syslog access config,
 * event-log trackers) for the console: query keys (the `logs` family, as lib/query-keys.ts
 * spells keys), fetchers and query options. Rows are the appliance's own field names; every text
 * in them is device-supplied and is rendered as text only.
 */
import { queryOptions } from '@tanstack/react-query';

import { api } from '../../lib/api-client.js';
import type { TimeWindow } from '../../lib/prefs.js';
import type { FeedId, LogFilters } from './log-model.js';

export interface LogPage<Row> {
  current_page: number;
  data: Row[];
  per_page: number;
  total: number;
  /** `total` is a lower bound (the appliance stopped counting). */
  total_capped: boolean;
  /** The request ran out of its time budget: rows and total cover the newest part only. */
  partial: boolean;
  startTime: string;
  endTime: string;
}

export interface SeveritySummary {
  severityCounts: Record<string, number>;
  partial: boolean;
  startTime: string;
  endTime: string;
}

export interface SyslogRow {
  id: number;
  device_id: number | null;
  timestamp: string;
  facility: number;
  severity: number;
  source: string;
  message: string;
  host: string | null;
  sender: string | null;
  malformed: boolean | number | null;
}

export interface EventLogRow {
  id: number;
  device_id: number | null;
  timestamp: string;
  event_id: number;
  log: string | null;
  source: string | null;
  severity: number;
  data: string | null;
}

export interface IdsRow {
  id: number;
  timestamp: string;
  signature_id: number;
  signature?: string | null;
  category?: string | null;
  severity: number;
  proto: string | null;
  iface: string | null;
  vlan: number | null;
  src_ip: string;
  src_port: number | null;
  dst_ip: string;
  dst_port: number | null;
  src_id: number | null;
  src_host: string | null;
  src_profile: string | null;
  dst_id: number | null;
  dst_host: string | null;
  dst_profile: string | null;
  raw?: string | null;
}

export type LogRow = SyslogRow | EventLogRow | IdsRow;

export interface SavedFilter {
  id: number;
  users_id: number;
  label: string;
  filter: Record<string, unknown>;
  enabled: boolean;
}

/** The feeds with saved filters: the three logs and the flows (`/api/netflow/filters`, one set for both flow lists). */
export type FilterFeedId = FeedId | 'netflow';

export interface SyslogConfig {
  enabled: boolean;
  min_severity: number;
  device_id: number;
}

export interface EventLogQuery {
  id: number;
  label: string;
}

export interface EventLogTracker {
  id: number;
  device_id: number;
  query_id: number;
  label?: string;
  last_polled_at?: string | null;
}

export const logKeys = {
  all: ['logs'] as const,
  feed: (feed: FeedId) => ['logs', feed] as const,
  list: (feed: FeedId, window: string, filters: string, limit: number, page: number) =>
    ['logs', feed, 'list', window, filters, limit, page] as const,
  sevSum: (feed: FeedId, window: string, filters: string) =>
    ['logs', feed, 'sevSum', window, filters] as const,
  filters: (feed: FilterFeedId) => ['logs', feed, 'filters'] as const,
  recent: (feed: FeedId) => ['logs', feed, 'recent'] as const,
  event: (id: number) => ['logs', 'eve', 'event', id] as const,
  syslogConfig: (deviceId: number) => ['logs', 'syslog', 'config', deviceId] as const,
  eventlogQueries: ['logs', 'eventlog', 'queries'] as const,
  eventlogTrackers: (deviceId: number) => ['logs', 'eventlog', 'trackers', deviceId] as const,
};

/** The window as the log endpoints take it (`hours`, or `startTime` and `endTime`). */
export function logWindowQuery(window: TimeWindow): Record<string, string | number> {
  return window.kind === 'relative'
    ? { hours: window.hours }
    : { startTime: window.start, endTime: window.end };
}

const filtersParam = (filters: LogFilters) =>
  Object.keys(filters).length ? JSON.stringify(filters) : undefined;

export function logListQuery(
  feed: FeedId,
  window: TimeWindow,
  windowKey: string,
  filters: LogFilters,
  limit: number,
  page: number,
) {
  const f = filtersParam(filters) ?? '';
  return queryOptions({
    queryKey: logKeys.list(feed, windowKey, f, limit, page),
    queryFn: ({ signal }) =>
      api.get<LogPage<LogRow>>(`/api/${feed}/list`, {
        query: { ...logWindowQuery(window), filters: f || undefined, limit, page },
        signal,
      }),
    staleTime: 15_000,
    structuralSharing: false,
  });
}

export function sevSumQuery(
  feed: FeedId,
  window: TimeWindow,
  windowKey: string,
  filters: LogFilters,
) {
  const f = filtersParam(filters) ?? '';
  return queryOptions({
    queryKey: logKeys.sevSum(feed, windowKey, f),
    queryFn: ({ signal }) =>
      api.get<SeveritySummary>(`/api/${feed}/sevSum`, {
        query: { ...logWindowQuery(window), filters: f || undefined },
        signal,
      }),
    staleTime: 15_000,
  });
}

/** The newest rows of the last day (overview panels and the dashboard widget). */
export function recentLogsQuery(feed: FeedId, limit = 10) {
  return queryOptions({
    queryKey: logKeys.recent(feed),
    queryFn: ({ signal }) =>
      api.get<LogPage<LogRow>>(`/api/${feed}/list`, { query: { hours: 24, limit }, signal }),
    select: (a) => a.data,
    refetchInterval: 30_000,
  });
}

export function savedFiltersQuery(feed: FilterFeedId) {
  return queryOptions({
    queryKey: logKeys.filters(feed),
    queryFn: () => api.get<{ message: string; filters: SavedFilter[] }>(`/api/${feed}/filters`),
    select: (a) => a.filters,
  });
}

export const saveFilter = (feed: FilterFeedId, label: string, filter: LogFilters) =>
  api.post<{ message: string; filter: SavedFilter }>(`/api/${feed}/filters`, {
    label,
    filter: JSON.stringify(filter),
  });

export const toggleFilter = (feed: FilterFeedId, id: number) =>
  api.post<{ message: string; filters: SavedFilter[] }>(`/api/${feed}/filters/toggle/${id}`);

export const deleteFilter = (feed: FilterFeedId, id: number) =>
  api.delete<{ message: string }>(`/api/${feed}/filters/${id}`);

export function idsEventQuery(id: number) {
  return queryOptions({
    queryKey: logKeys.event(id),
    queryFn: () => api.get<IdsRow>(`/api/eve/get/${id}`),
    retry: false,
  });
}

export function syslogConfigQuery(deviceId: number) {
  return queryOptions({
    queryKey: logKeys.syslogConfig(deviceId),
    queryFn: () =>
      api.get<{ status: true; config: SyslogConfig }>(`/api/syslog/config/${deviceId}`),
    select: (a) => a.config,
  });
}

export const saveSyslogConfig = (deviceId: number, enabled: boolean, minSeverity: number) =>
  api.post<{ status: true; message: string; config: SyslogConfig }>(
    `/api/syslog/config/${deviceId}`,
    { enabled, min_severity: minSeverity },
  );

export const eventlogQueriesQuery = queryOptions({
  queryKey: logKeys.eventlogQueries,
  queryFn: () => api.get<EventLogQuery[]>('/api/eventlog/queries'),
  staleTime: 300_000,
});

export function eventlogTrackersQuery(deviceId: number) {
  return queryOptions({
    queryKey: logKeys.eventlogTrackers(deviceId),
    queryFn: () =>
      api.get<EventLogTracker[]>('/api/eventlog/trackers', { query: { device_id: deviceId } }),
  });
}

export const addEventlogTracker = (deviceId: number, queryId: number) =>
  api.post<EventLogTracker>('/api/eventlog/trackers', { device_id: deviceId, query_id: queryId });

export const deleteEventlogTracker = (id: number) =>
  api.delete<{ status: true }>(`/api/eventlog/trackers/${id}`);
