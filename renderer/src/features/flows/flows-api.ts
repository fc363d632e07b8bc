/**
 * The flow endpoints (spec part 3, Flow explorer; the designed `GET /api/netflow/top`) for the
 * console: query keys (the `flows` family), fetchers and query options, typed from the generated
 * api-types. Saved filters go through the logs' module (`/api/netflow/filters`, logs-api.ts).
 */
import { queryOptions } from '@tanstack/react-query';

import { api, type ApiResult } from '../../lib/api-client.js';
import { flowWindowQuery, type FlowFilters, type FlowWindow } from './flow-model.js';

export type FlowPage = ApiResult<'/api/netflow/list', 'get'>;
export type FlowRow = FlowPage['data'][number];
export type AggPage = ApiResult<'/api/aggnetflow/list', 'get'>;
export type AggRow = AggPage['data'][number];
export type FlowTop = ApiResult<'/api/netflow/top', 'get'>;

/** The device record's flow summary (`netflow` of GET /api/device/{device}). */
export interface FlowPartner {
  ip: string;
  device_id: number | null;
  host: string | null;
  bytes: number;
}
export interface DeviceFlowSummary {
  bytes: number;
  count: number;
  top_partners: FlowPartner[];
}

export type AggSort = 'start_time' | 'bytes';

export const flowKeys = {
  all: ['flows'] as const,
  list: (window: string, filters: string, limit: number, page: number) =>
    ['flows', 'list', window, filters, limit, page] as const,
  agg: (window: string, filters: string, sort: AggSort, limit: number, page: number) =>
    ['flows', 'agg', window, filters, sort, limit, page] as const,
  top: (window: string, filters: string, top: number) =>
    ['flows', 'top', window, filters, top] as const,
};

const filtersParam = (filters: FlowFilters) =>
  Object.keys(filters).length ? JSON.stringify(filters) : '';

export function flowListQuery(
  window: FlowWindow,
  windowKey: string,
  filters: FlowFilters,
  limit: number,
  page: number,
) {
  const f = filtersParam(filters);
  return queryOptions({
    queryKey: flowKeys.list(windowKey, f, limit, page),
    queryFn: ({ signal }) =>
      api.get<FlowPage>('/api/netflow/list', {
        query: { ...flowWindowQuery(window), filters: f || undefined, limit, page },
        signal,
      }),
    staleTime: 10_000,
    // Active flows change by the minute: the list follows them.
    refetchInterval: window.kind === 'active' ? 30_000 : false,
    retry: false,
  });
}

export function aggListQuery(
  window: FlowWindow,
  windowKey: string,
  filters: FlowFilters,
  sort: AggSort,
  limit: number,
  page: number,
) {
  const f = filtersParam(filters);
  return queryOptions({
    queryKey: flowKeys.agg(windowKey, f, sort, limit, page),
    queryFn: ({ signal }) =>
      api.get<AggPage>('/api/aggnetflow/list', {
        query: { ...flowWindowQuery(window), filters: f || undefined, sort, limit, page },
        signal,
      }),
    staleTime: 15_000,
    retry: false,
  });
}

export function flowTopQuery(
  window: FlowWindow,
  windowKey: string,
  filters: FlowFilters,
  top = 10,
) {
  const f = filtersParam(filters);
  return queryOptions({
    queryKey: flowKeys.top(windowKey, f, top),
    queryFn: ({ signal }) =>
      api.get<FlowTop>('/api/netflow/top', {
        query: { ...flowWindowQuery(window), filters: f || undefined, top },
        signal,
      }),
    staleTime: 15_000,
    retry: false,
  });
}
