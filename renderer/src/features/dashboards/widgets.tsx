/** Dashboard widgets: each reads its device through the shared device query (one request per device and window). */
import { Anchor, Group, Progress, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link } from 'react-router';

import { TimeSeriesChart } from '../../components/charts/time-series-chart.js';
import { RowsSkeleton } from '../../components/ui/feedback.js';
import { api } from '../../lib/api-client.js';
import { formatBits, formatBytes, formatMs, formatPercent, parseTime } from '../../lib/format.js';
import { usePrefs } from '../../lib/prefs.js';
import { keys } from '../../lib/query-keys.js';
import {
  deviceQuery,
  type DiskTracker,
  type InterfaceTracker,
  type LatencyPoint,
  type PortTracker,
} from '../../lib/device-api.js';
import type { Widget } from './dashboard-model.js';

function StatusSummary() {
  const devices = useQuery({
    queryKey: keys.devices.overview,
    queryFn: () =>
      api.get<{ devices: { ping?: { latency: number | null } | null }[] }>('/api/devices', {
        query: { ping: true, disks: true },
      }),
    refetchInterval: 30_000,
  });
  if (!devices.data) return <RowsSkeleton rows={2} />;
  let up = 0;
  let down = 0;
  let none = 0;
  for (const d of devices.data.devices) {
    const l = d.ping?.latency;
    if (l === null || l === undefined) none++;
    else if (l < 0) down++;
    else up++;
  }
  return (
    <Group grow>
      <Stack gap={0} align="center">
        <Text fz={28} fw={700} c={down ? 'red' : 'teal'}>
          {down}
        </Text>
        <Text size="xs">down</Text>
      </Stack>
      <Stack gap={0} align="center">
        <Text fz={28} fw={700} c="teal">
          {up}
        </Text>
        <Text size="xs">up</Text>
      </Stack>
      <Stack gap={0} align="center">
        <Text fz={28} fw={700}>
          {none}
        </Text>
        <Text size="xs">no probe</Text>
      </Stack>
    </Group>
  );
}

function DeviceWidget({ widget, height }: { widget: Widget; height: number }) {
  const window = usePrefs((s) => s.window);
  const device = useQuery(deviceQuery(widget.deviceId ?? 0, window));
  const d = device.data;
  const data = useMemo(() => {
    if (!d) return [];
    if (widget.kind === 'latency')
      return (d.ping as LatencyPoint[]).map((p) => ({
        t: parseTime(p.timestamp) ?? 0,
        latency: p.latency < 0 ? null : p.latency,
      }));
    if (widget.kind === 'traffic') {
      const i = (d.interfaces as InterfaceTracker[]).find((x) => x.id === widget.trackerId);
      return (i?.logs ?? []).map((l) => ({
        t: parseTime(l.timestamp) ?? 0,
        in: l.in_bps,
        out: l.out_bps,
      }));
    }
    if (widget.kind === 'port') {
      const p = (d.ports as PortTracker[]).find((x) => x.id === widget.trackerId);
      return (p?.logs ?? []).map((l) => ({
        t: parseTime(l.timestamp) ?? 0,
        latency: l.latency < 0 ? null : l.latency,
      }));
    }
    return [];
  }, [d, widget]);
  if (device.isError)
    return (
      <Text size="sm" c="red">
        {device.error.message}
      </Text>
    );
  if (!d) return <RowsSkeleton rows={3} />;
  if (widget.kind === 'disk') {
    const disk = (d.disks as DiskTracker[]).find((x) => x.id === widget.trackerId);
    const last = disk?.logs[disk.logs.length - 1];
    const total = last?.total ?? disk?.total ?? 0;
    const available = last?.available ?? disk?.available ?? 0;
    const pct = total ? ((total - available) / total) * 100 : 0;
    return (
      <Stack gap={4}>
        <Text size="sm">
          {formatPercent(pct)} used · {formatBytes(available)} free of {formatBytes(total)}
        </Text>
        <Progress
          value={pct}
          color={pct > 90 ? 'red' : pct > 75 ? 'yellow' : 'teal'}
          aria-label="Disk used"
        />
      </Stack>
    );
  }
  if (data.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No readings in this window.
      </Text>
    );
  const domain: [number, number] = [
    parseTime(d.window.start_time) ?? data[0]!.t,
    parseTime(d.window.end_time) ?? data[data.length - 1]!.t,
  ];
  return widget.kind === 'traffic' ? (
    <TimeSeriesChart
      label={widget.title}
      data={data}
      domain={domain}
      height={height}
      format={(v) => formatBits(v)}
      series={[
        { key: 'in', label: 'In', color: '#40c057', area: true },
        { key: 'out', label: 'Out', color: '#7950f2' },
      ]}
    />
  ) : (
    <TimeSeriesChart
      label={widget.title}
      data={data}
      domain={domain}
      height={height}
      format={(v) => formatMs(v)}
      series={[
        {
          key: 'latency',
          label: widget.kind === 'port' ? 'Connect time' : 'Latency',
          color: '#339af0',
        },
      ]}
    />
  );
}

export function WidgetBody({ widget, height }: { widget: Widget; height: number }) {
  return widget.kind === 'status' ? (
    <StatusSummary />
  ) : (
    <DeviceWidget widget={widget} height={height} />
  );
}

export function WidgetTitle({ widget }: { widget: Widget }) {
  return widget.deviceId ? (
    <Anchor
      component={Link}
      to={`/devices/${widget.deviceId}`}
      size="sm"
      fw={600}
      className="console-widget-drag-cancel"
    >
      {widget.title}
    </Anchor>
  ) : (
    <Text size="sm" fw={600}>
      {widget.title}
    </Text>
  );
}
