/**
 * Partitions and tablespaces (permission `system`; spec part 3, Data maintenance): the partitioned
 * tables, each one's partitions with bounds, rows and size, rotation (deletes nothing), deleting
 * partitions older than N weeks or one partition (both permanent, both confirmed), the table's
 * tablespace and a move to another, and the rotation's cron schedule.
 */
import {
  ActionIcon,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  Paper,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { formatBytes, formatTime } from '../../lib/format.js';
import {
  cronQuery,
  deleteOldPartitions,
  deletePartition,
  maintenanceKeys,
  moveTable,
  partitionsQuery,
  rotatePartition,
  tablespaceOfQuery,
  tablespacesQuery,
  tablesQuery,
  updateCron,
} from './maintenance-api.js';
import { looksLikeCron, partitionView, type PartitionView } from './partition-model.js';

const toast = (color: string, message: string) => notifications.show({ color, message });

/** The partitions of one table (exported for its component test). */
export function PartitionsTable({
  partitions,
  onDelete,
}: {
  partitions: PartitionView[];
  onDelete: (name: string) => void;
}) {
  if (partitions.length === 0) return <EmptyState title="No partitions" />;
  return (
    <Table highlightOnHover data-testid="partitions">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Partition</Table.Th>
          <Table.Th>From</Table.Th>
          <Table.Th>To</Table.Th>
          <Table.Th ta="right">Rows</Table.Th>
          <Table.Th ta="right">Size</Table.Th>
          <Table.Th w={40} />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {partitions.map((p) => (
          <Table.Tr key={p.name}>
            <Table.Td className="console-mono">
              {p.name}{' '}
              {p.live ? (
                <Badge size="xs" variant="outline">
                  live
                </Badge>
              ) : null}
            </Table.Td>
            <Table.Td>{p.from === null ? '–' : formatTime(p.from)}</Table.Td>
            <Table.Td>{p.to === null ? '–' : formatTime(p.to)}</Table.Td>
            <Table.Td ta="right">{p.rows === null ? '–' : p.rows.toLocaleString()}</Table.Td>
            <Table.Td ta="right">{p.bytes === null ? '–' : formatBytes(p.bytes)}</Table.Td>
            <Table.Td>
              {p.live ? null : (
                <ActionIcon
                  color="red"
                  variant="subtle"
                  aria-label={`Delete partition ${p.name}`}
                  onClick={() => onDelete(p.name)}
                >
                  ✕
                </ActionIcon>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

type Confirm = { title: string; text: string; action: () => Promise<unknown> } | null;

function TableTools({ table }: { table: string }) {
  const queryClient = useQueryClient();
  const partitions = useQuery(partitionsQuery(table));
  const cron = useQuery(cronQuery(table));
  const current = useQuery(tablespaceOfQuery(table));
  const spaces = useQuery(tablespacesQuery);
  const [weeks, setWeeks] = useState<number | string>(12);
  const [schedule, setSchedule] = useState('');
  const [target, setTarget] = useState<string | null>(null);
  const [indexes, setIndexes] = useState(true);
  const [confirm, setConfirm] = useState<Confirm>(null);
  useEffect(() => setSchedule(cron.data?.schedule ?? ''), [cron.data]);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: maintenanceKeys.all });
  const run = useMutation({
    mutationFn: (action: () => Promise<unknown>) => action(),
    onSuccess: (answer) => {
      const m = (answer as { message?: unknown })?.message;
      toast('teal', typeof m === 'string' ? m : 'Done.');
      setConfirm(null);
      refresh();
    },
    onError: (err) => toast('red', errorText(err)),
  });
  const rows = (partitions.data ?? []).map((p) => partitionView(p));
  return (
    <Stack gap="sm">
      <Paper withBorder p="sm">
        <Group justify="space-between" mb={6}>
          <Title order={2}>Partitions</Title>
          <Group gap="xs">
            <Button
              variant="default"
              onClick={() => run.mutate(() => rotatePartition(table))}
              loading={run.isPending}
              title="The live partition becomes a dated one; nothing is deleted"
            >
              Rotate now
            </Button>
            <NumberInput
              aria-label="Weeks to keep"
              min={1}
              value={weeks}
              onChange={setWeeks}
              w={80}
            />
            <Button
              color="red"
              variant="light"
              disabled={!(Number(weeks) >= 1)}
              onClick={() =>
                setConfirm({
                  title: 'Delete old partitions',
                  text: `Permanently delete every ${table} partition older than ${weeks} weeks? Their rows cannot be recovered.`,
                  action: () => deleteOldPartitions(table, Number(weeks)),
                })
              }
            >
              Delete older than {weeks} weeks…
            </Button>
          </Group>
        </Group>
        {partitions.isError ? (
          <ErrorNotice error={partitions.error} onRetry={() => void partitions.refetch()} />
        ) : partitions.isPending ? (
          <RowsSkeleton rows={4} />
        ) : (
          <PartitionsTable
            partitions={rows}
            onDelete={(name) =>
              setConfirm({
                title: 'Delete a partition',
                text: `Permanently delete partition ${name} and every row in it?`,
                action: () => deletePartition(name),
              })
            }
          />
        )}
      </Paper>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
        <Paper withBorder p="sm">
          <Title order={2} mb={4}>
            Rotation schedule
          </Title>
          {cron.isError ? (
            <ErrorNotice error={cron.error} />
          ) : (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                run.mutate(() => updateCron(table, schedule.trim()));
              }}
            >
              <Group align="flex-end" gap="xs">
                <TextInput
                  label="Cron (minute hour day month weekday, UTC)"
                  className="console-mono"
                  value={schedule}
                  onChange={(e) => setSchedule(e.currentTarget.value)}
                  error={schedule && !looksLikeCron(schedule) ? 'Five fields' : undefined}
                  placeholder={cron.isPending ? 'Loading…' : 'no schedule'}
                  w={260}
                />
                <Button
                  type="submit"
                  disabled={!looksLikeCron(schedule) || schedule.trim() === cron.data?.schedule}
                >
                  Save
                </Button>
              </Group>
              <Text size="xs" c="dimmed" mt={4}>
                Affects rotation only; old partitions are dropped by the retention policy.
              </Text>
            </form>
          )}
        </Paper>
        <Paper withBorder p="sm">
          <Title order={2} mb={4}>
            Tablespace
          </Title>
          <Text size="sm" mb={6}>
            Now in: <b>{current.data ?? '…'}</b>
          </Text>
          <Group align="flex-end" gap="xs">
            <Select
              label="Move to"
              data={(spaces.data ?? []).map((s) => ({
                value: s.name,
                label: `${s.name}${s.location ? ` (${s.location})` : ''}`,
              }))}
              value={target}
              onChange={setTarget}
              w={260}
            />
            <Checkbox
              label="Include indexes"
              checked={indexes}
              onChange={(e) => setIndexes(e.currentTarget.checked)}
              mb={8}
            />
            <Button
              disabled={!target || target === current.data}
              onClick={() =>
                target &&
                setConfirm({
                  title: 'Move a table',
                  text: `Move ${table}'s dated partitions to ${target}? The table is locked while it moves.`,
                  action: () => moveTable(table, target, indexes),
                })
              }
            >
              Move…
            </Button>
          </Group>
          {spaces.data?.length ? (
            <Table mt="xs">
              <Table.Tbody>
                {spaces.data.map((s) => (
                  <Table.Tr key={s.name}>
                    <Table.Td>{s.name}</Table.Td>
                    <Table.Td className="console-mono">{s.location ?? ''}</Table.Td>
                    <Table.Td ta="right">
                      {typeof s.size === 'number' ? formatBytes(s.size) : (s.size ?? '')}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          ) : null}
        </Paper>
      </SimpleGrid>
      <Modal opened={confirm !== null} onClose={() => setConfirm(null)} title={confirm?.title}>
        <Text size="sm">{confirm?.text}</Text>
        <Group justify="flex-end" mt="md">
          <Button variant="default" onClick={() => setConfirm(null)}>
            Cancel
          </Button>
          <Button
            color="red"
            loading={run.isPending}
            onClick={() => confirm && run.mutate(confirm.action)}
            data-testid="confirm-action"
          >
            Confirm
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}

export function Page() {
  const caller = useCaller();
  const allowed = caller.can('system');
  const tables = useQuery({ ...tablesQuery, enabled: allowed });
  const [table, setTable] = useState<string | null>(null);
  const selected = table ?? tables.data?.[0] ?? null;
  if (caller.loading) return <RowsSkeleton />;
  if (!allowed)
    return (
      <>
        <PageHeader title="Partitions" />
        <EmptyState title="The system permission is needed" />
      </>
    );
  return (
    <Stack gap="sm">
      <PageHeader
        title="Partitions"
        subtitle="Log and walk tables are pruned by dropping partitions"
      >
        {tables.data ? (
          <SegmentedControl
            aria-label="Table"
            data={tables.data}
            value={selected ?? ''}
            onChange={setTable}
          />
        ) : null}
      </PageHeader>
      {tables.isError ? (
        <ErrorNotice error={tables.error} onRetry={() => void tables.refetch()} />
      ) : !selected ? (
        <RowsSkeleton />
      ) : (
        <TableTools key={selected} table={selected} />
      )}
    </Stack>
  );
}
