/** SNMP walk viewer: the newest stored walk (getLastWalk) and a live walk (getSNMPWalkInfo). */
import { Button, Group, Paper, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { VirtualTable, type Column } from '../../components/ui/virtual-table.js';
import { api } from '../../lib/api-client.js';
import { formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

interface Varbind {
  oid: string;
  type: string;
  value: string | number | boolean | null;
}
interface Walk {
  id: number;
  kind: string;
  oid_count: number;
  timestamp: string;
  duration_ms: number;
  truncated: boolean;
  varbinds: Varbind[];
}

const columns: Column<Varbind>[] = [
  {
    id: 'oid',
    header: 'OID',
    size: 300,
    sortValue: (v) => v.oid,
    cell: (v) => <span className="console-mono">{v.oid}</span>,
  },
  { id: 'type', header: 'Type', size: 110, sortValue: (v) => v.type },
  {
    id: 'value',
    header: 'Value',
    size: 300,
    grow: true,
    sortValue: (v) => (v.value === null ? '' : String(v.value)),
  },
];

export function WalkPanel({ deviceId }: { deviceId: number }) {
  const queryClient = useQueryClient();
  const [filter, setFilter] = useState('');
  const last = useQuery({
    queryKey: keys.devices.lastWalk(deviceId),
    queryFn: () => api.get<{ walk: Walk | null }>(`/api/getLastWalk/${deviceId}`),
    select: (a) => a.walk,
  });
  const live = useMutation({
    mutationFn: () => api.post<{ message: Walk }>(`/api/getSNMPWalkInfo/${deviceId}`),
    onSuccess: (answer) => {
      queryClient.setQueryData(keys.devices.lastWalk(deviceId), { walk: answer.message });
    },
  });
  const walk = last.data;
  const rows = useMemo(() => {
    const all = walk?.varbinds ?? [];
    const f = filter.trim().toLowerCase();
    return f === ''
      ? all
      : all.filter(
          (v) =>
            v.oid.includes(f) ||
            String(v.value ?? '')
              .toLowerCase()
              .includes(f),
        );
  }, [walk, filter]);
  return (
    <Paper withBorder p="sm">
      <Group justify="space-between" mb="xs">
        <Text size="sm" c="dimmed">
          {walk
            ? `${walk.kind === 'live' ? 'Live walk' : 'Crawl'} of ${formatTime(walk.timestamp)}: ${walk.oid_count} OIDs in ${walk.duration_ms} ms${walk.truncated ? ' (truncated)' : ''}`
            : 'No stored walk yet.'}
        </Text>
        <Group gap="xs">
          <TextInput
            placeholder="Filter OID or value"
            aria-label="Filter walk"
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value)}
          />
          <Button onClick={() => live.mutate()} loading={live.isPending}>
            Walk now
          </Button>
        </Group>
      </Group>
      {live.isPending ? (
        <Text size="sm" c="dimmed" mb="xs">
          Walking the device; a large agent takes a while…
        </Text>
      ) : null}
      {live.isError ? <ErrorNotice error={live.error} /> : null}
      {last.isError ? (
        <ErrorNotice error={last.error} />
      ) : last.isPending ? (
        <RowsSkeleton />
      ) : rows.length === 0 ? (
        <EmptyState title="Nothing to show">
          Walk the device now, or enable SNMP on it so the crawl stores a walk.
        </EmptyState>
      ) : (
        <VirtualTable label="SNMP walk" data={rows} columns={columns} height={460} />
      )}
    </Paper>
  );
}
