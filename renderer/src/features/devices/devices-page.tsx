/**
 * Devices: the whole inventory in one virtualized table (20,000 rows stay fast), filtered by the
 * API (search, status, tag), with status, latency and loss from the latency trackers. Read-only
 * for `overwatch`; add, edit, recrawl and delete need `write_devices`.
 */
import { Badge, Button, Group, Menu, SegmentedControl, Select, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { StatusBadge } from '../../components/ui/status.js';
import { VirtualTable, type Column } from '../../components/ui/virtual-table.js';
import { useCaller } from '../../lib/caller.js';
import { formatMs, formatPercent } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';
import {
  deleteDevice,
  devicesQuery,
  pingQuery,
  type PingSummary,
  recrawlDevice,
  tagsQuery,
  type DeviceRow,
} from '../../lib/devices-api.js';
import { DeviceForm } from './device-form.js';

export function Page() {
  const [params, setParams] = useSearchParams();
  const [search, setSearch] = useState(params.get('search') ?? '');
  const [debounced] = useDebouncedValue(search, 250);
  const status = (params.get('status') as 'up' | 'down' | null) ?? undefined;
  const tag = params.get('tag') ?? undefined;
  const caller = useCaller();
  const canWrite = caller.can('write_devices');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<number | 'new' | null>(null);
  const [menuFor, setMenuFor] = useState<number | null>(null);
  const filter = { search: debounced || undefined, status, tag };
  const devices = useQuery({ ...devicesQuery(filter), placeholderData: (prev) => prev });
  // Asked once the list has arrived (the route's loader asks it then, before the rows render):
  // the appliance answers one request at a time per core, and the slower status query must not
  // hold back the list.
  const pings = useQuery({
    ...pingQuery(filter),
    placeholderData: (prev) => prev,
    enabled: devices.data !== undefined && !devices.isPlaceholderData,
  });
  const pingMap = pings.data;
  const tags = useQuery({
    ...tagsQuery,
    enabled: caller.canAny('devices', 'overwatch', 'write_devices'),
  });

  const setParam = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };

  const remove = useMutation({
    mutationFn: (d: DeviceRow) => deleteDevice(d.id),
    onSuccess: (_r, d) => {
      notifications.show({ message: `Deleted ${d.label}`, color: 'teal' });
      void queryClient.invalidateQueries({ queryKey: keys.devices.all });
    },
    onError: (err) => notifications.show({ message: errorText(err), color: 'red' }),
  });
  const recrawl = useMutation({
    mutationFn: (d: DeviceRow) => recrawlDevice(d.id),
    onSuccess: (_r, d) => notifications.show({ message: `Crawl of ${d.label} queued` }),
    onError: (err) => notifications.show({ message: errorText(err), color: 'red' }),
  });

  // mutate functions are stable across renders (the mutation objects are not).
  const recrawlMutate = recrawl.mutate;
  const removeMutate = remove.mutate;
  const columns = useMemo<Column<DeviceRow>[]>(() => {
    // undefined: not known yet (the status query is still on its way); null: no probe.
    const pingOf = (d: DeviceRow): PingSummary | null | undefined =>
      pingMap === undefined ? undefined : (pingMap.get(d.id) ?? null);
    const cols: Column<DeviceRow>[] = [
      {
        id: 'status',
        header: 'Status',
        size: 100,
        sortValue: (d) => pingOf(d)?.latency ?? null,
        cell: (d) =>
          pingMap === undefined ? (
            <span className="console-cell-dimmed">…</span>
          ) : (
            <StatusBadge latency={pingOf(d)?.latency ?? null} tooltip={false} />
          ),
      },
      {
        id: 'label',
        header: 'Name',
        size: 220,
        grow: true,
        sortValue: (d) => d.label,
        cell: (d) => (
          <Link className="console-row-link" to={`/devices/${d.id}`} tabIndex={-1}>
            {d.label}
          </Link>
        ),
      },
      {
        id: 'ip',
        header: 'IP address',
        size: 150,
        sortValue: (d) => d.ip_address,
        cell: (d) => <span className="console-mono">{d.ip_address}</span>,
      },
      {
        id: 'latency',
        header: 'Latency',
        size: 90,
        sortValue: (d) => pingOf(d)?.latency ?? null,
        cell: (d) => formatMs(pingOf(d)?.latency ?? null),
      },
      {
        id: 'loss',
        header: 'Loss',
        size: 70,
        sortValue: (d) => pingOf(d)?.loss ?? null,
        cell: (d) => formatPercent(pingOf(d)?.loss ?? null),
      },
      { id: 'profile', header: 'Profile', size: 130, sortValue: (d) => d.profile },
      {
        id: 'tags',
        header: 'Tags',
        size: 200,
        cell: (d) => (
          <Group gap={4} wrap="nowrap">
            {d.tags.slice(0, 3).map((t) => (
              <Badge key={t.slug} variant="outline" color="gray">
                {t.name}
              </Badge>
            ))}
            {d.tags.length > 3 ? (
              <span className="console-cell-dimmed">+{d.tags.length - 3}</span>
            ) : null}
          </Group>
        ),
      },
    ];
    if (canWrite)
      cols.push({
        id: 'actions',
        header: '',
        size: 52,
        // A plain button per row; the menu (a floating element) exists only for the row whose
        // button was pressed.
        cell: (d) => {
          const button = (
            <button
              type="button"
              className="console-row-action"
              aria-label={`Actions for ${d.label}`}
              data-actions-for={d.id}
              onClick={() => setMenuFor(d.id)}
            >
              ⋯
            </button>
          );
          if (menuFor !== d.id) return button;
          return (
            <Menu
              position="bottom-end"
              withinPortal
              defaultOpened
              onClose={() => {
                setMenuFor(null);
                // The plain button replaces the menu's target: give it the focus back.
                requestAnimationFrame(() =>
                  document.querySelector<HTMLElement>(`[data-actions-for="${d.id}"]`)?.focus(),
                );
              }}
            >
              <Menu.Target>{button}</Menu.Target>
              <Menu.Dropdown>
                <Menu.Item onClick={() => setEditing(d.id)}>Edit</Menu.Item>
                <Menu.Item onClick={() => recrawlMutate(d)}>Recrawl</Menu.Item>
                <Menu.Item
                  color="red"
                  disabled={d.id === 1}
                  onClick={() => {
                    if (window.confirm(`Delete ${d.label} and its history?`)) removeMutate(d);
                  }}
                >
                  Delete
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          );
        },
      });
    return cols;
  }, [canWrite, recrawlMutate, removeMutate, pingMap, menuFor]);

  const rows = devices.data ?? [];
  let down = 0;
  if (pingMap) for (const p of pingMap.values()) if ((p?.latency ?? 0) < 0) down++;
  return (
    <>
      <PageHeader
        title="Devices"
        subtitle={
          devices.data
            ? `${rows.length.toLocaleString()} shown${down ? `, ${down} down` : ''}${
                caller.can('write_devices') ? '' : ' · read-only'
              }`
            : undefined
        }
      >
        <TextInput
          placeholder="Search name or IP"
          aria-label="Search devices"
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            setParam('search', e.currentTarget.value || null);
          }}
          w={200}
        />
        <SegmentedControl
          aria-label="Status filter"
          value={status ?? 'all'}
          onChange={(v) => setParam('status', v === 'all' ? null : v)}
          data={[
            { label: 'All', value: 'all' },
            { label: 'Up', value: 'up' },
            { label: 'Down', value: 'down' },
          ]}
        />
        <Select
          placeholder="Any tag"
          aria-label="Tag filter"
          clearable
          searchable
          w={150}
          value={tag ?? null}
          onChange={(v) => setParam('tag', v)}
          data={(tags.data ?? []).map((t) => ({ value: t.slug, label: t.name }))}
        />
        {canWrite ? (
          <Button onClick={() => setEditing('new')} data-testid="add-device">
            Add device
          </Button>
        ) : null}
      </PageHeader>
      {devices.isError ? (
        <ErrorNotice error={devices.error} onRetry={() => void devices.refetch()} />
      ) : devices.isPending ? (
        <RowsSkeleton rows={14} />
      ) : rows.length === 0 ? (
        <EmptyState title={debounced || status || tag ? 'No device matches' : 'No devices yet'}>
          {debounced || status || tag
            ? 'Clear the search or filters to see every device.'
            : canWrite
              ? 'Add a device by IP address, or import one found by discovery (Pending devices).'
              : 'Devices appear here once someone with write access adds them.'}
        </EmptyState>
      ) : (
        <VirtualTable
          label="Devices"
          data={rows}
          columns={columns}
          height="calc(100vh - 118px)"
          getRowId={(d) => String(d.id)}
          onOpen={(d) => void navigate(`/devices/${d.id}`)}
        />
      )}
      {editing !== null ? (
        <DeviceForm
          deviceId={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </>
  );
}
