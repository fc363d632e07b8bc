/**
 * Legacy alerts (permission `alerts`): the catalogue of tracker alerts (link state, device down)
 * behind every `alerts` field, with their maintenance windows (sync replaces the set), the router
 * configuration of an alert (modern or legacy: severity and the stored-but-inert renotify and
 * throttle fields, 422 `{errors}`), and flap control (designed `GET/PUT /api/alert-flap-control`)
 * with the legacy alerts flapping now.
 */
import {
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Paper,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import { devicesQuery } from '../../lib/devices-api.js';
import { formatTime } from '../../lib/format.js';
import { formErrors } from './alert-model.js';
import {
  alertKeys,
  changeLegacyWindows,
  deleteLegacyAlert,
  flapQuery,
  legacyQuery,
  legacyWindowsQuery,
  saveFlap,
  windowsQuery,
  type FlapControlBody,
  type LegacyAlert,
} from './alerts-api.js';
import { AlertsNav, Gate, SEVERITY_COLORS, toastOk, useConfirm } from './alerts-ui.js';
import { RouterConfigForm } from './router-config-form.js';

function LegacyWindowsForm({ alert, onClose }: { alert: LegacyAlert; onClose: () => void }) {
  const queryClient = useQueryClient();
  const windows = useQuery(windowsQuery);
  const attached = useQuery(legacyWindowsQuery(alert.id));
  const [chosen, setChosen] = useState<string[] | null>(null);
  const value = chosen ?? (attached.data ?? []).map((w) => String(w.id));
  const sync = useMutation({
    mutationFn: () => changeLegacyWindows(alert.id, 'sync', value.map(Number)),
    onSuccess: () => {
      toastOk('Maintenance windows saved.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.all });
      onClose();
    },
  });
  if (attached.isError) return <ErrorNotice error={attached.error} />;
  return (
    <Stack gap="sm">
      {sync.isError ? <ErrorNotice error={sync.error} /> : null}
      <MultiSelect
        label="Maintenance windows"
        description="Delivery of this alert is held back while any of them is open"
        data={(windows.data ?? []).map((w) => ({ value: String(w.id), label: w.label }))}
        value={value}
        onChange={setChosen}
        searchable
        clearable
        disabled={attached.isPending}
      />
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose}>
          Cancel
        </Button>
        <Button loading={sync.isPending} onClick={() => sync.mutate()}>
          Save windows
        </Button>
      </Group>
    </Stack>
  );
}

export function FlapControlPanel() {
  const queryClient = useQueryClient();
  const flap = useQuery(flapQuery);
  const [d, setD] = useState<FlapControlBody | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  useEffect(() => {
    if (flap.data)
      setD({
        enabled: flap.data.enabled,
        transitions: flap.data.transitions,
        window_minutes: flap.data.window_minutes,
        stable_minutes: flap.data.stable_minutes,
      });
  }, [flap.data]);
  const save = useMutation({
    mutationFn: (body: FlapControlBody) => saveFlap(body),
    onSuccess: (answer) => {
      toastOk('Flap control saved.');
      queryClient.setQueryData(alertKeys.flap, answer);
      setErrors({});
    },
    onError: (err) => setErrors(err instanceof ApiError ? formErrors(err.fields) : {}),
  });
  return (
    <Paper withBorder p="sm">
      <Title order={2} mb={4}>
        Flap control
      </Title>
      <Text size="sm" c="dimmed" mb="xs">
        A legacy alert that changes state too often is held back until it has been stable, then one
        &quot;stable after flapping&quot; notice is sent.
      </Text>
      {flap.isError ? (
        <ErrorNotice error={flap.error} onRetry={() => void flap.refetch()} />
      ) : !d ? (
        <RowsSkeleton rows={2} />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(d);
          }}
        >
          <Stack gap="xs">
            {save.isError ? <ErrorNotice error={save.error} /> : null}
            <Checkbox
              label="Hold back flapping legacy alerts"
              checked={d.enabled}
              onChange={(e) => setD({ ...d, enabled: e.currentTarget.checked })}
            />
            <Group grow align="flex-start">
              <NumberInput
                label="State changes"
                description="2 to 100"
                min={2}
                max={100}
                allowDecimal={false}
                value={d.transitions}
                error={errors.transitions}
                onChange={(v) => setD({ ...d, transitions: Number(v) })}
              />
              <NumberInput
                label="Within (minutes)"
                description="1 to 1440"
                min={1}
                max={1440}
                allowDecimal={false}
                value={d.window_minutes}
                error={errors.window_minutes}
                onChange={(v) => setD({ ...d, window_minutes: Number(v) })}
              />
              <NumberInput
                label="Stable for (minutes)"
                description="1 to 1440"
                min={1}
                max={1440}
                allowDecimal={false}
                value={d.stable_minutes}
                error={errors.stable_minutes}
                onChange={(v) => setD({ ...d, stable_minutes: Number(v) })}
              />
            </Group>
            <Group justify="space-between">
              <Text size="sm" data-testid="flapping">
                {flap.data?.flapping.length
                  ? `Flapping now: ${flap.data.flapping.map((id) => `#${id}`).join(', ')}`
                  : 'Nothing is flapping now.'}
              </Text>
              <Button type="submit" loading={save.isPending}>
                Save flap control
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Paper>
  );
}

function LegacyContent() {
  const queryClient = useQueryClient();
  const legacy = useQuery(legacyQuery);
  const devices = useQuery(devicesQuery());
  const deviceLabels = new Map((devices.data ?? []).map((d) => [d.id, d.label]));
  const [windowsOf, setWindowsOf] = useState<LegacyAlert | null>(null);
  const [routerOf, setRouterOf] = useState<LegacyAlert | null>(null);
  const confirm = useConfirm(() => {
    toastOk('Legacy alert deleted.');
    void queryClient.invalidateQueries({ queryKey: alertKeys.legacy });
  });
  return (
    <Stack gap="sm">
      <PageHeader title="Legacy alerts" subtitle="Tracker alerts: link state and device down" />
      <AlertsNav />
      <Paper withBorder p="sm">
        <Title order={2} mb={6}>
          Catalogue
        </Title>
        {legacy.isError ? (
          <ErrorNotice error={legacy.error} onRetry={() => void legacy.refetch()} />
        ) : legacy.isPending ? (
          <RowsSkeleton rows={4} />
        ) : legacy.data.length === 0 ? (
          <EmptyState title="No legacy alerts">
            Turning on an interface's link-state alert or a device's down alert (on the device page)
            adds one here.
          </EmptyState>
        ) : (
          <Table aria-label="Legacy alerts" highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Id</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Device</Table.Th>
                <Table.Th>Severity</Table.Th>
                <Table.Th>Last fired</Table.Th>
                <Table.Th>Windows</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {legacy.data.map((l) => (
                <Table.Tr key={l.id}>
                  <Table.Td>#{l.id}</Table.Td>
                  <Table.Td>
                    {l.type}
                    {l.active ? null : (
                      <Badge ml={4} size="xs" color="gray">
                        off
                      </Badge>
                    )}
                    <Text size="xs" c="dimmed">
                      {l.tracker_kind} tracker #{l.tracker_id}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {l.device_id === null ? (
                      '–'
                    ) : (
                      <Link to={`/devices/${l.device_id}`}>
                        {deviceLabels.get(l.device_id) ?? `#${l.device_id}`}
                      </Link>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Badge color={SEVERITY_COLORS[l.severity] ?? 'gray'} variant="light">
                      {l.severity}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {l.last_fired_at ? formatTime(l.last_fired_at) : 'never'} ({l.fired_count})
                  </Table.Td>
                  <Table.Td>{l.maintenance_window_ids.length}</Table.Td>
                  <Table.Td>
                    <Group gap={4} justify="flex-end" wrap="nowrap">
                      <Button size="xs" variant="default" onClick={() => setWindowsOf(l)}>
                        Windows
                      </Button>
                      <Button size="xs" variant="default" onClick={() => setRouterOf(l)}>
                        Router
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        color="red"
                        aria-label={`Delete legacy alert ${l.id}`}
                        onClick={() =>
                          confirm.ask({
                            title: 'Delete a legacy alert',
                            text: `Delete legacy alert #${l.id} (${l.type})? Its tracker stops notifying; history stays.`,
                            confirm: 'Delete',
                            action: () => deleteLegacyAlert(l.id),
                          })
                        }
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Paper>
      <FlapControlPanel />
      <Modal
        opened={windowsOf !== null}
        onClose={() => setWindowsOf(null)}
        title={`Maintenance windows of legacy alert #${windowsOf?.id ?? ''}`}
      >
        {windowsOf ? (
          <LegacyWindowsForm alert={windowsOf} onClose={() => setWindowsOf(null)} />
        ) : null}
      </Modal>
      <Modal
        opened={routerOf !== null}
        onClose={() => setRouterOf(null)}
        title={`Router configuration of legacy alert #${routerOf?.id ?? ''}`}
        size="lg"
      >
        {routerOf ? (
          <RouterConfigForm source="legacy" id={routerOf.id} onClose={() => setRouterOf(null)} />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="alerts" title="Legacy alerts">
      <LegacyContent />
    </Gate>
  );
}
