/**
 * License (spec part 3, Appliance settings; permission `system`): the activations
 * (`getLicenseInfo`, empty when unlicensed) and entering a registration key (`validateLicense`:
 * six dash-separated groups of six hex digits; the page hints the format, the appliance refuses a
 * wrong or mistyped key with 422 and the page shows its message). Activating restarts the
 * monitoring engines. A license unlocks nothing: every feature works unlicensed.
 */
import { Button, Group, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { formatTime } from '../../lib/format.js';
import { licenseQuery, settingsKeys, validateLicense, type LicenseEntry } from './settings-api.js';
import { LICENSE_KEY_HINT, normaliseLicenseKey } from './settings-model.js';
import { Gated, OutcomeNotice, StateBadge, type Outcome } from './settings-shared.js';

/** The activations, or the unlicensed empty state; exported for its test. */
export function LicenseTable({ entries }: { entries: readonly LicenseEntry[] }) {
  if (entries.length === 0)
    return (
      <EmptyState title="This appliance is not licensed">
        Every feature works without a license; a registration key records the support and
        maintenance terms.
      </EmptyState>
    );
  return (
    <Table data-testid="licenses" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Key</Table.Th>
          <Table.Th>Type</Table.Th>
          <Table.Th>Licensed to</Table.Th>
          <Table.Th>Activated</Table.Th>
          <Table.Th>License ends</Table.Th>
          <Table.Th>Maintenance ends</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {entries.map((e) => (
          <Table.Tr key={`${e.activation_key}-${e.activation_time}`}>
            <Table.Td className="console-mono">
              <Group gap={4} wrap="nowrap">
                {e.activation_key}
                {e.active ? (
                  <StateBadge color="teal" size="sm">
                    active
                  </StateBadge>
                ) : null}
              </Group>
            </Table.Td>
            <Table.Td>{e.license_type}</Table.Td>
            <Table.Td>
              {[e.company_name, e.user_name, e.user_email].filter(Boolean).join(', ') || '–'}
            </Table.Td>
            <Table.Td>{formatTime(e.activation_time)}</Table.Td>
            <Table.Td>{e.end_of_license ? formatTime(e.end_of_license) : 'never'}</Table.Td>
            <Table.Td>{e.end_of_maintenance ? formatTime(e.end_of_maintenance) : '–'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The registration key form; exported for its test. */
export function KeyForm({
  saving,
  error,
  onSubmit,
}: {
  saving?: boolean;
  error?: string | null;
  onSubmit: (key: string) => void;
}) {
  const [typed, setTyped] = useState('');
  const [touched, setTouched] = useState(false);
  const key = normaliseLicenseKey(typed);
  const hint = touched && typed.trim() !== '' && key === null ? `${LICENSE_KEY_HINT}.` : null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        setTouched(true);
        if (key) onSubmit(key);
      }}
    >
      <Group align="flex-start" gap="xs">
        <TextInput
          label="Registration key"
          description={`${LICENSE_KEY_HINT}, e.g. 1A2B3C-4D5E6F-…`}
          placeholder="XXXXXX-XXXXXX-XXXXXX-XXXXXX-XXXXXX-XXXXXX"
          classNames={{ input: 'console-mono' }}
          value={typed}
          maxLength={64}
          w={460}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setTyped(e.currentTarget.value)}
          onBlur={() => setTouched(true)}
          error={hint ?? error ?? undefined}
        />
        <Button type="submit" mt={33} loading={saving} disabled={typed.trim() === ''}>
          Activate
        </Button>
      </Group>
    </form>
  );
}

function License() {
  const queryClient = useQueryClient();
  const license = useQuery(licenseQuery);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const activate = useMutation({
    mutationFn: validateLicense,
    onSuccess: (answer) => {
      setOutcome({
        ok: true,
        title: 'License activated',
        message: `${answer.message.activation_key} is active; the monitoring engines restarted.`,
      });
      void queryClient.invalidateQueries({ queryKey: settingsKeys.license });
    },
    onError: () => setOutcome(null),
  });
  return (
    <Stack gap="sm">
      <PageHeader title="License" />
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      <Paper withBorder p="sm">
        <Title order={2} mb={6}>
          Activations
        </Title>
        {license.isError ? (
          <ErrorNotice error={license.error} onRetry={() => void license.refetch()} />
        ) : license.isPending ? (
          <RowsSkeleton rows={3} />
        ) : (
          <LicenseTable entries={license.data} />
        )}
      </Paper>
      <Paper withBorder p="sm">
        <Title order={2} mb={6}>
          Enter a registration key
        </Title>
        <KeyForm
          saving={activate.isPending}
          error={activate.isError ? errorText(activate.error) : null}
          onSubmit={(key) => activate.mutate(key)}
        />
        <Text size="sm" c="dimmed" mt="xs">
          Activating restarts the monitoring engines (intake and polling pause for a moment).
        </Text>
      </Paper>
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="License">
      <License />
    </Gated>
  );
}
