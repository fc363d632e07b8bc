/**
 * Trackers of one device, with add, edit and delete where the API allows (spec part 2, Trackers;
 * all need `write_devices`): the latency tracker (one per device), disks (by free-space OID),
 * TCP ports, custom OIDs. Interfaces come from the crawl and can only be edited or removed.
 */
import {
  ActionIcon,
  Button,
  Group,
  NumberInput,
  Paper,
  Select,
  SimpleGrid,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';

import { errorText } from '../../components/ui/feedback.js';
import { api } from '../../lib/api-client.js';
import { formatMs } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';
import {
  latencyTrackerOf,
  type DiskTracker,
  type InterfaceTracker,
  type OidTracker,
  type PortTracker,
} from '../../lib/device-api.js';

function useTrackerAction(deviceId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ path, body }: { path: string; body: unknown; done: string }) =>
      api.post(path, body),
    onSuccess: (_r, v) => {
      notifications.show({ color: 'teal', message: v.done });
      void queryClient.invalidateQueries({ queryKey: keys.devices.all });
      void queryClient.invalidateQueries({ queryKey: keys.trackers.ofDevice(deviceId) });
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
}

function Section({
  title,
  children,
  action,
}: {
  title: string;
  children: ReactNode;
  action?: ReactNode;
}) {
  return (
    <Paper withBorder p="sm">
      <Group justify="space-between" mb={6}>
        <Title order={2}>{title}</Title>
        {action}
      </Group>
      {children}
    </Paper>
  );
}

function DeleteButton({ label, onConfirm }: { label: string; onConfirm: () => void }) {
  return (
    <ActionIcon
      color="red"
      aria-label={`Delete ${label}`}
      onClick={() => {
        if (window.confirm(`Delete ${label} and its history?`)) onConfirm();
      }}
    >
      ✕
    </ActionIcon>
  );
}

function LatencyTrackerSection({ deviceId, label }: { deviceId: number; label: string }) {
  const tracker = useQuery(latencyTrackerOf(deviceId));
  const action = useTrackerAction(deviceId);
  const [interval, setInterval] = useState<number | string>(60);
  const [timeout, setTimeoutMs] = useState<number | string>(60);
  const t = tracker.data;
  useEffect(() => {
    if (t) setInterval(t.interval);
  }, [t]);
  return (
    <Section title="Latency (ICMP)">
      {t ? (
        <Group justify="space-between">
          <Text size="sm">
            {t.label} · every {t.interval} s · timeout {formatMs(t.timeout)}
          </Text>
          <Group gap="xs">
            <NumberInput
              aria-label="Interval (seconds)"
              w={90}
              min={10}
              value={interval}
              onChange={setInterval}
            />
            <Button
              variant="default"
              onClick={() =>
                action.mutate({
                  path: '/api/latency/set',
                  body: { id: t.id, interval: Number(interval) },
                  done: 'Latency tracker saved',
                })
              }
            >
              Set interval
            </Button>
            <DeleteButton
              label="the latency tracker"
              onConfirm={() =>
                action.mutate({ path: '/api/latency/delete', body: { id: t.id }, done: 'Deleted' })
              }
            />
          </Group>
        </Group>
      ) : tracker.isPending ? null : (
        <Group>
          <NumberInput
            label="Interval (s)"
            w={110}
            min={10}
            value={interval}
            onChange={setInterval}
          />
          <NumberInput
            label="Timeout (ms)"
            w={110}
            min={1}
            value={timeout}
            onChange={setTimeoutMs}
          />
          <Button
            mt={18}
            onClick={() =>
              action.mutate({
                path: '/api/latency/set',
                body: {
                  deviceId,
                  label,
                  interval: Number(interval),
                  timeout: Number(timeout),
                },
                done: 'Latency tracker added',
              })
            }
          >
            Add latency tracker
          </Button>
        </Group>
      )}
    </Section>
  );
}

export function TrackersPanel({
  deviceId,
  label,
  disks,
  ports,
  oids,
  interfaces,
}: {
  deviceId: number;
  label: string;
  disks: DiskTracker[];
  ports: PortTracker[];
  oids: OidTracker[];
  interfaces: InterfaceTracker[];
}) {
  const action = useTrackerAction(deviceId);
  const [port, setPort] = useState<number | string>('');
  const [portLabel, setPortLabel] = useState('');
  const [diskName, setDiskName] = useState('');
  const [diskPath, setDiskPath] = useState('');
  const [oid, setOid] = useState('');
  const [oidLabel, setOidLabel] = useState('');
  const [oidType, setOidType] = useState<'I' | 'S'>('I');
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
      <LatencyTrackerSection deviceId={deviceId} label={label} />
      <Section title="TCP ports">
        <Table>
          <Table.Tbody>
            {ports.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td w={70} className="console-mono">
                  {p.port}
                </Table.Td>
                <Table.Td>{p.label}</Table.Td>
                <Table.Td>{p.state ?? '–'}</Table.Td>
                <Table.Td>{formatMs(p.latency)}</Table.Td>
                <Table.Td w={30}>
                  <DeleteButton
                    label={`port ${p.port}`}
                    onConfirm={() =>
                      action.mutate({
                        path: '/api/port/delete',
                        body: { id: p.id },
                        done: 'Deleted',
                      })
                    }
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Group mt="xs" gap="xs" align="end">
          <NumberInput label="Port" w={90} min={1} max={65535} value={port} onChange={setPort} />
          <TextInput
            label="Label"
            w={160}
            value={portLabel}
            onChange={(e) => setPortLabel(e.currentTarget.value)}
          />
          <Button
            disabled={!port}
            onClick={() =>
              action.mutate({
                path: '/api/port/set',
                body: {
                  deviceId,
                  port: Number(port),
                  interval: 60,
                  ...(portLabel ? { label: portLabel } : {}),
                },
                done: `Port ${port} tracked`,
              })
            }
          >
            Add port
          </Button>
        </Group>
      </Section>
      <Section title="Disks">
        <Table>
          <Table.Tbody>
            {disks.map((d) => (
              <Table.Tr key={d.id}>
                <Table.Td>{d.name}</Table.Td>
                <Table.Td>every {d.interval} s</Table.Td>
                <Table.Td w={30}>
                  <DeleteButton
                    label={`disk ${d.name}`}
                    onConfirm={() =>
                      action.mutate({
                        path: '/api/disk/delete',
                        body: { id: d.id },
                        done: 'Deleted',
                      })
                    }
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Group mt="xs" gap="xs" align="end">
          <TextInput
            label="Name"
            w={120}
            value={diskName}
            onChange={(e) => setDiskName(e.currentTarget.value)}
          />
          <TextInput
            label="Free-space OID"
            w={220}
            className="console-mono"
            value={diskPath}
            onChange={(e) => setDiskPath(e.currentTarget.value)}
          />
          <Button
            disabled={!diskName || !diskPath}
            onClick={() =>
              action.mutate({
                path: '/api/disk/set',
                body: { deviceId, name: diskName, path: diskPath },
                done: `Disk ${diskName} tracked`,
              })
            }
          >
            Add disk
          </Button>
        </Group>
      </Section>
      <Section title="Custom OIDs">
        <Table>
          <Table.Tbody>
            {oids.map((o) => (
              <Table.Tr key={o.id}>
                <Table.Td>{o.label}</Table.Td>
                <Table.Td className="console-mono">{o.oid}</Table.Td>
                <Table.Td w={30}>
                  <DeleteButton
                    label={`OID ${o.label}`}
                    onConfirm={() =>
                      action.mutate({
                        path: '/api/oid/delete',
                        body: { id: o.id },
                        done: 'Deleted',
                      })
                    }
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Group mt="xs" gap="xs" align="end">
          <TextInput
            label="OID"
            w={200}
            className="console-mono"
            value={oid}
            onChange={(e) => setOid(e.currentTarget.value)}
          />
          <TextInput
            label="Label"
            w={120}
            value={oidLabel}
            onChange={(e) => setOidLabel(e.currentTarget.value)}
          />
          <Select
            label="Type"
            w={90}
            value={oidType}
            onChange={(v) => setOidType((v ?? 'I') as 'I' | 'S')}
            data={[
              { value: 'I', label: 'number' },
              { value: 'S', label: 'text' },
            ]}
            allowDeselect={false}
          />
          <Button
            disabled={!oid}
            onClick={() =>
              action.mutate({
                path: '/api/oid/set',
                body: {
                  deviceId,
                  oid,
                  datatype: oidType,
                  ...(oidLabel ? { label: oidLabel } : {}),
                },
                done: 'OID tracked',
              })
            }
          >
            Add OID
          </Button>
        </Group>
      </Section>
      {interfaces.length ? (
        <Section title={`Interfaces (${interfaces.length}, from the crawl)`}>
          <Table>
            <Table.Tbody>
              {interfaces.map((i) => (
                <Table.Tr key={i.id}>
                  <Table.Td w={40}>{i.interface}</Table.Td>
                  <Table.Td>{i.name}</Table.Td>
                  <Table.Td>{i.description ?? ''}</Table.Td>
                  <Table.Td>{i.enable_logging ? 'logged' : 'not logged'}</Table.Td>
                  <Table.Td w={30}>
                    <DeleteButton
                      label={`interface ${i.name}`}
                      onConfirm={() =>
                        action.mutate({
                          path: '/api/interfaces/delete',
                          body: { id: i.id },
                          done: 'Deleted',
                        })
                      }
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Section>
      ) : null}
    </SimpleGrid>
  );
}
