/**
 * Network (spec part 3, Appliance settings; permission `system`): the host's interfaces and
 * addresses (`getNetworkInfo`, read from `ip -j addr` and the host's configuration) and an edit
 * form per interface (`setNetworkInfo`). The mode decides what a change does:
 * - dry run (`network_mode: dry-run`, the default): a banner says so, and a change answers
 *   `dry_run: true` with what would have been written; the page shows that message, never a
 *   success;
 * - apply: the host's networking restarts and rolls back unless an authenticated
 *   `getNetworkInfo` arrives within `confirm_within` seconds (120): reloading this page at the
 *   new address confirms it, as does "Confirm now" while the old address still answers.
 */
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import {
  networkQuery,
  setNetwork,
  settingsKeys,
  type NetworkInterface,
  type SetNetworkAnswer,
} from './settings-api.js';
import { interfaceElement, interfaceForm, type InterfaceForm } from './settings-model.js';
import { Gated, OutcomeNotice, SCOPE, StateBadge, type Outcome } from './settings-shared.js';

const TYPES: InterfaceForm['type'][] = ['static', 'dhcp', 'manual', 'unconfigured'];

/** The outcome a setNetworkInfo answer is shown as: a dry run is a warning, never "saved". */
export function networkOutcome(answer: SetNetworkAnswer): Outcome {
  if (answer.dry_run)
    return {
      ok: true,
      warn: true,
      title: 'Dry run: nothing was applied to this machine',
      message: answer.message,
    };
  const within = answer.confirm_within ?? 120;
  return {
    ok: true,
    warn: true,
    title: `Applied: confirm within ${within} s or it rolls back`,
    message: `${answer.message}\n\nOpen this page at the appliance's new address (or press "Confirm now" if this one still answers) within ${within} seconds; otherwise the previous configuration is restored.`,
  };
}

export function ModeBanner({ mode }: { mode: 'apply' | 'dry-run' }) {
  if (mode === 'dry-run')
    return (
      <Alert
        color="yellow"
        variant="light"
        title="DRY RUN"
        data-testid="dry-run-banner"
        style={{ borderLeft: '6px solid var(--mantine-color-yellow-filled)' }}
      >
        This appliance runs with APPLIANCE_NETWORK_MODE=dry-run: network, hostname and time changes
        are validated and reported, never applied to the host.
      </Alert>
    );
  return (
    <Alert color="blue" variant="light" title="Changes are applied to the host">
      A network change restarts the host&apos;s networking. Unless this console reaches the
      appliance again within 120 seconds (reload the page, at the new address if it changed), the
      change is rolled back.
    </Alert>
  );
}

/** The interfaces table; exported for its test. */
export function InterfacesTable({
  interfaces,
  onEdit,
}: {
  interfaces: readonly NetworkInterface[];
  onEdit: (name: string) => void;
}) {
  return (
    <Table data-testid="interfaces" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Interface</Table.Th>
          <Table.Th>Link</Table.Th>
          <Table.Th>IPv4</Table.Th>
          <Table.Th>IPv6</Table.Th>
          <Table.Th>Configuration</Table.Th>
          <Table.Th>Roles</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {interfaces.map((i) => (
          <Table.Tr key={i.name}>
            <Table.Td className="console-mono">{i.name}</Table.Td>
            <Table.Td>
              <StateBadge color={i.online ? 'teal' : 'gray'}>{i.online ? 'up' : 'down'}</StateBadge>
            </Table.Td>
            <Table.Td className="console-mono">
              {i.ipv4.map((a) => `${a.address} / ${a.netmask}`).join(', ') || '–'}
            </Table.Td>
            <Table.Td className="console-mono" style={{ wordBreak: 'break-all' }}>
              {i.ipv6.map((a) => `${a.address}/${a.netmask}`).join(', ') || '–'}
            </Table.Td>
            <Table.Td>
              {i.config.type}
              {i.config.type === 'static' && i.config.address ? (
                <Text size="xs" c="dimmed" className="console-mono">
                  {i.config.address}
                  {i.config.gateway ? ` via ${i.config.gateway}` : ''}
                </Text>
              ) : null}
            </Table.Td>
            <Table.Td>
              <Group gap={4}>
                {i.config.use_sniffer ? <Badge variant="outline">capture</Badge> : null}
                {i.config.use_suricata ? <Badge variant="outline">IDS</Badge> : null}
              </Group>
            </Table.Td>
            <Table.Td>
              <Button
                size="compact-xs"
                variant="default"
                aria-label={`Edit ${i.name}`}
                onClick={() => onEdit(i.name)}
              >
                Edit
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The edit form of one interface; exported for its test. */
export function InterfaceEditor({
  iface,
  saving,
  error,
  onSubmit,
  onCancel,
}: {
  iface: NetworkInterface;
  saving?: boolean;
  error?: string | null;
  onSubmit: (form: InterfaceForm) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState<InterfaceForm>(() => interfaceForm(iface));
  const set = <K extends keyof InterfaceForm>(key: K, value: InterfaceForm[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const isStatic = form.type === 'static';
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(form);
      }}
    >
      <Stack gap="xs">
        <Select
          label="Configuration"
          data={TYPES}
          value={form.type}
          allowDeselect={false}
          onChange={(v) => v && set('type', v as InterfaceForm['type'])}
        />
        {isStatic ? (
          <SimpleGrid cols={2} spacing="xs">
            <TextInput
              label="Address"
              description="IPv4 or IPv4/CIDR"
              required
              value={form.address}
              onChange={(e) => set('address', e.currentTarget.value)}
            />
            <TextInput
              label="Netmask"
              description="Dotted, e.g. 255.255.255.0"
              value={form.netmask}
              onChange={(e) => set('netmask', e.currentTarget.value)}
            />
            <TextInput
              label="Gateway"
              value={form.gateway}
              onChange={(e) => set('gateway', e.currentTarget.value)}
            />
            <TextInput
              label="DNS servers"
              description="Up to 3, separated by spaces"
              value={form.dns}
              onChange={(e) => set('dns', e.currentTarget.value)}
            />
          </SimpleGrid>
        ) : null}
        <Group gap="md">
          <Checkbox
            label="Bring up at boot (auto)"
            checked={form.auto}
            onChange={(e) => set('auto', e.currentTarget.checked)}
          />
          <Checkbox
            label="allow-hotplug"
            checked={form.allowHotplug}
            onChange={(e) => set('allowHotplug', e.currentTarget.checked)}
          />
          <Checkbox
            label="Packet capture (use_sniffer)"
            checked={form.useSniffer}
            onChange={(e) => set('useSniffer', e.currentTarget.checked)}
          />
          <Checkbox
            label="IDS (use_suricata)"
            checked={form.useSuricata}
            onChange={(e) => set('useSuricata', e.currentTarget.checked)}
          />
        </Group>
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

function Network() {
  const queryClient = useQueryClient();
  const info = useQuery(networkQuery);
  const [editing, setEditing] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useMutation({
    mutationFn: (v: { name: string; form: InterfaceForm }) =>
      setNetwork({ interfaces: [interfaceElement(v.name, v.form)] }),
    onSuccess: (answer) => {
      setEditing(null);
      setOutcome(networkOutcome(answer));
      // Stored settings (capture and IDS roles) change in both modes.
      void queryClient.invalidateQueries({ queryKey: settingsKeys.network });
    },
  });
  const iface = info.data?.interfaces.find((i) => i.name === editing) ?? null;
  return (
    <Stack gap="sm">
      <PageHeader title="Network" subtitle="The host's interfaces and their configuration">
        <Button variant="default" loading={info.isFetching} onClick={() => void info.refetch()}>
          {info.data?.network_mode === 'apply' ? 'Confirm now' : 'Refresh'}
        </Button>
      </PageHeader>
      {info.data ? <ModeBanner mode={info.data.network_mode} /> : null}
      {info.data?.confirmed ? (
        <Alert color="teal" variant="light" title="Network change confirmed">
          The appliance is reachable with the new configuration; it is kept.
        </Alert>
      ) : null}
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      <Paper withBorder p="sm">
        {info.isError ? (
          <ErrorNotice error={info.error} onRetry={() => void info.refetch()} />
        ) : info.isPending ? (
          <RowsSkeleton rows={4} />
        ) : info.data.interfaces.length === 0 ? (
          <EmptyState title="No interfaces" />
        ) : (
          <InterfacesTable
            interfaces={info.data.interfaces}
            onEdit={(name) => {
              save.reset();
              setEditing(name);
            }}
          />
        )}
      </Paper>
      <Modal
        className={SCOPE}
        opened={iface !== null}
        onClose={() => setEditing(null)}
        title={iface ? `Configure ${iface.name}` : ''}
        size="lg"
      >
        {iface ? (
          <InterfaceEditor
            key={iface.name}
            iface={iface}
            saving={save.isPending}
            error={save.isError ? errorText(save.error) : null}
            onSubmit={(form) => save.mutate({ name: iface.name, form })}
            onCancel={() => setEditing(null)}
          />
        ) : null}
      </Modal>
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="Network">
      <Network />
    </Gated>
  );
}
