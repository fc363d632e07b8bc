/**
 * Maintenance windows (spec part 3, Alerting; permission `alerts`): read in the short shape,
 * written in the write shape. The form shows the fields each unit uses: the hour always, the
 * weekday for `week` and `dawom` (Sunday = 0), the date for `month`, the nth weekday (5 = the
 * last) for `dawom`. Hours are in the appliance's time zone.
 */
import {
  ActionIcon,
  Alert,
  Button,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import {
  describeWindow,
  formErrors,
  NTH,
  UNITS,
  WEEKDAYS,
  windowBody,
  windowDraftOf,
  windowFields,
  type Unit,
  type WindowDraft,
} from './alert-model.js';
import { alertKeys, deleteWindow, saveWindow, windowsQuery } from './alerts-api.js';
import { AlertsNav, Gate, toastOk, useConfirm } from './alerts-ui.js';

const EMPTY: WindowDraft = {
  label: '',
  recurrence_unit: 'week',
  maintenance_duration: 60,
  schedule_hour: 2,
  schedule_week: 0,
  schedule_day: null,
  schedule_month: null,
};

export const TIME_ZONE_NOTE =
  "Hours are in the appliance's time zone, not this browser's. Windows suppress delivery of what they cover (legacy alerts they are attached to, modern alerts through routing rules that name them); the history says so.";

export function WindowForm({
  initial,
  onSaved,
  onCancel,
}: {
  initial: WindowDraft;
  onSaved: (id: number) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<WindowDraft>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  const use = windowFields(d.recurrence_unit);
  const set = (patch: Partial<WindowDraft>) => setD((x) => ({ ...x, ...patch }));
  const save = useMutation({
    mutationFn: (body: Parameters<typeof saveWindow>[0]) => saveWindow(body),
    onSuccess: (answer) => onSaved(answer.id),
    onError: (err) => {
      setErrors(err instanceof ApiError ? formErrors(err.fields) : {});
      setRefusal(errorText(err));
    },
  });
  return (
    <form
      noValidate
      aria-label="Maintenance window"
      onSubmit={(e) => {
        e.preventDefault();
        const built = windowBody(d);
        if ('errors' in built) {
          setErrors(built.errors);
          setRefusal(null);
          return;
        }
        setErrors({});
        save.mutate(built.body);
      }}
    >
      <Stack gap="sm">
        {refusal ? (
          <Alert color="red" variant="light" role="alert">
            {refusal}
          </Alert>
        ) : null}
        <TextInput
          label="Label"
          required
          value={d.label}
          error={errors.label}
          onChange={(e) => set({ label: e.currentTarget.value })}
        />
        <Select
          label="Repeats"
          data={UNITS}
          value={d.recurrence_unit}
          allowDeselect={false}
          onChange={(v) => v && set({ recurrence_unit: v as Unit })}
        />
        <Group grow align="flex-start">
          {use.month ? (
            <Select
              label="Which"
              data={NTH.map((n, i) => ({ value: String(i + 1), label: n }))}
              value={d.schedule_month === null ? null : String(d.schedule_month)}
              error={errors.schedule_month}
              onChange={(v) => set({ schedule_month: v === null ? null : Number(v) })}
            />
          ) : null}
          {use.week ? (
            <Select
              label="Weekday"
              data={WEEKDAYS.map((w, i) => ({ value: String(i), label: w }))}
              value={d.schedule_week === null ? null : String(d.schedule_week)}
              error={errors.schedule_week}
              onChange={(v) => set({ schedule_week: v === null ? null : Number(v) })}
            />
          ) : null}
          {use.day ? (
            <NumberInput
              label="Day of the month"
              description="A month without this day has no window"
              min={1}
              max={31}
              allowDecimal={false}
              value={d.schedule_day ?? ''}
              error={errors.schedule_day}
              onChange={(v) => set({ schedule_day: v })}
            />
          ) : null}
          <NumberInput
            label="Starting hour"
            description="0 to 23, appliance time"
            min={0}
            max={23}
            allowDecimal={false}
            value={d.schedule_hour}
            error={errors.schedule_hour}
            onChange={(v) => set({ schedule_hour: v })}
          />
          <NumberInput
            label="Duration (minutes)"
            min={1}
            max={44_640}
            allowDecimal={false}
            value={d.maintenance_duration}
            error={errors.maintenance_duration}
            onChange={(v) => set({ maintenance_duration: v })}
          />
        </Group>
        <Text size="xs" c="dimmed">
          {TIME_ZONE_NOTE}
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save window
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function WindowsContent() {
  const queryClient = useQueryClient();
  const windows = useQuery(windowsQuery);
  const [editing, setEditing] = useState<WindowDraft | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: alertKeys.all });
  const confirm = useConfirm((answer) => {
    toastOk((answer as { success?: string })?.success ?? 'Maintenance window deleted');
    refresh();
  });
  return (
    <Stack gap="sm">
      <PageHeader title="Maintenance windows" subtitle="Recurring times when delivery is held back">
        <Button onClick={() => setEditing(EMPTY)}>New window</Button>
      </PageHeader>
      <AlertsNav />
      <Text size="sm" c="dimmed" data-testid="time-zone-note">
        {TIME_ZONE_NOTE}
      </Text>
      {windows.isError ? (
        <ErrorNotice error={windows.error} onRetry={() => void windows.refetch()} />
      ) : windows.isPending ? (
        <RowsSkeleton rows={4} />
      ) : windows.data.length === 0 ? (
        <EmptyState title="No maintenance windows" />
      ) : (
        <Table aria-label="Maintenance windows" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Window</Table.Th>
              <Table.Th>When</Table.Th>
              <Table.Th w={90} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {windows.data.map((w) => (
              <Table.Tr key={w.id}>
                <Table.Td>{w.label}</Table.Td>
                <Table.Td>{describeWindow(w)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <ActionIcon
                      variant="subtle"
                      aria-label={`Edit ${w.label}`}
                      onClick={() => setEditing(windowDraftOf(w))}
                    >
                      ✎
                    </ActionIcon>
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Delete ${w.label}`}
                      onClick={() =>
                        confirm.ask({
                          title: 'Delete a maintenance window',
                          text: `Delete "${w.label}"? It is detached from every legacy alert and routing rule.`,
                          confirm: 'Delete',
                          action: () => deleteWindow(w.id),
                        })
                      }
                    >
                      ✕
                    </ActionIcon>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing?.id ? 'Edit maintenance window' : 'New maintenance window'}
        size="lg"
      >
        {editing ? (
          <WindowForm
            initial={editing}
            onCancel={() => setEditing(null)}
            onSaved={() => {
              toastOk('Maintenance window saved.');
              setEditing(null);
              refresh();
            }}
          />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="alerts" title="Maintenance windows">
      <WindowsContent />
    </Gate>
  );
}
