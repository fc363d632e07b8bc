/** Dashboard widgets: each reads its device through the shared device query (one request per device and window). */
import { Anchor, Group, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link } from 'react-router';

import {
  DiskUsage,
  LatencyChart,
  latencyPoints,
  TrafficChart,
  trafficPoints,
} from '../../components/charts/tracker-charts.js';
import { RowsSkeleton } from '../../components/ui/feedback.js';
import { api } from '../../lib/api-client.js';
import { parseTime } from '../../lib/format.js';
import { usePrefs } from '../../lib/prefs.js';
import { keys } from '../../lib/query-keys.js';
import {
  deviceQuery,
  type DiskTracker,
  type InterfaceTracker,
  type PortTracker,
} from '../../lib/device-api.js';
import { RecentLogs } from '../logs/recent-logs.js';
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
    if (widget.kind === 'latency') return latencyPoints(d.ping);
    if (widget.kind === 'traffic') {
      const i = (d.interfaces as InterfaceTracker[]).find((x) => x.id === widget.trackerId);
      return trafficPoints(i?.logs ?? []);
    }
    if (widget.kind === 'port') {
      const p = (d.ports as PortTracker[]).find((x) => x.id === widget.trackerId);
      return latencyPoints(p?.logs ?? []);
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
  if (widget.kind === 'disk')
    return (
      <DiskUsage
        disk={(d.disks as DiskTracker[]).find((x) => x.id === widget.trackerId)}
        label="Disk used"
      />
    );
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
    <TrafficChart label={widget.title} data={data} domain={domain} height={height} />
  ) : (
    <LatencyChart
      label={widget.title}
      data={data}
      domain={domain}
      height={height}
      connectTime={widget.kind === 'port'}
    />
  );
}

export function WidgetBody({ widget, height }: { widget: Widget; height: number }) {
  return widget.kind === 'status' ? (
    <StatusSummary />
  ) : widget.kind === 'syslog' ? (
    <RecentLogs feedId="syslog" limit={20} />
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
