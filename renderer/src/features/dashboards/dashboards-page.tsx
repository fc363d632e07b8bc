/**
 * Dashboards: create, rename, delete; add widgets (device latency, interface traffic, disk, port,
 * device-status summary); drag and resize (react-grid-layout); every change is saved through
 * setDashboards, so a reload finds the dashboard unchanged.
 */
import {
  ActionIcon,
  Button,
  Group,
  Modal,
  Select,
  Stack,
  Tabs,
  Text,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { WidgetGrid } from '../../components/ui/widget-grid.js';
import { WindowPicker } from '../../components/ui/window-picker.js';
import { api } from '../../lib/api-client.js';
import { useCaller } from '../../lib/caller.js';
import { keys } from '../../lib/query-keys.js';
import { devicesQuery } from '../../lib/devices-api.js';
import { deviceQuery } from '../../lib/device-api.js';
import {
  addWidget,
  deleteDashboard,
  layoutOf,
  normalize,
  removeWidget,
  renameDashboard,
  WIDGET_KINDS,
  deviceless,
  type DashboardsDoc,
  type WidgetKind,
} from './dashboard-model.js';
import { WidgetBody, WidgetTitle } from './widgets.js';

function AddWidget({
  onAdd,
  onClose,
}: {
  onAdd: (w: { kind: WidgetKind; deviceId?: number; trackerId?: number; title: string }) => void;
  onClose: () => void;
}) {
  const caller = useCaller();
  const [kind, setKind] = useState<WidgetKind>('latency');
  const [deviceId, setDeviceId] = useState<string | null>(null);
  const [trackerId, setTrackerId] = useState<string | null>(null);
  const devices = useQuery({ ...devicesQuery({}), enabled: caller.canAny('devices', 'overwatch') });
  const device = useQuery({
    ...deviceQuery(Number(deviceId), { kind: 'relative', hours: 1 }),
    enabled: deviceId !== null,
    refetchInterval: false,
  });
  const spec = WIDGET_KINDS.find((k) => k.value === kind)!;
  const trackers = useMemo(() => {
    const d = device.data;
    if (!d) return [];
    const list =
      kind === 'traffic'
        ? d.interfaces
        : kind === 'disk'
          ? d.disks
          : kind === 'port'
            ? d.ports
            : [];
    return (list as { id: number; name?: string; label?: string; port?: number }[]).map((t) => ({
      value: String(t.id),
      label:
        t.port !== undefined ? `${t.port} ${t.label ?? ''}` : (t.name ?? t.label ?? String(t.id)),
    }));
  }, [device.data, kind]);
  const deviceLabel = devices.data?.find((d) => String(d.id) === deviceId)?.label ?? '';
  const trackerLabel = trackers.find((t) => t.value === trackerId)?.label ?? '';
  const ready =
    deviceless(kind) || (deviceId !== null && (!spec.needsTracker || trackerId !== null));
  return (
    <Modal opened onClose={onClose} title="Add a widget">
      <Stack gap="xs">
        <Select
          label="Widget"
          value={kind}
          onChange={(v) => {
            setKind((v ?? 'latency') as WidgetKind);
            setTrackerId(null);
          }}
          data={WIDGET_KINDS.filter((k) => !k.permission || caller.can(k.permission)).map((k) => ({
            value: k.value,
            label: k.label,
          }))}
          allowDeselect={false}
        />
        {!deviceless(kind) ? (
          <Select
            label="Device"
            searchable
            value={deviceId}
            onChange={(v) => {
              setDeviceId(v);
              setTrackerId(null);
            }}
            data={(devices.data ?? [])
              .slice(0, 5000)
              .map((d) => ({ value: String(d.id), label: `${d.label} (${d.ip_address})` }))}
            limit={50}
          />
        ) : null}
        {spec.needsTracker && deviceId !== null ? (
          <Select
            label={kind === 'traffic' ? 'Interface' : kind === 'disk' ? 'Disk' : 'Port'}
            value={trackerId}
            onChange={setTrackerId}
            data={trackers}
            nothingFoundMessage="This device has none"
            placeholder={
              device.isPending ? 'Loading…' : trackers.length ? 'Pick one' : 'This device has none'
            }
          />
        ) : null}
        <Group justify="flex-end" mt="sm">
          <Button
            disabled={!ready}
            data-testid="add-widget-confirm"
            onClick={() =>
              onAdd({
                kind,
                ...(deviceId !== null ? { deviceId: Number(deviceId) } : {}),
                ...(trackerId !== null ? { trackerId: Number(trackerId) } : {}),
                title:
                  kind === 'status'
                    ? 'Device status'
                    : kind === 'syslog'
                      ? 'Recent syslog'
                      : `${deviceLabel}${trackerLabel ? ` · ${trackerLabel}` : ''} · ${spec.label.toLowerCase()}`,
              })
            }
          >
            Add widget
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

export function Page() {
  const { name: routeName } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const stored = useQuery({
    queryKey: keys.dashboards.all,
    queryFn: () => api.get<{ dashboards: unknown; layouts: unknown }>('/api/getDashboards'),
    select: normalize,
    staleTime: Infinity,
  });
  const [doc, setDoc] = useState<DashboardsDoc | null>(null);
  const [adding, setAdding] = useState(false);
  const [naming, setNaming] = useState<{ mode: 'create' | 'rename'; value: string } | null>(null);
  useEffect(() => {
    if (stored.data && doc === null) setDoc(stored.data);
  }, [stored.data, doc]);
  const save = useMutation({
    mutationFn: (next: DashboardsDoc) => api.post('/api/setDashboards', next),
    onSuccess: (_r, next) => queryClient.setQueryData(keys.dashboards.all, next),
    onError: (err) => notifications.show({ color: 'red', message: `Not saved: ${errorText(err)}` }),
  });
  const saveTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const commit = (next: DashboardsDoc, immediate = true) => {
    setDoc(next);
    if (saveTimer.current) clearTimeout(saveTimer.current);
    if (immediate) save.mutate(next);
    else saveTimer.current = setTimeout(() => save.mutate(next), 400);
  };
  const names = Object.keys(doc?.dashboards ?? {});
  const current = routeName && names.includes(routeName) ? routeName : names[0];
  if (stored.isError) return <ErrorNotice error={stored.error} />;
  if (!doc) return <RowsSkeleton />;
  const widgets = current ? (doc.dashboards[current]?.widgets ?? []) : [];
  const layout = current ? (doc.layouts[current] ?? []) : [];

  const submitName = () => {
    if (!naming) return;
    const value = naming.value.trim();
    if (!value || (value in doc.dashboards && value !== current)) return;
    if (naming.mode === 'create')
      commit({
        dashboards: { ...doc.dashboards, [value]: { widgets: [] } },
        layouts: { ...doc.layouts, [value]: [] },
      });
    else if (current) commit(renameDashboard(doc, current, value));
    setNaming(null);
    void navigate(`/dashboards/${encodeURIComponent(value)}`);
  };

  return (
    <>
      <PageHeader title="Dashboards" subtitle={save.isPending ? 'saving…' : undefined}>
        <WindowPicker />
        {current ? (
          <>
            <Button onClick={() => setAdding(true)} data-testid="add-widget">
              Add widget
            </Button>
            <Button variant="default" onClick={() => setNaming({ mode: 'rename', value: current })}>
              Rename
            </Button>
            <Button
              variant="default"
              color="red"
              onClick={() => {
                if (!window.confirm(`Delete the dashboard ${current}?`)) return;
                commit(deleteDashboard(doc, current));
                void navigate('/dashboards');
              }}
            >
              Delete
            </Button>
          </>
        ) : null}
        <Button
          variant="default"
          onClick={() => setNaming({ mode: 'create', value: '' })}
          data-testid="new-dashboard"
        >
          New dashboard
        </Button>
      </PageHeader>
      {names.length === 0 ? (
        <EmptyState title="No dashboards yet">
          Create one, then add widgets: device latency, interface traffic, disks, ports or a status
          summary.
        </EmptyState>
      ) : (
        <Tabs
          value={current ?? null}
          onChange={(v) => v && void navigate(`/dashboards/${encodeURIComponent(v)}`)}
        >
          <Tabs.List mb="xs">
            {names.map((n) => (
              <Tabs.Tab key={n} value={n}>
                {n}
              </Tabs.Tab>
            ))}
          </Tabs.List>
        </Tabs>
      )}
      {current && widgets.length === 0 ? (
        <EmptyState title="This dashboard is empty">
          Add a widget; drag it by its title bar and resize it from its corner.
        </EmptyState>
      ) : null}
      {current && widgets.length ? (
        <WidgetGrid
          label={`Dashboard ${current}`}
          layout={layout}
          onArrange={(next) => {
            if (JSON.stringify(next) !== JSON.stringify(layoutOf(layout)))
              commit({ ...doc, layouts: { ...doc.layouts, [current]: next } }, false);
          }}
          widgets={widgets.map((w) => ({
            i: w.i,
            title: <WidgetTitle widget={w} />,
            actions: (
              <ActionIcon
                aria-label={`Remove ${w.title}`}
                onClick={() => commit(removeWidget(doc, current, w.i))}
              >
                ✕
              </ActionIcon>
            ),
            body: (height) => <WidgetBody widget={w} height={height} />,
          }))}
        />
      ) : null}
      {adding && current ? (
        <AddWidget
          onClose={() => setAdding(false)}
          onAdd={(w) => {
            commit(
              addWidget(doc, current, {
                ...w,
                i: `w${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
              }),
            );
            setAdding(false);
          }}
        />
      ) : null}
      <Modal
        opened={naming !== null}
        onClose={() => setNaming(null)}
        title={naming?.mode === 'create' ? 'New dashboard' : 'Rename dashboard'}
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submitName();
          }}
        >
          <TextInput
            label="Name"
            data-autofocus
            required
            maxLength={100}
            value={naming?.value ?? ''}
            onChange={(e) => setNaming((n) => (n ? { ...n, value: e.currentTarget.value } : n))}
          />
          {naming && naming.value.trim() in doc.dashboards && naming.value.trim() !== current ? (
            <Text size="xs" c="red" mt={4}>
              A dashboard with this name exists.
            </Text>
          ) : null}
          <Group justify="flex-end" mt="sm">
            <Button type="submit" data-testid="save-dashboard-name">
              Save
            </Button>
          </Group>
        </form>
      </Modal>
    </>
  );
}
