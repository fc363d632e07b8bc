/**
 * One tracker's readings as chart points, and the charts and figures drawn from them: shared by
 * the device page's panels, its tracker widgets and the dashboards' widgets, so that a reading
 * looks the same wherever it is shown.
 */
import { Progress, Stack, Text } from '@mantine/core';

import type { DiskTracker, InterfaceTracker } from '../../lib/device-api.js';
import { formatBits, formatBytes, formatMs, formatPercent, parseTime } from '../../lib/format.js';
import { TimeSeriesChart, type TimeSeriesChartProps } from './time-series-chart.js';

type Domain = [number, number];
type Points = TimeSeriesChartProps['data'];

/** Latency readings (ICMP or a TCP connect) as points; a failed probe (< 0) is a gap. */
export function latencyPoints(readings: readonly { timestamp: string; latency: number }[]) {
  return readings.map((r) => ({
    t: parseTime(r.timestamp) ?? 0,
    latency: r.latency < 0 ? null : r.latency,
  }));
}

/** Interface readings as in/out bit-rate points. */
export function trafficPoints(logs: InterfaceTracker['logs']) {
  return logs.map((l) => ({ t: parseTime(l.timestamp) ?? 0, in: l.in_bps, out: l.out_bps }));
}

export function TrafficChart({
  label,
  data,
  domain,
  height,
}: {
  label: string;
  data: Points;
  domain: Domain;
  height: number;
}) {
  return (
    <TimeSeriesChart
      label={label}
      data={data}
      domain={domain}
      height={height}
      format={(v) => formatBits(v)}
      series={[
        { key: 'in', label: 'In', color: '#40c057', area: true },
        { key: 'out', label: 'Out', color: '#7950f2' },
      ]}
    />
  );
}

/** A latency chart; a TCP port's says "Connect time". */
export function LatencyChart({
  label,
  data,
  domain,
  height,
  connectTime = false,
  color = '#339af0',
}: {
  label: string;
  data: Points;
  domain: Domain;
  height: number;
  connectTime?: boolean;
  color?: string;
}) {
  return (
    <TimeSeriesChart
      label={label}
      data={data}
      domain={domain}
      height={height}
      format={(v) => formatMs(v)}
      series={[{ key: 'latency', label: connectTime ? 'Connect time' : 'Latency', color }]}
    />
  );
}

/** A disk's use from its latest reading (else its tracker's last values): a line and a bar. */
export function DiskUsage({ disk, label }: { disk: DiskTracker | undefined; label: string }) {
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
        aria-label={label}
      />
    </Stack>
  );
}
