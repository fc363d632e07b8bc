/**
 * Outlets, outlet templates and routing rules (designed routes of issue 17; permission `alerts`).
 * Outlets: email, webhook, Slack, Teams, Discord; a stored authorization header comes back masked
 * and shows as "stored": left empty on save the sentinel is sent and the appliance keeps it.
 * Send-test shows the appliance's `{ok, error}`. Routing rules say which alerts, severities,
 * devices or tags go to which outlets, and which maintenance windows hold them back.
 */
import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import { devicesQuery, tagsQuery } from '../../lib/devices-api.js';
import {
  formErrors,
  OUTLET_TYPES,
  outletBody,
  outletDraft,
  type OutletDraft,
} from './alert-model.js';
import {
  alertKeys,
  alertsQuery,
  deleteOutlet,
  deleteOutletTemplate,
  deleteRule,
  legacyQuery,
  outletsQuery,
  outletTemplatesQuery,
  rulesQuery,
  saveOutlet,
  saveOutletTemplate,
  saveRule,
  sendTest,
  templatesQuery,
  windowsQuery,
  type Outlet,
  type OutletTemplate,
  type RoutingRule,
} from './alerts-api.js';
import { AlertsNav, Gate, toastOk, useConfirm } from './alerts-ui.js';

const TYPE_LABELS: Record<string, string> = {
  email: 'Email',
  webhook: 'Webhook',
  slack: 'Slack',
  teams: 'Microsoft Teams',
  discord: 'Discord',
  o365: 'Office 365 (old)',
};

/** Where an outlet sends, for the list (secrets never shown). */
function target(o: Outlet): string {
  const c = o.config;
  if (typeof c.url === 'string') return c.url;
  const mails = [
    ...(typeof c.email === 'string' ? [c.email] : []),
    ...(Array.isArray(c.emails) ? c.emails.map(String) : []),
  ];
  return mails.join(', ');
}

function useRefusal() {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  return {
    errors,
    refusal,
    setErrors,
    fail: (err: unknown) => {
      setErrors(err instanceof ApiError ? formErrors(err.fields) : {});
      setRefusal(errorText(err));
    },
    reset: () => {
      setErrors({});
      setRefusal(null);
    },
  };
}

function Refusal({ text }: { text: string | null }) {
  return text ? (
    <Alert color="red" variant="light" role="alert" data-testid="form-refusal">
      {text}
    </Alert>
  ) : null;
}

export function OutletForm({ outlet, onClose }: { outlet: Outlet | null; onClose: () => void }) {
  const queryClient = useQueryClient();
  const templates = useQuery(outletTemplatesQuery);
  const emailTemplates = useQuery(templatesQuery);
  const [d, setD] = useState<OutletDraft>(() => outletDraft(outlet ?? undefined));
  const r = useRefusal();
  const set = (patch: Partial<OutletDraft>) => setD((x) => ({ ...x, ...patch }));
  const save = useMutation({
    mutationFn: (body: Parameters<typeof saveOutlet>[1]) => saveOutlet(outlet?.id ?? null, body),
    onSuccess: (o) => {
      toastOk(`Outlet "${o.name}" saved.`);
      void queryClient.invalidateQueries({ queryKey: alertKeys.outlets });
      onClose();
    },
    onError: r.fail,
  });
  return (
    <form
      noValidate
      aria-label="Outlet"
      onSubmit={(e) => {
        e.preventDefault();
        const built = outletBody(d);
        if ('errors' in built) {
          r.setErrors(built.errors);
          return;
        }
        r.reset();
        save.mutate(built.body);
      }}
    >
      <Stack gap="sm">
        <Group grow align="flex-start">
          <TextInput
            label="Name"
            required
            value={d.name}
            error={r.errors.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
          />
          <Select
            label="Type"
            disabled={outlet !== null}
            allowDeselect={false}
            data={(outlet?.type === 'o365' ? [...OUTLET_TYPES, 'o365'] : OUTLET_TYPES).map((t) => ({
              value: t,
              label: TYPE_LABELS[t] ?? t,
            }))}
            value={d.type}
            onChange={(v) => v && set({ type: v })}
          />
        </Group>
        {d.type === 'email' ? (
          <Textarea
            label="Recipients"
            description="One address a line; sent through the mail relay"
            autosize
            minRows={2}
            value={d.emails}
            error={r.errors.emails ?? r.errors.email}
            onChange={(e) => set({ emails: e.currentTarget.value })}
          />
        ) : (
          <>
            <TextInput
              label="URL"
              required
              placeholder="https://"
              value={d.url}
              error={r.errors.url}
              onChange={(e) => set({ url: e.currentTarget.value })}
            />
            {d.type === 'webhook' ? (
              <TextInput
                label="Authorization header"
                description={
                  d.authorizationStored
                    ? 'A value is stored (never shown). Leave empty to keep it, type to replace it.'
                    : 'Sent as the Authorization header; stored encrypted, never shown again'
                }
                placeholder={d.authorizationStored ? 'stored' : ''}
                autoComplete="off"
                value={d.authorization_header}
                error={r.errors.authorization_header}
                onChange={(e) => set({ authorization_header: e.currentTarget.value })}
                rightSection={
                  d.authorizationStored && d.authorization_header === '' ? (
                    <Badge size="xs" variant="light" data-testid="secret-stored">
                      stored
                    </Badge>
                  ) : null
                }
                rightSectionWidth={70}
              />
            ) : null}
            <Textarea
              label="Custom headers"
              description="Name: value, one a line"
              className="console-mono"
              autosize
              minRows={2}
              value={d.headers}
              error={r.errors.headers}
              onChange={(e) => set({ headers: e.currentTarget.value })}
            />
          </>
        )}
        <Group grow align="flex-start">
          <NumberInput
            label="Rate limit (per minute)"
            description="Beyond it notifications wait for the next minute; empty for none"
            min={1}
            allowDecimal={false}
            value={d.rate_limit_per_min}
            error={r.errors.rate_limit_per_min}
            onChange={(v) => set({ rate_limit_per_min: v })}
          />
          {d.type === 'email' ? (
            <Select
              label="Email template"
              clearable
              placeholder="the class's default"
              data={(emailTemplates.data ?? []).map((t) => ({
                value: String(t.id),
                label: t.label,
              }))}
              value={d.email_template_id}
              onChange={(v) => set({ email_template_id: v })}
            />
          ) : (
            <Select
              label="Payload template"
              clearable
              placeholder="the built-in payload"
              data={(templates.data ?? [])
                .filter((t) => t.outlet_type === d.type)
                .map((t) => ({ value: String(t.id), label: t.label }))}
              value={d.template_id}
              onChange={(v) => set({ template_id: v })}
            />
          )}
        </Group>
        <Checkbox
          label="Enabled"
          checked={d.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
        />
        <Refusal text={r.refusal} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save outlet
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function OutletsTab() {
  const queryClient = useQueryClient();
  const outlets = useQuery(outletsQuery);
  const [editing, setEditing] = useState<Outlet | 'new' | null>(null);
  const [tested, setTested] = useState<Record<number, { ok: boolean; error?: string }>>({});
  const confirm = useConfirm(() => {
    toastOk('Outlet deleted.');
    void queryClient.invalidateQueries({ queryKey: alertKeys.outlets });
  });
  const test = useMutation({
    mutationFn: (o: Outlet) => sendTest(o.id),
    onSuccess: (answer, o) => setTested((t) => ({ ...t, [o.id]: answer })),
    onError: (err, o) => setTested((t) => ({ ...t, [o.id]: { ok: false, error: errorText(err) } })),
  });
  return (
    <Stack gap="sm">
      <Group justify="flex-end">
        <Button onClick={() => setEditing('new')}>New outlet</Button>
      </Group>
      {outlets.isError ? (
        <ErrorNotice error={outlets.error} onRetry={() => void outlets.refetch()} />
      ) : outlets.isPending ? (
        <RowsSkeleton rows={4} />
      ) : outlets.data.length === 0 ? (
        <EmptyState title="No outlets yet">
          An outlet is where notifications go: email through the mail relay, a webhook, Slack, Teams
          or Discord. A routing rule then sends alerts to it.
        </EmptyState>
      ) : (
        <Table aria-label="Outlets" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Outlet</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Sends to</Table.Th>
              <Table.Th>Rate limit</Table.Th>
              <Table.Th>Test</Table.Th>
              <Table.Th w={90} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {outlets.data.map((o) => {
              const result = tested[o.id];
              return (
                <Table.Tr key={o.id}>
                  <Table.Td>
                    {o.name}
                    {o.enabled ? null : (
                      <Badge ml={4} size="xs" color="gray">
                        off
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{TYPE_LABELS[o.type] ?? o.type}</Table.Td>
                  <Table.Td className="console-mono" style={{ wordBreak: 'break-all' }}>
                    {target(o)}
                  </Table.Td>
                  <Table.Td>{o.rate_limit_per_min ? `${o.rate_limit_per_min}/min` : '–'}</Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <Button
                        size="xs"
                        variant="default"
                        loading={test.isPending && test.variables?.id === o.id}
                        onClick={() => test.mutate(o)}
                      >
                        Send test
                      </Button>
                      {result ? (
                        <Text
                          size="xs"
                          c={result.ok ? 'teal' : 'red'}
                          data-testid="send-test-result"
                        >
                          {result.ok ? 'Delivered' : `Failed: ${result.error ?? 'no reason given'}`}
                        </Text>
                      ) : null}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <ActionIcon
                        variant="subtle"
                        aria-label={`Edit ${o.name}`}
                        onClick={() => setEditing(o)}
                      >
                        ✎
                      </ActionIcon>
                      <ActionIcon
                        variant="subtle"
                        color="red"
                        aria-label={`Delete ${o.name}`}
                        onClick={() =>
                          confirm.ask({
                            title: 'Delete an outlet',
                            text: `Delete the outlet "${o.name}"? Routing rules stop sending to it.`,
                            confirm: 'Delete',
                            action: () => deleteOutlet(o.id),
                          })
                        }
                      >
                        ✕
                      </ActionIcon>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' ? 'New outlet' : 'Edit outlet'}
        size="lg"
      >
        {editing !== null ? (
          <OutletForm
            outlet={editing === 'new' ? null : editing}
            onClose={() => setEditing(null)}
          />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

function OutletTemplateForm({
  template,
  onClose,
}: {
  template: OutletTemplate | null;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [d, setD] = useState({
    name: template?.name ?? '',
    label: template?.label ?? '',
    outlet_type: template?.outlet_type ?? 'webhook',
    body: template?.body ?? '',
  });
  const r = useRefusal();
  const save = useMutation({
    mutationFn: () =>
      saveOutletTemplate(template?.id ?? null, {
        name: d.name.trim(),
        label: d.label.trim(),
        outlet_type: d.outlet_type as 'webhook',
        body: d.body,
      }),
    onSuccess: () => {
      toastOk('Outlet template saved.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.all });
      onClose();
    },
    onError: r.fail,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack gap="sm">
        <Refusal text={r.refusal} />
        <Group grow align="flex-start">
          <TextInput
            label="Name"
            required
            value={d.name}
            error={r.errors.name}
            onChange={(e) => setD({ ...d, name: e.currentTarget.value })}
          />
          <TextInput
            label="Label"
            required
            value={d.label}
            error={r.errors.label}
            onChange={(e) => setD({ ...d, label: e.currentTarget.value })}
          />
          <Select
            label="Outlet type"
            allowDeselect={false}
            data={OUTLET_TYPES.map((t) => ({ value: t, label: TYPE_LABELS[t] ?? t }))}
            value={d.outlet_type}
            onChange={(v) => v && setD({ ...d, outlet_type: v })}
          />
        </Group>
        <Textarea
          label="Body"
          description="Logic-less: only {$variable} is replaced (the alert class's variables)"
          className="console-mono"
          autosize
          minRows={6}
          value={d.body}
          error={r.errors.body}
          onChange={(e) => setD({ ...d, body: e.currentTarget.value })}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save template
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function OutletTemplatesTab() {
  const queryClient = useQueryClient();
  const templates = useQuery(outletTemplatesQuery);
  const [editing, setEditing] = useState<OutletTemplate | 'new' | null>(null);
  const confirm = useConfirm(() => {
    toastOk('Outlet template deleted.');
    void queryClient.invalidateQueries({ queryKey: alertKeys.all });
  });
  return (
    <Stack gap="sm">
      <Group justify="flex-end">
        <Button onClick={() => setEditing('new')}>New outlet template</Button>
      </Group>
      {templates.isError ? (
        <ErrorNotice error={templates.error} onRetry={() => void templates.refetch()} />
      ) : templates.isPending ? (
        <RowsSkeleton rows={3} />
      ) : templates.data.length === 0 ? (
        <EmptyState title="No outlet templates">
          Without one, an outlet sends its type's built-in payload.
        </EmptyState>
      ) : (
        <Table aria-label="Outlet templates">
          <Table.Tbody>
            {templates.data.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.label}</Table.Td>
                <Table.Td className="console-mono">{t.name}</Table.Td>
                <Table.Td>{TYPE_LABELS[t.outlet_type] ?? t.outlet_type}</Table.Td>
                <Table.Td>
                  <Group gap={4} justify="flex-end" wrap="nowrap">
                    <ActionIcon
                      variant="subtle"
                      aria-label={`Edit ${t.label}`}
                      onClick={() => setEditing(t)}
                    >
                      ✎
                    </ActionIcon>
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Delete ${t.label}`}
                      onClick={() =>
                        confirm.ask({
                          title: 'Delete an outlet template',
                          text: `Delete "${t.label}"? Outlets using it fall back to the built-in payload.`,
                          confirm: 'Delete',
                          action: () => deleteOutletTemplate(t.id),
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
        title={editing === 'new' ? 'New outlet template' : 'Edit outlet template'}
        size="lg"
      >
        {editing !== null ? (
          <OutletTemplateForm
            template={editing === 'new' ? null : editing}
            onClose={() => setEditing(null)}
          />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

const ids = (v: string[]) => v.map(Number);
const strs = (v: number[]) => v.map(String);

function RuleForm({ rule, onClose }: { rule: RoutingRule | null; onClose: () => void }) {
  const queryClient = useQueryClient();
  const outlets = useQuery(outletsQuery);
  const alerts = useQuery(alertsQuery);
  const legacy = useQuery(legacyQuery);
  const windows = useQuery(windowsQuery);
  const devices = useQuery(devicesQuery());
  const tags = useQuery(tagsQuery);
  const [d, setD] = useState({
    label: rule?.label ?? '',
    enabled: rule?.enabled ?? true,
    alert_ids: strs(rule?.alert_ids ?? []),
    legacy_alert_ids: strs(rule?.legacy_alert_ids ?? []),
    severities: strs(rule?.severities ?? []),
    device_ids: strs(rule?.device_ids ?? []),
    tag_slugs: rule?.tag_slugs ?? [],
    outlet_ids: strs(rule?.outlet_ids ?? []),
    maintenance_window_ids: strs(rule?.maintenance_window_ids ?? []),
  });
  const r = useRefusal();
  const save = useMutation({
    mutationFn: () =>
      saveRule(rule?.id ?? null, {
        label: d.label.trim(),
        enabled: d.enabled,
        alert_ids: ids(d.alert_ids),
        legacy_alert_ids: ids(d.legacy_alert_ids),
        severities: ids(d.severities),
        device_ids: ids(d.device_ids),
        tag_slugs: d.tag_slugs,
        outlet_ids: ids(d.outlet_ids),
        maintenance_window_ids: ids(d.maintenance_window_ids),
      }),
    onSuccess: () => {
      toastOk('Routing rule saved.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.rules });
      onClose();
    },
    onError: r.fail,
  });
  const multi = (
    key: keyof typeof d,
    label: string,
    data: { value: string; label: string }[],
    description?: string,
  ) => (
    <MultiSelect
      label={label}
      description={description}
      data={data}
      searchable
      clearable
      value={d[key] as string[]}
      error={r.errors[key]}
      onChange={(v) => setD({ ...d, [key]: v })}
    />
  );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (d.label.trim() === '') return r.setErrors({ label: 'A label is required' });
        if (d.outlet_ids.length === 0)
          return r.setErrors({ outlet_ids: 'Pick at least one outlet' });
        r.reset();
        save.mutate();
      }}
    >
      <Stack gap="sm">
        <Refusal text={r.refusal} />
        <TextInput
          label="Label"
          required
          value={d.label}
          error={r.errors.label}
          onChange={(e) => setD({ ...d, label: e.currentTarget.value })}
        />
        <Text size="xs" c="dimmed">
          An empty list matches everything on that axis; the axes combine with AND.
        </Text>
        {multi(
          'alert_ids',
          'Alerts',
          (alerts.data ?? []).map((a) => ({ value: String(a.id), label: a.label })),
        )}
        {multi(
          'legacy_alert_ids',
          'Legacy alerts',
          (legacy.data ?? []).map((a) => ({
            value: String(a.id),
            label: `#${a.id} ${a.type} (device ${a.device_id ?? '–'})`,
          })),
        )}
        {multi(
          'severities',
          'Severities',
          ['1', '2', '3', '4', '5'].map((s) => ({ value: s, label: s })),
        )}
        {multi(
          'device_ids',
          'Devices',
          (devices.data ?? []).map((x) => ({ value: String(x.id), label: x.label })),
        )}
        {multi(
          'tag_slugs',
          'Tags',
          (tags.data ?? []).map((t) => ({ value: t.slug, label: t.name })),
        )}
        {multi(
          'outlet_ids',
          'Send to outlets',
          (outlets.data ?? []).map((o) => ({ value: String(o.id), label: o.name })),
        )}
        {multi(
          'maintenance_window_ids',
          'Held back during',
          (windows.data ?? []).map((w) => ({ value: String(w.id), label: w.label })),
          'Maintenance windows: this is how windows reach modern alerts',
        )}
        <Checkbox
          label="Enabled"
          checked={d.enabled}
          onChange={(e) => setD({ ...d, enabled: e.currentTarget.checked })}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save rule
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function RulesTab() {
  const queryClient = useQueryClient();
  const rules = useQuery(rulesQuery);
  const outlets = useQuery(outletsQuery);
  const [editing, setEditing] = useState<RoutingRule | 'new' | null>(null);
  const confirm = useConfirm(() => {
    toastOk('Routing rule deleted.');
    void queryClient.invalidateQueries({ queryKey: alertKeys.rules });
  });
  const outletName = (id: number) => outlets.data?.find((o) => o.id === id)?.name ?? `#${id}`;
  const count = (n: number, what: string) => (n === 0 ? `any ${what}` : `${n} ${what}`);
  return (
    <Stack gap="sm">
      <Group justify="flex-end">
        <Button onClick={() => setEditing('new')}>New routing rule</Button>
      </Group>
      {rules.isError ? (
        <ErrorNotice error={rules.error} onRetry={() => void rules.refetch()} />
      ) : rules.isPending ? (
        <RowsSkeleton rows={3} />
      ) : rules.data.length === 0 ? (
        <EmptyState title="No routing rules">
          Without a routing rule an occurrence is recorded in the history but notifies no one.
        </EmptyState>
      ) : (
        <Table aria-label="Routing rules">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Rule</Table.Th>
              <Table.Th>Matches</Table.Th>
              <Table.Th>Outlets</Table.Th>
              <Table.Th w={90} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rules.data.map((rule) => (
              <Table.Tr key={rule.id}>
                <Table.Td>
                  {rule.label}
                  {rule.enabled ? null : (
                    <Badge ml={4} size="xs" color="gray">
                      off
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {count(rule.alert_ids.length + rule.legacy_alert_ids.length, 'alerts')},{' '}
                    {rule.severities.length
                      ? `severity ${rule.severities.join('/')}`
                      : 'any severity'}
                    , {count(rule.device_ids.length, 'devices')},{' '}
                    {rule.tag_slugs.length ? `tags ${rule.tag_slugs.join(', ')}` : 'any tag'}
                    {rule.maintenance_window_ids.length
                      ? `; ${rule.maintenance_window_ids.length} maintenance windows`
                      : ''}
                  </Text>
                </Table.Td>
                <Table.Td>{rule.outlet_ids.map(outletName).join(', ')}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <ActionIcon
                      variant="subtle"
                      aria-label={`Edit ${rule.label}`}
                      onClick={() => setEditing(rule)}
                    >
                      ✎
                    </ActionIcon>
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Delete ${rule.label}`}
                      onClick={() =>
                        confirm.ask({
                          title: 'Delete a routing rule',
                          text: `Delete "${rule.label}"? What it matched notifies no one through it.`,
                          confirm: 'Delete',
                          action: () => deleteRule(rule.id),
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
        title={editing === 'new' ? 'New routing rule' : 'Edit routing rule'}
        size="lg"
      >
        {editing !== null ? (
          <RuleForm rule={editing === 'new' ? null : editing} onClose={() => setEditing(null)} />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

export function Page() {
  const [tab, setTab] = useState<string | null>('outlets');
  return (
    <Gate permission="alerts" title="Outlets and routing">
      <Stack gap="sm">
        <PageHeader title="Outlets and routing" subtitle="Where notifications go, and which ones" />
        <AlertsNav />
        <Tabs value={tab} onChange={setTab} keepMounted={false}>
          <Tabs.List mb="sm">
            <Tabs.Tab value="outlets">Outlets</Tabs.Tab>
            <Tabs.Tab value="rules">Routing rules</Tabs.Tab>
            <Tabs.Tab value="templates">Outlet templates</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="outlets">
            <OutletsTab />
          </Tabs.Panel>
          <Tabs.Panel value="rules">
            <RulesTab />
          </Tabs.Panel>
          <Tabs.Panel value="templates">
            <OutletTemplatesTab />
          </Tabs.Panel>
        </Tabs>
      </Stack>
    </Gate>
  );
}
