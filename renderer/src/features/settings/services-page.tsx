/**
 * Services (spec part 3, Appliance settings; permission `system`): the appliance's engines from
 * its engine registry (and its systemd unit when it runs under one) with their state; start,
 * stop, restart and reload one through `procmon` (stop and restart ask first), and "Restart
 * appliance" (every engine of this appliance, never the shared scheduler and storage writer).
 * Failures show the appliance's own message (procmon's 400/500, the controller unreachable).
 */
import { Badge, Button, Group, Modal, Paper, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { formatTime } from '../../lib/format.js';
import {
  procmon,
  restartAppliance,
  servicesQuery,
  settingsKeys,
  type Service,
  type ServiceAction,
} from './settings-api.js';
import { idleAction, runState } from './settings-model.js';
import { Gated, OutcomeNotice, SCOPE, StateBadge, type Outcome } from './settings-shared.js';

const ACTIONS: ServiceAction[] = ['start', 'stop', 'restart', 'reload'];
const CONFIRMED: ReadonlySet<ServiceAction> = new Set(['stop', 'restart']);

const STATE_COLOR = { running: 'teal', failed: 'red', stopped: 'gray', changing: 'yellow' };

export function statusColor(status: string): string {
  return STATE_COLOR[runState(status)];
}

/** The services table; exported for its test. */
export function ServicesTable({
  services,
  busy,
  onAction,
}: {
  services: readonly Service[];
  busy?: string | null;
  onAction: (service: string, action: ServiceAction) => void;
}) {
  return (
    <Table data-testid="services" striped highlightOnHover>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Service</Table.Th>
          <Table.Th>Kind</Table.Th>
          <Table.Th>State</Table.Th>
          <Table.Th>PID</Table.Th>
          <Table.Th>Started</Table.Th>
          <Table.Th>Actions</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {services.map((s) => (
          <Table.Tr key={`${s.kind}:${s.name}`}>
            <Table.Td className="console-mono">{s.name}</Table.Td>
            <Table.Td>{s.kind === 'systemd' ? 'systemd unit' : 'engine'}</Table.Td>
            <Table.Td>
              <Stack gap={2}>
                <Group gap={4}>
                  <StateBadge color={statusColor(s.status)}>{s.status}</StateBadge>
                  {s.shared ? (
                    <Badge color="gray" variant="outline">
                      shared
                    </Badge>
                  ) : null}
                </Group>
                {s.error ? (
                  <Text size="xs" c="var(--mantine-color-error)">
                    {s.error}
                  </Text>
                ) : null}
              </Stack>
            </Table.Td>
            <Table.Td className="console-mono">{s.pid ?? '–'}</Table.Td>
            <Table.Td>{s.started_at ? formatTime(s.started_at) : '–'}</Table.Td>
            <Table.Td>
              {s.shared ? (
                <Text size="xs" c="dimmed">
                  starts and stops with the appliance
                </Text>
              ) : (
                <Group gap={4} wrap="nowrap">
                  {ACTIONS.map((action) => (
                    <Button
                      key={action}
                      size="compact-xs"
                      variant="default"
                      disabled={
                        (busy !== null && busy !== undefined) || idleAction(s.status, action)
                      }
                      loading={busy === `${s.name}:${action}`}
                      aria-label={`${action} ${s.name}`}
                      onClick={() => onAction(s.name, action)}
                    >
                      {action}
                    </Button>
                  ))}
                </Group>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Services() {
  const queryClient = useQueryClient();
  const services = useQuery(servicesQuery);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [pending, setPending] = useState<{ service: string; action: ServiceAction } | null>(null);
  const [confirmRestart, setConfirmRestart] = useState(false);
  const act = useMutation({
    mutationFn: (v: { service: string; action: ServiceAction }) => procmon(v.service, v.action),
    onSuccess: (answer, v) =>
      setOutcome({ ok: true, title: `${v.action} ${v.service}`, message: answer.message }),
    onError: (err, v) =>
      setOutcome({ ok: false, title: `${v.action} ${v.service} failed`, message: errorText(err) }),
    onSettled: () => {
      setPending(null);
      void queryClient.invalidateQueries({ queryKey: settingsKeys.services });
    },
  });
  const restart = useMutation({
    mutationFn: restartAppliance,
    onSuccess: (answer) =>
      setOutcome({
        ok: true,
        title: 'Appliance restarted',
        message: answer.restarted.length
          ? `${answer.message}: ${answer.restarted.join(', ')}`
          : answer.message,
      }),
    onError: (err) => setOutcome({ ok: false, title: 'Restart failed', message: errorText(err) }),
    onSettled: () => {
      setConfirmRestart(false);
      void queryClient.invalidateQueries({ queryKey: settingsKeys.all });
    },
  });
  const onAction = (service: string, action: ServiceAction) => {
    if (CONFIRMED.has(action)) setPending({ service, action });
    else act.mutate({ service, action });
  };
  const busy =
    act.isPending && act.variables ? `${act.variables.service}:${act.variables.action}` : null;
  return (
    <Stack gap="sm">
      <PageHeader title="Services" subtitle="The appliance's engines and their state">
        <Button variant="default" onClick={() => setConfirmRestart(true)}>
          Restart appliance
        </Button>
      </PageHeader>
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      <Paper withBorder p="sm">
        {services.isError ? (
          <ErrorNotice error={services.error} onRetry={() => void services.refetch()} />
        ) : services.isPending ? (
          <RowsSkeleton rows={6} />
        ) : services.data.length === 0 ? (
          <EmptyState title="No services registered" />
        ) : (
          <ServicesTable services={services.data} busy={busy} onAction={onAction} />
        )}
      </Paper>
      <Modal
        className={SCOPE}
        opened={pending !== null}
        onClose={() => setPending(null)}
        title={
          pending ? `${pending.action === 'stop' ? 'Stop' : 'Restart'} ${pending.service}` : ''
        }
      >
        <Stack gap="sm">
          <Text>
            {pending?.action === 'stop'
              ? `${pending.service} stops until it is started again (or the appliance restarts): what it receives or polls meanwhile is lost.`
              : `${pending?.service ?? ''} stops and starts again; what it receives meanwhile is lost.`}
          </Text>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={() => setPending(null)}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={act.isPending}
              onClick={() => pending && act.mutate(pending)}
            >
              {pending?.action === 'stop' ? 'Stop' : 'Restart'}
            </Button>
          </Group>
        </Stack>
      </Modal>
      <Modal
        className={SCOPE}
        opened={confirmRestart}
        onClose={() => setConfirmRestart(false)}
        title="Restart the appliance"
      >
        <Stack gap="sm">
          <Text>
            Every engine of this appliance stops and starts again, one at a time (the scheduler and
            the storage writer keep running). Intake and polling pause meanwhile.
          </Text>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={() => setConfirmRestart(false)}>
              Cancel
            </Button>
            <Button color="red" loading={restart.isPending} onClick={() => restart.mutate()}>
              Restart appliance
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="Services">
      <Services />
    </Gated>
  );
}
