/**
 * Daemons (spec part 3, Data maintenance; permission `sa`): the appliance's daemons, their
 * variables and the variables each accepts (one request, the designed `GET /api/daemons`), and
 * whether each starts with the appliance. Secret values are never sent to the console: they read
 * as the sentinel `{"__encrypted__": true}` and show as "set"; saving is a complete replacement
 * (a removed row is removed) that sends the sentinel for a secret left untouched, which keeps
 * it. A save that stored the values but could not restart the daemon (`reload_failed: true`) is
 * shown as a warning, not a success. Start sends the chosen `start_auto`.
 */
import {
  ActionIcon,
  Button,
  Group,
  Paper,
  PasswordInput,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import {
  daemonsQuery,
  saveDaemonConfig,
  servicesQuery,
  settingsKeys,
  startDaemon,
  type Daemon,
  type DaemonSaveAnswer,
} from './settings-api.js';
import { daemonConfigBody, daemonForm, isSecretVar, type DaemonVarForm } from './settings-model.js';
import { statusColor } from './services-page.js';
import { Gated, OutcomeNotice, StateBadge, type Outcome } from './settings-shared.js';

export function saveOutcome(name: string, answer: DaemonSaveAnswer): Outcome {
  return answer.reload_failed
    ? {
        ok: true,
        warn: true,
        title: `${name}: saved, but not reloaded`,
        message: `${answer.message}. The new values apply when the daemon next starts; check its state on the Services page.`,
      }
    : { ok: true, title: `${name} saved`, message: answer.message };
}

/** One daemon: its variables editor, start_auto and Start; exported for its test. */
export function DaemonCard({
  daemon,
  state,
  saving,
  starting,
  onSave,
  onStart,
}: {
  daemon: Daemon;
  state?: string;
  saving?: boolean;
  starting?: boolean;
  onSave: (config: ReturnType<typeof daemonConfigBody>) => void;
  onStart: (startAuto: boolean) => void;
}) {
  const [rows, setRows] = useState<DaemonVarForm[]>(() => daemonForm(daemon));
  const [startAuto, setStartAuto] = useState(daemon.start_auto);
  const catalog = daemon.vars;
  const missing = catalog.filter((c) => !rows.some((r) => r.var === c.var));
  const update = (index: number, change: Partial<DaemonVarForm>) =>
    setRows((all) => all.map((r, i) => (i === index ? { ...r, ...change } : r)));
  return (
    <Paper withBorder p="sm" data-testid={`daemon-${daemon.name}`}>
      <Group justify="space-between" mb={6}>
        <Group gap="xs">
          <Title order={2} className="console-mono">
            {daemon.name}
          </Title>
          <Text size="sm" c="dimmed">
            #{daemon.id}
          </Text>
          {state ? <StateBadge color={statusColor(state)}>{state}</StateBadge> : null}
        </Group>
        <Group gap="xs">
          <Switch
            label="Start with the appliance"
            checked={startAuto}
            onChange={(e) => setStartAuto(e.currentTarget.checked)}
          />
          <Button
            size="xs"
            variant="default"
            loading={starting}
            onClick={() => onStart(startAuto)}
            aria-label={`Start ${daemon.name}`}
          >
            {startAuto === daemon.start_auto ? 'Start' : 'Save and start'}
          </Button>
        </Group>
      </Group>
      {rows.length === 0 && catalog.length === 0 ? (
        <Text size="sm" c="dimmed">
          This daemon has no variables.
        </Text>
      ) : (
        <Table withRowBorders={false}>
          <Table.Tbody>
            {rows.map((row, index) => {
              const secret = isSecretVar(catalog, row);
              const spec = catalog.find((c) => c.var === row.var);
              return (
                <Table.Tr key={row.var || index}>
                  <Table.Td w={200}>
                    <Text className="console-mono" size="sm">
                      {row.var}
                    </Text>
                    {spec ? (
                      <Text size="xs" c="dimmed">
                        {spec.description}
                      </Text>
                    ) : null}
                  </Table.Td>
                  <Table.Td>
                    {row.storedSecret && !row.replace ? (
                      <Group gap="xs">
                        <StateBadge color="teal" data-testid={`secret-${row.var}`}>
                          set
                        </StateBadge>
                        <Text size="sm" c="dimmed" aria-hidden>
                          ••••••••
                        </Text>
                        <Button
                          size="compact-xs"
                          variant="default"
                          onClick={() => update(index, { replace: true, value: '' })}
                        >
                          Replace
                        </Button>
                      </Group>
                    ) : secret ? (
                      <PasswordInput
                        size="xs"
                        aria-label={`Value of ${row.var}`}
                        value={row.value}
                        maxLength={1024}
                        autoComplete="new-password"
                        placeholder={
                          row.storedSecret ? 'New value (empty keeps the stored one)' : ''
                        }
                        onChange={(e) => update(index, { value: e.currentTarget.value })}
                      />
                    ) : (
                      <TextInput
                        size="xs"
                        aria-label={`Value of ${row.var}`}
                        value={row.value}
                        maxLength={1024}
                        onChange={(e) => update(index, { value: e.currentTarget.value })}
                      />
                    )}
                  </Table.Td>
                  <Table.Td w={40}>
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Remove ${row.var}`}
                      onClick={() => setRows((all) => all.filter((_, i) => i !== index))}
                    >
                      ×
                    </ActionIcon>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      {daemon.config.length === 0 && catalog.length === 0 ? null : (
        <Group justify="space-between" mt="xs">
          {missing.length > 0 ? (
            <Select
              size="xs"
              w={260}
              aria-label={`Add a variable to ${daemon.name}`}
              placeholder="Add a variable…"
              data={missing.map((c) => ({
                value: c.var,
                label: `${c.var}${c.secret ? ' (secret)' : ''}`,
              }))}
              value={null}
              onChange={(v) =>
                v &&
                setRows((all) => [
                  ...all,
                  { var: v, value: '', storedSecret: false, replace: false },
                ])
              }
            />
          ) : (
            <span />
          )}
          <Group gap="xs">
            <Button size="xs" variant="default" onClick={() => setRows(daemonForm(daemon))}>
              Reset
            </Button>
            <Button size="xs" loading={saving} onClick={() => onSave(daemonConfigBody(rows))}>
              Save variables
            </Button>
          </Group>
        </Group>
      )}
    </Paper>
  );
}

function Daemons() {
  const queryClient = useQueryClient();
  const daemons = useQuery(daemonsQuery);
  const services = useQuery(servicesQuery);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: settingsKeys.all });
  const save = useMutation({
    mutationFn: (v: { daemon: Daemon; config: ReturnType<typeof daemonConfigBody> }) =>
      saveDaemonConfig(v.daemon.id, v.config),
    onSuccess: (answer, v) => {
      setOutcome(saveOutcome(v.daemon.name, answer));
      refresh();
    },
    onError: (err, v) =>
      setOutcome({
        ok: false,
        title: `${v.daemon.name}: nothing was saved`,
        message: errorText(err),
      }),
  });
  const start = useMutation({
    mutationFn: (v: { daemon: Daemon; startAuto: boolean }) =>
      startDaemon(v.daemon.id, v.startAuto),
    onSuccess: (answer, v) => {
      setOutcome({ ok: true, title: `${v.daemon.name} started`, message: answer.message });
      refresh();
    },
    onError: (err, v) =>
      setOutcome({ ok: false, title: `${v.daemon.name} did not start`, message: errorText(err) }),
  });
  const stateOf = (name: string) =>
    services.data?.find((s) => s.kind === 'engine' && s.name === name)?.status;
  return (
    <Stack gap="sm">
      <PageHeader title="Daemons" subtitle="Each engine's variables and start at boot" />
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      {daemons.isError ? (
        <ErrorNotice error={daemons.error} onRetry={() => void daemons.refetch()} />
      ) : daemons.isPending ? (
        <RowsSkeleton rows={6} />
      ) : daemons.data.length === 0 ? (
        <EmptyState title="No daemons registered" />
      ) : (
        daemons.data.map((d) => (
          <DaemonCard
            // A fresh form after each save (the stored values come back, secrets masked).
            key={`${d.id}:${daemons.dataUpdatedAt}`}
            daemon={d}
            state={stateOf(d.name)}
            saving={save.isPending && save.variables?.daemon.id === d.id}
            starting={start.isPending && start.variables?.daemon.id === d.id}
            onSave={(config) => save.mutate({ daemon: d, config })}
            onStart={(startAuto) => start.mutate({ daemon: d, startAuto })}
          />
        ))
      )}
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="sa" title="Daemons">
      <Daemons />
    </Gated>
  );
}
