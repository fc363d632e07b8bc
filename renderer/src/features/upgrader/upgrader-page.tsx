/**
 * The OS upgrader (permission `sa`; spec part 1, Operating-system upgrade bootstrap): the host's
 * release and the upgrader's state, installing the bundled upgrader, starting it (after a warning
 * that the workflow reboots the appliance) with its URL and one-time token shown once, and
 * stopping it (which invalidates the token). The token lives in this page's state only: leaving
 * the page or stopping forgets it.
 */
import { Alert, Badge, Button, Code, Group, Modal, Paper, Stack, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import {
  hostHasUpgrader,
  installUpgrader,
  startUpgrader,
  stopUpgrader,
  upgraderInfoQuery,
  upgraderKeys,
  type UpgraderSession,
  type UpgraderStatus,
} from './upgrader-api.js';

const toast = (color: string, message: string) => notifications.show({ color, message });

export interface UpgraderPanelProps {
  status: UpgraderStatus;
  session: UpgraderSession | null;
  busy: boolean;
  onInstall: () => void;
  /** Called after the operator accepted the reboot warning. */
  onStart: () => void;
  onStop: () => void;
}

/** The status and actions (exported for its component test). */
export function UpgraderPanel({
  status,
  session,
  busy,
  onInstall,
  onStart,
  onStop,
}: UpgraderPanelProps) {
  const [warning, setWarning] = useState(false);
  const available = hostHasUpgrader(status);
  const running = status.upgrader_active === 'active' || session !== null;
  return (
    <Stack gap="sm">
      {!available && (
        <Alert color="gray" title="Not available on this host">
          This appliance does not run from the Debian host package (no root helper), so the OS
          upgrader cannot be installed or started here.
        </Alert>
      )}
      <Paper withBorder p="sm">
        <Table data-testid="upgrader-status">
          <Table.Tbody>
            <Table.Tr>
              <Table.Th>Debian release</Table.Th>
              <Table.Td>{status.codename || 'unknown'}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Appliance version</Table.Th>
              <Table.Td>{status.appliance_version}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Upgrader</Table.Th>
              <Table.Td>
                <Group gap="xs">
                  <Badge color={status.upgrader_installed ? 'green' : 'gray'}>
                    {status.upgrader_installed ? 'installed' : 'not installed'}
                  </Badge>
                  <Badge variant="outline">{status.upgrader_active}</Badge>
                  <Badge variant="outline">{status.upgrader_enabled}</Badge>
                </Group>
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Bundled package</Table.Th>
              <Table.Td>{status.upgrader_package_available ? 'present' : 'none'}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      </Paper>
      <Group gap="xs">
        <Button
          variant="default"
          disabled={busy || status.upgrader_installed || !status.upgrader_package_available}
          onClick={onInstall}
        >
          Install upgrader
        </Button>
        <Button
          color="orange"
          disabled={busy || !status.upgrader_installed || running}
          onClick={() => setWarning(true)}
        >
          Start upgrade…
        </Button>
        <Button variant="default" disabled={busy || !available} onClick={onStop}>
          Stop upgrader
        </Button>
      </Group>
      {session && (
        <Alert color="orange" title="Upgrader started" data-testid="upgrader-session">
          <Text size="sm">
            Open the upgrader and enter the token. The token is shown only now: it is not stored,
            and a new one needs stopping and starting again.
          </Text>
          <Text size="sm" mt={6}>
            URL:{' '}
            <a href={session.url} target="_blank" rel="noreferrer">
              {session.url}
            </a>
          </Text>
          <Text size="sm" mt={4}>
            Token: <Code className="console-mono">{session.token}</Code>
          </Text>
        </Alert>
      )}
      <Modal opened={warning} onClose={() => setWarning(false)} title="Start the OS upgrade">
        <Text size="sm">
          Starting the upgrader begins a workflow that upgrades the operating system and{' '}
          <b>reboots the appliance</b>. Monitoring, collection and alerting stop until it is back.
        </Text>
        <Group justify="flex-end" mt="md">
          <Button variant="default" onClick={() => setWarning(false)}>
            Cancel
          </Button>
          <Button
            color="orange"
            onClick={() => {
              setWarning(false);
              onStart();
            }}
          >
            Start, I understand it reboots
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}

export function Page() {
  const caller = useCaller();
  const client = useQueryClient();
  const info = useQuery({
    ...upgraderInfoQuery,
    enabled: caller.user !== null && caller.can('sa'),
  });
  const [session, setSession] = useState<UpgraderSession | null>(null);
  const refresh = () => void client.invalidateQueries({ queryKey: upgraderKeys.all });
  const install = useMutation({
    mutationFn: installUpgrader,
    onSuccess: (a) =>
      toast(
        'green',
        a.already_installed ? 'The upgrader was already installed' : 'Upgrader installed',
      ),
    onError: (e) => toast('red', errorText(e)),
    onSettled: refresh,
  });
  const start = useMutation({
    mutationFn: startUpgrader,
    onSuccess: (s) => setSession(s),
    onError: (e) => toast('red', errorText(e)),
    onSettled: refresh,
  });
  const stop = useMutation({
    mutationFn: stopUpgrader,
    onSuccess: () => {
      setSession(null);
      toast('green', 'Upgrader stopped; its token no longer works');
    },
    onError: (e) => toast('red', errorText(e)),
    onSettled: refresh,
  });
  if (!caller.loading && !caller.can('sa'))
    return (
      <>
        <PageHeader title="OS upgrade" />
        <Alert color="gray">
          Only a super administrator (sa) may upgrade the operating system.
        </Alert>
      </>
    );
  return (
    <>
      <PageHeader title="OS upgrade" subtitle="Debian release upgrade of this appliance" />
      {info.isError ? (
        <ErrorNotice error={info.error} onRetry={() => void info.refetch()} />
      ) : info.isPending ? (
        <RowsSkeleton rows={4} />
      ) : (
        <UpgraderPanel
          status={info.data}
          session={session}
          busy={install.isPending || start.isPending || stop.isPending}
          onInstall={() => install.mutate()}
          onStart={() => start.mutate()}
          onStop={() => stop.mutate()}
        />
      )}
    </>
  );
}
