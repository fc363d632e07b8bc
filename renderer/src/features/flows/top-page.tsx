/**
 * Top talkers (issue 15; the designed `GET /api/netflow/top`): top sources, destinations,
 * conversations and protocols by bytes over the console's window, and bits per second hour by
 * hour. Bars are plain elements (as the logs' severity chart): each is a link to the flow list
 * filtered to it, so the chart is also the way in. The user's enabled exclusions apply.
 */
import { Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';

import { TimeSeriesChart } from '../../components/charts/time-series-chart.js';
import { EmptyState, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { WindowPicker } from '../../components/ui/window-picker.js';
import { formatBits, formatTime } from '../../lib/format.js';
import { usePrefs } from '../../lib/prefs.js';
import { AGG_KEYS, endpointName, flowWindowKey, flowWindowOf, seriesPoints } from './flow-model.js';
import {
  FlowExclusions,
  FlowFilterForm,
  FlowGate,
  FlowTabs,
  useFlowView,
} from './flow-explorer.js';
import { flowTopQuery, type FlowTop } from './flows-api.js';
import { Refusal } from './refusal.js';
import { BarList, type Bar } from './bar-list.js';

/** The top route's answer as the four bar lists. */
export function barsOf(
  top: FlowTop,
): Record<'sources' | 'destinations' | 'conversations' | 'protocols', Bar[]> {
  const detail = (e: { packets: number; flows: number }) =>
    `${e.packets.toLocaleString()} packets in ${e.flows.toLocaleString()} flows`;
  return {
    sources: top.top_sources.map((e) => ({
      key: e.ip,
      label: endpointName(e.ip, e.host),
      bytes: e.bytes,
      detail: detail(e),
      filters: { src_ip: e.ip },
    })),
    destinations: top.top_destinations.map((e) => ({
      key: e.ip,
      label: endpointName(e.ip, e.host),
      bytes: e.bytes,
      detail: detail(e),
      filters: { dst_ip: e.ip },
    })),
    conversations: top.top_conversations.map((e) => ({
      key: `${e.src_ip}|${e.dst_ip}|${e.dst_port}|${e.protocol}`,
      label: `${e.src_host ?? e.src_ip} → ${e.dst_host ?? e.dst_ip}:${e.dst_port} ${e.prot_name}`,
      bytes: e.bytes,
      detail: detail(e),
      filters: { src_ip: e.src_ip, dst_ip: e.dst_ip, dst_port: e.dst_port, protocol: e.protocol },
    })),
    protocols: top.top_protocols.map((e) => ({
      key: String(e.protocol),
      label: e.prot_name,
      bytes: e.bytes,
      detail: detail(e),
      filters: { protocol: e.protocol },
    })),
  };
}

export function Page() {
  return (
    <FlowGate title="Top talkers">
      <Top />
    </FlowGate>
  );
}

function Top() {
  const shared = usePrefs((s) => s.window);
  const { params, filters, setFilters } = useFlowView();
  const window = flowWindowOf(params, shared, false);
  const top = useQuery({
    ...flowTopQuery(window, flowWindowKey(window), filters, 10),
    placeholderData: keepPreviousData,
  });
  const answer = top.data;
  const bars = answer ? barsOf(answer) : null;
  const points = answer ? seriesPoints(answer.series) : [];
  const domain: [number, number] | undefined = answer
    ? [Date.parse(answer.startTime), Date.parse(answer.endTime)]
    : undefined;
  return (
    <Stack gap="sm">
      <PageHeader
        title="Top talkers"
        subtitle={
          answer ? (
            <span data-testid="echoed-window">
              {formatTime(answer.startTime)} → {formatTime(answer.endTime)}
            </span>
          ) : undefined
        }
      >
        <WindowPicker />
      </PageHeader>
      <FlowTabs />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        <FlowFilterForm keys={AGG_KEYS} applied={filters} onApply={setFilters} />
        <FlowExclusions current={filters} />
      </SimpleGrid>
      {top.isError ? (
        <Refusal error={top.error} onRetry={() => void top.refetch()} />
      ) : !answer || !bars ? (
        <RowsSkeleton rows={10} />
      ) : (
        <>
          <Paper withBorder p="sm" data-testid="flow-rate">
            <Group justify="space-between" mb={4}>
              <Title order={2}>Traffic</Title>
              <Text size="xs" c="dimmed">
                mean bits per second of each hour
              </Text>
            </Group>
            {points.length === 0 ? (
              <EmptyState title="No flows in this window">
                Routers and switches send NetFlow v5, v9 or IPFIX to the appliance’s flow port.
              </EmptyState>
            ) : (
              <TimeSeriesChart
                data={points}
                series={[{ key: 'bps', label: 'Bits per second', color: '#228be6', area: true }]}
                format={formatBits}
                domain={domain}
                height={180}
                label={`Traffic in bits per second, hour by hour: ${points.length} hours`}
              />
            )}
          </Paper>
          <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
            <BarList title="Top sources" bars={bars.sources} testId="top-sources" />
            <BarList title="Top destinations" bars={bars.destinations} testId="top-destinations" />
            <BarList
              title="Top conversations"
              bars={bars.conversations}
              testId="top-conversations"
            />
            <BarList title="Top protocols" bars={bars.protocols} testId="top-protocols" />
          </SimpleGrid>
        </>
      )}
    </Stack>
  );
}
