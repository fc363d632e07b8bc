/**
 * A device page's tracker widgets (GET /api/getDeviceTrackers): a grid the person arranges
 * (drag by the title bar, resize from the corner), saved per device through setDeviceLayouts;
 * widgets pinned through setDevicePinnedWidgets show at the top of the device page; "Reset
 * layout" forgets the arrangement (deleteDeviceLayouts). Everything needs `devices`: the page
 * shows none of it otherwise. Changes show at once and are saved behind (a refusal puts the
 * saved state back and says why).
 */
import { ActionIcon, Button, Group, Stack, Text, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useMemo, type ReactNode } from 'react';

import { TimeSeriesChart } from '../../components/charts/time-series-chart.js';
import {
  DiskUsage,
  LatencyChart,
  latencyPoints,
  TrafficChart,
  trafficPoints,
} from '../../components/charts/tracker-charts.js';
import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { WidgetGrid, type GridItem, type GridWidget } from '../../components/ui/widget-grid.js';
import { ApiError } from '../../lib/api-error.js';
import {
  deleteDeviceLayouts,
  saveDeviceLayouts,
  saveDevicePinnedWidgets,
  type DeviceDetail,
  type DeviceWidgetsAnswer,
  type DiskTracker,
  type InterfaceTracker,
  type OidTracker,
  type PortTracker,
} from '../../lib/device-api.js';
import { parseTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';
import {
  flowLayout,
  layoutFor,
  layoutsDoc,
  pinnedOf,
  sameLayout,
  togglePin,
  widgetKey,
  type TrackerWidget,
} from './device-layout-model.js';

type Domain = [number, number];

function titleOf(t: TrackerWidget, d: DeviceDetail): string {
  const byId = <X extends { id: number }>(list: unknown) =>
    (list as X[]).find((x) => x.id === t.trackerId);
  switch (t.trackerTable) {
    case 'latency':
      return 'Latency and loss';
    case 'interfaces': {
      const i = byId<InterfaceTracker>(d.interfaces);
      return i ? `Traffic ${i.name}` : `Interface #${t.trackerId}`;
    }
    case 'disks': {
      const disk = byId<DiskTracker>(d.disks);
      return disk ? `Disk ${disk.name}` : `Disk #${t.trackerId}`;
    }
    case 'ports': {
      const p = byId<PortTracker>(d.ports);
      return p ? `Port ${p.port}${p.label ? ` ${p.label}` : ''}` : `Port #${t.trackerId}`;
    }
    case 'oids': {
      const o = byId<OidTracker>(d.oids);
      return o ? `OID ${o.label}` : `OID #${t.trackerId}`;
    }
    case 'services': {
      const o = byId<OidTracker>(d.oids);
      return o ? `Service ${o.label}` : `Service #${t.trackerId}`;
    }
    default:
      return `${t.trackerTable} #${t.trackerId}`;
  }
}

function Dimmed({ children }: { children: ReactNode }) {
  return (
    <Text size="sm" c="dimmed">
      {children}
    </Text>
  );
}

function WidgetBody({
  t,
  d,
  domain,
  height,
}: {
  t: TrackerWidget;
  d: DeviceDetail;
  domain: Domain;
  height: number;
}) {
  const data = useMemo(() => {
    if (t.trackerTable === 'latency') return latencyPoints(d.ping);
    if (t.trackerTable === 'interfaces')
      return trafficPoints(
        (d.interfaces as InterfaceTracker[]).find((i) => i.id === t.trackerId)?.logs ?? [],
      );
    if (t.trackerTable === 'ports')
      return latencyPoints(
        (d.ports as PortTracker[]).find((p) => p.id === t.trackerId)?.logs ?? [],
      );
    if (t.trackerTable === 'oids') {
      const o = (d.oids as OidTracker[]).find((x) => x.id === t.trackerId);
      if (o?.datatype !== 'I') return [];
      return o.logs.map((l) => ({
        t: parseTime(l.timestamp) ?? 0,
        value: l.value === null ? null : Number(l.value),
      }));
    }
    return [];
  }, [t, d]);
  const title = titleOf(t, d);

  if (t.trackerTable === 'disks') {
    const disk = (d.disks as DiskTracker[]).find((x) => x.id === t.trackerId);
    if (!disk) return <Dimmed>This disk is no longer tracked.</Dimmed>;
    return <DiskUsage disk={disk} label={`${title} used`} />;
  }
  if (t.trackerTable === 'oids' || t.trackerTable === 'services') {
    const o = (d.oids as OidTracker[]).find((x) => x.id === t.trackerId);
    if (data.length === 0)
      return o ? (
        <Text size="sm">
          <span className="console-mono">{o.oid}</span>: {o.value ?? '–'}
        </Text>
      ) : (
        <Dimmed>Its value shows under Ports and OIDs.</Dimmed>
      );
  }
  if (data.length === 0) return <Dimmed>No readings in this window.</Dimmed>;
  if (t.trackerTable === 'interfaces')
    return <TrafficChart label={title} data={data} domain={domain} height={height} />;
  if (t.trackerTable === 'oids')
    return (
      <TimeSeriesChart
        label={title}
        data={data}
        domain={domain}
        height={height}
        format={(v) => String(Math.round(v * 100) / 100)}
        series={[{ key: 'value', label: title, color: '#fab005' }]}
      />
    );
  const port = t.trackerTable === 'ports';
  return (
    <LatencyChart
      label={title}
      data={data}
      domain={domain}
      height={height}
      connectTime={port}
      color={port ? '#15aabf' : '#339af0'}
    />
  );
}

/** Saving, with the change shown at once and put back when the appliance refuses it. */
function useLayoutMutations(deviceId: number) {
  const queryClient = useQueryClient();
  const key = keys.devices.widgets(deviceId);
  const patch = (change: Partial<DeviceWidgetsAnswer>) =>
    queryClient.setQueryData<DeviceWidgetsAnswer | null>(key, (old) =>
      old ? { ...old, ...change } : old,
    );
  const onError = (err: unknown) => {
    notifications.show({ message: errorText(err), color: 'red' });
    void queryClient.invalidateQueries({ queryKey: key });
  };
  const arrange = useMutation({
    mutationFn: (layout: GridItem[]) => saveDeviceLayouts(deviceId, layoutsDoc(layout)),
    onMutate: (layout) => patch({ layouts: layoutsDoc(layout) }),
    onError,
  });
  const pin = useMutation({
    mutationFn: (pinned: string[]) => saveDevicePinnedWidgets(deviceId, pinned),
    onMutate: (pinned) => patch({ pinnedWidgets: pinned }),
    onError,
  });
  const reset = useMutation({
    mutationFn: async () => {
      try {
        await deleteDeviceLayouts(deviceId);
      } catch (err) {
        // 404: nothing was saved, which is what a reset wants.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      }
    },
    onMutate: () => patch({ layouts: {} }),
    onSuccess: () => notifications.show({ message: 'Layout reset' }),
    onError,
  });
  return { arrange, pin, reset };
}

function PinButton({
  title,
  pinned,
  onToggle,
}: {
  title: string;
  pinned: boolean;
  onToggle: () => void;
}) {
  const label = `${pinned ? 'Unpin' : 'Pin'} ${title}`;
  return (
    <Tooltip label={pinned ? 'Unpin from the top of the page' : 'Pin to the top of the page'}>
      <ActionIcon
        aria-label={label}
        aria-pressed={pinned}
        data-testid="pin-widget"
        variant={pinned ? 'light' : 'subtle'}
        onClick={onToggle}
      >
        {pinned ? '★' : '☆'}
      </ActionIcon>
    </Tooltip>
  );
}

interface Props {
  deviceId: number;
  device: DeviceDetail;
  domain: Domain;
  widgets: UseQueryResult<DeviceWidgetsAnswer | null>;
}

function useModel(widgets: Props['widgets']) {
  const answer = widgets.data;
  return useMemo(() => {
    const trackers: TrackerWidget[] = answer?.trackers ?? [];
    return {
      trackers,
      layout: layoutFor(trackers, answer?.layouts),
      pinned: pinnedOf(trackers, answer?.pinnedWidgets),
      saved: Array.isArray((answer?.layouts as { lg?: unknown } | undefined)?.lg),
    };
  }, [answer]);
}

/** The pinned widgets, in pinning order, at the top of the device page (not arranged here). */
export function PinnedWidgets({ deviceId, device, domain, widgets }: Props) {
  const { trackers, pinned } = useModel(widgets);
  const { pin } = useLayoutMutations(deviceId);
  if (pinned.length === 0) return null;
  const byKey = new Map(trackers.map((t) => [widgetKey(t), t]));
  const list = pinned.map((k) => byKey.get(k)!);
  const cards: GridWidget[] = list.map((t) => {
    const title = titleOf(t, device);
    return {
      i: widgetKey(t),
      highlight: true,
      title: (
        <Text size="sm" fw={600} truncate>
          {title}
        </Text>
      ),
      actions: (
        <PinButton
          title={title}
          pinned
          onToggle={() => pin.mutate(togglePin(pinned, widgetKey(t)))}
        />
      ),
      body: (height) => <WidgetBody t={t} d={device} domain={domain} height={height} />,
    };
  });
  return (
    <div data-testid="pinned-widgets">
      <WidgetGrid
        label="Pinned widgets"
        editable={false}
        layout={flowLayout(list)}
        widgets={cards}
      />
    </div>
  );
}

/** Every tracker of the device as a widget, arranged by the person. */
export function DeviceWidgets({ deviceId, device, domain, widgets }: Props) {
  const { trackers, layout, pinned, saved } = useModel(widgets);
  const { arrange, pin, reset } = useLayoutMutations(deviceId);
  if (widgets.isError)
    return <ErrorNotice error={widgets.error} onRetry={() => void widgets.refetch()} />;
  if (widgets.isPending) return <RowsSkeleton rows={6} height={40} />;
  if (trackers.length === 0)
    return (
      <EmptyState title="No trackers on this device">
        Add a latency, disk, port or OID tracker (Trackers tab); each becomes a widget here.
      </EmptyState>
    );
  const cards: GridWidget[] = trackers.map((t) => {
    const key = widgetKey(t);
    const title = titleOf(t, device);
    const isPinned = pinned.includes(key);
    return {
      i: key,
      highlight: isPinned,
      title: (
        <Text size="sm" fw={600} truncate>
          {title}
        </Text>
      ),
      actions: (
        <PinButton
          title={title}
          pinned={isPinned}
          onToggle={() => pin.mutate(togglePin(pinned, key))}
        />
      ),
      body: (height) => <WidgetBody t={t} d={device} domain={domain} height={height} />,
    };
  });
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          Drag a widget by its title, resize it from its corner; ☆ pins it to the top of the page.
          {saved ? ' Your arrangement is saved for this device.' : ''}
        </Text>
        <Button
          variant="default"
          size="xs"
          disabled={!saved}
          loading={reset.isPending}
          onClick={() => reset.mutate()}
          data-testid="reset-layout"
        >
          Reset layout
        </Button>
      </Group>
      <WidgetGrid
        label="Device widgets"
        layout={layout}
        widgets={cards}
        onArrange={(next) => {
          if (!sameLayout(next, layout)) arrange.mutate(next);
        }}
      />
    </Stack>
  );
}
