/**
 * Hostname and host map (spec part 3, Appliance settings; permission `system`). The host's name
 * (`getHostname`, `setHostname`: a DNS name; a refusal is 422 `{message, errors}` and its
 * messages show under the field; in dry run the answer says it was not applied). The host map
 * names addresses for display: paged by `page` and `limit`, created, edited and deleted with the
 * documented `host_name_type` and `node_type` values.
 */
import {
  Alert,
  Button,
  Group,
  Modal,
  Pagination,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import { formatTime } from '../../lib/format.js';
import {
  createHost,
  deleteHost,
  hostMapQuery,
  hostnameQuery,
  setHostname,
  settingsKeys,
  updateHost,
  type HostMapEntry,
  type HostMapFields,
} from './settings-api.js';
import { HOST_NAME_TYPES, lastPage, NODE_TYPES } from './settings-model.js';
import { Gated, OutcomeNotice, SCOPE, type Outcome } from './settings-shared.js';

/** The field messages of a 422 `{message, errors}` (else the message). */
export function fieldErrors(error: unknown, field: string): string | null {
  if (!error) return null;
  if (error instanceof ApiError && error.fields?.[field]?.length)
    return error.fields[field].join(' ');
  return errorText(error);
}

/** The hostname form; exported for its test. */
export function HostnameForm({
  current,
  saving,
  error,
  onSubmit,
}: {
  current: string;
  saving?: boolean;
  error?: string | null;
  onSubmit: (hostname: string) => void;
}) {
  const [value, setValue] = useState(current);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(value.trim());
      }}
    >
      <Group align="flex-start" gap="xs">
        <TextInput
          label="Hostname"
          description="Letters, digits and hyphens; labels joined by dots; at most 255 characters"
          value={value}
          maxLength={300}
          onChange={(e) => setValue(e.currentTarget.value)}
          error={error ?? undefined}
          w={420}
        />
        <Button type="submit" mt={33} loading={saving} disabled={value.trim() === current}>
          Set hostname
        </Button>
      </Group>
    </form>
  );
}

function Hostname() {
  const queryClient = useQueryClient();
  const current = useQuery(hostnameQuery);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useMutation({
    mutationFn: setHostname,
    onSuccess: (answer) => {
      setOutcome({
        ok: true,
        warn: answer.dry_run,
        title: answer.dry_run ? 'Dry run: the hostname was not changed' : 'Hostname set',
        message: answer.message,
      });
      void queryClient.invalidateQueries({ queryKey: settingsKeys.hostname });
    },
    onError: () => setOutcome(null),
  });
  return (
    <Paper withBorder p="sm">
      <Title order={2} mb={6}>
        Hostname
      </Title>
      {current.isError ? (
        <ErrorNotice error={current.error} onRetry={() => void current.refetch()} />
      ) : current.isPending ? (
        <RowsSkeleton rows={1} />
      ) : (
        <Stack gap="xs">
          <Text size="sm">
            This host is <b className="console-mono">{current.data}</b>
          </Text>
          <HostnameForm
            key={current.data}
            current={current.data}
            saving={save.isPending}
            error={save.isError ? fieldErrors(save.error, 'hostname') : null}
            onSubmit={(name) => save.mutate(name)}
          />
          <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
        </Stack>
      )}
    </Paper>
  );
}

const EMPTY: HostMapFields = {
  ip: '',
  hostname: '',
  host_name_type: 'hostname',
  node_type: 'host',
};

/** The create/edit form of a host map entry; exported for its test. */
export function HostEntryForm({
  initial,
  saving,
  error,
  onSubmit,
  onCancel,
}: {
  initial: HostMapFields;
  saving?: boolean;
  error?: string | null;
  onSubmit: (fields: HostMapFields) => void;
  onCancel: () => void;
}) {
  const [fields, setFields] = useState<HostMapFields>(initial);
  const set = (key: keyof HostMapFields, value: string) =>
    setFields((f) => ({ ...f, [key]: value }));
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit({ ...fields, ip: fields.ip.trim(), hostname: fields.hostname.trim() });
      }}
    >
      <Stack gap="xs">
        <TextInput
          label="IP address"
          description="IPv4 or IPv6"
          required
          value={fields.ip}
          onChange={(e) => set('ip', e.currentTarget.value)}
        />
        <TextInput
          label="Host name"
          description="A DNS name"
          required
          value={fields.hostname}
          onChange={(e) => set('hostname', e.currentTarget.value)}
        />
        <Select
          label="Name type"
          data={[
            { value: 'hostname', label: "hostname: the node's own name" },
            { value: 'fqdn', label: 'fqdn: a fully qualified name' },
            { value: 'alias', label: 'alias: another name for the address' },
          ].filter((o) => (HOST_NAME_TYPES as readonly string[]).includes(o.value))}
          value={fields.host_name_type}
          allowDeselect={false}
          onChange={(v) => v && set('host_name_type', v)}
        />
        <Select
          label="Node type"
          data={NODE_TYPES.map((t) => ({ value: t, label: t.replace('_', ' ') }))}
          value={fields.node_type}
          allowDeselect={false}
          onChange={(v) => v && set('node_type', v)}
        />
        {error ? (
          <Alert color="red" variant="light" role="alert" title="Refused">
            {error}
          </Alert>
        ) : null}
        <Group justify="flex-end" gap="xs">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={saving}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** The host map table; exported for its test. */
export function HostMapTable({
  entries,
  onEdit,
  onDelete,
}: {
  entries: readonly HostMapEntry[];
  onEdit: (entry: HostMapEntry) => void;
  onDelete: (entry: HostMapEntry) => void;
}) {
  return (
    <Table data-testid="host-map" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>IP address</Table.Th>
          <Table.Th>Name</Table.Th>
          <Table.Th>Name type</Table.Th>
          <Table.Th>Node type</Table.Th>
          <Table.Th>Changed</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {entries.map((h) => (
          <Table.Tr key={h.id}>
            <Table.Td className="console-mono">{h.ip}</Table.Td>
            <Table.Td className="console-mono">{h.hostname}</Table.Td>
            <Table.Td>{h.host_name_type}</Table.Td>
            <Table.Td>{h.node_type.replace('_', ' ')}</Table.Td>
            <Table.Td>{formatTime(h.timestamp)}</Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <Button
                  size="compact-xs"
                  variant="default"
                  aria-label={`Edit ${h.ip} ${h.hostname}`}
                  onClick={() => onEdit(h)}
                >
                  Edit
                </Button>
                <Button
                  size="compact-xs"
                  variant="default"
                  aria-label={`Delete ${h.ip} ${h.hostname}`}
                  onClick={() => onDelete(h)}
                >
                  Delete
                </Button>
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function HostMap() {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [limit, setLimit] = useState(25);
  const list = useQuery({ ...hostMapQuery(page, limit), placeholderData: keepPreviousData });
  const [editing, setEditing] = useState<HostMapEntry | 'new' | null>(null);
  const [deleting, setDeleting] = useState<HostMapEntry | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: settingsKeys.hostMapAll });
  const save = useMutation({
    mutationFn: (v: { id: number | null; fields: HostMapFields }) =>
      v.id === null ? createHost(v.fields) : updateHost(v.id, v.fields),
    onSuccess: (_answer, v) => {
      notifications.show({
        color: 'teal',
        message: `${v.id === null ? 'Added' : 'Saved'} ${v.fields.ip} ${v.fields.hostname}`,
      });
      setEditing(null);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (entry: HostMapEntry) => deleteHost(entry.id),
    onSuccess: (_answer, entry) => {
      notifications.show({ color: 'teal', message: `Deleted ${entry.ip} ${entry.hostname}` });
      refresh();
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
    onSettled: () => setDeleting(null),
  });
  const data = list.data;
  const pages = data ? Math.max(data.last_page, lastPage(data.total, limit)) : 1;
  return (
    <Paper withBorder p="sm">
      <Group justify="space-between" mb={6}>
        <Title order={2}>Host map</Title>
        <Button
          size="xs"
          onClick={() => {
            save.reset();
            setEditing('new');
          }}
        >
          Add entry
        </Button>
      </Group>
      {list.isError ? (
        <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      ) : !data ? (
        <RowsSkeleton rows={5} />
      ) : data.total === 0 ? (
        <EmptyState title="The host map is empty">
          Entries name addresses for display (an address can have several names).
        </EmptyState>
      ) : (
        <Stack gap="xs">
          <HostMapTable
            entries={data.data}
            onEdit={(entry) => {
              save.reset();
              setEditing(entry);
            }}
            onDelete={setDeleting}
          />
          <Group justify="space-between">
            <Text size="sm" c="dimmed">
              {data.total.toLocaleString()} {data.total === 1 ? 'entry' : 'entries'}
            </Text>
            <Group gap="xs">
              <Select
                aria-label="Entries per page"
                data={['10', '25', '50', '100']}
                value={String(limit)}
                allowDeselect={false}
                w={90}
                size="xs"
                onChange={(v) => {
                  if (!v) return;
                  setLimit(Number(v));
                  setPage(1);
                }}
              />
              <Pagination
                total={pages}
                value={Math.min(page, pages)}
                onChange={setPage}
                size="sm"
                aria-label="Host map pages"
                getControlProps={(control) => ({ 'aria-label': `${control} page` })}
              />
            </Group>
          </Group>
        </Stack>
      )}
      <Modal
        className={SCOPE}
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' ? 'Add a host map entry' : 'Edit a host map entry'}
      >
        {editing !== null ? (
          <HostEntryForm
            key={editing === 'new' ? 'new' : editing.id}
            initial={
              editing === 'new'
                ? EMPTY
                : {
                    ip: editing.ip,
                    hostname: editing.hostname,
                    host_name_type: editing.host_name_type,
                    node_type: editing.node_type,
                  }
            }
            saving={save.isPending}
            error={save.isError ? errorText(save.error) : null}
            onSubmit={(fields) =>
              save.mutate({ id: editing === 'new' ? null : editing.id, fields })
            }
            onCancel={() => setEditing(null)}
          />
        ) : null}
      </Modal>
      <Modal
        className={SCOPE}
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title="Delete the entry"
      >
        <Stack gap="sm">
          <Text>
            Delete <b className="console-mono">{deleting?.ip}</b>{' '}
            <b className="console-mono">{deleting?.hostname}</b> from the host map?
          </Text>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={() => setDeleting(null)}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={remove.isPending}
              onClick={() => deleting && remove.mutate(deleting)}
            >
              Delete
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Paper>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="Hostname and host map">
      <Stack gap="sm">
        <PageHeader title="Hostname and host map" />
        <Hostname />
        <HostMap />
      </Stack>
    </Gated>
  );
}
