/**
 * URL monitoring (permission `urls`): checks with their last status, latency, certificate expiry
 * and message; add, edit and delete (saveUrl takes its body under `newtracker`); the 24-hour
 * report (GET /api/urlTracker) for availability and latency percentiles.
 */
import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Modal,
  NumberInput,
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
import { api } from '../../lib/api-client.js';
import { formatAgo, formatMs, formatPercent, formatTime, parseTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

interface UrlTracker {
  id: number;
  url: string;
  interval: number;
  pattern: string;
  timestamp: number | null;
  latency: number | null;
  message: string | null;
  status: number | null;
  ssldate: string | null;
}
interface ReportRow {
  id: number;
  checks?: number;
  failures?: number;
  availability?: number | null;
  latency?: { avg: number | null; p95: number | null } | null;
  ssl_days_left?: number | null;
}
interface Draft {
  id?: number;
  url: string;
  pattern: string;
  interval: number | string;
}

function StatusCell({ u }: { u: UrlTracker }) {
  if (u.status === null) return <Badge color="gray">not checked</Badge>;
  const ok = u.status > 0 && u.status < 400;
  return (
    <Badge color={ok ? 'teal' : 'red'} variant={ok ? 'light' : 'filled'}>
      {u.status || 'no answer'}
    </Badge>
  );
}

export function Page() {
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: keys.urls.list,
    queryFn: () => api.get<{ data: UrlTracker[] }>('/api/getUrls'),
    select: (a) => a.data,
    refetchInterval: 30_000,
  });
  const report = useQuery({
    queryKey: keys.urls.report,
    queryFn: () => api.get<{ data: ReportRow[] }>('/api/urlTracker', { query: { hours: 24 } }),
    select: (a) => new Map(a.data.map((r) => [r.id, r])),
    refetchInterval: 60_000,
  });
  const [draft, setDraft] = useState<Draft | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.urls.all });
  const save = useMutation({
    mutationFn: (d: Draft) =>
      api.post('/api/saveUrl', {
        newtracker: {
          ...(d.id ? { id: d.id } : {}),
          url: d.url.trim(),
          pattern: d.pattern,
          interval: Number(d.interval),
        },
      }),
    onSuccess: () => {
      setDraft(null);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => api.post('/api/deleteUrl', { id }),
    onSuccess: refresh,
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  return (
    <>
      <PageHeader
        title="URL monitoring"
        subtitle={list.data ? `${list.data.length} checks · availability over 24 h` : undefined}
      >
        <Button
          onClick={() => setDraft({ url: 'https://', pattern: '', interval: 300 })}
          data-testid="add-url"
        >
          Add URL
        </Button>
      </PageHeader>
      {list.isError ? (
        <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      ) : list.isPending ? (
        <RowsSkeleton />
      ) : list.data.length === 0 ? (
        <EmptyState title="No URL checks yet">
          Add a URL and the text its page must contain; the appliance checks it on its interval.
        </EmptyState>
      ) : (
        <Table highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Status</Table.Th>
              <Table.Th>URL</Table.Th>
              <Table.Th>Latency</Table.Th>
              <Table.Th>Availability</Table.Th>
              <Table.Th>p95</Table.Th>
              <Table.Th>Certificate</Table.Th>
              <Table.Th>Message</Table.Th>
              <Table.Th>Checked</Table.Th>
              <Table.Th w={70} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((u) => {
              const r = report.data?.get(u.id);
              const sslAt = parseTime(u.ssldate);
              const days = sslAt === null ? null : Math.floor((sslAt - Date.now()) / 86_400_000);
              return (
                <Table.Tr key={u.id}>
                  <Table.Td>
                    <StatusCell u={u} />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" className="console-mono" truncate maw={320} title={u.url}>
                      {u.url}
                    </Text>
                  </Table.Td>
                  <Table.Td>{formatMs(u.latency)}</Table.Td>
                  <Table.Td>{formatPercent(r?.availability ?? null, 1)}</Table.Td>
                  <Table.Td>{formatMs(r?.latency?.p95 ?? null)}</Table.Td>
                  <Table.Td
                    c={days !== null && days < 21 ? (days < 0 ? 'red' : 'yellow') : undefined}
                  >
                    {days === null ? (
                      '–'
                    ) : (
                      <Tooltip label={formatTime(sslAt)}>
                        <span>{days < 0 ? 'expired' : `${days} d`}</span>
                      </Tooltip>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" truncate maw={220} title={u.message ?? ''}>
                      {u.message ?? ''}
                    </Text>
                  </Table.Td>
                  <Table.Td title={formatTime(u.timestamp)}>{formatAgo(u.timestamp)}</Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <ActionIcon
                        aria-label={`Edit ${u.url}`}
                        onClick={() =>
                          setDraft({
                            id: u.id,
                            url: u.url,
                            pattern: u.pattern,
                            interval: u.interval,
                          })
                        }
                      >
                        ✎
                      </ActionIcon>
                      <ActionIcon
                        color="red"
                        aria-label={`Delete ${u.url}`}
                        onClick={() =>
                          window.confirm(`Stop checking ${u.url}?`) && remove.mutate(u.id)
                        }
                      >
                        ✕
                      </ActionIcon>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      <Modal
        opened={draft !== null}
        onClose={() => setDraft(null)}
        title={draft?.id ? 'Edit URL check' : 'Add URL check'}
      >
        {draft ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(draft);
            }}
          >
            <TextInput
              label="URL"
              required
              className="console-mono"
              value={draft.url}
              onChange={(e) => setDraft({ ...draft, url: e.currentTarget.value })}
              data-autofocus
            />
            <TextInput
              mt="xs"
              label="The page must contain"
              required
              value={draft.pattern}
              onChange={(e) => setDraft({ ...draft, pattern: e.currentTarget.value })}
            />
            <NumberInput
              mt="xs"
              label="Every (seconds)"
              min={10}
              value={draft.interval}
              onChange={(v) => setDraft({ ...draft, interval: v })}
            />
            {save.isError ? <ErrorNotice error={save.error} /> : null}
            <Group justify="flex-end" mt="md">
              <Button type="submit" loading={save.isPending}>
                Save
              </Button>
            </Group>
          </form>
        ) : null}
      </Modal>
    </>
  );
}
