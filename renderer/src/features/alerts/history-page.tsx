/**
 * The alert-history ledger (designed `GET /api/alerts/history`; permission `alerts`): every
 * occurrence newest first, paged by `before_id`, with when it opened and closed, what matched, and
 * per outlet whether a notification was queued (its delivery id) or suppressed and by what.
 */
import { Badge, Button, Group, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { formatTime } from '../../lib/format.js';
import { nextBeforeId, notificationStatus } from './alert-model.js';
import {
  alertKeys,
  fetchHistory,
  HISTORY_PAGE,
  type HistoryRow,
  type Source,
} from './alerts-api.js';
import { AlertsNav, Gate, SEVERITY_COLORS } from './alerts-ui.js';

export function HistoryTable({ rows }: { rows: HistoryRow[] }) {
  if (rows.length === 0)
    return (
      <EmptyState title="No occurrences yet">
        An occurrence opens when an enabled alert's count reaches its minimum within the lookback
        window, or when a legacy alert changes state.
      </EmptyState>
    );
  return (
    <Table aria-label="Alert history" verticalSpacing="xs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Opened</Table.Th>
          <Table.Th>Alert</Table.Th>
          <Table.Th>Device</Table.Th>
          <Table.Th>Matches</Table.Th>
          <Table.Th>Message</Table.Th>
          <Table.Th>Notifications</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.id} data-testid="history-row">
            <Table.Td style={{ whiteSpace: 'nowrap' }}>
              {formatTime(r.opened_at)}
              <Text size="xs" c="dimmed">
                {r.closed_at ? `closed ${formatTime(r.closed_at)}` : 'open'}
              </Text>
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <Badge color={SEVERITY_COLORS[r.severity] ?? 'gray'} variant="light" size="sm">
                  {r.severity}
                </Badge>
                <span>{r.alert_label}</span>
              </Group>
              <Text size="xs" c="dimmed">
                {r.source} · {r.alert_class}
              </Text>
            </Table.Td>
            <Table.Td>
              {r.device_label ?? (r.device_id === null ? '–' : `#${r.device_id}`)}
            </Table.Td>
            <Table.Td>{r.match_count}</Table.Td>
            <Table.Td className="console-mono" style={{ maxWidth: 360, wordBreak: 'break-word' }}>
              {r.message ?? ''}
            </Table.Td>
            <Table.Td>
              {r.suppressed_by ? (
                <Text size="xs" c="dimmed">
                  suppressed: {r.suppressed_by}
                </Text>
              ) : null}
              {r.notifications.length === 0 && !r.suppressed_by ? (
                <Text size="xs" c="dimmed">
                  no routing rule matched
                </Text>
              ) : null}
              <Stack gap={2}>
                {r.notifications.map((n, i) => {
                  const s = notificationStatus(n);
                  return (
                    <Group key={i} gap={4} wrap="nowrap" data-testid="notification">
                      <Text size="sm">{n.outlet_name}</Text>
                      <Text size="xs">
                        <Text span c={s.color} aria-hidden="true">
                          ●{' '}
                        </Text>
                        {s.label}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {formatTime(n.queued_at)}
                      </Text>
                    </Group>
                  );
                })}
              </Stack>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function HistoryContent() {
  const [source, setSource] = useState<'all' | Source>('all');
  const filter = source === 'all' ? {} : { source };
  const history = useInfiniteQuery({
    queryKey: alertKeys.history(filter),
    queryFn: ({ pageParam }) => fetchHistory(filter, pageParam),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => nextBeforeId(last, HISTORY_PAGE) ?? undefined,
    refetchInterval: 15_000,
  });
  const rows = history.data?.pages.flat() ?? [];
  return (
    <Stack gap="sm">
      <PageHeader title="Alert history" subtitle="Every occurrence and where it was delivered">
        <SegmentedControl
          aria-label="Source"
          data={[
            { value: 'all', label: 'All' },
            { value: 'modern', label: 'Alerts' },
            { value: 'legacy', label: 'Legacy' },
          ]}
          value={source}
          onChange={(v) => setSource(v as 'all' | Source)}
        />
        <Button variant="default" onClick={() => void history.refetch()}>
          Refresh
        </Button>
      </PageHeader>
      <AlertsNav />
      {history.isError ? (
        <ErrorNotice error={history.error} onRetry={() => void history.refetch()} />
      ) : history.isPending ? (
        <RowsSkeleton rows={6} />
      ) : (
        <>
          <HistoryTable rows={rows} />
          {history.hasNextPage ? (
            <Group justify="center">
              <Button
                variant="default"
                loading={history.isFetchingNextPage}
                onClick={() => void history.fetchNextPage()}
              >
                Older occurrences
              </Button>
            </Group>
          ) : null}
        </>
      )}
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="alerts" title="Alert history">
      <HistoryContent />
    </Gate>
  );
}
