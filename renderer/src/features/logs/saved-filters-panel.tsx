/**
 * Saved filters of a feed: personal exclusions (spec part 3). An enabled one hides the rows it
 * matches from the caller's own list and summary of this feed, and from nobody else's. Create one
 * from the current filters (the keys a saved filter accepts), toggle, delete. Every change reloads
 * the list and the summary; a refusal shows the appliance's message. Generic over the feed: the
 * flow explorer passes `netflow` (one set for both flow lists) with its own refresh and wording.
 */
import {
  ActionIcon,
  Button,
  Group,
  Paper,
  Popover,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { describeFilter, savableFilter, type LogFilters } from './log-model.js';
import {
  deleteFilter,
  logKeys,
  saveFilter,
  savedFiltersQuery,
  toggleFilter,
  type FilterFeedId,
  type SavedFilter,
} from './logs-api.js';

/** What the panel needs of a feed: its saved-filter endpoint family and the keys a saved filter takes. */
export interface SavedFilterFeed {
  id: FilterFeedId;
  savedKeys: string[];
}

export function SavedFiltersPanel({
  feed,
  current,
  onChange,
  hint = 'Personal exclusions: an enabled one hides the rows it matches from your list and severity counts here, never from anyone else’s, and never deletes anything.',
}: {
  feed: SavedFilterFeed;
  current: LogFilters;
  /** Reloads what the filters change (default: this log feed's list, summary and recent rows). */
  onChange?: () => void;
  hint?: string;
}) {
  const queryClient = useQueryClient();
  const saved = useQuery(savedFiltersQuery(feed.id));
  const [label, setLabel] = useState('');
  const [open, setOpen] = useState(false);
  const { filter, dropped } = savableFilter(feed, current);
  const empty = Object.keys(filter).length === 0;
  const refreshRows = () =>
    onChange
      ? onChange()
      : void queryClient.invalidateQueries({
          predicate: (q) =>
            q.queryKey[0] === 'logs' &&
            q.queryKey[1] === feed.id &&
            (q.queryKey[2] === 'list' || q.queryKey[2] === 'sevSum' || q.queryKey[2] === 'recent'),
        });
  const setList = (filters: SavedFilter[]) =>
    queryClient.setQueryData(logKeys.filters(feed.id), { message: '', filters });
  const fail = (err: unknown) =>
    notifications.show({
      color: 'red',
      message: errorText(err),
    });

  const create = useMutation({
    mutationFn: () => saveFilter(feed.id, label.trim(), filter),
    onSuccess: () => {
      setLabel('');
      setOpen(false);
      void queryClient.invalidateQueries({ queryKey: logKeys.filters(feed.id) });
      refreshRows();
    },
  });
  const toggle = useMutation({
    mutationFn: (id: number) => toggleFilter(feed.id, id),
    onSuccess: (answer) => {
      setList(answer.filters);
      refreshRows();
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: (id: number) => deleteFilter(feed.id, id),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: logKeys.filters(feed.id) });
      refreshRows();
    },
    onError: fail,
  });

  return (
    <Paper withBorder p="sm" data-testid="saved-filters">
      <Group justify="space-between" mb={4} wrap="nowrap">
        <Title order={2}>Saved exclusions</Title>
        <Popover opened={open} onChange={setOpen} position="bottom-end" withArrow trapFocus>
          <Popover.Target>
            <Button
              size="compact-sm"
              variant="light"
              onClick={() => setOpen((o) => !o)}
              disabled={empty}
              title={empty ? 'Set a filter first: its criteria become the exclusion' : undefined}
              data-testid="save-exclusion"
            >
              Exclude current filter…
            </Button>
          </Popover.Target>
          <Popover.Dropdown maw={360}>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                create.mutate();
              }}
            >
              <Stack gap="xs">
                <Text size="xs">
                  Hide rows matching <b>{describeFilter(filter)}</b> from your own list and summary
                  while the exclusion is on.
                </Text>
                {dropped.length ? (
                  <Text size="xs" c="yellow">
                    Not kept (a saved filter cannot hold them): {dropped.join(', ')}
                  </Text>
                ) : null}
                <TextInput
                  label="Name"
                  required
                  maxLength={255}
                  value={label}
                  onChange={(e) => setLabel(e.currentTarget.value)}
                  data-autofocus
                  data-testid="exclusion-label"
                />
                {create.isError ? <ErrorNotice error={create.error} /> : null}
                <Button type="submit" loading={create.isPending} disabled={!label.trim()}>
                  Save exclusion
                </Button>
              </Stack>
            </form>
          </Popover.Dropdown>
        </Popover>
      </Group>
      <Text size="xs" c="dimmed" mb={6}>
        {hint}
      </Text>
      {saved.isError ? (
        <ErrorNotice error={saved.error} onRetry={() => void saved.refetch()} />
      ) : saved.isPending ? (
        <RowsSkeleton rows={2} />
      ) : saved.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          None yet: filter the list, then save the filter as an exclusion to hide that noise.
        </Text>
      ) : (
        <Stack gap={4}>
          {saved.data.map((f) => (
            <Group key={f.id} justify="space-between" wrap="nowrap" gap="xs">
              <Switch
                checked={f.enabled}
                onChange={() => toggle.mutate(f.id)}
                disabled={toggle.isPending}
                label={
                  <span>
                    <Text span size="sm" fw={600}>
                      {f.label}
                    </Text>{' '}
                    <Text span size="xs" c="dimmed" className="console-mono">
                      {describeFilter(f.filter)}
                    </Text>
                  </span>
                }
                aria-label={`${f.enabled ? 'Disable' : 'Enable'} exclusion ${f.label}`}
                data-testid={`exclusion-${f.id}`}
              />
              <ActionIcon
                color="red"
                variant="subtle"
                aria-label={`Delete exclusion ${f.label}`}
                onClick={() =>
                  window.confirm(`Delete the exclusion “${f.label}”?`) && remove.mutate(f.id)
                }
              >
                ✕
              </ActionIcon>
            </Group>
          ))}
        </Stack>
      )}
    </Paper>
  );
}
