/**
 * The newest rows of a log feed over the last day, compact: the overview's recent syslog and IDS
 * panels and the "Recent syslog" dashboard widget. Requests nothing without `logs`. Device text is
 * rendered as text.
 */
import { Anchor, Badge, Table, Text, useComputedColorScheme } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';

import { ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { useCaller } from '../../lib/caller.js';
import { formatAgo, formatTime } from '../../lib/format.js';
import { FEEDS, levelOf, severityLabel, type FeedId } from './log-model.js';
import { recentLogsQuery, type IdsRow, type SyslogRow } from './logs-api.js';

export function RecentLogs({ feedId, limit = 8 }: { feedId: 'syslog' | 'eve'; limit?: number }) {
  const caller = useCaller();
  const allowed = caller.can('logs');
  const rows = useQuery({ ...recentLogsQuery(feedId, limit), enabled: allowed });
  const feed = FEEDS[feedId as FeedId];
  const light = useComputedColorScheme('dark') === 'light';
  if (!allowed)
    return (
      <Text size="sm" c="dimmed">
        The logs permission is needed.
      </Text>
    );
  if (rows.isError) return <ErrorNotice error={rows.error} onRetry={() => void rows.refetch()} />;
  if (!rows.data) return <RowsSkeleton rows={3} />;
  if (rows.data.length === 0)
    return (
      <Text size="sm" c="dimmed">
        Nothing in the last 24 hours.
      </Text>
    );
  const badge = (value: number) => (
    <Badge
      size="xs"
      radius="xs"
      variant={light ? 'filled' : 'light'}
      autoContrast
      color={`${(levelOf(feed, value)?.color ?? 'gray.6').split('.')[0]}${light ? '.3' : ''}`}
    >
      {severityLabel(feed, value)}
    </Badge>
  );
  return (
    <Table verticalSpacing={2} data-testid={`recent-${feedId}`}>
      <Table.Tbody>
        {feedId === 'syslog'
          ? (rows.data as SyslogRow[]).map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td w={70} title={formatTime(r.timestamp)}>
                  <Text size="xs" c="dimmed">
                    {formatAgo(r.timestamp)}
                  </Text>
                </Table.Td>
                <Table.Td w={90}>{badge(r.severity)}</Table.Td>
                <Table.Td>
                  <Text size="sm" lineClamp={1} title={r.message}>
                    {r.source ? `${r.source}: ` : ''}
                    {r.message}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))
          : (rows.data as IdsRow[]).map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td w={70} title={formatTime(r.timestamp)}>
                  <Text size="xs" c="dimmed">
                    {formatAgo(r.timestamp)}
                  </Text>
                </Table.Td>
                <Table.Td w={90}>{badge(r.severity)}</Table.Td>
                <Table.Td>
                  <Anchor component={Link} to={`/logs/ids/${r.id}`} size="sm" lineClamp={1}>
                    {r.signature || `Signature ${r.signature_id}`}
                  </Anchor>
                  <Text size="xs" c="dimmed" className="console-mono">
                    {r.src_ip} → {r.dst_ip}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
      </Table.Tbody>
    </Table>
  );
}
