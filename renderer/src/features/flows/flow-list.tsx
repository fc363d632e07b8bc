/**
 * The flow list and the aggregated (conversation) list (spec part 3, Flow explorer). The flow
 * list shows active flows by default (an end time within the last 60 s: the appliance's
 * definition, docs/features/flows.md) or the console's shared window; bytes descending, paged.
 * The aggregated list is the hourly conversation rollup over the window, sorted by start time or
 * bytes. A window the appliance refuses (an inverted `startTime`/`endTime` in the URL) shows its
 * message.
 */
import {
  Badge,
  Group,
  Pagination,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';

import { EmptyState, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { VirtualTable, type Column } from '../../components/ui/virtual-table.js';
import { WindowPicker } from '../../components/ui/window-picker.js';
import { formatBits, formatBytes, formatTime } from '../../lib/format.js';
import { usePrefs } from '../../lib/prefs.js';
import { pageCount } from '../logs/log-model.js';
import { AGG_KEYS, flowWindowKey, flowWindowOf, LIST_KEYS, type FlowWindow } from './flow-model.js';
import {
  Endpoint,
  FlowExclusions,
  FlowFilterForm,
  FlowGate,
  FlowTabs,
  useFlowView,
} from './flow-explorer.js';
import { Refusal } from './refusal.js';
import {
  aggListQuery,
  flowListQuery,
  type AggPage,
  type AggRow,
  type AggSort,
  type FlowPage,
  type FlowRow,
} from './flows-api.js';

const LIMITS = ['100', '500', '1000', '5000'];

const num = (v: number | null | undefined) =>
  v === null || v === undefined ? '–' : v.toLocaleString();
const mono = (text: string) => <span className="console-mono">{text}</span>;

/** What a flow row and a conversation row share (the columns both lists show). */
type SharedRow = Pick<
  FlowRow & AggRow,
  | 'dst_ip'
  | 'dst_port'
  | 'dst_id'
  | 'dst_host'
  | 'prot_name'
  | 'bytes'
  | 'packets'
  | 'bps'
  | 'start_time'
  | 'end_time'
  | 'flow_src'
>;

/**
 * The columns both lists share, in order: destination, protocol, bytes, packets, then `middle`
 * (the list's own), rate, the two times under the list's names, and the exporter.
 */
function sharedColumns<R extends SharedRow>(
  middle: Column<R>[],
  times: { start: string; end: string },
): Column<R>[] {
  return [
    {
      id: 'dst',
      header: 'Destination',
      size: 200,
      grow: true,
      sortValue: (r) => r.dst_ip,
      cell: (r) => <Endpoint ip={r.dst_ip} port={r.dst_port} id={r.dst_id} host={r.dst_host} />,
    },
    { id: 'proto', header: 'Protocol', size: 80, sortValue: (r) => r.prot_name },
    {
      id: 'bytes',
      header: 'Bytes',
      size: 90,
      sortValue: (r) => r.bytes,
      cell: (r) => <span title={`${num(r.bytes)} bytes`}>{formatBytes(r.bytes)}</span>,
    },
    {
      id: 'packets',
      header: 'Packets',
      size: 80,
      sortValue: (r) => r.packets,
      cell: (r) => num(r.packets),
    },
    ...middle,
    {
      id: 'bps',
      header: 'Rate',
      size: 100,
      sortValue: (r) => r.bps,
      cell: (r) => formatBits(r.bps),
    },
    {
      id: 'start',
      header: times.start,
      size: 190,
      sortValue: (r) => r.start_time,
      cell: (r) => mono(formatTime(r.start_time)),
    },
    {
      id: 'end',
      header: times.end,
      size: 190,
      sortValue: (r) => r.end_time,
      cell: (r) => mono(formatTime(r.end_time)),
    },
    {
      id: 'flow_src',
      header: 'Exporter',
      size: 120,
      sortValue: (r) => r.flow_src,
      cell: (r) => mono(r.flow_src),
    },
  ];
}

const FLOW_COLUMNS: Column<FlowRow>[] = [
  {
    id: 'src',
    header: 'Source',
    size: 200,
    grow: true,
    sortValue: (r) => r.src_ip,
    cell: (r) => <Endpoint ip={r.src_ip} port={r.src_port} id={r.src_id} host={r.src_host} />,
  },
  ...sharedColumns<FlowRow>([], { start: 'Start', end: 'End' }),
  {
    id: 'ifaces',
    header: 'In → out',
    size: 80,
    cell: (r) => `${r.in_iface ?? '–'} → ${r.out_iface ?? '–'}`,
  },
  { id: 'vlan', header: 'VLAN', size: 60, sortValue: (r) => r.vlan, cell: (r) => num(r.vlan) },
];

const AGG_COLUMNS: Column<AggRow>[] = [
  {
    id: 'src',
    header: 'Source',
    size: 180,
    grow: true,
    sortValue: (r) => r.src_ip,
    cell: (r) => <Endpoint ip={r.src_ip} id={r.src_id} host={r.src_host} />,
  },
  {
    id: 'src_ports',
    header: 'Source ports',
    size: 130,
    cell: (r) => (
      <span className="console-mono" title={r.src_ports.join(', ')}>
        {r.src_ports.slice(0, 4).join(', ')}
        {r.src_ports.length > 4 ? ` +${r.src_ports.length - 4}` : ''}
      </span>
    ),
  },
  ...sharedColumns<AggRow>(
    [
      {
        id: 'flows',
        header: 'Flows',
        size: 70,
        sortValue: (r) => r.flows,
        cell: (r) => num(r.flows),
      },
    ],
    { start: 'First start', end: 'Last end' },
  ),
];

function windowText(
  w: FlowWindow,
  answer: { startTime: string | null; endTime: string | null } | undefined,
) {
  if (w.kind === 'active') return 'Active flows (ended within the last minute)';
  if (!answer?.startTime || !answer.endTime) return '';
  return `${formatTime(answer.startTime)} → ${formatTime(answer.endTime)}`;
}

function Pager({
  answer,
  limit,
  page,
  fetching,
  onPage,
  onLimit,
  noun,
}: {
  answer: { total: number; total_capped: boolean; data: unknown[] };
  limit: number;
  page: number;
  fetching: boolean;
  onPage: (page: number) => void;
  onLimit: (limit: number) => void;
  noun: string;
}) {
  const pages = pageCount(answer.total, limit, answer.total_capped, page, answer.data.length);
  const total = `${answer.total_capped ? 'at least ' : ''}${answer.total.toLocaleString()} ${noun}`;
  return (
    <Group justify="space-between">
      <Group gap="xs">
        <Text size="sm" c="dimmed" data-testid="row-count">
          {answer.data.length
            ? `Rows ${((page - 1) * limit + 1).toLocaleString()}–${(
                (page - 1) * limit +
                answer.data.length
              ).toLocaleString()} of ${total}`
            : total}
        </Text>
        {fetching ? (
          <Text size="xs" c="dimmed">
            updating…
          </Text>
        ) : null}
      </Group>
      <Group gap="xs">
        <Select
          aria-label="Rows per page"
          data={LIMITS}
          value={String(limit)}
          onChange={(v) => v && onLimit(Number(v))}
          w={90}
          allowDeselect={false}
        />
        <Pagination
          total={pages}
          value={page}
          onChange={onPage}
          size="sm"
          getControlProps={(control) => ({ 'aria-label': `${control} page` })}
        />
      </Group>
    </Group>
  );
}

function useLimit(params: URLSearchParams) {
  return LIMITS.includes(params.get('limit') ?? '') ? Number(params.get('limit')) : 1000;
}

export function FlowListPage() {
  return (
    <FlowGate title="Flows">
      <FlowList />
    </FlowGate>
  );
}

function FlowList() {
  const shared = usePrefs((s) => s.window);
  const { params, filters, page, set, setFilters } = useFlowView();
  const window = flowWindowOf(params, shared, true);
  const wKey = flowWindowKey(window);
  const limit = useLimit(params);
  const list = useQuery({
    ...flowListQuery(window, wKey, filters, limit, page),
    placeholderData: keepPreviousData,
  });
  const answer: FlowPage | undefined = list.data;
  const ranged = params.get('startTime') && params.get('endTime');
  return (
    <Stack gap="sm">
      <PageHeader
        title="Flows"
        subtitle={<span data-testid="echoed-window">{windowText(window, answer)}</span>}
      >
        {ranged ? (
          <Badge variant="light" title="The window comes from the page's address">
            linked window
          </Badge>
        ) : (
          <SegmentedControl
            aria-label="Which flows"
            value={window.kind === 'active' ? 'active' : 'window'}
            onChange={(v) => set({ window: v === 'window' ? '1' : null })}
            data={[
              { value: 'active', label: 'Active now' },
              { value: 'window', label: 'In a window' },
            ]}
            data-testid="flow-mode"
          />
        )}
        {window.kind !== 'active' && !ranged ? <WindowPicker /> : null}
      </PageHeader>
      <FlowTabs />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        <FlowFilterForm keys={LIST_KEYS} applied={filters} onApply={setFilters} />
        <FlowExclusions current={filters} />
      </SimpleGrid>
      {list.isError ? (
        <Refusal error={list.error} onRetry={() => void list.refetch()} />
      ) : !answer ? (
        <RowsSkeleton rows={10} />
      ) : (
        <>
          {answer.data.length === 0 ? (
            <EmptyState
              title={window.kind === 'active' ? 'No active flows' : 'No flows in this window'}
            >
              {Object.keys(filters).length
                ? 'Nothing matches these filters. Clear them or widen the window.'
                : window.kind === 'active'
                  ? 'Exporters send a flow once it has ended: active flows are those that ended within the last minute. Choose “In a window” for earlier ones.'
                  : 'Routers and switches send NetFlow v5, v9 or IPFIX to the appliance’s flow port; flows appear here as they arrive.'}
            </EmptyState>
          ) : (
            <VirtualTable
              data={answer.data}
              columns={FLOW_COLUMNS}
              height="calc(100vh - 420px)"
              label="Flows"
              getRowId={(r) => String(r.id)}
            />
          )}
          <Pager
            answer={answer}
            limit={limit}
            page={page}
            fetching={list.isFetching}
            onPage={(p) => set({ page: p > 1 ? String(p) : null })}
            onLimit={(l) => set({ limit: l === 1000 ? null : String(l) })}
            noun={answer.total === 1 ? 'flow' : 'flows'}
          />
        </>
      )}
    </Stack>
  );
}

export function AggregatedPage() {
  return (
    <FlowGate title="Conversations">
      <Aggregated />
    </FlowGate>
  );
}

function Aggregated() {
  const shared = usePrefs((s) => s.window);
  const { params, filters, page, set, setFilters } = useFlowView();
  const window = flowWindowOf(params, shared, false);
  const wKey = flowWindowKey(window);
  const limit = useLimit(params);
  const sort: AggSort = params.get('sort') === 'bytes' ? 'bytes' : 'start_time';
  const list = useQuery({
    ...aggListQuery(window, wKey, filters, sort, limit, page),
    placeholderData: keepPreviousData,
  });
  const answer: AggPage | undefined = list.data;
  const columns = useMemo(() => AGG_COLUMNS, []);
  return (
    <Stack gap="sm">
      <PageHeader
        title="Conversations"
        subtitle={<span data-testid="echoed-window">{windowText(window, answer)}</span>}
      >
        <SegmentedControl
          aria-label="Sort by"
          value={sort}
          onChange={(v) => set({ sort: v === 'bytes' ? 'bytes' : null })}
          data={[
            { value: 'start_time', label: 'Newest first' },
            { value: 'bytes', label: 'Most bytes' },
          ]}
          data-testid="agg-sort"
        />
        <WindowPicker />
      </PageHeader>
      <FlowTabs />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        <FlowFilterForm keys={AGG_KEYS} applied={filters} onApply={setFilters} />
        <FlowExclusions current={filters} />
      </SimpleGrid>
      <Text size="xs" c="dimmed">
        One row per conversation and hour. Here “Source port” matches any of a conversation’s source
        ports and “Port” its destination port.
      </Text>
      {list.isError ? (
        <Refusal error={list.error} onRetry={() => void list.refetch()} />
      ) : !answer ? (
        <RowsSkeleton rows={10} />
      ) : (
        <>
          {answer.data.length === 0 ? (
            <EmptyState title="No conversations in this window">
              {Object.keys(filters).length
                ? 'Nothing matches these filters. Clear them or widen the window.'
                : 'Conversations are the flows summed per source, destination, port and protocol, hour by hour.'}
            </EmptyState>
          ) : (
            <VirtualTable
              data={answer.data}
              columns={columns}
              height="calc(100vh - 440px)"
              label="Conversations"
              getRowId={(r, i) =>
                `${r.start_time}|${r.src_ip}|${r.dst_ip}|${r.dst_port}|${r.protocol}|${i}`
              }
            />
          )}
          <Pager
            answer={answer}
            limit={limit}
            page={page}
            fetching={list.isFetching}
            onPage={(p) => set({ page: p > 1 ? String(p) : null })}
            onLimit={(l) => set({ limit: l === 1000 ? null : String(l) })}
            noun={answer.total === 1 ? 'conversation' : 'conversations'}
          />
        </>
      )}
    </Stack>
  );
}
