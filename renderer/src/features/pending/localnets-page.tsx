/** Local networks swept by discovery: add, edit, delete, and re-run a sweep now. */
import { ActionIcon, Button, Group, NumberInput, Switch, Table, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { formatAgo } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

interface Localnet {
  id: number;
  label: string;
  network: string;
  broadcast: string;
  interval: number;
  enable_discovery: boolean;
  enable_portscan: boolean;
  alerts: boolean;
  cred_ids: number[];
  timestamp: number | null;
}

export function Page() {
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: keys.pending.localnets,
    queryFn: () => api.get<{ data: Localnet[] } | false>('/api/getLocalnets'),
    select: (a) => (a === false ? [] : a.data),
  });
  const [label, setLabel] = useState('');
  const [network, setNetwork] = useState('');
  const [broadcast, setBroadcast] = useState('');
  const [interval, setInterval] = useState<number | string>(3600);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.pending.localnets });
  const save = useMutation({
    mutationFn: (rows: Partial<Localnet>[]) => api.post('/api/updateLocalnet', { data: rows }),
    onSuccess: () => {
      setLabel('');
      setNetwork('');
      setBroadcast('');
      refresh();
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const act = useMutation({
    mutationFn: ({ path, id }: { path: string; id: number }) => api.post(path, { id }),
    onSuccess: refresh,
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const rowOf = (n: Localnet) => ({
    id: n.id,
    label: n.label,
    network: n.network,
    broadcast: n.broadcast,
    interval: n.interval,
    enable_discovery: n.enable_discovery,
    enable_portscan: n.enable_portscan,
    alerts: n.alerts,
    cred_ids: n.cred_ids,
  });
  return (
    <>
      <PageHeader
        title="Local networks"
        subtitle="swept by discovery; found hosts land in Pending devices"
      />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate([
            { label, network, broadcast, interval: Number(interval), enable_discovery: true },
          ]);
        }}
      >
        <Group gap="xs" align="end" mb="sm">
          <TextInput
            label="Label"
            required
            value={label}
            onChange={(e) => setLabel(e.currentTarget.value)}
          />
          <TextInput
            label="Network"
            placeholder="192.0.2.0"
            required
            className="console-mono"
            value={network}
            onChange={(e) => setNetwork(e.currentTarget.value)}
          />
          <TextInput
            label="Broadcast"
            placeholder="192.0.2.255"
            required
            className="console-mono"
            value={broadcast}
            onChange={(e) => setBroadcast(e.currentTarget.value)}
          />
          <NumberInput label="Every (s)" w={100} min={60} value={interval} onChange={setInterval} />
          <Button type="submit" loading={save.isPending}>
            Add network
          </Button>
        </Group>
      </form>
      {list.isError ? (
        <ErrorNotice error={list.error} />
      ) : list.isPending ? (
        <RowsSkeleton />
      ) : list.data.length === 0 ? (
        <EmptyState title="No networks to sweep">
          Add a network above to discover the hosts on it.
        </EmptyState>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Label</Table.Th>
              <Table.Th>Network</Table.Th>
              <Table.Th>Broadcast</Table.Th>
              <Table.Th>Every</Table.Th>
              <Table.Th>Discovery</Table.Th>
              <Table.Th>Port scan</Table.Th>
              <Table.Th>Last sweep</Table.Th>
              <Table.Th w={120} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((n) => (
              <Table.Tr key={n.id}>
                <Table.Td>{n.label}</Table.Td>
                <Table.Td className="console-mono">{n.network}</Table.Td>
                <Table.Td className="console-mono">{n.broadcast}</Table.Td>
                <Table.Td>{n.interval} s</Table.Td>
                <Table.Td>
                  <Switch
                    aria-label={`Discovery on ${n.label}`}
                    checked={n.enable_discovery}
                    onChange={(e) =>
                      save.mutate([{ ...rowOf(n), enable_discovery: e.currentTarget.checked }])
                    }
                  />
                </Table.Td>
                <Table.Td>
                  <Switch
                    aria-label={`Port scan on ${n.label}`}
                    checked={n.enable_portscan}
                    onChange={(e) =>
                      save.mutate([{ ...rowOf(n), enable_portscan: e.currentTarget.checked }])
                    }
                  />
                </Table.Td>
                <Table.Td>{formatAgo(n.timestamp)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Button
                      variant="default"
                      onClick={() => act.mutate({ path: '/api/resetDiscoveryTs', id: n.id })}
                    >
                      Sweep now
                    </Button>
                    <ActionIcon
                      color="red"
                      aria-label={`Delete ${n.label}`}
                      onClick={() =>
                        window.confirm(`Delete ${n.label}?`) &&
                        act.mutate({ path: '/api/deleteLocalnet', id: n.id })
                      }
                    >
                      ✕
                    </ActionIcon>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </>
  );
}
