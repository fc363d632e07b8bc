/**
 * Certificate screens of the desktop app: trust on first use (the SHA-256 fingerprint the user
 * accepts before anything is pinned) and a changed certificate (the pinned and the presented
 * fingerprints side by side, refused until the user re-pins). Fingerprints are shown in full,
 * in pairs of four bytes, so they can be compared with what the appliance's console prints.
 */
import {
  Alert,
  Badge,
  Button,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';

import type { ProbeResult } from '../../../../electron/contract/bridge.js';

/** `AB:CD:…` in groups of four bytes, one group per span, so a long print wraps readably. */
export function Fingerprint({ sha256, testId }: { sha256: string; testId?: string }) {
  const bytes = sha256.split(':');
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 4) groups.push(bytes.slice(i, i + 4).join(':'));
  return (
    <Text
      ff="monospace"
      size="sm"
      data-testid={testId}
      data-sha256={sha256}
      className="desktop-fingerprint"
    >
      {groups.map((group, index) => (
        <span key={index}>
          {group}
          {index < groups.length - 1 ? ': ' : ''}
        </span>
      ))}
    </Text>
  );
}

export function TrustOnFirstUse({
  probe,
  busy,
  onAccept,
  onCancel,
}: {
  probe: ProbeResult;
  busy: boolean;
  onAccept: () => void;
  onCancel: () => void;
}) {
  const c = probe.certificate;
  return (
    <Paper withBorder p="md" data-testid="tofu">
      <Stack gap="sm">
        <Title order={3}>Trust this appliance?</Title>
        <Text size="sm">
          {probe.origin} presents a certificate that nothing on this computer vouches for. Compare
          its SHA-256 fingerprint with the one the appliance shows (its console&apos;s settings, or{' '}
          <Text span ff="monospace" size="sm">
            openssl x509 -noout -fingerprint -sha256
          </Text>{' '}
          on the appliance) before you trust it. Once trusted, it is pinned: another certificate
          will be refused.
        </Text>
        <Fingerprint sha256={c.sha256} testId="tofu-fingerprint" />
        <Table withRowBorders={false} verticalSpacing={2} fz="sm">
          <Table.Tbody>
            <Table.Tr>
              <Table.Td c="dimmed">Subject</Table.Td>
              <Table.Td>{c.subject}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Td c="dimmed">Issuer</Table.Td>
              <Table.Td>{c.issuer}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Td c="dimmed">Valid</Table.Td>
              <Table.Td>
                {c.validFrom} – {c.validTo}
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Td c="dimmed">Trusted by this computer</Table.Td>
              <Table.Td>
                <Badge color={c.trustedByOs ? 'teal' : 'yellow'} variant="light">
                  {c.trustedByOs ? 'yes' : 'no (self-signed or unknown CA)'}
                </Badge>
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
        <Group>
          <Button onClick={onAccept} loading={busy} data-testid="tofu-accept">
            Trust and pin
          </Button>
          <Button variant="default" onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}

export function CertificateChanged({
  name,
  origin,
  pinnedSha256,
  presentedSha256,
  onRepin,
  onSwitchAway,
}: {
  name: string;
  origin: string;
  pinnedSha256: string | null;
  presentedSha256: string;
  onRepin: () => Promise<void>;
  onSwitchAway?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Paper withBorder p="md" data-testid="certificate-changed">
      <Stack gap="sm">
        <Title order={3}>The certificate of {name} changed</Title>
        <Alert color="red" variant="light">
          {origin} now presents a different certificate from the one pinned when you first trusted
          it, and no certificate authority on this computer vouches for the new one. The desktop app
          refuses the connection until you re-pin. Re-pin only if you know why it changed (the
          appliance was reinstalled, or its certificate was replaced); otherwise someone may be in
          the middle.
        </Alert>
        <SimpleGrid cols={2} spacing="md">
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              Pinned (trusted before)
            </Text>
            {pinnedSha256 ? (
              <Fingerprint sha256={pinnedSha256} testId="pinned-fingerprint" />
            ) : (
              <Text size="sm" c="dimmed">
                nothing pinned
              </Text>
            )}
          </Stack>
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              Presented now
            </Text>
            <Fingerprint sha256={presentedSha256} testId="presented-fingerprint" />
          </Stack>
        </SimpleGrid>
        {error ? (
          <Alert color="red" variant="light" role="alert">
            {error}
          </Alert>
        ) : null}
        <Group>
          <Button
            color="red"
            loading={busy}
            data-testid="repin"
            onClick={() => {
              setBusy(true);
              setError(null);
              onRepin()
                .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)))
                .finally(() => setBusy(false));
            }}
          >
            Re-pin the new certificate
          </Button>
          {onSwitchAway ? (
            <Button variant="default" onClick={onSwitchAway}>
              Switch to another appliance
            </Button>
          ) : null}
        </Group>
      </Stack>
    </Paper>
  );
}
