/**
 * The flow explorer's routes (spec part 3 "Flow explorer", permission `vne`): the flow list, the
 * aggregated list, the saved filters (the logs' one module, feed `flows`, one set for both
 * lists) and the designed aggregate GET /api/netflow/top. Bad windows, filters and paging answer
 * 400 `{status: false, message}` (the spec's list failure).
 */
import { Type, type Static } from '@sinclair/typebox';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { savedFilterRoutes, type SavedFilters } from '../logs/index.js';
import { FlowQueryError } from './flow-query.rules.js';
import { MAX_LIMIT, type FlowsReader } from './flows.service.js';

const TAGS = ['flows'];
const access = allOf('vne');

const Window = {
  startTime: Type.Optional(Type.String({ maxLength: 64 })),
  endTime: Type.Optional(Type.String({ maxLength: 64 })),
  hours: Type.Optional(Type.String({ maxLength: 16 })),
  filters: Type.Optional(Type.String({ maxLength: 16_384 })),
};
const ListQuery = Type.Object({
  ...Window,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
});
const AggQuery = Type.Object({
  ...Window,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  sort: Type.Optional(Type.String({ maxLength: 64 })),
});
const TopQuery = Type.Object({
  ...Window,
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);
const Enrichment = {
  src_id: Nullable(Type.Integer()),
  src_host: Nullable(Type.String()),
  src_profile: Nullable(Type.String()),
  dst_id: Nullable(Type.Integer()),
  dst_host: Nullable(Type.String()),
  dst_profile: Nullable(Type.String()),
  prot_name: Type.String(),
  bps: Type.Integer(),
};
const Common = {
  src_ip: Type.String(),
  dst_ip: Type.String(),
  dst_port: Type.Integer(),
  protocol: Type.Integer(),
  bytes: Type.Integer(),
  packets: Type.Integer(),
  start_time: Type.String(),
  end_time: Type.String(),
  flow_src: Type.String(),
  vlan: Nullable(Type.Integer()),
  in_iface: Nullable(Type.Integer()),
  out_iface: Nullable(Type.Integer()),
  ...Enrichment,
};
const Flow = Type.Object({ id: Type.Integer(), src_port: Type.Integer(), ...Common });
const Conversation = Type.Object({
  src_ports: Type.Array(Type.Integer()),
  flows: Type.Integer(),
  ...Common,
});
const pageOf = (row: typeof Flow | typeof Conversation, nullableWindow: boolean) =>
  Type.Object({
    current_page: Type.Integer(),
    data: Type.Array(row),
    per_page: Type.Integer(),
    total: Type.Integer(),
    total_capped: Type.Boolean(),
    startTime: nullableWindow ? Nullable(Type.String()) : Type.String(),
    endTime: nullableWindow ? Nullable(Type.String()) : Type.String(),
  });
const Totals = { bytes: Type.Integer(), packets: Type.Integer(), flows: Type.Integer() };
const Talker = Type.Object({
  ip: Type.String(),
  device_id: Nullable(Type.Integer()),
  host: Nullable(Type.String()),
  ...Totals,
});
const Top = Type.Object({
  startTime: Type.String(),
  endTime: Type.String(),
  top_sources: Type.Array(Talker),
  top_destinations: Type.Array(Talker),
  top_conversations: Type.Array(
    Type.Object({
      src_ip: Type.String(),
      dst_ip: Type.String(),
      dst_port: Type.Integer(),
      protocol: Type.Integer(),
      prot_name: Type.String(),
      src_id: Nullable(Type.Integer()),
      src_host: Nullable(Type.String()),
      dst_id: Nullable(Type.Integer()),
      dst_host: Nullable(Type.String()),
      ...Totals,
    }),
  ),
  top_protocols: Type.Array(
    Type.Object({ protocol: Type.Integer(), prot_name: Type.String(), ...Totals }),
  ),
  series: Type.Array(Type.Object({ time: Type.String(), bps: Type.Integer(), ...Totals })),
});
const FlowPage = pageOf(Flow, true);
const ConversationPage = pageOf(Conversation, false);
const StatusMessage = Type.Object({ status: Type.Literal(false), message: Type.String() });

const LIST_ERRORS: RouteErrors = {
  validation: 'statusMessage',
  validationStatus: 400,
  failure: 'statusMessage',
  internal: 'Failed to read the flows.',
};

const readInput = <T>(read: () => T): T => {
  try {
    return read();
  } catch (err) {
    if (err instanceof FlowQueryError) throw failure(400, err.message);
    throw err;
  }
};

export interface FlowsRoutesDeps {
  reader: FlowsReader;
  filters: SavedFilters;
}

export async function flowsRoutes(app: App, deps: FlowsRoutesDeps): Promise<void> {
  const { reader } = deps;

  // spec: part3 > Flow explorer > GET /api/netflow/list
  defineRoute(app, {
    method: 'GET',
    url: '/api/netflow/list',
    access,
    errors: LIST_ERRORS,
    tags: TAGS,
    summary: 'Flows by bytes descending: active flows (end within 60 s) or a window',
    description:
      'Without `startTime`, `endTime` or `hours`: active flows (end time within the last 60 s), `startTime`/`endTime` null. With a window: `start_time >= startTime` and `end_time <= endTime`. `total` is exact up to 10,000 (`total_capped` beyond); rows deeper than 100,000 are not served.',
    querystring: ListQuery,
    response: { 200: FlowPage, 400: StatusMessage },
    // The reader's rows are built to this schema (flows.service.ts); the response schema checks them.
    handler: async (request) =>
      readInput(() => reader.list(identityOf(request), request.query)) as Static<typeof FlowPage>,
  });

  // spec: part3 > Flow explorer > GET /api/aggnetflow/list
  defineRoute(app, {
    method: 'GET',
    url: '/api/aggnetflow/list',
    access,
    errors: LIST_ERRORS,
    tags: TAGS,
    summary: 'Conversations per hour (`src_ports` up to 64), sorted by start_time or bytes',
    description:
      '`sort` is `start_time` (default) or `bytes`, always descending; any other value is `start_time`. Without a window: the last 24 hours.',
    querystring: AggQuery,
    response: { 200: ConversationPage, 400: StatusMessage },
    handler: async (request) =>
      readInput(() => reader.aggregated(identityOf(request), request.query)) as Static<
        typeof ConversationPage
      >,
  });

  // designed: top talkers and bits per second over time, from the hourly rollup
  defineRoute(app, {
    method: 'GET',
    url: '/api/netflow/top',
    access,
    errors: LIST_ERRORS,
    tags: TAGS,
    summary: 'Top sources, destinations, conversations and protocols by bytes, and bytes per hour',
    description:
      'Over a window (`startTime`/`endTime` or `hours`, default the last 24 hours) of the hourly conversation rollup; `filters` takes the aggregated list keys; `top` (1 to 100, default 10) entries per list; `series` has one point per hour with its mean bits per second.',
    querystring: TopQuery,
    response: { 200: Top, 400: StatusMessage },
    handler: async (request) =>
      readInput(() => reader.top(identityOf(request), request.query)) as Static<typeof Top>,
  });

  // spec: part3 > Flow explorer > saved filters (one set for both lists)
  savedFilterRoutes(app, deps.filters, { prefix: '/api/netflow', tag: 'flows', access });
}
