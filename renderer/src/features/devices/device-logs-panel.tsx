/**
 * The device page's "Logs" tab (permission `write_devices`; the page neither shows nor requests it
 * otherwise): the device's syslog access config (spec part 3, Syslog access config: accept or
 * refuse its syslog, and the least severe level kept) and its event-log trackers (which Windows
 * event queries its agent runs). The API calls are the logs feature's (features/logs/logs-api.ts).
 */
import {
  ActionIcon,
  Button,
  Group,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { formatAgo, formatTime } from '../../lib/format.js';
import {
  addEventlogTracker,
  deleteEventlogTracker,
  eventlogQueriesQuery,
  eventlogTrackersQuery,
  logKeys,
  saveSyslogConfig,
  syslogConfigQuery,
} from '../logs/logs-api.js';

const LEVELS = [
  'Emergency',
  'Alert',
  'Critical',
  'Error',
  'Warning',
  'Notice',
  'Informational',
  'Debug',
];

function SyslogAccess({ deviceId }: { deviceId: number }) {
  const queryClient = useQueryClient();
  const config = useQuery(syslogConfigQuery(deviceId));
  const [enabled, setEnabled] = useState(true);
  const [level, setLevel] = useState('7');
  useEffect(() => {
    if (!config.data) return;
    setEnabled(config.data.enabled);
    setLevel(String(config.data.min_severity < 0 ? 7 : config.data.min_severity));
  }, [config.data]);
  const save = useMutation({
    mutationFn: () => saveSyslogConfig(deviceId, enabled, Number(level)),
    onSuccess: (answer) => {
      queryClient.setQueryData(logKeys.syslogConfig(deviceId), {
        status: true,
        config: answer.config,
      });
      notifications.show({
        color: 'teal',
        message: answer.message || 'Saved.',
      });
    },
  });
  const changed =
    config.data !== undefined &&
    (enabled !== config.data.enabled || (enabled && Number(level) !== config.data.min_severity));
  return (
    <Paper withBorder p="sm" data-testid="syslog-access">
      <Title order={2} mb={4}>
        Syslog from this device
      </Title>
      {config.isError ? (
        <ErrorNotice error={config.error} onRetry={() => void config.refetch()} />
      ) : config.isPending ? (
        <RowsSkeleton rows={2} />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack gap="xs">
            <Switch
              label="Accept syslog from this device"
              checked={enabled}
              onChange={(e) => setEnabled(e.currentTarget.checked)}
              data-testid="syslog-enabled"
            />
            <Select
              label="Keep messages up to"
              description="Less severe messages are refused at intake (counted, not stored)."
              data={LEVELS.map((name, i) => ({ value: String(i), label: `${i} ${name}` }))}
              value={level}
              onChange={(v) => v !== null && setLevel(v)}
              disabled={!enabled}
              allowDeselect={false}
              w={260}
              data-testid="syslog-min-severity"
            />
            {save.isError ? <ErrorNotice error={save.error} /> : null}
            <Group>
              <Button type="submit" loading={save.isPending} disabled={!changed}>
                Save
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Paper>
  );
}

function EventLogTrackers({ deviceId }: { deviceId: number }) {
  const queryClient = useQueryClient();
  const trackers = useQuery(eventlogTrackersQuery(deviceId));
  const queries = useQuery(eventlogQueriesQuery);
  const [queryId, setQueryId] = useState<string | null>(null);
  const refresh = () =>
    void queryClient.invalidateQueries({ queryKey: logKeys.eventlogTrackers(deviceId) });
  const fail = (err: unknown) =>
    notifications.show({
      color: 'red',
      message: errorText(err),
    });
  const add = useMutation({
    mutationFn: (id: number) => addEventlogTracker(deviceId, id),
    onSuccess: (row) => {
      const known = trackers.data?.some((t) => t.id === row.id);
      if (known)
        notifications.show({
          message: 'This query is already tracked on this device.',
        });
      setQueryId(null);
      refresh();
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: (id: number) => deleteEventlogTracker(id),
    onSuccess: refresh,
    onError: fail,
  });
  const labelOf = (id: number) => queries.data?.find((q) => q.id === id)?.label ?? `Query ${id}`;
  return (
    <Paper withBorder p="sm" data-testid="eventlog-trackers">
      <Title order={2} mb={4}>
        Windows event-log trackers
      </Title>
      <Text size="xs" c="dimmed" mb={6}>
        The device’s agent collects the events of each tracked query (the first poll goes back one
        day); they appear under Windows events.
      </Text>
      {trackers.isError ? (
        <ErrorNotice error={trackers.error} onRetry={() => void trackers.refetch()} />
      ) : trackers.isPending ? (
        <RowsSkeleton rows={2} />
      ) : trackers.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          No event-log trackers on this device.
        </Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Query</Table.Th>
              <Table.Th>Last polled</Table.Th>
              <Table.Th w={40} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {trackers.data.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.label ?? labelOf(t.query_id)}</Table.Td>
                <Table.Td title={formatTime(t.last_polled_at ?? null)}>
                  {t.last_polled_at ? formatAgo(t.last_polled_at) : 'not yet'}
                </Table.Td>
                <Table.Td>
                  <ActionIcon
                    color="red"
                    variant="subtle"
                    aria-label={`Stop tracking ${t.label ?? labelOf(t.query_id)}`}
                    onClick={() =>
                      window.confirm(`Stop tracking “${t.label ?? labelOf(t.query_id)}”?`) &&
                      remove.mutate(t.id)
                    }
                  >
                    ✕
                  </ActionIcon>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group mt="sm" align="flex-end" gap="xs">
        <Select
          label="Track a query"
          placeholder={queries.isPending ? 'Loading…' : 'Choose a query'}
          data={(queries.data ?? []).map((q) => ({ value: String(q.id), label: q.label }))}
          value={queryId}
          onChange={setQueryId}
          searchable
          w={320}
          data-testid="eventlog-query"
        />
        <Button
          onClick={() => queryId && add.mutate(Number(queryId))}
          disabled={!queryId}
          loading={add.isPending}
          data-testid="add-eventlog-tracker"
        >
          Add
        </Button>
      </Group>
      {queries.isError ? <ErrorNotice error={queries.error} /> : null}
    </Paper>
  );
}

export function DeviceLogsPanel({ deviceId }: { deviceId: number }) {
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
      <SyslogAccess deviceId={deviceId} />
      <EventLogTrackers deviceId={deviceId} />
    </SimpleGrid>
  );
}
