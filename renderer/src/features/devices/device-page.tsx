/**
 * One device: status, latency and loss, interface traffic, disks and their fill projection,
 * ports and OIDs over the chosen window; its trackers; its SNMP walk. Charts refresh every 30 s
 * in place (the previous data stays on screen while the next arrives).
 */
import { Button, Group, Stack, Tabs, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';

import { ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { DeviceAlertingPanel } from '../alerts/device-alerting-panel.js';
import { DeviceAgentPanel } from '../agents/device-agent-panel.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { StatusBadge } from '../../components/ui/status.js';
import { WindowPicker } from '../../components/ui/window-picker.js';
import { useCaller } from '../../lib/caller.js';
import { parseTime } from '../../lib/format.js';
import { usePrefs } from '../../lib/prefs.js';
import {
  deviceQuery,
  deviceWidgetsQuery,
  type InterfaceTracker,
  type LatencyPoint,
} from '../../lib/device-api.js';
import { DisksPanel, InterfacesPanel, LatencyPanel, PortsAndOids } from './device-charts.js';
import { DeviceForm } from './device-form.js';
import { DeviceLogsPanel } from './device-logs-panel.js';
import { DeviceFlowsPanel, flowSummaryOf } from '../flows/device-flows-panel.js';
import { DeviceWidgets, PinnedWidgets } from './device-widgets.js';
import { TrackersPanel } from './trackers-panel.js';
import { WalkPanel } from './walk-panel.js';

export function Page() {
  const id = Number(useParams().id);
  const window = usePrefs((s) => s.window);
  const caller = useCaller();
  const [editing, setEditing] = useState(false);
  const [tab, setTab] = useState<string | null>('charts');
  const device = useQuery({ ...deviceQuery(id, window), enabled: Number.isInteger(id) });
  // Layouts and pins are the caller's own, behind `devices` (the page shows none of it otherwise).
  const seesWidgets = caller.can('devices');
  const widgets = useQuery({
    ...deviceWidgetsQuery(id),
    enabled: Number.isInteger(id) && seesWidgets,
  });
  const d = device.data;
  const ping = (d?.ping ?? []) as LatencyPoint[];
  const lastPing = ping[ping.length - 1];
  const domain = useMemo<[number, number]>(() => {
    const start = parseTime(d?.window.start_time) ?? Date.now() - 8 * 3_600_000;
    const end = parseTime(d?.window.end_time) ?? Date.now();
    return [start, end];
  }, [d?.window.start_time, d?.window.end_time]);
  // The tracker's id from its readings or, in a window without readings, from the device's
  // trackers (a tracker with no points in the window is still a tracker).
  const icmpingId =
    (ping[0] as { icmping_id?: number } | undefined)?.icmping_id ??
    widgets.data?.trackers.find((t) => t.trackerTable === 'latency')?.trackerId ??
    null;

  if (device.isError)
    return <ErrorNotice error={device.error} onRetry={() => void device.refetch()} />;
  if (!d) return <RowsSkeleton rows={12} height={28} />;
  return (
    <Stack gap="sm">
      <PageHeader
        title={
          <Group gap="xs" wrap="nowrap" component="span">
            <StatusBadge latency={lastPing ? lastPing.latency : null} />
            <span data-testid="device-label">{d.label}</span>
          </Group>
        }
        subtitle={
          <span>
            <span className="console-mono">{d.ip_address}</span> · {d.profile}
            {d.tags.length ? ` · ${d.tags.map((t) => t.name).join(', ')}` : ''}
          </span>
        }
      >
        <WindowPicker />
        {caller.can('tools') ? (
          <Button
            variant="default"
            component={Link}
            to={`/tools/ping?target=${encodeURIComponent(d.ip_address)}&run=1`}
          >
            Ping
          </Button>
        ) : null}
        {caller.can('write_devices') ? (
          <Button variant="default" onClick={() => setEditing(true)}>
            Edit
          </Button>
        ) : null}
      </PageHeader>
      {seesWidgets ? (
        <PinnedWidgets deviceId={id} device={d} domain={domain} widgets={widgets} />
      ) : null}
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="charts">Charts</Tabs.Tab>
          {seesWidgets ? (
            <Tabs.Tab value="widgets" data-testid="widgets-tab">
              Widgets
            </Tabs.Tab>
          ) : null}
          <Tabs.Tab value="ports">Ports and OIDs</Tabs.Tab>
          {caller.can('write_devices') ? <Tabs.Tab value="trackers">Trackers</Tabs.Tab> : null}
          {caller.can('tools') ? <Tabs.Tab value="walk">SNMP walk</Tabs.Tab> : null}
          {caller.can('write_devices') ? <Tabs.Tab value="logs">Logs</Tabs.Tab> : null}
          <Tabs.Tab value="flows" data-testid="flows-tab">
            Flows
          </Tabs.Tab>
          {caller.can('alerts') ? <Tabs.Tab value="alerting">Alerting</Tabs.Tab> : null}
          {caller.can('devices') ? (
            <Tabs.Tab value="agent" data-testid="agent-tab">
              Agent
            </Tabs.Tab>
          ) : null}
        </Tabs.List>
        <Tabs.Panel value="charts" pt="sm">
          <Stack gap="sm">
            <LatencyPanel points={ping} icmpingId={icmpingId} domain={domain} />
            <InterfacesPanel interfaces={d.interfaces as InterfaceTracker[]} domain={domain} />
            <DisksPanel disks={d.disks} />
            {d.interfaces.length === 0 && d.disks.length === 0 ? (
              <Text size="sm" c="dimmed">
                {d.enable_snmp
                  ? 'Interfaces and disks appear after the first SNMP crawl.'
                  : 'Enable SNMP on this device to chart its interfaces and disks.'}
              </Text>
            ) : null}
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="widgets" pt="sm">
          <DeviceWidgets deviceId={id} device={d} domain={domain} widgets={widgets} />
        </Tabs.Panel>
        <Tabs.Panel value="ports" pt="sm">
          <PortsAndOids ports={d.ports} oids={d.oids} domain={domain} />
        </Tabs.Panel>
        <Tabs.Panel value="trackers" pt="sm">
          <TrackersPanel
            deviceId={id}
            label={d.label}
            disks={d.disks}
            ports={d.ports}
            oids={d.oids}
            interfaces={d.interfaces as InterfaceTracker[]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="walk" pt="sm">
          <WalkPanel deviceId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="logs" pt="sm">
          <DeviceLogsPanel deviceId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="flows" pt="sm">
          <DeviceFlowsPanel ip={d.ip_address} summary={flowSummaryOf(d.netflow)} />
        </Tabs.Panel>
        <Tabs.Panel value="alerting" pt="sm">
          <DeviceAlertingPanel deviceId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="agent" pt="sm">
          <DeviceAgentPanel deviceId={id} />
        </Tabs.Panel>
      </Tabs>
      {editing ? <DeviceForm deviceId={id} onClose={() => setEditing(false)} /> : null}
    </Stack>
  );
}
