/**
 * Packet capture (permission `capture`): the caller's captures (all for `sa`) with live counters
 * while they run, start (filter fields and interface choice), stop, delete and download of the
 * pcapng file. The in-browser packet viewer comes with the explorers issue.
 */
import {
  ActionIcon,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Switch,
  Table,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { formatAgo, formatBytes, formatTime } from '../../lib/format.js';
import {
  captureKeys,
  capturesQuery,
  deleteCapture,
  downloadCapture,
  EMPTY_DRAFT,
  interfacesQuery,
  isActive,
  startBody,
  startCapture,
  stopCapture,
  type Capture,
  type StartDraft,
} from './captures-api.js';

const STATUS_COLOR: Record<Capture['status'], string> = {
  starting: 'blue',
  running: 'teal',
  stopped: 'gray',
  expired: 'yellow',
  failed: 'red',
};

function StatusBadge({ c }: { c: Capture }) {
  const badge = (
    <Badge color={STATUS_COLOR[c.status]} variant={isActive(c) ? 'filled' : 'light'}>
      {c.status}
    </Badge>
  );
  return c.reason ? (
    <Tooltip label={c.reason}>
      <span data-testid={`capture-status-${c.id}`}>{badge}</span>
    </Tooltip>
  ) : (
    <span data-testid={`capture-status-${c.id}`}>{badge}</span>
  );
}

function filterText(c: Capture): string {
  const f = c.filter;
  const parts = [
    ...(f.hosts ?? []).map((h) => `host ${h}`),
    ...(f.ports ?? []).map((p) => `port ${p}`),
    ...(f.protocols ?? []),
    ...(f.vlans ?? []).map((v) => `vlan ${v}`),
  ];
  return parts.length ? parts.join(', ') : 'everything';
}

export function Page() {
  const queryClient = useQueryClient();
  const list = useQuery(capturesQuery);
  const [draft, setDraft] = useState<StartDraft | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: captureKeys.list });
  const onError = (err: unknown) => notifications.show({ color: 'red', message: errorText(err) });
  const start = useMutation({
    mutationFn: (d: StartDraft) => startCapture(startBody(d)),
    onSuccess: () => {
      setDraft(null);
      refresh();
    },
  });
  const stop = useMutation({ mutationFn: stopCapture, onSuccess: refresh, onError });
  const remove = useMutation({ mutationFn: deleteCapture, onSuccess: refresh, onError });
  const download = useMutation({ mutationFn: downloadCapture, onError });
  return (
    <>
      <PageHeader
        title="Packet capture"
        subtitle={
          list.data
            ? `${list.data.length} captures · ${list.data.filter(isActive).length} running`
            : undefined
        }
      >
        <Button onClick={() => setDraft(EMPTY_DRAFT)} data-testid="start-capture">
          Start capture
        </Button>
      </PageHeader>
      {list.isError ? (
        <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      ) : list.isPending ? (
        <RowsSkeleton />
      ) : list.data.length === 0 ? (
        <EmptyState title="No captures yet">
          Start a capture: choose interfaces and a filter; the appliance writes the packets to a
          pcapng file you can download.
        </EmptyState>
      ) : (
        <Table highlightOnHover data-testid="captures-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Status</Table.Th>
              <Table.Th>Label</Table.Th>
              <Table.Th>Interfaces</Table.Th>
              <Table.Th>Filter</Table.Th>
              <Table.Th>Packets</Table.Th>
              <Table.Th>Size</Table.Th>
              <Table.Th>Engine</Table.Th>
              <Table.Th>Started</Table.Th>
              <Table.Th w={110} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((c) => (
              <Table.Tr key={c.id} data-testid={`capture-row-${c.id}`}>
                <Table.Td>
                  <StatusBadge c={c} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" truncate maw={220} title={c.label ?? ''}>
                    {c.label ?? `capture ${c.id}`}
                  </Text>
                </Table.Td>
                <Table.Td className="console-mono">{c.ifaces.join(', ')}</Table.Td>
                <Table.Td>
                  <Text size="sm" className="console-mono" truncate maw={260}>
                    {filterText(c)}
                  </Text>
                </Table.Td>
                <Table.Td data-testid={`capture-packets-${c.id}`}>
                  {c.packets.toLocaleString()}
                  {c.drops ? ` (${c.drops.toLocaleString()} dropped)` : ''}
                </Table.Td>
                <Table.Td>
                  {formatBytes(c.bytes)} / {formatBytes(c.byte_cap)}
                </Table.Td>
                <Table.Td>{c.engine ?? '–'}</Table.Td>
                <Table.Td title={formatTime(c.started_at ?? c.created_at)}>
                  {formatAgo(c.started_at ?? c.created_at)}
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    {isActive(c) ? (
                      <ActionIcon
                        aria-label={`Stop capture ${c.id}`}
                        onClick={() => stop.mutate(c.id)}
                        loading={stop.isPending && stop.variables === c.id}
                      >
                        ■
                      </ActionIcon>
                    ) : (
                      <>
                        <ActionIcon
                          aria-label={`Download capture ${c.id}`}
                          onClick={() => download.mutate(c.id)}
                        >
                          ⤓
                        </ActionIcon>
                        <ActionIcon
                          color="red"
                          aria-label={`Delete capture ${c.id}`}
                          onClick={() =>
                            window.confirm(`Delete capture ${c.label ?? c.id} and its file?`) &&
                            remove.mutate(c.id)
                          }
                        >
                          ✕
                        </ActionIcon>
                      </>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={draft !== null} onClose={() => setDraft(null)} title="Start capture">
        {draft ? (
          <StartForm
            draft={draft}
            onChange={setDraft}
            onSubmit={() => start.mutate(draft)}
            pending={start.isPending}
            error={start.isError ? start.error : null}
          />
        ) : null}
      </Modal>
    </>
  );
}

function StartForm({
  draft,
  onChange,
  onSubmit,
  pending,
  error,
}: {
  draft: StartDraft;
  onChange: (d: StartDraft) => void;
  onSubmit: () => void;
  pending: boolean;
  error: unknown;
}) {
  const interfaces = useQuery(interfacesQuery);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <TextInput
        label="Label"
        maxLength={255}
        value={draft.label}
        onChange={(e) => onChange({ ...draft, label: e.currentTarget.value })}
        data-autofocus
      />
      <MultiSelect
        mt="xs"
        label="Interfaces"
        description="None chosen: the sniffer interfaces, else the default route's interface"
        data={interfaces.data ?? []}
        value={draft.ifaces}
        onChange={(ifaces) => onChange({ ...draft, ifaces })}
        searchable
        data-testid="capture-ifaces"
      />
      <TextInput
        mt="xs"
        label="Hosts"
        description="IP addresses, separated by commas or spaces"
        className="console-mono"
        value={draft.hosts}
        onChange={(e) => onChange({ ...draft, hosts: e.currentTarget.value })}
      />
      <Group grow mt="xs">
        <TextInput
          label="Ports"
          className="console-mono"
          value={draft.ports}
          onChange={(e) => onChange({ ...draft, ports: e.currentTarget.value })}
        />
        <TextInput
          label="VLANs"
          className="console-mono"
          value={draft.vlans}
          onChange={(e) => onChange({ ...draft, vlans: e.currentTarget.value })}
        />
      </Group>
      <Checkbox.Group
        mt="xs"
        label="Protocols (none: all)"
        value={draft.protocols}
        onChange={(v) => onChange({ ...draft, protocols: v as StartDraft['protocols'] })}
      >
        <Group mt={4}>
          <Checkbox value="tcp" label="TCP" />
          <Checkbox value="udp" label="UDP" />
          <Checkbox value="icmp" label="ICMP" />
        </Group>
      </Checkbox.Group>
      <Group grow mt="xs">
        <NumberInput
          label="Stop at (MiB)"
          min={0.0625}
          max={1024}
          decimalScale={4}
          value={draft.byteCapMiB}
          onChange={(v) => onChange({ ...draft, byteCapMiB: v })}
        />
        <NumberInput
          label="Stop after (seconds)"
          min={10}
          max={86400}
          value={draft.deadlineS}
          onChange={(v) => onChange({ ...draft, deadlineS: v })}
        />
      </Group>
      <Switch
        mt="sm"
        label="Ephemeral (expires when nobody follows it)"
        checked={draft.ephemeral}
        onChange={(e) => onChange({ ...draft, ephemeral: e.currentTarget.checked })}
      />
      {error ? <ErrorNotice error={error} /> : null}
      <Group justify="flex-end" mt="md">
        <Button type="submit" loading={pending} data-testid="capture-submit">
          Start
        </Button>
      </Group>
    </form>
  );
}
