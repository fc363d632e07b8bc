/** The device page's charts: latency and loss, interface traffic, disk usage with fill projection. */
import {
  Group,
  Paper,
  Progress,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';

import { TimeSeriesChart } from '../../components/charts/time-series-chart.js';
import {
  latencyPoints,
  TrafficChart,
  trafficPoints,
} from '../../components/charts/tracker-charts.js';
import { EmptyState } from '../../components/ui/feedback.js';
import {
  formatBytes,
  formatDuration,
  formatMs,
  formatPercent,
  formatTime,
  parseTime,
} from '../../lib/format.js';
import {
  diskStatsQuery,
  latencyStatsQuery,
  type DiskTracker,
  type InterfaceTracker,
  type LatencyPoint,
  type OidTracker,
  type PortTracker,
} from '../../lib/device-api.js';

export function Stat({ label, value }: { label: string; value: string }) {
  return (
    <Stack gap={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" fw={600}>
        {value}
      </Text>
    </Stack>
  );
}

export function LatencyPanel({
  points,
  icmpingId,
  domain,
}: {
  points: LatencyPoint[];
  icmpingId: number | null;
  domain: [number, number];
}) {
  const data = useMemo(
    () =>
      points.map((p) => ({
        t: parseTime(p.timestamp) ?? 0,
        latency: p.latency < 0 ? null : p.latency,
        loss: p.loss,
      })),
    [points],
  );
  const stats = useQuery({ ...latencyStatsQuery(icmpingId ?? 0), enabled: icmpingId !== null });
  const s = stats.data;
  return (
    <Paper withBorder p="sm" data-testid="latency-panel">
      <Group justify="space-between" mb={4}>
        <Title order={2}>Latency and loss</Title>
        {s ? (
          <Group gap="lg">
            <Stat label="Now" value={formatMs(s.currentLatency)} />
            <Stat label="Loss now" value={formatPercent(s.currentLoss)} />
            <Stat label="Day avg" value={formatMs(s.dayAvgLatency)} />
            <Stat label="Uptime day" value={formatPercent(s.dayUptime, 2)} />
            <Stat label="Uptime week" value={formatPercent(s.weekUptime, 2)} />
          </Group>
        ) : null}
      </Group>
      {data.length === 0 ? (
        <EmptyState title="No latency readings in this window">
          {icmpingId === null
            ? 'This device has no latency tracker: add one under Trackers.'
            : 'Readings arrive at the tracker interval; pick a longer window to see older ones.'}
        </EmptyState>
      ) : (
        <TimeSeriesChart
          label="Latency and loss"
          data={data}
          domain={domain}
          height={200}
          format={(v) => formatMs(v)}
          formatRight={(v) => `${Math.round(v)}%`}
          series={[
            { key: 'latency', label: 'Latency', color: '#339af0' },
            { key: 'loss', label: 'Loss', color: '#fa5252', area: true, right: true },
          ]}
        />
      )}
    </Paper>
  );
}

export function InterfacesPanel({
  interfaces,
  domain,
}: {
  interfaces: InterfaceTracker[];
  domain: [number, number];
}) {
  const busiest = useMemo(() => {
    let best: InterfaceTracker | undefined;
    let max = -1;
    for (const i of interfaces) {
      const last = i.logs[i.logs.length - 1];
      const total = last ? last.in_bps + last.out_bps : 0;
      if (total > max) {
        max = total;
        best = i;
      }
    }
    return best;
  }, [interfaces]);
  const [chosen, setChosen] = useState<string | null>(null);
  const selected = interfaces.find((i) => String(i.id) === chosen) ?? busiest;
  const data = useMemo(() => trafficPoints(selected?.logs ?? []), [selected]);
  if (interfaces.length === 0) return null;
  return (
    <Paper withBorder p="sm" data-testid="interfaces-panel">
      <Group justify="space-between" mb={4}>
        <Title order={2}>Interface traffic</Title>
        <Select
          aria-label="Interface"
          w={280}
          searchable
          value={selected ? String(selected.id) : null}
          onChange={setChosen}
          data={interfaces.map((i) => ({
            value: String(i.id),
            label: `${i.name}${i.description ? ` (${i.description})` : ''}`,
          }))}
        />
      </Group>
      {data.length === 0 ? (
        <EmptyState title="No traffic readings in this window" />
      ) : (
        <TrafficChart
          label={`Traffic of ${selected?.name ?? 'interface'}`}
          data={data}
          domain={domain}
          height={180}
        />
      )}
    </Paper>
  );
}

function DiskRow({ disk }: { disk: DiskTracker }) {
  const last = disk.logs[disk.logs.length - 1];
  const total = last?.total ?? disk.total ?? 0;
  const available = last?.available ?? disk.available ?? 0;
  const usedPct = total > 0 ? ((total - available) / total) * 100 : null;
  const stats = useQuery(diskStatsQuery(disk.id));
  const fill = stats.data?.estimatedFillTime;
  const fillAt = parseTime(fill ?? null);
  const fillText =
    fillAt === null
      ? stats.isPending
        ? '…'
        : 'not filling'
      : `full in ~${formatDuration(Math.max(0, (fillAt - Date.now()) / 1000))}`;
  return (
    <Table.Tr>
      <Table.Td>{disk.name}</Table.Td>
      <Table.Td w={220}>
        <Progress
          value={usedPct ?? 0}
          color={
            usedPct !== null && usedPct > 90
              ? 'red'
              : usedPct !== null && usedPct > 75
                ? 'yellow'
                : 'teal'
          }
          aria-label={`${disk.name} used`}
        />
      </Table.Td>
      <Table.Td>{formatPercent(usedPct)}</Table.Td>
      <Table.Td>
        {formatBytes(total - available)} of {formatBytes(total)}
      </Table.Td>
      <Table.Td title={fillAt === null ? undefined : formatTime(fillAt)}>{fillText}</Table.Td>
    </Table.Tr>
  );
}

export function DisksPanel({ disks }: { disks: DiskTracker[] }) {
  if (disks.length === 0) return null;
  return (
    <Paper withBorder p="sm" data-testid="disks-panel">
      <Title order={2} mb={4}>
        Disks
      </Title>
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Disk</Table.Th>
            <Table.Th>Usage</Table.Th>
            <Table.Th>Used</Table.Th>
            <Table.Th>Space</Table.Th>
            <Table.Th>Projection (7-day slope)</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {disks.map((d) => (
            <DiskRow key={d.id} disk={d} />
          ))}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}

export function PortsAndOids({
  ports,
  oids,
  domain,
}: {
  ports: PortTracker[];
  oids: OidTracker[];
  domain: [number, number];
}) {
  const [portId, setPortId] = useState<string | null>(null);
  const port = ports.find((p) => String(p.id) === portId) ?? ports[0];
  const portData = useMemo(() => latencyPoints(port?.logs ?? []), [port]);
  const numeric = oids.filter((o) => o.datatype === 'I');
  const [oidId, setOidId] = useState<string | null>(null);
  const oid = numeric.find((o) => String(o.id) === oidId) ?? numeric[0];
  const oidData = useMemo(
    () =>
      (oid?.logs ?? []).map((l) => ({
        t: parseTime(l.timestamp) ?? 0,
        value: l.value === null ? null : Number(l.value),
      })),
    [oid],
  );
  if (ports.length === 0 && oids.length === 0)
    return (
      <EmptyState title="No port or OID trackers">
        Add a TCP port or a custom OID under Trackers to chart it here.
      </EmptyState>
    );
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
      {ports.length ? (
        <Paper withBorder p="sm">
          <Group justify="space-between" mb={4}>
            <Title order={2}>TCP ports</Title>
            <Select
              aria-label="Port"
              w={200}
              value={port ? String(port.id) : null}
              onChange={setPortId}
              data={ports.map((p) => ({ value: String(p.id), label: `${p.port} ${p.label}` }))}
            />
          </Group>
          <TimeSeriesChart
            label="Port connect time"
            data={portData}
            domain={domain}
            height={160}
            format={(v) => formatMs(v)}
            series={[{ key: 'latency', label: 'Connect time', color: '#15aabf' }]}
          />
        </Paper>
      ) : null}
      {oids.length ? (
        <Paper withBorder p="sm">
          <Group justify="space-between" mb={4}>
            <Title order={2}>Custom OIDs</Title>
            {numeric.length ? (
              <Select
                aria-label="OID"
                w={220}
                value={oid ? String(oid.id) : null}
                onChange={setOidId}
                data={numeric.map((o) => ({ value: String(o.id), label: o.label }))}
              />
            ) : null}
          </Group>
          {oid ? (
            <TimeSeriesChart
              label={`OID ${oid.label}`}
              data={oidData}
              domain={domain}
              height={120}
              format={(v) => String(Math.round(v * 100) / 100)}
              series={[{ key: 'value', label: oid.label, color: '#fab005' }]}
            />
          ) : null}
          <Table mt="xs">
            <Table.Tbody>
              {oids.map((o) => (
                <Table.Tr key={o.id}>
                  <Table.Td>{o.label}</Table.Td>
                  <Table.Td className="console-mono">{o.oid}</Table.Td>
                  <Table.Td>{o.value ?? '–'}</Table.Td>
                  <Table.Td title={formatTime(o.logs[o.logs.length - 1]?.timestamp)}>
                    {o.datatype === 'I' ? 'number' : 'text'}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Paper>
      ) : null}
    </SimpleGrid>
  );
}
