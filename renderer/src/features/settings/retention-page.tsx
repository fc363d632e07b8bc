/**
 * Retention (spec part 3, Data maintenance; permission `system`): one row per table that grows,
 * with its real size (`dbstat`) and its days. Edits are saved together, all or nothing
 * (`setRetentionPolicy`: a refused row stores none); the pruner applies new days at its next
 * hourly run. Throughput history keeps a fixed twelve weeks and has no row.
 */
import { Button, Paper, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { formatBytes } from '../../lib/format.js';
import { retentionQuery, setRetention, settingsKeys, type RetentionRow } from './settings-api.js';
import { retentionChanges, retentionError } from './settings-model.js';
import { Gated, OutcomeNotice, type Outcome } from './settings-shared.js';

/** The policy table with its day fields; exported for its test. */
export function RetentionTable({
  rows,
  edits,
  onEdit,
}: {
  rows: readonly RetentionRow[];
  edits: Readonly<Record<number, string>>;
  onEdit: (id: number, value: string) => void;
}) {
  const total = rows.reduce((sum, r) => sum + r.size, 0);
  return (
    <Table data-testid="retention" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Data</Table.Th>
          <Table.Th ta="right">Size</Table.Th>
          <Table.Th w={180}>Keep (days)</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => {
          const value = edits[r.id] ?? String(r.retention);
          const error = retentionError(value);
          const changed = edits[r.id] !== undefined && value.trim() !== String(r.retention);
          return (
            <Table.Tr key={r.id}>
              <Table.Td className="console-mono">{r.table}</Table.Td>
              <Table.Td ta="right">{formatBytes(r.size)}</Table.Td>
              <Table.Td>
                <TextInput
                  size="xs"
                  inputMode="numeric"
                  aria-label={`Days to keep ${r.table}`}
                  value={value}
                  error={error ?? undefined}
                  styles={changed ? { input: { fontWeight: 700 } } : undefined}
                  onChange={(e) => onEdit(r.id, e.currentTarget.value)}
                />
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
      <Table.Tfoot>
        <Table.Tr>
          <Table.Th>Total</Table.Th>
          <Table.Th ta="right">{formatBytes(total)}</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Tfoot>
    </Table>
  );
}

function Retention() {
  const queryClient = useQueryClient();
  const policy = useQuery(retentionQuery);
  const [edits, setEdits] = useState<Record<number, string>>({});
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const changes = policy.data ? retentionChanges(policy.data, edits) : [];
  const save = useMutation({
    mutationFn: (data: { id: number; retention: number }[]) => setRetention(data),
    onSuccess: async (_answer, data) => {
      await queryClient.invalidateQueries({ queryKey: settingsKeys.retention });
      setEdits({});
      setOutcome({
        ok: true,
        title: 'Retention policy saved',
        message: `${data.length} row(s) changed; the pruner applies them at its next run (hourly).`,
      });
    },
    onError: (err) =>
      setOutcome({ ok: false, title: 'Nothing was saved', message: errorText(err) }),
  });
  return (
    <Stack gap="sm">
      <PageHeader title="Retention" subtitle="How long each kind of data is kept">
        <Button
          variant="default"
          disabled={Object.keys(edits).length === 0}
          onClick={() => setEdits({})}
        >
          Reset
        </Button>
        <Button
          disabled={changes === null || changes.length === 0}
          loading={save.isPending}
          onClick={() => changes && save.mutate(changes)}
        >
          Save
        </Button>
      </PageHeader>
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      <Paper withBorder p="sm">
        {policy.isError ? (
          <ErrorNotice error={policy.error} onRetry={() => void policy.refetch()} />
        ) : policy.isPending ? (
          <RowsSkeleton rows={10} />
        ) : policy.data.length === 0 ? (
          <EmptyState title="No retention rows registered" />
        ) : (
          <RetentionTable
            rows={policy.data}
            edits={edits}
            onEdit={(id, value) => {
              setOutcome(null);
              setEdits((e) => ({ ...e, [id]: value }));
            }}
          />
        )}
      </Paper>
      <Text size="sm" c="dimmed">
        Partitioned logs and flows shed data only by dropping whole partitions; the other tables are
        pruned in small batches. Throughput history keeps a fixed twelve weeks.
      </Text>
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="Retention">
      <Retention />
    </Gated>
  );
}
