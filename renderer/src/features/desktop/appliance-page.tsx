/**
 * The embedded appliance (desktop app): its state; when it stopped, why, with the tail of its
 * log and a restart button; its collectors (off until turned on, then on the address the user
 * chooses) with the address and ports they bound; the on-box tools this computer lacks; where
 * its admin password is kept.
 */
import {
  Alert,
  Badge,
  Button,
  Group,
  Paper,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';

import type { CoreStatus } from '../../../../electron/contract/bridge.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { bridgeOrThrow, unwrap } from './desktop-start.js';
import { CoreStateBadge, CrashReport } from './core-status.js';
import { useDesktop } from './desktop-store.js';

function Collectors({ core }: { core: CoreStatus }) {
  const [address, setAddress] = useState(core.collectors.bindAddress);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const apply = async (enabled: boolean, bindAddress: string) => {
    setBusy(true);
    setError(null);
    try {
      useDesktop
        .getState()
        .set({ core: await unwrap(bridgeOrThrow().core.setCollectors({ enabled, bindAddress })) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const ports = Object.entries(core.collectors.ports);
  return (
    <Paper withBorder p="md" data-testid="collectors">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3}>Collectors</Title>
          <Switch
            label={core.collectors.enabled ? 'on' : 'off'}
            checked={core.collectors.enabled}
            disabled={busy}
            onChange={(e) => void apply(e.currentTarget.checked, address)}
            data-testid="collectors-switch"
          />
        </Group>
        <Text size="sm" c="dimmed">
          Syslog, NetFlow and the other receivers stay off until you turn them on. They bind the
          address chosen here (loopback by default; a LAN interface to receive from a switch) on the
          ports they had last time when free, otherwise on free ones: never the standard ports, so a
          standalone appliance on this computer keeps them.
        </Text>
        <Group align="end">
          <Select
            label="Address"
            data={core.collectorAddresses}
            value={address}
            allowDeselect={false}
            onChange={(value) => value && setAddress(value)}
            w={220}
            data-testid="collectors-address"
          />
          <Button
            variant="default"
            disabled={busy || address === core.collectors.bindAddress}
            onClick={() => void apply(core.collectors.enabled, address)}
          >
            Apply
          </Button>
        </Group>
        {error ? (
          <Alert color="red" variant="light" role="alert">
            {error}
          </Alert>
        ) : null}
        {core.collectors.enabled ? (
          <Table withRowBorders={false} fz="sm" data-testid="collector-ports">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Receiver</Table.Th>
                <Table.Th>Bound on</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {ports.length === 0 ? (
                <Table.Tr>
                  <Table.Td colSpan={2}>
                    <Text size="sm" c="dimmed">
                      nothing bound yet
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ) : (
                ports.map(([name, bound]) => (
                  <Table.Tr key={name}>
                    <Table.Td>{name}</Table.Td>
                    <Table.Td ff="monospace">
                      {[
                        bound.udp !== undefined
                          ? `${core.collectors.bindAddress}:${bound.udp}/udp`
                          : null,
                        bound.tcp !== undefined
                          ? `${core.collectors.bindAddress}:${bound.tcp}/tcp`
                          : null,
                      ]
                        .filter(Boolean)
                        .join(', ')}
                    </Table.Td>
                  </Table.Tr>
                ))
              )}
            </Table.Tbody>
          </Table>
        ) : null}
      </Stack>
    </Paper>
  );
}

export function Page() {
  const core = useDesktop((s) => s.core);
  if (!core) return <Text c="dimmed">The embedded appliance&apos;s status is not known yet.</Text>;
  return (
    <>
      <PageHeader
        title="This computer's appliance"
        subtitle="the appliance the desktop app runs itself"
      >
        <CoreStateBadge state={core.state} />
      </PageHeader>
      <Stack gap="md">
        <CrashReport core={core} />
        <Collectors core={core} />
        <Paper withBorder p="md" data-testid="missing-tools">
          <Title order={3}>On-box tools</Title>
          {core.missingTools.length === 0 ? (
            <Text size="sm" c="dimmed">
              Every tool the appliance runs is installed.
            </Text>
          ) : (
            <>
              <Text size="sm">
                These programs are missing on this computer; the tools that need them answer with an
                error naming them until they are installed:
              </Text>
              <Group gap={6} mt={6}>
                {core.missingTools.map((tool) => (
                  <Badge key={tool} color="yellow" variant="light">
                    {tool}
                  </Badge>
                ))}
              </Group>
            </>
          )}
        </Paper>
        <Text size="xs" c="dimmed" data-testid="password-storage">
          Its admin password is kept{' '}
          {core.passwordStorage === 'os-keychain'
            ? "in this computer's keyring."
            : 'in a file readable only by you in its data folder (this computer has no keyring).'}
        </Text>
      </Stack>
    </>
  );
}
