/**
 * Pending devices (found by discovery or agent check-in): edit fields and tags before import,
 * import with tags, hide, remove. Each field saves on its own (updatePendingDeviceField).
 */
import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Menu,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { formatAgo, formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

interface Tag {
  slug: string;
  name: string;
  type?: string;
}
interface PendingDevice {
  id: number;
  label: string;
  ip_address: string;
  profile: string;
  enable_agent: boolean;
  last_checkin_at: string | number | null;
  agent_version: string | null;
  os_version: string | null;
  tags: Tag[];
}
interface Discovery {
  id: number;
  net_id: number;
  start_time: string | number | null;
  end_time: string | number | null;
}

export const slugOf = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const tagsOf = (names: string[]) =>
  names.map((name) => ({ slug: slugOf(name), name, type: 'device' }));

function LabelCell({ device, onSave }: { device: PendingDevice; onSave: (value: string) => void }) {
  const [value, setValue] = useState(device.label);
  return (
    <TextInput
      aria-label={`Name of ${device.ip_address}`}
      value={value}
      onChange={(e) => setValue(e.currentTarget.value)}
      onBlur={() => value !== device.label && value.trim() && onSave(value.trim())}
      onKeyDown={(e) => e.key === 'Enter' && e.currentTarget.blur()}
      size="xs"
      variant="unstyled"
    />
  );
}

export function Page() {
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: keys.pending.list,
    queryFn: () =>
      api.post<{ devices: PendingDevice[]; discovery_status: Discovery[] }>(
        '/api/getDevicesPending',
      ),
    refetchInterval: 30_000,
  });
  const [tagsById, setTagsById] = useState<Record<number, string[]>>({});
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.pending.all });
  const act = useMutation({
    mutationFn: ({ path, body }: { path: string; body: unknown; done: string }) =>
      api.post(path, body),
    onSuccess: (_r, v) => {
      if (v.done) notifications.show({ color: 'teal', message: v.done });
      refresh();
      if (v.path === '/api/importPending')
        void queryClient.invalidateQueries({ queryKey: keys.devices.all });
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const devices = list.data?.devices ?? [];
  const running = (list.data?.discovery_status ?? []).filter((d) => d.end_time === null);
  return (
    <>
      <PageHeader
        title="Pending devices"
        subtitle={
          list.data
            ? `${devices.length} waiting${running.length ? ` · discovery running on ${running.length} network(s)` : ''}`
            : undefined
        }
      />
      {list.isError ? (
        <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      ) : list.isPending ? (
        <RowsSkeleton />
      ) : devices.length === 0 ? (
        <EmptyState title="Nothing is waiting for import">
          Devices found by discovery (Local networks) and agents that check in appear here for
          review.
        </EmptyState>
      ) : (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>IP address</Table.Th>
              <Table.Th>Profile</Table.Th>
              <Table.Th>Agent</Table.Th>
              <Table.Th w={260}>Tags</Table.Th>
              <Table.Th w={150} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {devices.map((d) => {
              const tags = tagsById[d.id] ?? d.tags.map((t) => t.name);
              return (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <LabelCell
                      device={d}
                      onSave={(value) =>
                        act.mutate({
                          path: '/api/updatePendingDeviceField',
                          body: { id: d.id, field: 'label', value },
                          done: '',
                        })
                      }
                    />
                  </Table.Td>
                  <Table.Td className="console-mono">{d.ip_address}</Table.Td>
                  <Table.Td>{d.profile}</Table.Td>
                  <Table.Td>
                    {d.enable_agent ? (
                      <Text size="xs" title={formatTime(d.last_checkin_at)}>
                        <Badge>agent {d.agent_version ?? ''}</Badge> {d.os_version ?? ''} ·{' '}
                        {formatAgo(d.last_checkin_at)}
                      </Text>
                    ) : (
                      '–'
                    )}
                  </Table.Td>
                  <Table.Td>
                    <TagsInput
                      aria-label={`Tags of ${d.ip_address}`}
                      value={tags}
                      onChange={(v) => setTagsById((m) => ({ ...m, [d.id]: v }))}
                      onBlur={() =>
                        tagsById[d.id] &&
                        act.mutate({
                          path: '/api/updatePendingDeviceTags',
                          body: { id: d.id, tags: tagsOf(tags) },
                          done: '',
                        })
                      }
                    />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        onClick={() =>
                          act.mutate({
                            path: '/api/importPending',
                            body: { id: d.id, tags: tagsOf(tags) },
                            done: `Imported ${d.label}`,
                          })
                        }
                      >
                        Import
                      </Button>
                      <Menu withinPortal position="bottom-end">
                        <Menu.Target>
                          <ActionIcon aria-label={`More for ${d.ip_address}`}>⋯</ActionIcon>
                        </Menu.Target>
                        <Menu.Dropdown>
                          <Menu.Item
                            onClick={() =>
                              act.mutate({
                                path: '/api/hidePendingDevice',
                                body: { id: d.id },
                                done: 'Hidden',
                              })
                            }
                          >
                            Hide
                          </Menu.Item>
                          <Menu.Item
                            color="red"
                            onClick={() =>
                              act.mutate({
                                path: '/api/removePendingDevice',
                                body: { id: d.id },
                                done: 'Removed (it may reappear on the next discovery)',
                              })
                            }
                          >
                            Remove
                          </Menu.Item>
                        </Menu.Dropdown>
                      </Menu>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
    </>
  );
}
