/**
 * "What is wrong right now": devices up and down, the worst latency and loss, the fullest disks,
 * failing URL checks, each item one click from its detail. Refreshes every 30 s in place.
 */
import { Anchor, Group, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { useCaller } from '../../lib/caller.js';
import { formatAgo, formatMs, formatPercent, formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';
import { RecentLogs } from '../logs/recent-logs.js';
import {
  expiringCertificates,
  failingUrls,
  summarize,
  type OverviewDevice,
  type UrlCheck,
} from './overview-model.js';

function Tile({
  label,
  value,
  to,
  tone,
}: {
  label: string;
  value: string | number;
  to: string;
  tone?: 'bad' | 'good' | 'warn';
}) {
  const color =
    tone === 'bad' ? 'red' : tone === 'warn' ? 'yellow' : tone === 'good' ? 'teal' : undefined;
  return (
    <Link to={to} className="console-tile console-tile-link" data-testid={`tile-${label}`}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text fz={26} fw={700} c={color} lh={1.2}>
        {value}
      </Text>
    </Link>
  );
}

function Panel({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Paper withBorder p="sm">
      <Title order={2} mb={4}>
        {title}
      </Title>
      {children}
    </Paper>
  );
}

function DeviceLink({ device }: { device: OverviewDevice }) {
  return (
    <Anchor component={Link} to={`/devices/${device.id}`} size="sm">
      {device.label}
    </Anchor>
  );
}

export function Page() {
  const caller = useCaller();
  const seesDevices = caller.canAny('devices', 'overwatch');
  const seesUrls = caller.can('urls');
  const seesLogs = caller.can('logs');
  const devices = useQuery({
    queryKey: keys.devices.overview,
    queryFn: () =>
      api.get<{ devices: OverviewDevice[] }>('/api/devices', {
        query: { ping: true, disks: true },
      }),
    select: (a) => summarize(a.devices),
    enabled: seesDevices,
    refetchInterval: 30_000,
  });
  const urls = useQuery({
    queryKey: keys.urls.list,
    queryFn: () => api.get<{ data: UrlCheck[] }>('/api/getUrls'),
    select: (a) => a.data,
    enabled: seesUrls,
    refetchInterval: 60_000,
  });
  const o = devices.data;
  const failing = urls.data ? failingUrls(urls.data) : [];
  const expiring = urls.data ? expiringCertificates(urls.data) : [];

  if (caller.loading) return <RowsSkeleton />;
  if (!seesDevices && !seesUrls && !seesLogs)
    return (
      <>
        <PageHeader title="Overview" />
        <EmptyState title="Nothing to watch with your permissions">
          Ask an administrator for the devices, urls or logs permission; meanwhile the tools and
          your account are in the menu.
        </EmptyState>
      </>
    );
  return (
    <Stack gap="sm">
      <PageHeader
        title="Overview"
        subtitle={devices.dataUpdatedAt ? `updated ${formatAgo(devices.dataUpdatedAt)}` : undefined}
      />
      {devices.isError ? (
        <ErrorNotice error={devices.error} onRetry={() => void devices.refetch()} />
      ) : null}
      {seesDevices ? (
        o ? (
          <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="sm">
            <Tile
              label="Down"
              value={o.down}
              to="/devices?status=down"
              tone={o.down ? 'bad' : 'good'}
            />
            <Tile label="Up" value={o.up} to="/devices?status=up" tone="good" />
            <Tile label="No probe" value={o.unprobed} to="/devices" />
            <Tile label="Devices" value={o.total} to="/devices" />
            {seesUrls ? (
              <Tile
                label="URL checks failing"
                value={urls.data ? failing.length : '…'}
                to="/urls"
                tone={failing.length ? 'bad' : 'good'}
              />
            ) : null}
            {seesUrls ? (
              <Tile
                label="Certificates < 21 d"
                value={urls.data ? expiring.length : '…'}
                to="/urls"
                tone={expiring.length ? 'warn' : 'good'}
              />
            ) : null}
          </SimpleGrid>
        ) : (
          <RowsSkeleton rows={2} height={56} />
        )
      ) : null}
      {o ? (
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
          <Panel title={`Down (${o.down})`}>
            {o.downDevices.length === 0 ? (
              <Text size="sm" c="teal">
                Every probed device answers.
              </Text>
            ) : (
              <Table>
                <Table.Tbody>
                  {o.downDevices.slice(0, 8).map((d) => (
                    <Table.Tr key={d.id}>
                      <Table.Td>
                        <DeviceLink device={d} />
                      </Table.Td>
                      <Table.Td className="console-mono">{d.ip_address}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
            {o.downDevices.length > 8 ? (
              <Anchor component={Link} to="/devices?status=down" size="sm">
                All {o.down} down devices
              </Anchor>
            ) : null}
          </Panel>
          <Panel title="Worst latency">
            {o.worstLatency.length === 0 ? (
              <Text size="sm" c="dimmed">
                No latency readings yet.
              </Text>
            ) : (
              <Table>
                <Table.Tbody>
                  {o.worstLatency.map(({ device, latency }) => (
                    <Table.Tr key={device.id}>
                      <Table.Td>
                        <DeviceLink device={device} />
                      </Table.Td>
                      <Table.Td ta="right">{formatMs(latency)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Panel>
          <Panel title="Packet loss">
            {o.worstLoss.length === 0 ? (
              <Text size="sm" c="teal">
                No loss on any device that answers.
              </Text>
            ) : (
              <Table>
                <Table.Tbody>
                  {o.worstLoss.map(({ device, loss }) => (
                    <Table.Tr key={device.id}>
                      <Table.Td>
                        <DeviceLink device={device} />
                      </Table.Td>
                      <Table.Td ta="right">{formatPercent(loss)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Panel>
          <Panel title="Fullest disks">
            {o.fullestDisks.length === 0 ? (
              <Text size="sm" c="dimmed">
                No disk trackers: add one on a device page (Trackers).
              </Text>
            ) : (
              <Table>
                <Table.Tbody>
                  {o.fullestDisks.map((disk) => (
                    <Table.Tr key={disk.diskId}>
                      <Table.Td>
                        <Anchor component={Link} to={`/devices/${disk.deviceId}`} size="sm">
                          {disk.device}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>{disk.name}</Table.Td>
                      <Table.Td ta="right" c={disk.usedPct > 90 ? 'red' : undefined}>
                        {formatPercent(disk.usedPct)}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Panel>
        </SimpleGrid>
      ) : null}
      {seesUrls && urls.data && failing.length + expiring.length > 0 ? (
        <Panel title="URL checks needing attention">
          <Table>
            <Table.Tbody>
              {[...failing, ...expiring.filter((u) => !failing.includes(u))].map((u) => (
                <Table.Tr key={u.id}>
                  <Table.Td>
                    <Anchor component={Link} to="/urls" size="sm">
                      {u.url}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{u.status ?? 'no answer'}</Table.Td>
                  <Table.Td>{u.message ?? ''}</Table.Td>
                  <Table.Td>
                    {u.ssldate ? `certificate until ${formatTime(u.ssldate)}` : ''}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Panel>
      ) : null}
      {urls.isError ? <ErrorNotice error={urls.error} /> : null}
      {seesLogs ? (
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
          <Panel title="Recent syslog">
            <RecentLogs feedId="syslog" />
            <Anchor component={Link} to="/logs/syslog" size="sm">
              All syslog
            </Anchor>
          </Panel>
          <Panel title="Recent IDS events">
            <RecentLogs feedId="eve" />
            <Anchor component={Link} to="/logs/ids" size="sm">
              All IDS events
            </Anchor>
          </Panel>
        </SimpleGrid>
      ) : null}
      <Group />
    </Stack>
  );
}
