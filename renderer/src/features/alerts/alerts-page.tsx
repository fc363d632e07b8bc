/**
 * Alerts (spec part 3, Alerting; permission `alerts`): the list (bare array, ordered by id), create
 * and edit with the class's parameter form (a JSON editor for unknown classes), toggle and delete
 * (confirmed). A tag-restricted caller scoping outside their tags sees the appliance's 403 text.
 */
import {
  ActionIcon,
  Alert,
  Autocomplete,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import { devicesQuery, tagsQuery } from '../../lib/devices-api.js';
import { formatAgo } from '../../lib/format.js';
import {
  formErrors,
  paramDraft,
  paramFields,
  paramsFromDraft,
  parseJsonParams,
  type ParamDraft,
} from './alert-model.js';
import {
  alertKeys,
  alertsQuery,
  classesQuery,
  deleteAlert,
  saveAlert,
  toggleAlert,
  type AlertClass,
  type AlertRow,
} from './alerts-api.js';
import { AlertsNav, Gate, SEVERITY_COLORS, toastError, toastOk, useConfirm } from './alerts-ui.js';
import { JsonParams, ParamForm } from './param-form.js';
import { RouterConfigForm } from './router-config-form.js';

type Scope = 'global' | 'device' | 'tag';

export function AlertsTable({
  alerts,
  classes,
  onEdit,
  onToggle,
  onDelete,
  onRouter,
  deviceLabels,
}: {
  alerts: AlertRow[];
  classes: AlertClass[];
  onEdit: (a: AlertRow) => void;
  onToggle: (a: AlertRow) => void;
  onDelete: (a: AlertRow) => void;
  onRouter?: (a: AlertRow) => void;
  /** Device labels by id, for device scopes. */
  deviceLabels?: Map<string, string>;
}) {
  if (alerts.length === 0)
    return (
      <EmptyState title="No alerts yet">
        An alert counts matching syslog lines, Windows events or IDS events and notifies through the
        routing rules' outlets.
      </EmptyState>
    );
  const classLabel = (name: string) => classes.find((c) => c.name === name)?.label ?? name;
  return (
    <Table highlightOnHover aria-label="Alerts">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Alert</Table.Th>
          <Table.Th>Class</Table.Th>
          <Table.Th>Severity</Table.Th>
          <Table.Th>Scope</Table.Th>
          <Table.Th>Last evaluated</Table.Th>
          <Table.Th>Enabled</Table.Th>
          <Table.Th w={120} />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {alerts.map((a) => (
          <Table.Tr key={a.id}>
            <Table.Td>
              {a.label}
              {a.disabled_reason ? (
                <Text size="xs" c="dimmed">
                  {a.disabled_reason}
                </Text>
              ) : null}
            </Table.Td>
            <Table.Td>
              {classLabel(a.class)}
              {classes.length > 0 && !classes.some((c) => c.name === a.class) ? (
                <Badge ml={4} size="xs" variant="outline" color="gray">
                  unknown class
                </Badge>
              ) : null}
            </Table.Td>
            <Table.Td>
              <Badge color={SEVERITY_COLORS[a.severity] ?? 'gray'} variant="light">
                {a.severity}
              </Badge>
            </Table.Td>
            <Table.Td>
              {a.scope === 'global'
                ? 'all devices'
                : a.scope === 'device'
                  ? `device ${deviceLabels?.get(a.scope_id ?? '') ?? `#${a.scope_id ?? '?'}`}`
                  : `tag ${a.scope_id ?? '?'}`}
            </Table.Td>
            <Table.Td>
              {a.last_evaluated_at
                ? `${formatAgo(a.last_evaluated_at)} (${a.last_result_count ?? 0})`
                : 'never'}
            </Table.Td>
            <Table.Td>
              <Switch
                checked={a.enabled}
                onChange={() => onToggle(a)}
                aria-label={`Enable ${a.label}`}
              />
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <ActionIcon
                  variant="subtle"
                  aria-label={`Edit ${a.label}`}
                  onClick={() => onEdit(a)}
                >
                  ✎
                </ActionIcon>
                {onRouter ? (
                  <ActionIcon
                    variant="subtle"
                    aria-label={`Router configuration of ${a.label}`}
                    onClick={() => onRouter(a)}
                  >
                    ⚙
                  </ActionIcon>
                ) : null}
                <ActionIcon
                  variant="subtle"
                  color="red"
                  aria-label={`Delete ${a.label}`}
                  onClick={() => onDelete(a)}
                >
                  ✕
                </ActionIcon>
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

interface Draft {
  label: string;
  class: string;
  severity: string;
  enabled: boolean;
  scope: Scope;
  scope_id: string | null;
  tag_filters: string[];
  params: ParamDraft;
  json: string;
}

function draftOf(a: AlertRow | null, cls: AlertClass | undefined): Draft {
  const fields = paramFields(cls?.parameters);
  return {
    label: a?.label ?? '',
    class: a?.class ?? cls?.name ?? '',
    severity: String(a?.severity ?? 3),
    enabled: a?.enabled ?? true,
    scope: a?.scope ?? 'global',
    scope_id: a?.scope_id ?? null,
    tag_filters: a?.tag_filters ?? [],
    params: fields ? paramDraft(fields, a?.parameters ?? {}) : {},
    json: JSON.stringify(a?.parameters ?? {}, null, 2),
  };
}

export function AlertEditor({
  alert,
  classes,
  onClose,
}: {
  alert: AlertRow | null;
  classes: AlertClass[];
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const devices = useQuery(devicesQuery());
  const tags = useQuery(tagsQuery);
  const initialClass = classes.find((c) => c.name === (alert?.class ?? classes[0]?.name));
  const [draft, setDraft] = useState<Draft>(() => draftOf(alert, initialClass));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  const cls = classes.find((c) => c.name === draft.class);
  const fields = paramFields(cls?.parameters);
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  const save = useMutation({
    mutationFn: () => {
      const local: Record<string, string> = {};
      if (draft.label.trim() === '') local.label = 'A label is required';
      if (draft.class.trim() === '') local.class = 'A class is required';
      if (draft.scope !== 'global' && !draft.scope_id) local.scope_id = `Pick a ${draft.scope}`;
      let parameters: Record<string, unknown> = {};
      if (fields) {
        const p = paramsFromDraft(fields, draft.params);
        if ('errors' in p) Object.assign(local, p.errors);
        else parameters = p.parameters;
      } else {
        const p = parseJsonParams(draft.json);
        if (typeof p === 'string') local.json = p;
        else parameters = p;
      }
      if (Object.keys(local).length) return Promise.reject(new FormInvalid(local));
      return saveAlert(alert?.id ?? null, {
        label: draft.label.trim(),
        class: draft.class.trim(),
        severity: Number(draft.severity),
        enabled: draft.enabled,
        scope: draft.scope,
        scope_id: draft.scope === 'global' ? null : draft.scope_id,
        tag_filters: draft.tag_filters,
        parameters,
      });
    },
    onSuccess: (saved) => {
      toastOk(alert ? `Alert "${saved.label}" saved.` : `Alert "${saved.label}" created.`);
      void queryClient.invalidateQueries({ queryKey: alertKeys.list });
      onClose();
    },
    onError: (err) => {
      if (err instanceof FormInvalid) {
        setErrors(err.fields);
        setRefusal(null);
      } else {
        setErrors(err instanceof ApiError ? formErrors(err.fields) : {});
        setRefusal(errorText(err));
      }
    },
  });

  const deviceOptions = (devices.data ?? []).map((d) => ({
    value: String(d.id),
    label: `${d.label} (${d.ip_address})`,
  }));
  const tagOptions = (tags.data ?? []).map((t) => ({ value: t.slug, label: t.name }));

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack gap="sm">
        <TextInput
          label="Label"
          required
          value={draft.label}
          error={errors.label}
          onChange={(e) => set({ label: e.currentTarget.value })}
        />
        <Group grow align="flex-start">
          <Autocomplete
            label="Class"
            required
            disabled={alert !== null}
            description={alert ? 'The class of an alert cannot change' : 'Or type any class name'}
            data={classes
              .filter((c) => !c.name.startsWith('legacy_'))
              .map((c) => ({ value: c.name, label: `${c.label} (${c.name})` }))}
            value={draft.class}
            error={errors.class}
            onChange={(v) => {
              const next = classes.find((c) => c.name === v);
              const nextFields = paramFields(next?.parameters);
              set({ class: v, params: nextFields ? paramDraft(nextFields, {}) : {} });
            }}
          />
          <div>
            <Text size="sm" fw={500} mb={4}>
              Severity
            </Text>
            <SegmentedControl
              aria-label="Severity"
              data={['1', '2', '3', '4', '5']}
              value={draft.severity}
              onChange={(v) => set({ severity: v })}
            />
            <Text size="xs" c="dimmed">
              1 is the most severe
            </Text>
          </div>
        </Group>
        <Group align="flex-end" grow>
          <div>
            <Text size="sm" fw={500} mb={4}>
              Scope
            </Text>
            <SegmentedControl
              aria-label="Scope"
              data={[
                { value: 'global', label: 'All devices' },
                { value: 'device', label: 'One device' },
                { value: 'tag', label: 'A tag' },
              ]}
              value={draft.scope}
              onChange={(v) => set({ scope: v as Scope, scope_id: null })}
            />
          </div>
          {draft.scope === 'device' ? (
            <Select
              label="Device"
              searchable
              data={deviceOptions}
              value={draft.scope_id}
              error={errors.scope_id}
              onChange={(v) => set({ scope_id: v })}
            />
          ) : draft.scope === 'tag' ? (
            <Select
              label="Tag"
              searchable
              data={tagOptions}
              value={draft.scope_id}
              error={errors.scope_id}
              onChange={(v) => set({ scope_id: v })}
            />
          ) : (
            <div />
          )}
        </Group>
        <MultiSelect
          label="Only devices with all of these tags"
          data={tagOptions}
          value={draft.tag_filters}
          onChange={(v) => set({ tag_filters: v })}
          searchable
          clearable
        />
        <Paper withBorder p="sm">
          <Text fw={600} size="sm" mb={6}>
            Parameters{cls ? ` of ${cls.label}` : ''}
          </Text>
          {fields ? (
            <ParamForm
              fields={fields}
              draft={draft.params}
              errors={errors}
              onChange={(params) => set({ params })}
            />
          ) : (
            <JsonParams value={draft.json} error={errors.json} onChange={(json) => set({ json })} />
          )}
        </Paper>
        <Checkbox
          label="Enabled"
          checked={draft.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
        />
        {/* Beside the buttons: the form is taller than the dialog, a refusal on top goes unseen. */}
        {refusal ? (
          <Alert color="red" variant="light" role="alert" data-testid="form-refusal">
            {refusal}
          </Alert>
        ) : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {alert ? 'Save' : 'Create alert'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** Client-side validation failure (the form's own checks, before any request). */
class FormInvalid extends Error {
  constructor(readonly fields: Record<string, string>) {
    super('The form has errors.');
  }
}

function AlertsContent() {
  const queryClient = useQueryClient();
  const alerts = useQuery(alertsQuery);
  const classes = useQuery(classesQuery);
  const devices = useQuery(devicesQuery());
  const deviceLabels = new Map((devices.data ?? []).map((d) => [String(d.id), d.label]));
  const [editing, setEditing] = useState<AlertRow | 'new' | null>(null);
  const [routerOf, setRouterOf] = useState<AlertRow | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: alertKeys.list });
  const confirm = useConfirm(() => {
    toastOk('Alert deleted.');
    refresh();
  });
  const toggle = useMutation({
    mutationFn: (a: AlertRow) => toggleAlert(a.id),
    onSuccess: (a) => {
      toastOk(`${a.label} ${a.enabled ? 'enabled' : 'disabled'}.`);
      refresh();
    },
    onError: toastError,
  });
  return (
    <Stack gap="sm">
      <PageHeader title="Alerts" subtitle="Class-wide alerts over syslog, Windows and IDS events">
        <Button onClick={() => setEditing('new')} disabled={!classes.data}>
          New alert
        </Button>
      </PageHeader>
      <AlertsNav />
      {alerts.isError ? (
        <ErrorNotice error={alerts.error} onRetry={() => void alerts.refetch()} />
      ) : alerts.isPending ? (
        <RowsSkeleton rows={5} />
      ) : (
        <AlertsTable
          alerts={alerts.data}
          classes={classes.data ?? []}
          onEdit={(a) => setEditing(a)}
          onToggle={(a) => toggle.mutate(a)}
          onRouter={(a) => setRouterOf(a)}
          deviceLabels={deviceLabels}
          onDelete={(a) =>
            confirm.ask({
              title: 'Delete an alert',
              text: `Delete the alert "${a.label}"? Its history rows stay.`,
              confirm: 'Delete',
              action: () => deleteAlert(a.id),
            })
          }
        />
      )}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' ? 'New alert' : 'Edit alert'}
        size="lg"
      >
        {editing !== null && classes.data ? (
          <AlertEditor
            alert={editing === 'new' ? null : editing}
            classes={classes.data}
            onClose={() => setEditing(null)}
          />
        ) : null}
      </Modal>
      <Modal
        opened={routerOf !== null}
        onClose={() => setRouterOf(null)}
        title={`Router configuration of ${routerOf?.label ?? ''}`}
        size="lg"
      >
        {routerOf ? (
          <RouterConfigForm source="modern" id={routerOf.id} onClose={() => setRouterOf(null)} />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="alerts" title="Alerts">
      <AlertsContent />
    </Gate>
  );
}
